"""The client's one door to the network: a table session (start, moves in, views and notes out, leave).

Everything network-facing in the client lives here, so that moving to another network layer
touches only this module. `BotTable` is a table of this player's seat against bot peers: each
bot is a real process (`python -m p2pcards.net.local`), linked to us by the network layer's
authenticated links on loopback, and our own seat runs as tasks in the application's asyncio loop.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import sys
import tempfile
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import IO, Any, Protocol

from ..crypto.encoding import encode
from ..crypto.identity import Identity, generate
from ..errors import IllegalMove, LinkBroken, P2PCardsError
from ..games.base import Move
from ..games.crescendo import CrescendoView
from ..games.crisp import CrispView
from ..net.link import FRAME, REQUEST, Link, Links
from ..net.seat import Seat
from ..table.config import TableConfig
from ..table.peer import Note, Send, TablePeer

View = CrispView | CrescendoView
BOT_NAMES = ("Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus")
STALL_S = 3.0  # silence after which the client says whom it waits for


@dataclass(frozen=True, slots=True)
class Progress:
    """Where the table stands outside play: the round being shuffled and how far its keys and passes are."""

    round: int
    keys: int
    passes: int
    seats: int


@dataclass(frozen=True, slots=True)
class Stall:
    """Nothing has moved for `waited` seconds; the protocol blames a silent peer after `timeout`."""

    waited: float
    timeout: float
    links_down: int


class TableSession(Protocol):
    """What the client needs from a table: the small interface every network layer provides."""

    names: tuple[str, ...]
    me: int
    game: str
    options: Mapping[str, Any]

    async def start(self) -> None:
        """Join the table and start playing (returns once the game is under way)."""

    def view(self) -> View | None:
        """Our own player's view of the game now (None until the table has started)."""

    def round_views(self) -> list[View]:
        """Our view at the end of each round played so far (every card face up)."""

    def play(self, move: Move) -> None:
        """Send our move; IllegalMove (nothing sent) when it cannot be played now."""

    def busy(self) -> bool:
        """True while our last move or a reveal we are owed is still on its way."""

    def take_notes(self) -> list[Note]:
        """The notes (events, rejections, faults, rounds) that came since the last call."""

    async def changed(self, timeout: float) -> None:
        """Return when something changed, or after `timeout` seconds."""

    def progress(self) -> Progress | None:
        """The shuffle of the next round while it is under way, else None."""

    def stall(self) -> Stall | None:
        """How long the table has been silent while we wait on others, or None."""

    def finished(self) -> bool:
        """True once the game is over and every round verified."""

    def stopped(self) -> str | None:
        """Why the table stopped (a fault, someone left), or None while it goes on."""

    async def leave(self) -> None:
        """Leave the table cleanly: tell the others, close the links, end our processes."""


