"""A table session on the referee engine, for fast tests of the client: our seat, and the others moving when told."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from typing import Any

from p2pcards.games.base import Move
from p2pcards.games.crescendo import CrescendoGame, CrescendoOptions
from p2pcards.games.crisp import CrispGame, CrispOptions
from p2pcards.table.outputs import Cut
from p2pcards.table.peer import Note
from p2pcards.ui.session import Progress, Stall, View


class RefereeSession:
    """The client's session interface over one referee engine that knows every face (tests only)."""

    def __init__(self, game: str, names: Sequence[str], deck: Sequence[Any], options: Mapping[str, Any] | None = None,
                 dealer: int = 0, start: float = 0.0) -> None:
        self.game = game
        self.names = tuple(names)
        self.me = 0
        self.options = dict(options or {})
        self.engine: CrispGame | CrescendoGame
        if game == "crisp":
            self.engine = CrispGame(self.names, CrispOptions.from_dict(self.options), dealer)
        else:
            self.engine = CrescendoGame(self.names, CrescendoOptions.from_dict(self.options), dealer)
        self.engine.tick(start)  # the first round is dealt at `start`
        self.engine.queue_deck(list(deck))
        self.seen = 0
        self.played: list[Move] = []
        self.left = False
        self.snaps: list[View] = []
        self.aid: set[int] = set()
        self.stalled: Stall | None = None
        self.shuffling: Progress | None = None
        self.pending: list[Note] = []

    async def start(self) -> None:
        """Nothing to start."""

    def view(self) -> View:
        """Our view."""
        return self.engine.view(self.names[self.me])

    def round_views(self) -> list[View]:
        """Our view at each round's end."""
        return list(self.snaps)

    def play(self, move: Move) -> None:
        """Apply our move on the engine (IllegalMove as the engine says)."""
        self.engine.apply(move)
        self.played.append(move)
        self._snap()

    def others(self, now: float) -> None:
        """Let time pass to `now`, then let every other seat make its first legal in-turn move while it is due."""
        self.engine.tick(max(now, self.engine.clock), wait=True)
        for _ in range(50):
            r = self.engine.r
            if r is None or r.ended or r.turn is None or r.turn == self.me:
                break
            legal = [m for m in self.engine.legal_moves(self.names[r.turn]) if m.action not in ("crisp", "number")]
            simple = [m for m in legal if m.action in ("draw", "discard", "setup_pass", "king", "pass")]
            if not simple:
                break
            self.engine.apply(simple[0])
        self._snap()

    def _snap(self) -> None:
        v = self.view()
        if v.rounds_played > len(self.snaps):
            self.snaps.append(v)

    def set_aid(self, on: bool, seat: int | None = None) -> None:
        """Turn a seat's memory aid on or off (ours by default), noted as the table notes it."""
        seat = self.me if seat is None else seat
        (self.aid.add if on else self.aid.discard)(seat)
        self.pending.append(Note("aid", f"{self.names[seat]} turned the memory aid {'on' if on else 'off'}"))

    def aided(self) -> frozenset[int]:
        """The seats whose memory aid is on."""
        return frozenset(self.aid)

    def busy(self) -> bool:
        """Never busy: the engine answers at once."""
        return False

    def take_notes(self) -> list[Note]:
        """The engine's new events as notes."""
        events = self.engine.events[self.seen:]
        self.seen = len(self.engine.events)
        notes, self.pending = self.pending, []
        return notes + [Note("event", str(e)) for e in events]

    async def changed(self, timeout: float) -> None:
        """Time passes."""
        await asyncio.sleep(min(timeout, 0.05))

    def progress(self) -> Progress | None:
        """The shuffle the test says is under way."""
        return self.shuffling

    def stall(self) -> Stall | None:
        """What the test says holds the table up."""
        return self.stalled

    def finished(self) -> bool:
        """The game is over."""
        return self.engine.over

    def stopped(self) -> str | None:
        """Never stops."""
        return None

    def gave_up(self) -> Cut | None:
        """Never cut off."""
        return None

    async def leave(self) -> None:
        """Remember that we left."""
        self.left = True

    async def hang_up(self) -> None:
        """As `leave`: nothing here to come back into."""
        await self.leave()


def ragged(text: str, width: int) -> list[str]:
    """The lines of a rules screen `width` columns wide that end a paragraph's or a list item's line early: the next
    line, of the same paragraph, begins with a word that would have fit on it (a page's title and keys aside)."""
    lines = [line[1:] for line in text.splitlines()]  # the screen's margin
    out = []
    for a, b in zip(lines, lines[1:]):
        same = a.strip("-= ") and b.strip() and len(a) - len(a.lstrip()) <= len(b) - len(b.lstrip())
        if same and not b.lstrip().startswith(("- ", "-", "=")) and len(a) + 1 + len(b.split()[0]) <= width - 2:
            out.append(a)
    return out
