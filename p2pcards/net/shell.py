"""The asyncio shell around one sans-IO `TablePeer`: frames in, broadcasts out, wake-ups at its wake time.

The shell owns no sockets: it is given a `broadcast` callable and fed frames with `receive`. It
keeps a reference to every timer it schedules, ticks the peer exactly when `wake_time()` asks
(never on a fixed poll), drives an optional bot (its think time counted from when the peer became
ready for a move, as a player's is from seeing the cards), and is used as `async with TableShell(...)`,
which cancels every timer on the way out, whatever the exit path. It takes what is waited on
first (see `can_wait`), and once quiet for IDLE_S lets the peer make ahead what the next draw
will cost it (`prepare`).
"""

from __future__ import annotations

import asyncio
import random
import time
from collections import deque
from collections.abc import Callable
from types import TracebackType
from typing import NamedTuple

from ..bots.base import Bot
from ..errors import IllegalMove
from ..games.base import Move
from ..table.chains import Precedence, frame_head
from ..table.outputs import NoteKind
from ..table.peer import Note, Send, TablePeer
from .store import SeatStore

MAX_NOTES = 1000  # the newest notes kept for a UI or a summary; older ones are dropped, never hoarded
MAX_LATENCIES = 10_000  # the newest move latencies kept per action
# Frames nobody waits on us for (a private box to another seat, a move we do not order) are taken
# this much later, or just before a frame that needs them, whichever comes first: on a machine
# shared by several peers, the CPU goes first to the peer that will show a card. Not much later:
# the deal's boxes for other seats (49 at 8 seats) must all be taken before the round's first draw
# (a bot draws 25 ms after its cards at the soonest), or the drawer takes them on the draw's way,
# the chain of every seat that answers it coming after its deal boxes. At 20 ms, 4 every 2 ms, 4 to 6
# of some 170 draws in 8 games of 8 seats on 2 cores were shown past 10 ms; at 5 ms, 8 every 1 ms, 1.
LATER_S = 0.005
MAX_LATER = 64
LATER_CHUNK = 8  # frames that waited, taken in one go
LATER_GAP_S = 0.001  # between two such chunks: a burst of boxes for other seats leaves the CPU to what is waited on
IDLE_S = 0.02  # quiet for this long: the peer makes ahead what the next draw will cost it


class _Waiting(NamedTuple):
    """A frame that waits to be taken, with when it came (our clock), its sender and type, and whether it
    came first hand (not sent again)."""

    frame: bytes
    at: float
    precedence: Precedence
    sender: bytes
    type: str
    live: bool


def wall_clock() -> float:
    """The wall clock: the orderer's stamps are checked against it, so peers' clocks must agree (NTP)."""
    return time.time()


