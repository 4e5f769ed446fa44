"""An in-memory network on a virtual clock: per-link delay, jitter, loss and duplication, no ordering.

Lost frames are asked for again as on a real link (table/recovery.py): each peer's requests go
out at its ticks, cross the same lossy links, and are answered with frames sent again (which time no stamp).

It drives real `TablePeer`s (real signatures, real deck crypto) with bots that see only their
own peer's view, so whole games run in a test without sockets and still meet a network's
reorderings. Its clock is virtual: a game of minutes runs in the time its CPU work takes. With `cores`, each peer
also has a core of its own: its calls take the CPU time they took on that clock, what it sends leaves
when the call ends, and what comes meanwhile waits until it is free (a LAN of machines, each a player's).
A pause of the garbage collector is charged 1/n to the call it interrupts: the one process holds every
peer's objects, and a peer's own heap is about 1/n of them.
"""

from __future__ import annotations

import gc
import heapq
import random
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, TypeVar

from ..bots.base import Bot, View
from ..crypto.envelope import parse
from ..errors import IllegalMove, MalformedMessage
from ..games.base import Move
from ..table.peer import Note, Send, TablePeer
from ..table.recovery import Recovery


@dataclass
class LinkModel:
    """One link: `delay` plus uniform jitter up to `jitter` (seconds), plus `spike_s` more for a
    frame with probability `spike` (Wi-Fi); each frame lost with probability `loss`, else sent
    twice with probability `dup`."""

    delay: float = 0.004
    jitter: float = 0.012
    loss: float = 0.0
    dup: float = 0.0
    spike: float = 0.0
    spike_s: float = 0.0

    def sample(self, rng: random.Random) -> float:
        """One frame's transit time."""
        t = self.delay + rng.random() * self.jitter
        return t + self.spike_s if self.spike and rng.random() < self.spike else t

    def copies(self, rng: random.Random) -> int:
        """How many copies of one frame arrive: 0, 1 or 2."""
        if self.loss and rng.random() < self.loss:
            return 0
        return 2 if self.dup and rng.random() < self.dup else 1


@dataclass
class NetStats:
    """What crossed the network."""

    frames: int = 0
    bytes: int = 0
    requests: int = 0
    answers: int = 0
    by_type: dict[str, int] = field(default_factory=dict)  # frames sent first hand, by message type
    resent: int = 0  # our own moves sent again, not ordered RESEND_S after they went (protocol.md §18.5)


T = TypeVar("T")
Tap = Callable[[int, int, bytes], bytes | None]  # (sender, receiver, frame) -> frame to deliver, or None to drop
Rewrite = Callable[[int, bytes], list[bytes]]  # (sender, frame) -> the frames it really sends to everyone (a modified client)


