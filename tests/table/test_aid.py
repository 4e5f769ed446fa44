"""The memory aid at the table: a signed word to every seat, never in the log, never a crash when malformed."""

from __future__ import annotations

import random

import pytest

from p2pcards.crypto.encoding import Value
from p2pcards.sim.table_game import make_table
from p2pcards.table.outputs import Note, Send
from p2pcards.table.peer import TablePeer


def table(players: int = 2) -> list[TablePeer]:
    return make_table("crisp", players, {}, random.Random(7))


def deliver(peers: list[TablePeer], sender: int, frames: list[bytes], now: float = 0.0) -> None:
    """Hand `frames` from `sender` to every other peer, and what they send in turn, until all is quiet."""
    queue = [(sender, f) for f in frames]
    while queue:
        src, frame = queue.pop(0)
        for seat, peer in enumerate(peers):
            if seat != src:
                queue += [(seat, o.frame) for o in peer.receive(frame, now) if isinstance(o, Send)]


def sent(outputs: list[Send | Note]) -> list[bytes]:
    return [o.frame for o in outputs if isinstance(o, Send)]


def aid_notes(peer: TablePeer) -> list[str]:
    return [n.detail for n in peer.notes if n.kind == "aid"]


def test_turning_the_aid_on_and_off_is_told_to_every_seat() -> None:
    peers = table(3)
    deliver(peers, 1, sent(peers[1].aid(True, 0.0)))
    assert all(p.aided == {1} for p in peers)
    assert all(aid_notes(p) == ["p1 turned the memory aid on"] for p in peers)
    assert peers[1].aid(True, 0.0) == []  # on already: nothing to tell
    deliver(peers, 1, sent(peers[1].aid(False, 0.0)))
    assert all(p.aided == set() for p in peers)
    assert aid_notes(peers[2])[-1] == "p1 turned the memory aid off"
    assert all(p.stopped is None and not p.faults for p in peers)


def test_the_aid_is_taken_whatever_its_round_and_changes_neither_log_nor_play() -> None:
    peers = table(2)
    deliver(peers, 0, sent(peers[0].start(0.0)))
    deliver(peers, 1, sent(peers[1].start(0.0)))
    assert peers[0].round == 1 and peers[1].round == 1
    before = peers[1].log_hash
    # One sent for the next round (its sender ran ahead) and one for the round before: both are taken now.
    ahead = peers[0].outbox.seal(2, "aid", {"on": True}).frame
    behind = peers[0].outbox.seal(0, "aid", {"on": False}).frame
    peers[1].receive(ahead, 0.0)
    assert peers[1].aided == {0} and not peers[1].chains.later
    peers[1].receive(behind, 0.0)
    assert peers[1].aided == set()
    assert peers[1].log_hash == before and peers[1].stopped is None


def test_a_malformed_aid_stops_the_table_blaming_its_sender_and_crashes_nothing() -> None:
    peers = table(2)
    bad = peers[0].outbox.seal(0, "aid", {"on": 1}).frame  # on must be true or false
    out = peers[1].receive(bad, 0.0)
    assert peers[1].stopped is not None and peers[1].faults[0].blame == "p0"
    assert any(isinstance(o, Send) for o in out)  # the others are told by a fault message
    assert peers[1].aided == set()


@pytest.mark.parametrize("body", [{}, {"on": True, "who": 1}])
def test_an_aid_without_exactly_its_key_is_dropped_and_the_table_goes_on(body: dict[str, Value]) -> None:
    peers = table(2)
    peers[1].receive(peers[0].outbox.seal(0, "aid", body).frame, 0.0)
    assert peers[1].stopped is None and peers[1].aided == set()
    assert [n.kind for n in peers[1].notes] == ["rejected"]
