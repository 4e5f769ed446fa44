"""The client's one door to the network: a table session (start, moves in, views and notes out, leave).

Everything network-facing in the client lives here. `NetTable` is our seat at a table through the
network layer's `Node` (host or join, lobby, seat, play), run as tasks in the application's
asyncio loop. A table against bots is the same path: we host on loopback without multicast and
each bot is a real `p2pcards peer --bot good --peer 127.0.0.1:PORT` process that joins us, and
quits when its standard input closes, so a killed client leaves no bot behind.

At a LAN table given a `state` directory, our seat is journaled there (protocol.md §14.10) and
cleared once the table is over or we leave it; a client that crashed comes back into its round
with `saved` (ui/comeback.py finds it). A bot table keeps no journal: its bots go with the client.
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import IO, Any, Protocol

from ..crypto.identity import Identity, fingerprint
from ..errors import IllegalMove, InputError, LinkBroken, LocalError, MalformedMessage, P2PCardsError
from ..games.base import Move
from ..games.crescendo import CrescendoView
from ..games.crisp import CrispView
from ..net.discovery import Discovery, TableAd, ask_for_table, interface_addresses
from ..net.node import Node
from ..net.seat import GONE_AFTER_S
from ..net.shell import TableShell
from ..net.store import NodeState, SeatStore, begun_anew, clear, parse_journal
from ..sim.transcript import Transcript
from ..table.config import SEATS
from ..table.outputs import Cut
from ..table.peer import Note, Send, TablePeer
from ..table.resume import FRAMES, record_time

View = CrispView | CrescendoView
BOT_NAMES = ("Ada", "Bo", "Cy", "Di", "Ed", "Flo", "Gus")
STALL_S = 3.0  # how long the protocol waits on a seat before the client says so


@dataclass(frozen=True, slots=True)
class Progress:
    """Where the table stands outside play: the round being shuffled and how far its keys and passes are."""

    round: int
    keys: int
    passes: int
    seats: int


@dataclass(frozen=True, slots=True)
class Stall:
    """Who holds the table up: seats the protocol waits on, seats whose link is gone, and their countdowns."""

    owed: tuple[str, ...] = ()  # the seats the protocol has waited on for `waited` seconds
    waited: float = 0.0
    blamed_in: float = 0.0  # then the protocol blames them and the round is void
    missing: tuple[tuple[str, float], ...] = ()  # seats with no link or no heartbeat, and the seconds before we leave
    alone: bool = False  # every other seat is missing: perhaps the table went on without us
    cut_off: str | None = None  # why every other seat went missing at once, while they still are (§14.9)
    cut: Cut | None = None  # how (`cut_off` as a field)


def offered_seats(ad: TableAd, game: str) -> int | None:
    """The seats a table's ad says its host offers (taken and free: the host counts them as guests come and go, and
    their sum is what it offers, until it changes that in its lobby); None for a sum the game cannot seat (signed, it
    is still only the host's word)."""
    low, high = SEATS.get(game, (0, -1))
    return ad.taken + ad.free if low <= ad.taken + ad.free <= high else None


async def wait_changed(event: asyncio.Event, timeout: float) -> None:
    """Return when `event` is set (clearing it for the next change), or after `timeout` seconds."""
    try:
        await asyncio.wait_for(event.wait(), timeout)
    except TimeoutError:
        pass
    event.clear()


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

    def set_aid(self, on: bool) -> None:
        """Tell every seat we turned our memory aid on or off (LocalError before the table has started)."""

    def aided(self) -> frozenset[int]:
        """The seats whose memory aid is on, ours included."""

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

    def gave_up(self) -> Cut | None:
        """How we were cut off from every other seat when we gave the table up (protocol.md §14.9), or None."""

    async def leave(self) -> None:
        """Leave the table cleanly: tell the others, close the links, end our processes."""

    async def hang_up(self) -> None:
        """Our terminal closed: leave, or go as after a crash when the seat can be come back into."""


@dataclass
class NetTable:
    """Our seat at a table on the network: `open`, then `host` or `join` (or give `bots`), then `start`."""

    identity: Identity
    game: str = "crisp"
    options: Mapping[str, Any] = field(default_factory=dict)
    bots: int = 0  # > 0: host on loopback only, without multicast, and start this many bot peers
    interfaces: Sequence[str] | None = None
    mdns: bool = True
    disco: Discovery | None = None  # the lobby's, shared (one per process)
    timeout: float | None = None  # how long a peer may owe a message (None: the table's default)
    gone_after: float = GONE_AFTER_S
    clock_fn: Callable[[], float] = time.time
    record: str | None = None  # save the game's transcript (every signed frame we sent or took) here when we leave
    overwrite: bool = False  # the transcript may replace a file already at `record`
    recorded: str | None = field(default=None, init=False)  # where the transcript was saved, once it was
    state: Path | None = None  # journal our seat here (a LAN table), to come back after a crash
    saved: NodeState | None = None  # the seat journaled in `state` to come back into, instead of a lobby
    table_name: str = ""
    offered: int | None = None  # the seats the table offers, the host's among them (None: not known)
    names: tuple[str, ...] = ()
    me: int = 0
    node: Node | None = None
    bot_procs: dict[str, asyncio.subprocess.Process] = field(default_factory=dict)
    _logs: dict[str, IO[bytes]] = field(default_factory=dict)
    _notes: list[Note] = field(default_factory=list)
    _event: asyncio.Event = field(default_factory=asyncio.Event)
    _task: asyncio.Task[None] | None = None
    _round_views: list[View] = field(default_factory=list)
    _transcript: Transcript | None = None
    _events_seen: int = 0
    _dealt: int = 0  # the last round whose deal the notes said
    _following: TablePeer | None = None  # the peer whose seats and events we show
    _started: bool = False
    _closed: bool = False

    # ------------------------------------------------------------ the lobby

    async def open(self) -> None:
        """Listen for links (and join multicast DNS unless told not to); with `saved`, take that seat again:
        listen where it did and dial the seats before it (LocalError when its journal cannot be replayed)."""
        if self.bots:
            self.interfaces, self.mdns = ["127.0.0.1"], False
        saved = self.saved
        if saved is not None:  # no lobby and no table ad: the others know where we listen (our peer ad, as before)
            self.mdns, self.table_name = self.mdns and saved.announced, f"table {saved.config.table.hex()[:8]}"
            assert self.state is not None
            try:
                partial = self.record is not None and begun_anew(self.state)
            except (LocalError, OSError) as exc:
                raise LocalError(f"the saved game cannot be taken up again ({exc})") from None
            if partial:
                # Played without --record, its journal was begun anew each round: a recording made from it
                # would miss the rounds before (`p2pcards verify` finds such a file incomplete).
                self.record = None
                self._notes.append(Note("local", "This game is not recorded: it was played without --record, and "
                                                 "what was kept of it to come back holds its last rounds only"))
        node = Node(self.identity, self.interfaces, mdns=self.mdns, port=0 if saved is None else saved.port,
                    on_note=self._note, gone_after=self.gone_after, disco=self.disco if self.mdns else None,
                    timeout=self.timeout, state=self.state, whole_journal=self.record is not None,
                    comeback=saved is not None)
        await node.__aenter__()
        self.node = node
        if saved is not None:
            assert self.state is not None
            try:
                store = SeatStore(self.state, saved.config, saved.seat, compacting=self.record is None)
                node.resume(store, saved.config, saved.dial, saved.later)
            except (LocalError, MalformedMessage, ValueError, KeyError, TypeError) as exc:  # a damaged journal
                raise LocalError(f"the saved game cannot be taken up again ({exc})") from None

    async def host(self, table_name: str, seats: int | None = None) -> None:
        """Open a table of our game and options; InputError when an option is not the host's to set."""
        assert self.node is not None
        await self.node.host(self.game, self.options, table_name, seats)
        self.table_name = self.node.ad.ad.name if self.node.ad else table_name
        self.offered = self.node.seats_wanted

    async def join(self, where: TableAd | Sequence[tuple[str, int]]) -> None:
        """Link to a table's host and join its lobby; LinkBroken when it will not have us."""
        assert self.node is not None
        await self.node.join(where)
        assert self.node.lobby is not None
        lobby = self.node.lobby
        self.game = lobby.game or self.game
        self.options = dict(lobby.options)
        if isinstance(where, TableAd):
            self.table_name = where.name
            self.offered = offered_seats(where, self.game)
        else:  # joined by address: the host's mDNS responder names the table, if it announces it (protocol.md §17)
            ad = await ask_for_table(where[0][0], lobby.table, lobby.host)
            host = lobby.names.get(lobby.host)
            address = f"{where[0][0]}:{where[0][1]}"
            if ad is not None:
                self.table_name = ad.name
                self.offered = offered_seats(ad, self.game)
            else:  # no ad: the host's `table` message names the host, and no message says how many seats it offers
                self.table_name = f"{host}'s table at {address}" if host else address

    @property
    def is_host(self) -> bool:
        """True when we opened this table."""
        return self.node is not None and self.node.is_host

    @property
    def port(self) -> int:
        """The TCP port our links listen on (guests without multicast give it with --peer)."""
        return 0 if self.node is None else self.node.links.port

    @property
    def addresses(self) -> tuple[str, ...]:
        """Where guests without multicast reach us: the IPv4 addresses of our interfaces but loopback, or loopback's
        when we use it alone (guests on this machine: the lobby said "--peer ADDRESS:PORT", no address to type)."""
        try:
            found = interface_addresses(self.interfaces)
        except InputError:
            return ()
        return tuple(a for a in found if not a.startswith("127.")) or tuple(found)

    def lobby_players(self) -> list[tuple[str, str]]:
        """Everyone in the lobby, in join order (the host first), with their key fingerprints."""
        lobby = None if self.node is None else self.node.lobby
        return [] if lobby is None else [(name, fingerprint(key)) for key, name in lobby.names.items()]

    def can_seat(self) -> str | None:
        """Why the host cannot seat the table now, or None when it can."""
        low, high = SEATS[self.game]
        count = len(self.lobby_players())
        if not self.is_host:
            return "only the host starts the table"
        if count < low:
            return f"{self.game.capitalize()} needs at least {low} players"
        if count > high:
            return f"{self.game.capitalize()} seats at most {high} players"
        return None

    def take_off(self, fpr: str) -> None:
        """Host: take the guest whose key has fingerprint `fpr` off the table, for good; InputError when no guest has."""
        lobby = None if self.node is None else self.node.lobby
        key = None if lobby is None else next((k for k in lobby.names if fingerprint(k) == fpr), None)
        if self.node is None or key is None:
            raise InputError("no such guest in the lobby")
        self.node.take_off(key)

    def offer(self, seats: int) -> None:
        """Host: offer `seats` seats (ours among them) from now on; InputError when the game cannot seat that many, or
        more have joined already."""
        if self.node is None:
            raise InputError("no table is open")
        self.node.offer_seats(seats)
        self.offered = seats

    def seat_table(self) -> None:
        """Host: close the lobby and seat everyone in it (see `can_seat`)."""
        assert self.node is not None
        self.node.seat_table()

    def seated(self) -> bool:
        """True once the table is seated with us at it."""
        return self.node is not None and self.node.seat is not None

    def lobby_trouble(self) -> str | None:
        """Why the lobby is over for us (the host went away, the table was seated without us), or None."""
        return None if self.node is None else self.node._join_failed

    async def lobby_changed(self, timeout: float) -> None:
        """Return when the lobby changed, or after `timeout` seconds."""
        if self.node is None:
            await asyncio.sleep(timeout)
            return
        await wait_changed(self.node.changed, timeout)
        self._follow_ad()

    def _follow_ad(self) -> None:
        """(A guest) take the seats offered from the freshest ad its host signed for our table: the host may change
        them in its lobby."""
        node = self.node
        lobby = None if node is None else node.lobby
        if node is None or node.disco is None or node.is_host or lobby is None:
            return
        ad = node.disco.hosted.get((lobby.host, lobby.table))
        if ad is not None and (offered := offered_seats(ad, self.game)) is not None:
            self.offered = offered

    # ------------------------------------------------------------ bots

    async def _start_bots(self) -> None:
        """Host our table on loopback and let `bots` bot processes join it."""
        await self.host(f"{self.identity.name}'s table", self.bots + 1)
        bot_names = [n for n in BOT_NAMES if n != self.identity.name][: self.bots]
        for name in bot_names:
            log = tempfile.TemporaryFile()
            self._logs[name] = log
            self.bot_procs[name] = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "p2pcards", "peer", "--bot", "good", "--name", name, "--attached",
                "--interface", "127.0.0.1", "--peer", f"127.0.0.1:{self.port}", "--gone-after", f"{self.gone_after:g}",
                stdin=asyncio.subprocess.PIPE, stdout=log, stderr=log)
        assert self.node is not None
        try:
            async with asyncio.timeout(60):
                while len(self.lobby_players()) < self.bots + 1:
                    gone = [n for n, p in self.bot_procs.items() if p.returncode is not None]
                    if gone:
                        raise P2PCardsError(f"bot {gone[0]} stopped: {self._log_tail(gone[0])}")
                    await self.lobby_changed(0.2)
        except TimeoutError:
            raise P2PCardsError("the bots did not join within 60 s") from None
        self.seat_table()

    def _log_tail(self, name: str) -> str:
        log = self._logs[name]
        log.seek(0)
        lines = log.read().decode(errors="replace").strip().splitlines()
        return lines[-1] if lines else "no output"

    # ------------------------------------------------------------ the table

    @property
    def peer(self) -> TablePeer | None:
        """Our table peer, once seated."""
        return None if self.node is None or self.node.seat is None else self.node.seat.peer

    async def start(self) -> None:
        """Wait until the table is seated and linked to every seat, and start playing."""
        if self.node is None:
            await self.open()
        node = self.node
        assert node is not None
        if self.bots and node.lobby is None:
            await self._start_bots()
        if node.seat is None:
            await node.wait_seated()
        seat = node.seat
        assert seat is not None
        self.names, self.me = seat.peer.cfg.names, seat.peer.me
        self._following = seat.peer
        self.game, self.options = seat.peer.cfg.game, dict(seat.peer.cfg.options)
        if self.record is not None:
            self._transcript = Transcript(seat.peer.cfg)
            store = seat.shell.store
            keep_frames(seat.shell, self._transcript, journaled(store.path) if self.saved and store is not None else ())
            seat.on_shell = self._record
        self._task = asyncio.get_running_loop().create_task(self._run())
        while seat.started is None and not self._task.done():
            await asyncio.sleep(0.05)
        self._started = seat.started is not None
        if not self._started:
            raise P2PCardsError("the other seats did not link to us")

    def _record(self, shell: TableShell) -> None:
        """Recording: the table went on without a seat (protocol.md §14.9); its frames go in the transcript too
        (coming back into it, those of its journal first, at the times they were taken or signed)."""
        assert self._transcript is not None
        self._transcript.follow(shell.peer.cfg)
        keep_frames(shell, self._transcript, () if shell.store is None else journaled(shell.store.path))

    async def _run(self) -> None:
        assert self.node is not None
        try:
            await self.node.play(None, 7 * 24 * 3600)
        except LinkBroken:
            pass
        self._forget()  # the table is over: nothing to come back to
        self._changed()

    def _forget(self) -> None:
        if self.state is not None:
            clear(self.state)

    def _note(self, note: Note) -> None:
        # The engine's own event list below has every event, in order; who came and went before the seats is said
        # by the lobby's screen (a guest who left and came back was still "left the lobby" in the table's log).
        if note.kind != "event" and self.peer is not None:
            # The events our peer holds came first (back from the journal, the round's deal was replayed before the
            # first seat was found missing): said first, so that the log reads in the order things happened.
            self._take_events()
            self._notes.append(note)
        self._after()

    def _after(self) -> None:
        """After anything reached our peer: its new events, a round-end snapshot, a wake-up for the screen."""
        self._take_events()
        self._snapshot()
        self._changed()

    def _take_events(self) -> None:
        """The engine's new events as notes: what every player saw happen, in the log's order, as our player sees it
        (a card named by its face once they know it). An event that names a card whose face is owed to us (a card a
        time-out turned face up is revealed after the event) waits for it, and the events after it with it."""
        peer = self.peer
        if peer is None:
            return
        if peer is not self._following:  # the table went on without a seat (protocol.md §14.9): its seats
            self._following = peer
            self.names, self.me = peer.cfg.names, peer.me
            self._events_seen = self._dealt = 0
        game = peer.game
        while True:
            if game.round_no > self._dealt and self._events_seen >= game.round_events:
                # A table deals blind (rules.deal) and logs no deal event: said here, as a referee's engine logs it,
                # so that the log tells who deals each round.
                self._dealt = game.round_no
                self._notes.append(Note("event", f"{game.players[game.dealer_of(game.round_no)]} deal {game.round_no}"))
            if self._events_seen >= len(game.events):
                break
            if game.faces_owed(peer.me, self._events_seen) and peer.stopped is None:
                break
            self._notes.append(Note("event", str(game.event_for(peer.me, self._events_seen))))
            self._events_seen += 1

    def _peer_view(self) -> View | None:
        """Our peer's view, counting the rounds played before its table: a table that went on without a seat has
        a fresh engine, whose own rounds start after those it carries (protocol.md §14.9)."""
        peer = self.peer
        if peer is None:
            return None
        v = peer.view()
        before = peer.carry[1]
        return replace(v, rounds_played=v.rounds_played + before) if before else v

    def _snapshot(self) -> None:
        """Keep our view at the end of each round: the next deal replaces it soon after. Back after a crash, the
        rounds that ended before keep our first view (their totals are right, their faces never shown)."""
        v = self._peer_view()
        if v is None:
            return
        while v.rounds_played > len(self._round_views):
            self._round_views.append(v)

    def _changed(self) -> None:
        self._event.set()

    def view(self) -> View | None:
        """Our own player's view of the game now (None until the table has started)."""
        return None if not self._started else self._peer_view()

    def round_views(self) -> list[View]:
        """Our view at the end of each round played so far."""
        return list(self._round_views)

    def play(self, move: Move) -> None:
        """Send our move; IllegalMove when it cannot be played now."""
        if self.node is None or self.node.seat is None or not self._started:
            raise IllegalMove("the table has not started yet")
        self.node.seat.shell.play(move)
        self._after()

    def set_aid(self, on: bool) -> None:
        """Tell every seat we turned our memory aid on or off."""
        if self.node is None or self.node.seat is None or not self._started:
            raise LocalError("the table has not started yet")
        self.node.seat.shell.aid(on)
        self._after()

    def aided(self) -> frozenset[int]:
        """The seats whose memory aid is on, as they told the table."""
        return frozenset() if self.peer is None else frozenset(self.peer.aided)

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
        await wait_changed(self._event, timeout)

    def progress(self) -> Progress | None:
        """The next round's shuffle while it is under way: keys in and passes verified, from our own peer."""
        peer = self.peer
        if peer is None or peer.finished or peer.stopped:
            return None
        v = self._peer_view()
        assert v is not None
        if v.round and v.rounds_played < v.round:
            return None  # a round is being played
        rs = peer.rs
        if rs is None or rs.number != v.round + 1:
            return Progress(v.round + 1, 0, 0, len(self.names))
        keys, chained = rs.decks.progress()
        return Progress(rs.number, keys, max(0, chained - len(rs.decks.chains)), len(self.names))

    def stall(self) -> Stall | None:
        """Seats whose link is gone, or that the protocol has waited on for STALL_S seconds, or None."""
        peer, node = self.peer, self.node
        if peer is None or node is None or node.seat is None or peer.finished or peer.stopped:
            return None
        seat, loop = node.seat, asyncio.get_running_loop()
        missing = tuple((seat.names[key], max(0.0, handle.when() - loop.time()))
                        for key, handle in seat.missing.items())
        dog, now = peer.watchdog, self.clock_fn()
        waited = 0.0 if dog.since is None else now - dog.since
        owed = tuple(peer.names[s] for s in sorted(dog.owed)) if waited >= STALL_S else ()
        if not owed and not missing:
            return None
        alone = len(missing) == len(seat.names) - 1
        # Cut off stays true of the table (we are no witness of our own) once a seat is back, but is no news then.
        return Stall(owed, waited, max(0.0, peer.timeout - waited), missing, alone, peer.cut_off if alone else None,
                     peer.cut if alone else None)

    def finished(self) -> bool:
        """True once the game is over and verified (or ended by a vote), with no table going on after it."""
        return self.peer is not None and self.peer.finished and self.peer.successor is None

    def stopped(self) -> str | None:
        """Why the table stopped, or None."""
        return None if self.peer is None else self.peer.stopped

    def gave_up(self) -> Cut | None:
        """How we were cut off when we gave the table up, or None."""
        return None if self.peer is None else self.peer.gave_up

    async def hang_up(self) -> None:
        """Our terminal closed (SIGHUP): a seat journaled in `state` and still in play is kept to come back into,
        with no leave (the process ends as after a crash; the lobby's Discovery withdraws our ads); else `leave`."""
        seat = None if self.node is None else self.node.seat
        if self.state is None or seat is None or seat.over:
            await self.leave()

    async def leave(self) -> None:
        """Leave cleanly: a signed leave while the game goes on, goodbyes on every link, our bots told to quit."""
        if self._closed:
            return
        self._closed = True
        if self.node is not None:
            over = self.node.seat is not None and self.node.seat.over
            await self.node.close("the table is over" if over else "quit")
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        for proc in self.bot_procs.values():  # the end of its standard input tells a bot to quit
            if proc.stdin is not None:
                proc.stdin.close()
        for proc in self.bot_procs.values():
            try:
                await asyncio.wait_for(proc.wait(), 5)
            except TimeoutError:
                proc.kill()
                await proc.wait()
        for log in self._logs.values():
            log.close()
        self._forget()  # we left cleanly: there is nothing to come back to
        if self._transcript is not None and self.record is not None:
            self._transcript.save(self.record, self.overwrite)
            self.recorded = self.record


