"""A seat that vanishes mid-round (killed: its links end; frozen: its heartbeats stop) is named at
once, and within seconds the others vote it gone, void the round and go on without it, even when it owes nothing."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from seats_harness import linked_seats

from p2pcards.errors import MalformedMessage
from p2pcards.net.link import REQUEST, SILENT_S, Links
from p2pcards.net.node import Node
from p2pcards.net.seat import Seat
from p2pcards.net.store import NodeState, SeatStore
from p2pcards.table.config import TableConfig
from p2pcards.table.peer import Note
from p2pcards.table.recovery import pack_request

GONE_AFTER = 1.0


def kill(links: Links) -> None:
    """As SIGKILL does: every socket of the seat ends at once, no goodbye."""
    for link in list(links.links.values()):
        for task in link._tasks:
            task.cancel()
        link.writer.transport.abort()


def freeze(links: Links) -> None:
    """As a frozen process or a lost Wi-Fi does: nothing more is sent or read, the sockets stay open."""
    for link in list(links.links.values()):
        for task in link._tasks:
            task.cancel()


async def stop_seats(plays: list[asyncio.Task[None]], all_links: list[Links], live: list[Seat], why: str) -> None:
    """Stop every seat's play, close its links and its journal, if it keeps one (what a process's death leaves)."""
    for play in plays:
        play.cancel()
    await asyncio.gather(*plays, return_exceptions=True)
    for links in all_links:
        await links.close(why)
    for seat in live:
        if seat.store is not None:
            seat.store.close()


async def table_with_a_vanished_seat(vanish: Callable[[Links], None]) -> tuple[list[Seat], list[list[Note]], float]:
    # timeout: no time-out of §12.4 can fire first
    live, all_links, notes = await linked_seats("crisp", 3, {"limit": 500}, GONE_AFTER, timeout=120.0)
    plays = [asyncio.create_task(s.play(limit_s=60)) for s in live]
    doomed = live[2]
    async with asyncio.timeout(60):
        while not (doomed.peer.rs is not None and doomed.peer.rs.dealt and doomed.peer.rs.log.next_index > 3):
            await asyncio.sleep(0.05)
    loop = asyncio.get_running_loop()
    vanished = loop.time()
    doomed.shell.close()
    vanish(all_links[2])
    async with asyncio.timeout(SILENT_S + GONE_AFTER + 10):
        # The two left play on at the table that goes on without p2, from the void round on.
        while not all(s.peer.cfg.seats == 2 and s.peer.rs is not None for s in live[:2]):
            await asyncio.sleep(0.05)
    stopped = loop.time() - vanished
    await stop_seats(plays, all_links, live, "test over")
    return live, notes, stopped


@pytest.mark.parametrize("vanish, why", [
    (kill, ("end of stream", "connection error")),  # EOF, or a write that found the socket reset
    pytest.param(freeze, ("no heartbeat",), marks=pytest.mark.slow),  # 5 s of silence first
])
def test_a_vanished_seat_is_named_voted_out_and_the_table_goes_on(vanish: Callable[[Links], None],
                                                                    why: tuple[str, ...]) -> None:
    seats, notes, stopped = asyncio.run(table_with_a_vanished_seat(vanish))
    for seat, seen in zip(seats[:2], notes):
        peer = seat.peer
        assert peer.cfg.names == ("p0", "p1") and peer.stopped is None and not peer.faults, peer.notes[-5:]
        assert peer.round == peer.carry[1] + 1  # the void round is played again, without p2
        assert any(n.kind == "missing" and "p2 was missing for 1 s" in n.detail for n in seen)
        # (a seat that went quiet while this one loop was busy with three seats' proofs may be missing for a moment too)
        missing = [n for n in seen if n.kind == "missing" and n.blame == "p2"]
        assert missing and missing[0].blame == "p2" and any(w in missing[0].detail for w in why), missing
        assert "it is voted gone in 1 s unless it is back" in missing[0].detail
        assert any(n.kind == "void" and "p2 is out" in n.detail for n in seen)


class Asker:
    """A link's far end as a seat's request handler sees it: its key, and what is sent back on it."""

    def __init__(self, key: bytes) -> None:
        self.key = key
        self.sent: list[tuple[int, bytes]] = []

    def send(self, kind: int, payload: bytes) -> None:
        self.sent.append((kind, payload))


async def two_vanish_at_once() -> tuple[list[Seat], bytes, list[bytes], int]:
    live, all_links, _ = await linked_seats("crisp", 4, {"limit": 500}, GONE_AFTER, timeout=120.0)
    first = live[0].peer.cfg.table
    plays = [asyncio.create_task(s.play(limit_s=60)) for s in live]
    async with asyncio.timeout(60):
        while not (live[3].peer.rs is not None and live[3].peer.rs.dealt and live[3].peer.rs.log.next_index > 3):
            await asyncio.sleep(0.05)
    for i in (1, 3):  # together: neither can vote the other gone
        live[i].shell.close()
        kill(all_links[i])
    async with asyncio.timeout(SILENT_S + GONE_AFTER + 10):
        while not all(s.peer.cfg.seats == 2 and s.peer.rs is not None for s in (live[0], live[2])):
            await asyncio.sleep(0.05)
    for play in plays:
        play.cancel()
    await asyncio.gather(*plays, return_exceptions=True)
    # A seat still at the first table asks for frames of it: the seat that went on answers from that table.
    asker = Asker(live[2].tables[first][0].cfg.keys[2])
    live[0].take(asker, REQUEST, pack_request(first, 3, 0, 3))  # type: ignore[arg-type]
    live[0].take(asker, REQUEST, pack_request(bytes(16), 3, 0, 3))  # type: ignore[arg-type]  # never sat at
    sent = len(asker.sent)
    try:
        live[0].take(asker, REQUEST, pack_request(first, 4, 0, 3))  # type: ignore[arg-type]
    except MalformedMessage:
        sent = -sent  # no seat 4 at that table: the link is cut
    for links in all_links:
        await links.close("test over")
    return live, first, [p for _, p in asker.sent], sent


@pytest.mark.slow
def test_two_seats_vanished_at_once_are_voted_out_together_and_a_seat_answers_for_the_table_before() -> None:
    seats, first, answers, sent = asyncio.run(two_vanish_at_once())
    for seat in (seats[0], seats[2]):
        peer = seat.peer
        assert peer.cfg.names == ("p0", "p2") and peer.stopped is None and not peer.faults, peer.notes[-5:]
        assert any(n.kind == "void" and "p1, p3 are out" in n.detail for n in seat.tables[first][0].notes)
    old = seats[0].tables[first][0]
    assert answers == [old.frame(3, seq) for seq in range(3)] and all(answers) and sent == -3


async def state_saved_after_the_table_went_on(tmp_path: Path) -> tuple[TableConfig, TableConfig, Seat, list[Any]]:
    """Three seats journalling; p2 vanishes and p0, p1 go on as two; then p0's link shows p1 a new port, so p1's node
    writes its state at the table that went on; p1 comes back from that state. What it came back as, and where."""
    dirs = [tmp_path / f"p{i}" for i in range(3)]
    live, all_links, _ = await linked_seats("crisp", 3, {"limit": 500}, GONE_AFTER, states=dirs, timeout=120.0)
    first = live[1].peer.cfg
    p0, me = first.keys[0], live[1].peer.identity
    node = Node(me, ["127.0.0.1"], mdns=False, state=dirs[1])
    node.seat = live[1]
    node.dialled = {p0: [("127.0.0.1", 4000)]}
    node._save_state()  # as Node._make_seat does, at the first table
    plays = [asyncio.create_task(s.play(limit_s=60)) for s in live]
    async with asyncio.timeout(60):
        while not (live[2].peer.rs is not None and live[2].peer.rs.dealt and live[2].peer.rs.log.next_index > 3):
            await asyncio.sleep(0.05)
    live[2].shell.close()
    kill(all_links[2])
    async with asyncio.timeout(SILENT_S + GONE_AFTER + 10):
        while not all(s.peer.cfg.seats == 2 and s.peer.rs is not None and s.peer.rs.log.next_index > 3
                      for s in live[:2]):
            await asyncio.sleep(0.05)
    went_on = live[1].peer.cfg
    node._learn(SimpleNamespace(key=p0, address="127.0.0.1", hello=SimpleNamespace(port=4001)))  # type: ignore[arg-type]
    await stop_seats(plays, all_links, live, "test over")
    # p1 comes back from its state, as `p2pcards peer --state DIR` does (botpeer.play_seat).
    saved = NodeState.load(dirs[1])
    assert saved is not None
    back = Node(me, ["127.0.0.1"], mdns=False, state=dirs[1], comeback=True)
    async with back:
        back.resume(SeatStore(dirs[1], saved.config, saved.seat), saved.config, saved.dial, saved.later)
        hello_table = back.links.table
        assert back.seat is not None
        play = asyncio.create_task(back.seat.play(limit_s=60, resumed=True))
        async with asyncio.timeout(30):
            while back.seat.peer.cfg != went_on:  # it replays the first table's journal, then takes up this one's
                await asyncio.sleep(0.01)
        came_back = back.seat.peer
        play.cancel()
        await asyncio.gather(play, return_exceptions=True)
    return first, went_on, live[1], [saved, hello_table, came_back]


@pytest.mark.slow  # three journalled seats over real links, one voted out, one resumed: seconds
def test_a_seat_whose_state_was_saved_after_the_table_went_on_comes_back_at_the_first_tables_id(
        tmp_path: Path) -> None:
    """A seat's node file written at the table that went on without a seat (its link to a seat showed a new port)
    could have named that table: coming back, it would have read the wrong journal and said the new table's id in
    its hello, where every other seat's links still say the first one's. It names no table: the `table` file does."""
    first, went_on, seat, (saved, hello_table, came_back) = asyncio.run(state_saved_after_the_table_went_on(tmp_path))
    assert went_on.table != first.table and went_on.names == ("p0", "p1")
    assert (saved.config, saved.seat) == (first, 1)  # the table the journal at the top of the store belongs to
    assert saved.dial == {first.keys[0]: [("127.0.0.1", 4001)]}  # what the link at the table that went on showed
    assert hello_table == first.table == seat.links.table  # the id every seat's links said from the start
    assert came_back.rs is not None  # back into the round in play, from the journal of the table that went on
    assert came_back.cfg == went_on and came_back.round == seat.peer.round and came_back.carry == seat.peer.carry


async def back_alone(tmp_path: Path) -> tuple[list[Note], str | None, bool]:
    """Three seats journalling; all three die at once mid-round (the sockets of p0 and p2 closed: nothing listens where
    they were) and p1 comes back from its journal alone. Its notes, whether it is cut off, and whether it finished."""
    dirs = [tmp_path / f"p{i}" for i in range(3)]
    live, all_links, _ = await linked_seats("crisp", 3, {"limit": 500}, 2.0, states=dirs, timeout=120.0)
    keys, me = live[1].peer.cfg.keys, live[1].peer.identity
    node = Node(me, ["127.0.0.1"], mdns=False, state=dirs[1], gone_after=2.0)
    node.seat = live[1]
    # p1 dials p0 again (the `_redial` path) and is dialled by p2, which it dials once itself when it never does.
    node.dialled = {keys[0]: [("127.0.0.1", all_links[0].port)]}
    node.later = {keys[2]: [("127.0.0.1", all_links[2].port)]}
    node._save_state()
    plays = [asyncio.create_task(s.play(limit_s=60)) for s in live]
    async with asyncio.timeout(60):
        while not (live[1].peer.rs is not None and live[1].peer.rs.dealt and live[1].peer.rs.log.next_index > 3):
            await asyncio.sleep(0.05)
    for seat, links in zip(live, all_links):
        seat.shell.close()
        kill(links)
    await stop_seats(plays, all_links, live, "killed")
    saved = NodeState.load(dirs[1])
    assert saved is not None
    notes: list[Note] = []
    back = Node(me, ["127.0.0.1"], mdns=False, state=dirs[1], gone_after=2.0, comeback=True, on_note=notes.append)
    async with back:
        back.resume(SeatStore(dirs[1], saved.config, saved.seat), saved.config, saved.dial, saved.later)
        assert back.seat is not None
        await asyncio.wait_for(back.seat.play(limit_s=60, resumed=True), 30)
        peer = back.seat.peer
    return notes, peer.cut_off, peer.finished


@pytest.mark.slow  # three journalled seats over real links, then one back from its journal alone: seconds
def test_a_seat_back_alone_whose_dials_are_refused_everywhere_is_not_cut_off_too_few_seats_remain(
        tmp_path: Path) -> None:
    # Every other address refused its dials (nothing listens there: their machines said so, its own network works),
    # yet it counted them as silent, said "they most likely went on without us", gave up cut off and exited 3.
    notes, cut_off, finished = asyncio.run(back_alone(tmp_path))
    said = [n.detail for n in notes]
    assert cut_off is None and finished, said
    assert any("too few seats remain" in d for d in said), said
    assert sum("refuses our links" in d for d in said) == 2, said
