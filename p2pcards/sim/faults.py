"""Network faults: `--faults delay=20,jitter=30,reorder=0.1,drop=0.01,dup=0.05,restart=3,partition=5:3:2`.

Delay and jitter (milliseconds) set every link's model; `reorder`, `dup` and `drop` are chances
per frame and receiver: `reorder` holds a frame back (50 to 250 ms) so that later ones overtake
it, `dup` delivers it a second time a little later, `drop` loses it. `restart=T` crashes the last
seat's peer at T seconds of table time (its peer object is dropped, frames to it are lost) and
rebuilds it from its journal RESTART_DOWN_S later (`TablePeer.resume`, protocol.md §14.10); over
tcp its process is killed with SIGKILL and started again on its journal. `gone=T` (over tcp) kills
the last seat's process for good: the others vote it gone and go on without it (§14.9); `gone=T:N`
kills the last N seats' processes at once, and the others vote them out together.
`partition=AT:FOR:SEATS` cuts the links between SEATS (`+`-separated; default the last seat) and
the other seats from AT seconds of the table's time for FOR seconds, then heals them.

`FaultTap` injects them on the in-memory transport (where a cut link loses what crosses it, goes
quiet SILENT_S into the cut as over TCP, and what was lost is asked for again once it heals);
`sim/proxy.py` between seat processes (no restart there).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

from ..errors import InputError
from ..net.link import SILENT_S
from ..table.peer import Note, TablePeer
from .memnet import LinkModel, MemNet

KINDS = ("delay", "jitter", "reorder", "drop", "dup", "restart", "gone", "partition")  # partition last: not a number
MAX_DELAY_MS = 10_000.0  # a link slower than 10 s per frame is a link gone
MAX_AT_S = 3600.0  # when a crash or a cut comes, on the table's clock
MAX_CUT_S = 600.0  # how long a cut lasts: far past the vote that puts the cut-off seats out
CHANCES = ("reorder", "drop", "dup")
CRASHES = ("restart", "gone")  # a time on the table's clock, above 0 (0 is how a spec says "never")
RESTART_DOWN_S = 2.0  # how long a restarted peer is down


@dataclass(frozen=True)
class Partition:
    """The links between `seats` and the others are cut from `at` for `span` seconds."""

    at: float
    span: float
    seats: tuple[int, ...] | None  # None: the last seat

    @classmethod
    def parse(cls, value: str) -> Partition:
        """`AT:FOR[:SEATS]` (InputError, one line, on anything else)."""
        parts = value.split(":")
        try:
            if len(parts) not in (2, 3):
                raise ValueError
            at, span = float(parts[0]), float(parts[1])
            seats = tuple(int(x) for x in parts[2].split("+")) if len(parts) == 3 else None
        except ValueError:
            raise InputError(f"--faults: partition={value!r} is not AT:FOR or AT:FOR:SEATS "
                             "(seconds, seconds, seats joined by +)") from None
        if not (0 <= at <= MAX_AT_S and 0 < span <= MAX_CUT_S) or (seats is not None and min(seats) < 0):
            raise InputError(f"--faults: partition={value!r}: AT from 0 to {MAX_AT_S:g} s, FOR above 0 and at most "
                             f"{MAX_CUT_S:g} s (seats cut longer are voted gone anyway), seats from 0")
        return cls(at, span, seats)

    def side(self, players: int) -> frozenset[int]:
        """The seats cut off from the others (InputError when one has no seat or none is left on the other side)."""
        seats = frozenset(self.seats if self.seats is not None else (players - 1,))
        if max(seats) >= players or len(seats) >= players:
            raise InputError(f"--faults: partition cuts seats {'+'.join(map(str, sorted(seats)))} off: "
                             f"seats are 0 to {players - 1}, and some must stay on the other side")
        return seats

    def cuts(self, side: frozenset[int], a: int, b: int, t: float) -> bool:
        """Whether the link between seats `a` and `b` is cut at time `t`."""
        return self.at <= t < self.at + self.span and (a in side) != (b in side)

    def text(self) -> str:
        """As it would be given."""
        return f"{self.at:g}:{self.span:g}" + ("" if self.seats is None else ":" + "+".join(map(str, self.seats)))


@dataclass(frozen=True)
class FaultSpec:
    """What to inject: link delay and jitter in ms (None: the default link), and chances per frame."""

    delay: float | None = None
    jitter: float | None = None
    reorder: float = 0.0
    drop: float = 0.0
    dup: float = 0.0
    restart: float = 0.0  # table seconds at which the last seat crashes and restarts (0: never)
    gone: float = 0.0  # over tcp: seconds at which the last seat's process is killed for good (0: never)
    gone_seats: int = 1  # how many of the last seats `gone` kills at once
    partition: Partition | None = None

    @classmethod
    def parse(cls, text: str) -> FaultSpec:
        """`kind=value,…` (InputError, one line, on anything else)."""
        values: dict[str, float] = {}
        partition: Partition | None = None
        gone_seats = 1
        for part in text.split(","):
            kind, sep, value = part.strip().partition("=")
            if kind not in KINDS or not sep:
                raise InputError(f"--faults: {part.strip()!r} is not kind=value (kinds: {', '.join(KINDS)})")
            if kind in values or (kind == "partition" and partition is not None):
                raise InputError(f"--faults: {kind} given twice")
            if kind == "partition":
                partition = Partition.parse(value)
                continue
            if kind == "gone" and ":" in value:
                value, _, count = value.partition(":")
                if not (count.isascii() and count.isdigit()) or int(count) < 1:  # "²" is a digit int() refuses
                    raise InputError(f"--faults: gone=T:N kills the last N seats, N a whole number from 1, not {count!r}")
                gone_seats = int(count)
            try:
                number = float(value)
            except ValueError:
                raise InputError(f"--faults: {kind}={value!r} is not a number") from None
            most = 1 if kind in CHANCES else MAX_AT_S if kind in CRASHES else MAX_DELAY_MS
            # A crash at 0 s would be no crash at all (0 is how a spec says "never"): a time above 0 is asked for.
            if not 0 <= number <= most or (kind in CRASHES and number == 0):
                raise InputError(f"--faults: {kind} is " + (
                    "a chance from 0 to 1" if kind in CHANCES else f"a number of seconds above 0 and at most {most:g}"
                    if kind in CRASHES else f"a number of ms from 0 to {most:g}") + f", not {value}")
            values[kind] = number
        return cls(**values, gone_seats=gone_seats, partition=partition)

    @property
    def crashing(self) -> int:
        """How many of the last seats crash: `gone_seats` for `gone`, one for `restart`, else none."""
        return self.gone_seats if self.gone else 1 if self.restart else 0

    def link(self, base: LinkModel) -> LinkModel:
        """The link model with this spec's delay and jitter."""
        return LinkModel(base.delay if self.delay is None else self.delay / 1000,
                         base.jitter if self.jitter is None else self.jitter / 1000)

    def text(self) -> str:
        """The spec as it would be given."""
        # A delay or jitter given as 0 is given (it replaces the link's own): "" read as no fault at all.
        parts = [f"{k}={getattr(self, k):g}" + (f":{self.gone_seats}" if k == "gone" and self.gone_seats > 1 else "")
                 for k in KINDS[:-1] if getattr(self, k) or k in ("delay", "jitter") and getattr(self, k) is not None]
        if self.partition is not None:
            parts.append(f"partition={self.partition.text()}")
        return ",".join(parts)


