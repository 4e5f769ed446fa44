"""Table contexts (issue 9): a host that reuses a table id cannot replay a seat's frames of an earlier table.

Every seat's fresh lobby nonce is in the config, and the config's digest is the context of every
frame and every proof from `ready` on, so frames signed at an earlier table with the same id are
another table's: refused before their signature is checked, blaming no one, making no evidence.
"""

from __future__ import annotations

import random
import secrets

import pytest

from p2pcards.bots.base import RandomBot
from p2pcards.crypto.envelope import parse
from p2pcards.crypto.identity import Identity, generate
from p2pcards.sim.memnet import MemNet
from p2pcards.table.lobby import Lobby
from p2pcards.table.peer import TablePeer

HOST, VICTIM, WITNESS = 0, 1, 2


def _seat(table: bytes, ids: list[Identity]) -> list[TablePeer]:
    """A lobby at table id `table`: the first identity hosts, the others join; every seated peer."""
    host, opened = Lobby.open(ids[0], table, "crisp", {"limit": 50, "draw_seconds": None})
    guests = [Lobby(i, table, ids[0].public) for i in ids[1:]]
    frames = [opened] + [g.join() for g in guests]
    for lobby in [host, *guests]:
        for frame in frames:
            lobby.receive(frame)
    seats = host.seat()
    for g in guests:
        g.receive(seats)
    assert not any(lobby.errors for lobby in [host, *guests])
    return [lobby.table_peer() for lobby in [host, *guests]]


def _net(peers: list[TablePeer], seed: int) -> MemNet:
    net = MemNet(peers, [RandomBot(random.Random(seed + i)) for i in range(len(peers))], random.Random(seed))
    net.start()
    return net


@pytest.mark.slow  # two whole tables; frames of another table are refused in the default run (test_timing_attacks.py)
def test_frames_of_an_earlier_table_with_the_same_id_are_refused_blame_no_one_and_make_no_evidence() -> None:
    table = secrets.token_bytes(16)
    ids = [generate(n) for n in ("host", "vic", "wit")]
    earlier = _seat(table, ids)
    net = _net(earlier, 1)
    net.run(until=6.0)
    assert earlier[VICTIM].rs is not None and earlier[VICTIM].rs.dealt
    old = [frame for _, (_, frame) in sorted(earlier[VICTIM].emit.sent.items())]
    assert {parse(f).envelope.type for f in old} >= {"ready", "key", "pass", "shares"}

    later = _seat(table, ids)  # the host opens a table with the same id and seats the same keys
    net = _net(later, 2)
    for k, frame in enumerate(old):  # the host replays the victim's old frames to the witness, early and late
        net.inject(WITNESS, frame, at=0.0)
        net.inject(WITNESS, frame, at=3.0 + 0.01 * k)
    net.run(until=8.0)
    witness = later[WITNESS]
    assert witness.stopped is None and not witness.faults, witness.faults
    assert not witness.evidence
    assert not [n for n in witness.notes if n.blame is not None], witness.notes
    assert witness.rs is not None and witness.rs.dealt  # the new table plays on
