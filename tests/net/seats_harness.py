"""Seats of one table in one event loop, each with its own authenticated links over real TCP on loopback."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from p2pcards.net.botpeer import make_bot
from p2pcards.net.link import Link, Links
from p2pcards.net.seat import Seat
from p2pcards.net.store import SeatStore
from p2pcards.sim.table_game import make_table
from p2pcards.table.peer import Note

Handlers = tuple[Callable[[Link, int, bytes], None], Callable[[Link], None],
                 Callable[[Link, str], None], Callable[[Link, bool], None]]


async def linked_seats(game: str, n: int, options: dict[str, Any], gone_after: float,
                       states: Sequence[Path] | None = None,
                       **peer_args: Any) -> tuple[list[Seat], list[Links], list[list[Note]]]:
    """n seats played by random bots, every pair linked; each seat's notes as they came (`states`: each seat
    journals in its directory, as a peer run with --state does)."""
    peers = make_table(game, n, options, **peer_args)
    notes: list[list[Note]] = [[] for _ in peers]
    seats: list[Seat] = []
    all_links: list[Links] = []

    def handlers(i: int) -> Handlers:
        return (lambda link, kind, payload: seats[i].take(link, kind, payload), lambda link: seats[i].linked(link),
                lambda link, why: seats[i].lost(link, why), lambda link, quiet: seats[i].quiet(link, quiet))

    for i, peer in enumerate(peers):
        keys = set(peer.cfg.keys) - {peer.identity.public}
        links = Links(peer.identity, peer.cfg.table, keys.__contains__, *handlers(i))
        all_links.append(links)
        store = None
        if states is not None:
            store = SeatStore(states[i], peer.cfg, i)
            peer.keep_journal()
        seats.append(Seat(peer, links, make_bot(game, "random", f"harness/{i}"), on_note=notes[i].append,
                          gone_after=gone_after, store=store))
    ports = [await links.listen(["127.0.0.1"]) for links in all_links]
    for i, links in enumerate(all_links):
        for j in range(i):
            await links.dial([("127.0.0.1", ports[j])], peers[j].identity.public, attempts=20, pause=0.1)
    return seats, all_links, notes