@dataclass
class BotTable:
    """Our seat (seat 0) against `bots` bot processes on loopback, for `game` with `options`."""

    game: str
    bots: int
    options: Mapping[str, Any]
    identity: Identity
    timeout: float = 15.0
    clock_fn: Callable[[], float] = time.time
    names: tuple[str, ...] = ()
    me: int = 0
    peer: TablePeer | None = None
    _links: Links | None = None
    _seat: Seat | None = None
    _procs: list[asyncio.subprocess.Process] = field(default_factory=list)
    _logs: list[IO[bytes]] = field(default_factory=list)
    _notes: list[Note] = field(default_factory=list)
    _event: asyncio.Event = field(default_factory=asyncio.Event)
    _tasks: list[asyncio.Task[None]] = field(default_factory=list)
    _round_views: list[View] = field(default_factory=list)
    _events_seen: int = 0
    _last_frame: float = 0.0
    _started: bool = False

    async def start(self) -> None:
        """Start the bot processes, link them to us over authenticated links, and begin the table."""
        mine = self.identity.name
        bot_names = [n for n in BOT_NAMES if n != mine][: self.bots]
        ids = [generate(n) for n in bot_names]
        self.names = (mine, *bot_names)
        config = TableConfig(secrets.token_bytes(16), self.game, dict(self.options),
                             (self.identity.public, *(i.public for i in ids)), self.names)
        self.peer = TablePeer(config, self.identity, timeout=self.timeout)
        seats = set(config.keys) - {self.identity.public}
        links = Links(self.identity, config.table, seats.__contains__, self._frame,
                      self._linked, self._lost, self._quiet)
        self._links = links
        ports = [await links.listen(["127.0.0.1"])]
        for seat, ident in enumerate(ids, start=1):
            log = tempfile.TemporaryFile()
            self._logs.append(log)
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "p2pcards.net.local",
                stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=log)
            self._procs.append(proc)
            assert proc.stdin is not None and proc.stdout is not None
            order = {"seat": seat, "key": ident.key.private_bytes_raw().hex(), "bot": "good",
                     "config": encode(config.to_wire()).hex(), "limit_s": 7 * 24 * 3600, "timeout": self.timeout}
            proc.stdin.write((json.dumps(order) + "\n").encode())
            await proc.stdin.drain()
            line = await asyncio.wait_for(proc.stdout.readline(), 30)
            if not line:
                raise P2PCardsError(f"bot {bot_names[seat - 1]} did not start: {self._log_tail(seat - 1)}")
            ports.append(int(json.loads(line)["port"]))
        for proc in self._procs:  # each bot dials the seats before it, us included
            assert proc.stdin is not None
            proc.stdin.write((json.dumps({"ports": ports}) + "\n").encode())
            await proc.stdin.drain()
        self._seat = Seat(self.peer, links, on_note=self._note, gone_after=self.timeout * 2)
        self._last_frame = self.clock_fn()
        self._tasks.append(asyncio.get_running_loop().create_task(self._run()))
        while self._seat.started is None and not self._tasks[0].done():
            await asyncio.sleep(0.05)
        self._started = self._seat.started is not None
        if not self._started:
            raise P2PCardsError(f"the bots did not link to us: {self._log_tail(0)}")

    def _log_tail(self, i: int) -> str:
        log = self._logs[i]
        log.seek(0)
        lines = log.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no output"

    async def _run(self) -> None:
        assert self._seat is not None
        try:
            await self._seat.play(7 * 24 * 3600)
        except LinkBroken:
            pass
        self._changed()

    def _frame(self, link: Link, kind: int, payload: bytes) -> None:
        if kind not in (FRAME, REQUEST) or self._seat is None:
            raise LinkBroken(f"frame kind {kind} has no place here")
        self._last_frame = self.clock_fn()
        self._seat.take(link, kind, payload)
        self._after()

    def _linked(self, link: Link) -> None:
        if self._seat is not None:
            self._seat.linked(link)

    def _lost(self, link: Link, why: str) -> None:
        if self._seat is not None:
            self._seat.lost(link, why)
        self._changed()

    def _quiet(self, link: Link, quiet: bool) -> None:
        if self._seat is not None:
            self._seat.quiet(link, quiet)

    def _note(self, note: Note) -> None:
        if note.kind != "event":  # the engine's own event list below has every event, in order
            self._notes.append(note)
        self._after()

    def _after(self) -> None:
        """After anything reached our peer: its new events, a round-end snapshot, a wake-up for the screen."""
        self._take_events()
        self._snapshot()
        self._changed()

    def _take_events(self) -> None:
        """The engine's new events as notes: what every player saw happen, in the log's order."""
        if self.peer is None:
            return
        events = self.peer.game.events
        self._notes.extend(Note("event", str(e)) for e in events[self._events_seen:])
        self._events_seen = len(events)

    def _snapshot(self) -> None:
        """Keep our view at the end of each round: the next deal replaces it soon after."""
        if self.peer is None:
            return
        v = self.peer.view()
        if v.rounds_played > len(self._round_views):
            self._round_views.append(v)

    def _changed(self) -> None:
        self._event.set()

    def view(self) -> View | None:
        """Our own player's view of the game now (None until the table has started)."""
        return None if self.peer is None else self.peer.view()

    def round_views(self) -> list[View]:
        """Our view at the end of each round played so far."""
        return list(self._round_views)

    def play(self, move: Move) -> None:
        """Send our move; IllegalMove when it cannot be played now."""
        if self._seat is None or not self._started:
            raise IllegalMove("the table has not started yet")
        self._seat.shell.play(move)
        self._after()

    def busy(self) -> bool:
        """True while our move or a reveal we are owed is on its way."""
        return self.peer is None or self.peer.busy()

    def take_notes(self) -> list[Note]:
        """The notes since the last call."""
        self._take_events()  # ticks of our own clock (a window closing) make events too
        self._snapshot()
        notes, self._notes = self._notes, []
        return notes

    async def changed(self, timeout: float) -> None:
        """Return when something changed, or after `timeout` seconds."""
        try:
            await asyncio.wait_for(self._event.wait(), timeout)
        except TimeoutError:
            pass
        self._event.clear()

    def progress(self) -> Progress | None:
        """The next round's shuffle while it is under way: keys in and passes verified, from our own peer."""
        peer = self.peer
        if peer is None or peer.finished or peer.stopped:
            return None
        v = peer.view()
        if v.round and v.rounds_played < v.round:
            return None  # a round is being played
        rs = peer.rs
        if rs is None or rs.number != v.round + 1:
            return Progress(v.round + 1, 0, 0, len(self.names))
        keys, chained = rs.decks.progress()
        return Progress(rs.number, keys, max(0, chained - len(rs.decks.chains)), len(self.names))

    def stall(self) -> Stall | None:
        """Silence while we are not the one to move, or a seat missing."""
        peer = self.peer
        if peer is None or peer.finished or peer.stopped:
            return None
        missing = 0 if self._seat is None else len(self._seat.missing)
        waited = self.clock_fn() - self._last_frame
        if missing == 0 and (waited < STALL_S or peer.view().legal):
            return None
        return Stall(waited, self.timeout, missing)

    def finished(self) -> bool:
        """True once the game is over and verified."""
        return self.peer is not None and self.peer.finished

    def stopped(self) -> str | None:
        """Why the table stopped, or None."""
        return None if self.peer is None else self.peer.stopped

    async def leave(self) -> None:
        """Tell the others we leave (unless the game is over), close the links, end the bot processes."""
        peer, seat = self.peer, self._seat
        if peer is not None and seat is not None and self._started and not (peer.finished or peer.stopped):
            seat.shell.leave("quit")
            await asyncio.sleep(0.2)  # let the leave message go out
        if seat is not None:
            seat.close()
        for task in self._tasks:
            task.cancel()
        if self._links is not None:
            await self._links.close("leaving")
        for proc in self._procs:
            try:
                await asyncio.wait_for(proc.wait(), 3)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        for log in self._logs:
            log.close()