def journaled(path: Path) -> list[tuple[float, bytes]]:
    """Every frame of the journal at `path`, in its order, at the time it was taken or signed (the frames
    held when the journal began, at time 0: the first time after them), as a recording made all along.

    A frame that a later one of its chain came before is journaled at when that one came (§7.2); a
    recording is in time order, so such a frame is kept at the time of the frame before it."""
    records, _ = parse_journal(path.read_bytes())
    frames = [(record_time(number), data) for kind, number, data in records if kind in FRAMES]
    last = next((t for t, _ in frames if t > 0), 0.0)
    kept = []
    for t, frame in frames:
        last = max(last, t)
        kept.append((last, frame))
    return kept


def keep_frames(shell: TableShell, transcript: Transcript, before: Sequence[tuple[float, bytes]] = ()) -> None:
    """Keep in `transcript` the frames `before` (with their times), every frame `shell`'s peer already holds, then
    every frame it sends or takes until the table is over, each at the time it went out or came in
    (`Transcript.keep` leaves out copies and what no seat signed)."""
    for at, sent in before:
        transcript.keep(at, sent)
    peer = shell.peer
    for seat in range(peer.n):  # the table's chains start afresh at seq 0 (lobby frames are of the lobby)
        seq = 0
        while (held := peer.frame(seat, seq)) is not None:
            transcript.keep(shell.clock(), held)
            seq += 1
    receive, broadcast = shell.receive, shell._broadcast  # pylint: disable=protected-access

    def receive_kept(frame: bytes, live: bool = True) -> None:
        if not shell.over:
            transcript.keep(shell.clock(), frame)
        receive(frame, live)

    def broadcast_kept(out: Send) -> None:
        transcript.keep(shell.clock(), out.frame)
        broadcast(out)

    # The shell has no hook of its own for a recorder: its two doors are wrapped on this instance.
    shell.receive = receive_kept  # type: ignore[method-assign]
    shell._broadcast = broadcast_kept  # pylint: disable=protected-access