class MemNet:
    """Peers, their bots and the links between them, run on one virtual clock."""

    def __init__(self, peers: Sequence[TablePeer], bots: Sequence[Bot | None], rng: random.Random,
                 link: LinkModel | None = None, think: float = 0.05, tap: Tap | None = None,
                 seat_links: Mapping[int, LinkModel] | None = None, rewrite: Rewrite | None = None,
                 cores: bool = False) -> None:
        self.peers = list(peers)
        self.bots = list(bots)
        self.rng = rng
        self.link = link or LinkModel()
        self.seat_links = dict(seat_links or {})  # a seat's own links, to and from it, when not `link`
        self.think = think
        self.tap = tap
        self.rewrite = rewrite
        self.faults: Tap | None = None  # the network's own faults, after `tap` (sim/faults.py)
        self.cut: Callable[[int, int], bool] | None = None  # (sender, receiver) -> the link is cut now: all is lost
        self.now = 0.0
        self._kind = "frame"  # the kind of what `_send` hands the taps now
        self._queue: list[tuple[float, int, str, int, object]] = []
        self._seq = 0
        self.stats = NetStats()
        self.notes: list[list[Note]] = [[] for _ in peers]
        self.dead: set[int] = set()
        self.down: set[int] = set()  # dead seats that come back (`crash`): the table is not over without them
        self.on_deliver: Callable[[MemNet, int], None] | None = None
        self.on_send: Callable[[int, bytes], None] | None = None  # every frame a peer sends, once (a recorder)
        self.cpu = [0.0] * len(peers)  # CPU seconds each peer's own calls took (its bot's choices included)
        self.cores = cores
        self._free = [0.0] * len(peers)  # with `cores`: when each peer's core is free again
        self._spent = 0.0  # with `cores`: CPU the event in hand has taken so far (what it sends leaves after it)
        self._collected = 0.0  # with `cores`: CPU the garbage collector has taken while we run
        self._collecting = 0.0  # when the collection under way began
        self._bot_pending = [False] * len(peers)
        self._going = [False] * len(peers)  # a "go_on" event is queued for the peer (`TablePeer.pending`)
        # Each bot's last view, kept while nothing has called into its peer: a bot asked again (every
        # `think` * 4 while it lets time pass) gets the same view without it being built again.
        self._views: list[View | None] = [None] * len(peers)
        self._next_tick: list[float | None] = [None] * len(peers)
        self.recovery = [Recovery(p.n, p.me, p.missing, p.frame) for p in self.peers]
        # Each bot's moves' times (virtual) from play to shown (ordered, applied, its cards learned), by action.
        self.latency: list[dict[str, list[float]]] = [{} for _ in peers]
        self._moved: list[tuple[str, float] | None] = [None] * len(peers)
        self.first_turn: list[float | None] = [None] * len(peers)  # when each peer was first ready for a move

    @property
    def at(self) -> float:
        """Now, after the CPU the event in hand has taken (with `cores`): when what it sends leaves."""
        return self.now + self._spent

    def _push(self, t: float, kind: str, peer: int, data: object) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (t, self._seq, kind, peer, data))

    def _outputs(self, sender: int, outputs: list[Send | Note]) -> None:
        self._views[sender] = None
        for out in outputs:
            if isinstance(out, Note):
                self.notes[sender].append(out)
                continue
            for sent in [out.frame] if self.rewrite is None else self.rewrite(sender, out.frame):
                self._broadcast(sender, sent, out.again)
        if self.first_turn[sender] is None and not self.peers[sender].busy():
            self.first_turn[sender] = self.at
        moved = self._moved[sender]
        if moved is not None and not self.peers[sender].busy():
            self.latency[sender].setdefault(moved[0], []).append(self.at - moved[1])
            self._moved[sender] = None
        if self.peers[sender].pending and not self._going[sender]:
            self._going[sender] = True
            self._push(self.at, "go_on", sender, None)
        self._wake_bot(sender)
        self._schedule_tick(sender)

    def _broadcast(self, sender: int, sent: bytes, again: bool = False) -> None:
        """One signed frame from `sender` to every other peer (`again`: sent before), counted once."""
        self.stats.frames += 1
        self.stats.bytes += len(sent)
        try:
            mtype = parse(sent).envelope.type
        except MalformedMessage:
            mtype = "?"
        if again:  # a copy of a move already counted (a slow order, not another move), or another's frame relayed
            self.stats.resent += mtype == "move"
        else:
            self.stats.by_type[mtype] = self.stats.by_type.get(mtype, 0) + 1
        if self.on_send is not None:
            self.on_send(sender, sent)
        for receiver in range(len(self.peers)):
            if receiver != sender:
                self._send(sender, receiver, sent, "again" if again else "frame")

    def _send(self, sender: int, receiver: int, frame: bytes | None, kind: str = "frame",
              data: object = None) -> None:
        """One frame (kind "frame", or "again": sent before) or request ("ask") on one link, through the tap,
        the network's faults and the link's losses."""
        self._kind = kind
        if frame is not None and self.tap is not None:
            frame = self.tap(sender, receiver, frame)
        if frame is not None and self.faults is not None:
            frame = self.faults(sender, receiver, frame)
        if kind != "ask" and frame is None or self.cut is not None and self.cut(sender, receiver):
            return
        link = self.seat_links.get(sender) or self.seat_links.get(receiver) or self.link
        for _ in range(link.copies(self.rng)):
            self._push(self.at + link.sample(self.rng), kind, receiver, data if kind == "ask" else frame)

    def _ask(self, i: int) -> None:
        """Peer `i` asks for what it misses."""
        for ask, sender, first, count in self.recovery[i].requests(self.now):
            self.stats.requests += 1
            self._send(i, ask, None, "ask", (i, sender, first, count))

    def _wake_bot(self, i: int) -> None:
        if not self._bot_pending[i]:
            self._bot_pending[i] = True
            self._push(self.at + self.think * (0.5 + self.rng.random()), "bot", i, None)

    def _schedule_tick(self, i: int) -> None:
        wake = self.peers[i].wake_time()
        if wake is None:
            return
        wake = max(wake, self.at)
        due = self._next_tick[i]
        if due is not None and due <= wake:
            return
        self._next_tick[i] = wake
        self._push(wake, "tick", i, wake)

    def start(self) -> None:
        """Every peer says it is ready."""
        for i, peer in enumerate(self.peers):
            self._spent = 0.0
            self._outputs(i, self._timed(i, peer.start, self.now))

    def call_at(self, t: float, call: Callable[[MemNet], None]) -> None:
        """Call `call(net)` when the clock reaches `t` (a cheat or a fault that acts on its own time)."""
        self._push(t, "call", -1, call)

    def send_as(self, sender: int, outputs: list[Send | Note]) -> None:
        """Send what a peer's call returned outside the network's own loop (a modified client acting on its own)."""
        self._outputs(sender, outputs)

    def crash(self, i: int, down: float, rebuild: Callable[[MemNet], TablePeer]) -> None:
        """Seat `i` crashes now (frames to it are lost) and comes back `down` s later as `rebuild(net)`."""
        self.dead.add(i)
        self.down.add(i)
        self._absent(i, True)
        since = self.now

        def back(net: MemNet) -> None:
            self.down.discard(i)
            self.revive(i, rebuild(net))
            self._absent(i, False)
            for j in range(len(self.peers)):  # and its own links were silent meanwhile, as its network layer finds
                if j != i:
                    self.peers[i].silent(j, since, net.now)

        self.call_at(self.now + down, back)

    def _absent(self, i: int, missing: bool) -> None:
        """Every other peer's network layer finds seat `i`'s link missing, or back."""
        for j, peer in enumerate(self.peers):
            if j != i:
                peer.absent(i, missing, self.now)
                self._views[j] = None

    def revive(self, i: int, peer: TablePeer) -> None:
        """Seat `i` is back as `peer` (rebuilt from its journal): it takes frames, ticks and asks from now on."""
        self.peers[i] = peer
        self.recovery[i] = Recovery(peer.n, peer.me, peer.missing, peer.frame)
        self.dead.discard(i)
        self._next_tick[i] = None  # the dead peer's pending tick was dropped with it
        self._bot_pending[i] = False
        self._going[i] = False
        self._outputs(i, [])

    def inject(self, receiver: int, frame: bytes, at: float | None = None) -> None:
        """Deliver an arbitrary frame to one peer (tests of garbage, forgeries and replays)."""
        self._push(self.now if at is None else at, "frame", receiver, frame)

    def copy(self, receiver: int, frame: bytes, at: float) -> None:
        """Deliver at `at` one more copy of the frame a tap is handed now, as it is sent (first hand or again)."""
        self._push(at, self._kind, receiver, frame)

    def run(self, until: float = 36000.0, max_events: int = 5_000_000,
            stop: Callable[[MemNet], bool] | None = None) -> None:
        """Run until every live peer has finished or stopped, `stop` says so, or the clock reaches `until`."""
        self._views = [None] * len(self.peers)  # the caller may have changed a peer since the last run
        if not self.cores:
            self._run(until, max_events, stop)
            return
        gc.callbacks.append(self._collector)
        try:
            self._run(until, max_events, stop)
        finally:
            gc.callbacks.remove(self._collector)

    def _collector(self, phase: str, info: dict[str, Any]) -> None:
        if phase == "start":
            self._collecting = time.process_time()
        else:
            self._collected += time.process_time() - self._collecting

    def _run(self, until: float, max_events: int, stop: Callable[[MemNet], bool] | None) -> None:
        events = 0
        while self._queue and events < max_events:
            t, _, kind, i, data = heapq.heappop(self._queue)
            if t > until:
                break
            self.now = max(self.now, t)
            self._spent = 0.0
            if kind == "call":
                assert callable(data)
                data(self)
                self._views = [None] * len(self.peers)  # a cheat or a fault may have changed any peer
                continue
            if i in self.dead:
                continue
            if t < self._free[i]:  # its core is busy (only with `cores`): it takes this when free
                self._push(self._free[i], kind, i, data)
                continue
            peer = self.peers[i]
            events += 1
            if kind in ("frame", "again"):
                assert isinstance(data, bytes)
                self._outputs(i, self._timed(i, peer.receive, data, self.now, kind == "frame"))
                if self.on_deliver is not None:
                    self.on_deliver(self, i)
                    self._views = [None] * len(self.peers)
            elif kind == "tick":
                if data != self._next_tick[i]:
                    continue  # superseded by an earlier tick
                self._next_tick[i] = None
                self._outputs(i, self._timed(i, peer.tick, self.now))
                self._ask(i)
            elif kind == "go_on":
                self._going[i] = False
                self._outputs(i, self._timed(i, peer.go_on, self.now))
            elif kind == "ask":
                assert isinstance(data, tuple)
                asker, sender, first, count = data
                for frame in self.recovery[i].answer(asker, sender, first, count, self.now):
                    self.stats.answers += 1
                    self._send(i, asker, frame, "again")
            else:
                self._bot_pending[i] = False
                self._bot(i)
            if stop is not None and stop(self):
                return
            if not self.down and all(p.finished or p.stopped for j, p in enumerate(self.peers) if j not in self.dead):
                return

    def _timed(self, i: int, call: Callable[..., T], *args: object) -> T:
        """`call(*args)` for peer `i`: its CPU counted, and with `cores` on its clock and core too (a pause of the
        collector in it, 1/n)."""
        start, collected = time.process_time(), self._collected
        try:
            return call(*args)
        finally:
            paused = self._collected - collected
            cpu = time.process_time() - start - paused + paused / len(self.peers)
            self.cpu[i] += cpu
            if self.cores:
                self._spent += cpu
                self._free[i] = self.at

    def _bot(self, i: int) -> None:
        peer, bot = self.peers[i], self.bots[i]
        if bot is None or peer.busy():
            return
        move = self._timed(i, self._choose, i, bot)
        if move is None:
            self._push(self.at + self.think * 4, "bot", i, None)
            return
        try:
            played = self.at
            outputs = self._timed(i, peer.play, move, played)
            self._moved[i] = (move.action, played)
            self._outputs(i, outputs)
        except IllegalMove:
            self._views[i] = None
            self._wake_bot(i)

    def _choose(self, i: int, bot: Bot) -> Move | None:
        """`bot`'s choice from peer `i`'s view, built again only when something has called into the peer."""
        view = self._views[i]
        if view is None:
            view = self._views[i] = self.peers[i].view()
        return bot.choose(view)
