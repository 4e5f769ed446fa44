"""An in-memory network on a virtual clock: per-link delay and jitter, no ordering between senders.

It drives real `TablePeer`s (real signatures, real deck crypto) with bots that see only their
own peer's view, so whole games run in a test without sockets and still meet a network's
reorderings. Its clock is virtual: a game of minutes runs in the time its CPU work takes.
"""

from __future__ import annotations

import heapq
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

from ..bots.base import Bot
from ..crypto.envelope import parse
from ..errors import IllegalMove, MalformedMessage
from ..table.peer import Note, Send, TablePeer


@dataclass
class LinkModel:
    """Delay of one frame on one link: `delay` plus uniform jitter up to `jitter` (seconds)."""

    delay: float = 0.004
    jitter: float = 0.012

    def sample(self, rng: random.Random) -> float:
        """One frame's transit time."""
        return self.delay + rng.random() * self.jitter


@dataclass
class NetStats:
    """What crossed the network."""

    frames: int = 0
    bytes: int = 0
    by_type: dict[str, int] = field(default_factory=dict)


Tap = Callable[[int, int, bytes], bytes | None]  # (sender, receiver, frame) -> frame to deliver, or None to drop
Rewrite = Callable[[int, bytes], list[bytes]]  # (sender, frame) -> the frames it really sends to everyone (a modified client)


class MemNet:
    """Peers, their bots and the links between them, run on one virtual clock."""

    def __init__(self, peers: Sequence[TablePeer], bots: Sequence[Bot | None], rng: random.Random,
                 link: LinkModel | None = None, think: float = 0.05, tap: Tap | None = None,
                 rewrite: Rewrite | None = None) -> None:
        self.peers = list(peers)
        self.bots = list(bots)
        self.rng = rng
        self.link = link or LinkModel()
        self.think = think
        self.tap = tap
        self.rewrite = rewrite
        self.faults: Tap | None = None  # the network's own faults, after `tap` (sim/faults.py)
        self.now = 0.0
        self._queue: list[tuple[float, int, str, int, object]] = []
        self._seq = 0
        self.stats = NetStats()
        self.notes: list[list[Note]] = [[] for _ in peers]
        self.dead: set[int] = set()
        self.on_deliver: Callable[[MemNet, int], None] | None = None
        self.on_send: Callable[[int, bytes], None] | None = None  # every frame a peer sends, once (a recorder)
        self.cpu = [0.0] * len(peers)  # CPU seconds each peer's own calls took (its bot's choices included)
        self._bot_pending = [False] * len(peers)
        self._next_tick: list[float | None] = [None] * len(peers)

    def _push(self, t: float, kind: str, peer: int, data: object) -> None:
        self._seq += 1
        heapq.heappush(self._queue, (t, self._seq, kind, peer, data))

    def _outputs(self, sender: int, outputs: list[Send | Note]) -> None:
        for out in outputs:
            if isinstance(out, Note):
                self.notes[sender].append(out)
                continue
            for sent in [out.frame] if self.rewrite is None else self.rewrite(sender, out.frame):
                self._broadcast(sender, sent)
        self._wake_bot(sender)
        self._schedule_tick(sender)

    def _broadcast(self, sender: int, sent: bytes) -> None:
        self.stats.frames += 1
        self.stats.bytes += len(sent)
        try:
            mtype = parse(sent).envelope.type
        except MalformedMessage:
            mtype = "?"
        self.stats.by_type[mtype] = self.stats.by_type.get(mtype, 0) + 1
        if self.on_send is not None:
            self.on_send(sender, sent)
        for receiver in range(len(self.peers)):
            if receiver == sender:
                continue
            frame: bytes | None = sent
            if self.tap is not None:
                frame = self.tap(sender, receiver, sent)
            if frame is not None and self.faults is not None:
                frame = self.faults(sender, receiver, frame)
            if frame is not None:
                self._push(self.now + self.link.sample(self.rng), "frame", receiver, frame)

    def _wake_bot(self, i: int) -> None:
        if not self._bot_pending[i]:
            self._bot_pending[i] = True
            self._push(self.now + self.think * (0.5 + self.rng.random()), "bot", i, None)

    def _schedule_tick(self, i: int) -> None:
        wake = self.peers[i].wake_time()
        if wake is None:
            return
        wake = max(wake, self.now)
        due = self._next_tick[i]
        if due is not None and due <= wake:
            return
        self._next_tick[i] = wake
        self._push(wake, "tick", i, wake)

    def start(self) -> None:
        """Every peer says it is ready."""
        for i, peer in enumerate(self.peers):
            self._outputs(i, self._timed(i, peer.start, self.now))

    def call_at(self, t: float, call: Callable[[MemNet], None]) -> None:
        """Call `call(net)` when the clock reaches `t` (a cheat or a fault that acts on its own time)."""
        self._push(t, "call", -1, call)

    def send_as(self, sender: int, outputs: list[Send | Note]) -> None:
        """Send what a peer's call returned outside the network's own loop (a modified client acting on its own)."""
        self._outputs(sender, outputs)

    def inject(self, receiver: int, frame: bytes, at: float | None = None) -> None:
        """Deliver an arbitrary frame to one peer (tests of garbage, forgeries and replays)."""
        self._push(self.now if at is None else at, "frame", receiver, frame)

    def run(self, until: float = 36000.0, max_events: int = 5_000_000,
            stop: Callable[[MemNet], bool] | None = None) -> None:
        """Run until every live peer has finished or stopped, `stop` says so, or the clock reaches `until`."""
        events = 0
        while self._queue and events < max_events:
            t, _, kind, i, data = heapq.heappop(self._queue)
            if t > until:
                break
            self.now = max(self.now, t)
            if kind == "call":
                assert callable(data)
                data(self)
                continue
            if i in self.dead:
                continue
            peer = self.peers[i]
            events += 1
            if kind == "frame":
                assert isinstance(data, bytes)
                self._outputs(i, self._timed(i, peer.receive, data, self.now))
                if self.on_deliver is not None:
                    self.on_deliver(self, i)
            elif kind == "tick":
                if data != self._next_tick[i]:
                    continue  # superseded by an earlier tick
                self._next_tick[i] = None
                self._outputs(i, self._timed(i, peer.tick, self.now))
            else:
                self._bot_pending[i] = False
                self._bot(i)
            if stop is not None and stop(self):
                return
            if all(p.finished or p.stopped for j, p in enumerate(self.peers) if j not in self.dead):
                return

    def _timed(self, i: int, call: Callable[..., list[Send | Note]], *args: object) -> list[Send | Note]:
        start = time.process_time()
        try:
            return call(*args)
        finally:
            self.cpu[i] += time.process_time() - start

    def _bot(self, i: int) -> None:
        peer, bot = self.peers[i], self.bots[i]
        if bot is None or peer.busy():
            return
        start = time.process_time()
        move = bot.choose(peer.view())
        self.cpu[i] += time.process_time() - start
        if move is None:
            self._push(self.now + self.think * 4, "bot", i, None)
            return
        try:
            self._outputs(i, self._timed(i, peer.play, move, self.now))
        except IllegalMove:
            self._wake_bot(i)