class TableShell:
    """Runs one TablePeer on an event loop: `receive` frames, `play` moves, await `done`."""

    def __init__(self, peer: TablePeer, broadcast: Callable[[Send], None], bot: Bot | None = None,
                 think: float = 0.05, clock: Callable[[], float] = wall_clock,
                 on_note: Callable[[Note], None] | None = None, store: SeatStore | None = None) -> None:
        self.peer = peer
        peer.order_first = True  # our orders leave before we apply them: `_go_on` applies them next turn
        self.store = store  # where the peer's journal goes before anything it sends (write-ahead)
        self.bot = bot
        self.think = think
        self.clock = clock
        self.notes: deque[Note] = deque(maxlen=MAX_NOTES)
        self.bytes_out = 0
        self.frames_out = 0
        self._broadcast = broadcast
        self._on_note = on_note
        self._wake: asyncio.TimerHandle | None = None
        self._wake_at = 0.0  # when `_wake` is due, on our clock
        self._bot_timer: asyncio.TimerHandle | None = None
        self._ready = False  # the peer was ready for a move (not busy) when we last emitted
        self._later: list[_Waiting] = []  # frames taken SOON or LATER, in the order they came
        self._later_timer: asyncio.TimerHandle | None = None
        self._soon: asyncio.Handle | None = None  # takes the first that waits and is SOON
        self._going: asyncio.Handle | None = None  # applies the orders we sent and have not applied (`_go_on`)
        self._idle: asyncio.TimerHandle | None = None
        self._active = 0.0  # when we last emitted (loop time)
        self.first_turn: float | None = None  # when the peer was first ready for a move (set-up done)
        # Our moves' times from play to shown (ordered, applied, every card it reveals to us learned), by action.
        self.latency: dict[str, deque[float]] = {}
        self._moved: tuple[str, float] | None = None
        self._done = asyncio.Event()
        self._loop = asyncio.get_running_loop()

    async def __aenter__(self) -> TableShell:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        self.close()

    def close(self) -> None:
        """Cancel every timer; the peer is left as it is."""
        for handle in (self._wake, self._bot_timer, self._later_timer, self._idle, self._soon, self._going):
            if handle is not None:
                handle.cancel()
        self._wake = self._bot_timer = self._later_timer = self._idle = self._soon = self._going = None
        self._later = []
        self._done.set()

    @property
    def over(self) -> bool:
        """True once the table finished or stopped (or the shell was closed)."""
        return self._done.is_set()

    async def done(self) -> None:
        """Wait until the table finishes or stops."""
        await self._done.wait()

    # ------------------------------------------------------------ inputs

    def start(self) -> None:
        """Say ready (every link must be up: a frame sent before is lost)."""
        self._emit(self.peer.start(self.clock()))

    def resume(self) -> None:
        """Go on with a peer resumed from its journal (it said ready before it stopped): send what it signed
        beyond its journal."""
        self._emit(self.peer.go_on(self.clock()))

    def receive(self, frame: bytes, live: bool = True) -> None:
        """One frame from any link (not `live`: sent again, protocol.md §18.5). One that only we wait on is
        taken on the next turn of the loop (after the frames others wait on us for, read meanwhile); one
        nobody waits on within LATER_S; each never before an earlier frame of its sender."""
        if self.over:
            return
        precedence = self.peer.precedence(frame)
        if precedence is Precedence.NOW or len(self._later) >= MAX_LATER:
            self._take_before(frame_head(frame), len(self._later))
            if not self.over:
                self._emit(self.peer.receive(frame, self.clock(), live))
            return
        head = frame_head(frame)  # well formed: the peer parsed it
        assert head is not None
        self._later.append(_Waiting(frame, self.clock(), precedence, *head, live))
        if precedence is Precedence.LATER and self._later_timer is None:
            self._later_timer = self._loop.call_later(LATER_S, self._take_later)
        self._plan()

    def _take_before(self, head: tuple[bytes, str] | None, upto: int) -> None:
        """Take the frames of the first `upto` that waited and must come before a frame of `head`: every move
        (an order may name it), and every earlier frame of the senders of those moves and of `head` (each chain
        is taken in order); all of them when too many wait, or before a fault report (the frames it relays as
        evidence, another seat's report among them, must find that seat's chain taken up to them, or they wait
        unchecked as the table stops). The others wait on."""
        every = len(self._later) >= MAX_LATER or (head is not None and head[1] == "fault")
        senders = {w.sender for w in self._later[:upto] if w.type == "move"} | ({head[0]} if head else set())
        first = [w for w in self._later[:upto] if every or w.sender in senders]
        self._later = [w for w in self._later[:upto] if not (every or w.sender in senders)] + self._later[upto:]
        self._take(first)

    def _take_soon(self) -> None:
        """Take the first frame that only we wait on (and what must come before it); the next one on the
        next turn of the loop."""
        self._soon = None
        at = next((i for i, w in enumerate(self._later) if w.precedence is Precedence.SOON), None)
        if at is None:
            return
        waiting = self._later.pop(at)
        self._take_before((waiting.sender, waiting.type), at)
        self._take([waiting])

    def _take_later(self) -> None:
        """Take LATER_CHUNK frames that nobody waits on, none before an earlier frame of its sender that waits
        on: between two chunks the loop reads the links, so a frame that is waited on is not held up behind
        a burst of boxes for other seats."""
        self._later_timer = None
        taken: list[_Waiting] = []
        rest: list[_Waiting] = []
        behind: set[bytes] = set()  # senders with a frame that stays: nothing of theirs may pass it
        for w in self._later:
            if len(taken) < LATER_CHUNK and w.precedence is Precedence.LATER and w.sender not in behind:
                taken.append(w)
            else:
                rest.append(w)
                behind.add(w.sender)
        self._later = rest
        self._take(taken)

    def _take(self, waited: list[_Waiting]) -> None:
        """Take `waited`, each at the time it came (what still waits is seen to first)."""
        self._plan()
        for w in waited:
            if not self.over:
                self._emit(self.peer.receive(w.frame, w.at, w.live))

    def _plan(self) -> None:
        """See that what waits is taken in time: SOON on the next turn, LATER in chunks (no timer for nothing)."""
        later = any(w.precedence is Precedence.LATER for w in self._later)
        if not later and self._later_timer is not None:
            self._later_timer.cancel()
            self._later_timer = None
        elif later and self._later_timer is None and not self.over:
            self._later_timer = self._loop.call_later(LATER_GAP_S, self._take_later)
        if self._soon is None and not self.over and any(w.precedence is Precedence.SOON for w in self._later):
            self._soon = self._loop.call_soon(self._take_soon)

    def play(self, move: Move) -> None:
        """Our own move (from a UI); IllegalMove when our engine already refuses it."""
        at = self.clock()
        outputs = self.peer.play(move, at)
        self._moved = (move.action, at)
        self._emit(outputs)

    def aid(self, on: bool) -> None:
        """Tell the table we turned our memory aid on or off."""
        self._emit(self.peer.aid(on, self.clock()))

    def leave(self, why: str) -> None:
        """Leave the table for good."""
        self._emit(self.peer.leave(self.clock(), why))

    def give_up(self) -> None:
        """Cut off from every other seat, and none came back: leave, the game unfinished here (protocol.md §14.9)."""
        self._emit(self.peer.give_up(self.clock()))

    def gone(self, seat: int, why: str) -> None:
        """A seat is gone from the network for good, as `why` says: we vote it gone (protocol.md §14.9)."""
        self._emit(self.peer.gone(seat, self.clock(), why))

    def absent(self, seat: int, missing: bool, closed: bool = False) -> None:
        """A seat's link is missing (lost or quiet; `closed`: closed by the other end), or back."""
        self.peer.absent(seat, missing, self.clock(), closed)

    def silent(self, seat: int, since: float, until: float) -> None:
        """Nothing came on a seat's link from `since` to `until` (our clock): it was cut for that while."""
        self.peer.silent(seat, since, until)

    def note(self, kind: NoteKind, detail: str, blame: str | None = None) -> None:
        """A note from the network layer (a seat missing, back), shown like the peer's own."""
        self._take_note(Note(kind, detail, blame))

    # ------------------------------------------------------------ outputs and timers

    def _emit(self, outputs: list[Send | Note]) -> None:
        if self.store is not None:
            self.store.append(self.peer.take_journal(), sync=any(isinstance(out, Send) for out in outputs))
        for out in outputs:
            if isinstance(out, Note):
                self._take_note(out)
            else:
                self.frames_out += 1
                self.bytes_out += len(out.frame)
                self._broadcast(out)
        if self.peer.finished or self.peer.stopped:
            self.close()
            return
        if self.peer.pending and self._going is None:
            self._going = self._loop.call_soon(self._go_on)
        ready = not self.peer.busy()
        if ready:
            if self.first_turn is None:
                self.first_turn = self.clock()
            if self._moved is not None:
                action, at = self._moved
                self.latency.setdefault(action, deque(maxlen=MAX_LATENCIES)).append(self.clock() - at)
                self._moved = None
        self._schedule()
        self._bot_soon(afresh=ready and not self._ready)
        self._ready = ready
        self._active = self._loop.time()
        if self._idle is None:
            self._idle = self._loop.call_later(IDLE_S, self._when_idle)

    def _go_on(self) -> None:
        self._going = None
        self._emit(self.peer.go_on(self.clock()))

    def _when_idle(self) -> None:
        self._idle = None
        quiet = self._loop.time() - self._active
        if quiet < IDLE_S:
            self._idle = self._loop.call_later(IDLE_S - quiet, self._when_idle)
        elif not self.over:
            self.peer.prepare()

    def _take_note(self, note: Note) -> None:
        self.notes.append(note)
        if self._on_note is not None:
            self._on_note(note)

    def _schedule(self) -> None:
        # A wake already due sooner stands: with frames coming faster than the peer's wake moves
        # on (now + 0.5 s), a tick put off at each of them would never come.
        wake, now = self.peer.wake_time(), self.clock()
        if self._wake is not None and wake is not None and self._wake_at <= max(wake, now):
            return
        if self._wake is not None:
            self._wake.cancel()
            self._wake = None
        if wake is not None:
            self._wake_at = max(wake, now)
            self._wake = self._loop.call_later(self._wake_at - now, self._tick)

    def _tick(self) -> None:
        self._wake = None
        self._emit(self.peer.tick(self.clock()))

    def _bot_soon(self, afresh: bool = False) -> None:
        """Let the bot choose a move in its think time (`afresh`: counted from now, we just became ready for one)."""
        if afresh and self._bot_timer is not None:
            self._bot_timer.cancel()
            self._bot_timer = None
        if self.bot is not None and self._bot_timer is None and not self.over:
            # Think time is for pacing only, not secret: `random` is fine here.
            self._bot_timer = self._loop.call_later(self.think * (0.5 + random.random()), self._bot_turn)

    def _bot_turn(self) -> None:
        self._bot_timer = None
        peer, bot = self.peer, self.bot
        if bot is None or self.over or peer.busy():
            return
        move = bot.choose(peer.view())
        if move is None:
            return  # nothing to do until something arrives or the clock moves: both reschedule us
        try:
            self.play(move)
        except IllegalMove:
            self._bot_soon()
