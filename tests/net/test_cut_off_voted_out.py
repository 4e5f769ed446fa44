"""A seat cut off from every other seat whose network comes back after the others voted it out and went on: it links to
them again, asks for the frames of the table it sat at with them, takes their votes and the `out` naming it, and ends
voted out, not cut off (protocol.md §14.9, §18.5); the table that went on takes nothing from it."""

from __future__ import annotations

import asyncio

import pytest

from seats_harness import linked_seats

from p2pcards.net.link import FRAME, SILENT_S
from p2pcards.net.seat import Seat
from p2pcards.table.peer import Note

GONE_AFTER = 1.0
LONE_GONE_AFTER = 3.0  # its votes come after the others': its network comes back between them and its giving up


async def cut_off_then_back() -> tuple[list[Seat], list[list[Note]], bytes]:
    live, all_links, notes = await linked_seats("crisp", 3, {"limit": 500}, GONE_AFTER, timeout=120.0)
    lone = live[2]
    lone.gone_after = LONE_GONE_AFTER
    first = lone.peer.cfg.table
    plays = [asyncio.create_task(s.play(limit_s=60)) for s in live]
    async with asyncio.timeout(60):
        while not (lone.peer.rs is not None and lone.peer.rs.dealt and lone.peer.rs.log.next_index > 3):
            await asyncio.sleep(0.05)
    # Its Wi-Fi lost: every link of it ends at once, at both ends, to an error of its own network at its end (an end
    # of stream or a reset would show its network working, protocol.md §14.9).
    for link in list(all_links[2].links.values()):
        link.close("connection error: [Errno 101] Network is unreachable", cut=True)
    for links in all_links[:2]:
        links.links[lone.peer.identity.public].writer.transport.abort()
    async with asyncio.timeout(SILENT_S + LONE_GONE_AFTER + 10):
        while not (all(s.peer.cfg.seats == 2 for s in live[:2]) and lone.peer.cut_off is not None):
            await asyncio.sleep(0.02)
    assert not lone.shell.over
    for j in (0, 1):  # back: it dials the seats that went on, which take it for the table before only
        await all_links[2].dial([("127.0.0.1", all_links[j].port)], live[j].peer.identity.public, attempts=5)
    # What it sends them now is of no table they play: ignored, not taken, and the link stays.
    ready = lone.peer.frame(2, 0)
    assert ready is not None
    live[0].take(all_links[0].links[lone.peer.identity.public], FRAME, ready)
    async with asyncio.timeout(LONE_GONE_AFTER + 10):
        while not (lone.shell.over or lone.peer.stopped):
            await asyncio.sleep(0.02)
    for play in plays:
        play.cancel()
    await asyncio.gather(*plays, return_exceptions=True)
    for links in all_links:
        await links.close("test over")
    return live, notes, first


@pytest.mark.slow  # three seats over real links, a vote and a table that goes on: seconds
def test_a_seat_cut_off_whose_network_comes_back_after_the_others_went_on_learns_it_was_voted_out() -> None:
    seats, notes, first = asyncio.run(cut_off_then_back())
    lone = seats[2].peer
    assert lone.seating.voted_out == "every other seat voted us gone: the table goes on without us", lone.notes[-5:]
    assert lone.cut_off is None and lone.stopped is None and not lone.faults
    assert any(n.kind == "missing" and "every other seat went missing at once" in n.detail for n in notes[2])
    for seat, seen in zip(seats[:2], notes):
        assert seat.peer.cfg.names == ("p0", "p1") and seat.peer.stopped is None and not seat.peer.faults
        assert not any(n.kind == "back" and n.blame == "p2" for n in seen)  # it is at no table of theirs
        assert not seat.sat_with(b"x" * 32) and seat.sat_with(lone.identity.public)