@dataclass
class FaultTap:
    """A MemNet tap that reorders, duplicates and drops frames as `spec` says, counting each."""

    net: MemNet
    spec: FaultSpec
    rng: random.Random
    counts: dict[str, int] = field(default_factory=dict)

    def __post_init__(self) -> None:
        partition = self.spec.partition
        if partition is not None:
            self._side = partition.side(len(self.net.peers))
            self.net.cut = self.cut
            if partition.span > SILENT_S:
                self.net.call_at(partition.at + SILENT_S, self.quiet)
            self.net.call_at(partition.at + partition.span, self.heal)

    def _across(self, net: MemNet) -> list[tuple[int, int]]:
        """The (peer, seat) pairs whose link the partition cuts."""
        partition = self.spec.partition
        assert partition is not None
        return [(a, b) for a in range(len(net.peers)) for b in range(len(net.peers))
                if partition.cuts(self._side, a, b, partition.at)]

    def quiet(self, net: MemNet) -> None:
        """SILENT_S into the cut, each peer's network layer finds the links across it quiet, as over TCP: their
        seats are missing, which holds the time-out (protocol.md §18.3; without it a cut past TIMEOUT_S had each
        side blame the other for what it could not send)."""
        for a, b in self._across(net):
            peer = net.peers[a]
            peer.absent(b, True, net.now)
            net.notes[a].append(Note("missing", f"{peer.names[b]} is missing: no heartbeat (the partition)",
                                     peer.names[b]))

    def heal(self, net: MemNet) -> None:
        """The cut heals: each peer's network layer saw the links across it silent all that while (as a
        heartbeat's absence shows over TCP), and, past SILENT_S, hears the seats beyond it again."""
        partition = self.spec.partition
        assert partition is not None
        for a, b in self._across(net):
            peer = net.peers[a]
            if partition.span > SILENT_S:
                peer.absent(b, False, net.now)
                net.notes[a].append(Note("back", f"{peer.names[b]} is back", peer.names[b]))
            peer.silent(b, partition.at, net.now)

    def cut(self, sender: int, receiver: int) -> bool:
        """Whether the partition cuts this link now (what it cuts is counted)."""
        partition = self.spec.partition
        if partition is None or not partition.cuts(self._side, sender, receiver, self.net.now):
            return False
        self.count("partition")
        return True

    def count(self, kind: str) -> None:
        """Count one frame (or peer) a fault touched."""
        self.counts[kind] = self.counts.get(kind, 0) + 1

    def __call__(self, sender: int, receiver: int, frame: bytes) -> bytes | None:
        spec, rng, net = self.spec, self.rng, self.net
        if net.cut is not None and net.cut(sender, receiver):
            return frame  # lost at the cut (`MemNet` drops it): no copy of it crosses either
        if spec.drop and rng.random() < spec.drop:
            self.count("drop")
            return None
        if spec.dup and rng.random() < spec.dup:
            self.count("dup")
            net.copy(receiver, frame, net.now + net.link.sample(rng) + rng.uniform(0.001, 0.1))
        if spec.reorder and rng.random() < spec.reorder:
            self.count("reorder")
            net.copy(receiver, frame, net.now + net.link.sample(rng) + rng.uniform(0.05, 0.25))
            return None
        return frame


def restart_last_seat(tap: FaultTap, peers: list[TablePeer]) -> None:
    """Before the table starts: make the last seat journal, and crash and restart it as the tap's spec says.

    The rebuilt peer replaces the old one in the tap's network and in `peers` (the run's list, which is judged).
    """
    net, spec = tap.net, tap.spec
    if not spec.restart:
        return
    seat = len(peers) - 1
    peers[seat].keep_journal()

    def crash(net: MemNet) -> None:
        old = net.peers[seat]
        records = list(old.journal or [])
        tap.count("restart")
        net.notes[seat].append(Note("missing", f"{old.names[seat]} crashed; back in {RESTART_DOWN_S:g} s"))

        def rebuild(net: MemNet) -> TablePeer:
            peer = TablePeer.resume(old.cfg, old.identity, records, net.now, old.draw_seed,
                                    old.tolerance, old.timeout, old.slack)
            peers[seat] = peer
            return peer

        net.crash(seat, RESTART_DOWN_S, rebuild)

    net.call_at(spec.restart, crash)
