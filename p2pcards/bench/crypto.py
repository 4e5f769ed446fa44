"""`p2pcards bench crypto`: each deck step's time against its lower bound, and its bytes on the wire.

Every time is the total CPU work of all peers for the step (each peer doing exactly what the
protocol asks of it), single-threaded, except `pass` (one seat's proven pass: the pass and its
proof of shuffle) and `verify` (one peer checking one such pass). The lower bound of a step is the number of libsodium group
operations it needs (counted by running it once with counting wrappers) times each operation's
cost measured in the same run; the ratio is what the Python around them costs.
"""

from __future__ import annotations

import argparse
import time
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Final

from nacl import bindings as _b

from ..cards import CRESCENDO_DECK, CRISP_DECK, crescendo_back
from ..crypto import deck as D
from ..crypto import group, identity, shuffle
from ..crypto.encoding import Value
from ..crypto.envelope import Outbox
from ..cli import whole
from ..errors import InputError
from ..progress import Progress
from . import Figures

# operation -> libsodium binding it is
PRIMITIVES: Final = {
    "mul": "crypto_scalarmult_ed25519_noclamp",
    "base": "crypto_scalarmult_ed25519_base_noclamp",
    "valid": "crypto_core_ed25519_is_valid_point",
    "add": "crypto_core_ed25519_add",
    "sub": "crypto_core_ed25519_sub",
    "map": "crypto_core_ed25519_from_uniform",
}
DEFAULT_CONFIGS: Final = "52x2,52x4,52x6,52x8,104x2,104x4,104x6"
HAND: Final = 4  # cards dealt privately to each seat in the private-reveal step
STEPS: Final = ("keys", "pass", "verify", "shuffle", "private", "public", "audit")
LIBTMCG_SECONDS: Final = 4.0  # LibTMCG (Groth's shuffle argument): CPU per player, 104 cards, 6 players


@contextmanager
def counting() -> Iterator[Counter[str]]:
    """Count every group operation made inside the block (by wrapping the bindings group.py calls)."""
    counts: Counter[str] = Counter()
    saved = {name: getattr(_b, name) for name in PRIMITIVES.values()}

    def wrap(op: str, f: Callable[..., bytes]) -> Callable[..., bytes]:
        def counted(*args: bytes) -> bytes:
            counts[op] += 1
            return f(*args)

        return counted

    for op, name in PRIMITIVES.items():
        setattr(_b, name, wrap(op, saved[name]))
    try:
        yield counts
    finally:
        for name, f in saved.items():
            setattr(_b, name, f)


def measure_costs(calls: int = 400, repeats: int = 5) -> dict[str, float]:
    """Seconds per call of each group operation on this machine (best of `repeats` loops)."""
    s = group.scalar_reduce(bytes(range(64)))
    p = group.mul_base(s)
    q = group.mul_base(group.scalar_add(s, s))
    h = bytes(range(32))
    ops: dict[str, Callable[[], object]] = {
        "mul": lambda: _b.crypto_scalarmult_ed25519_noclamp(s, p),
        "base": lambda: _b.crypto_scalarmult_ed25519_base_noclamp(s),
        "valid": lambda: _b.crypto_core_ed25519_is_valid_point(p),
        "add": lambda: _b.crypto_core_ed25519_add(p, q),
        "sub": lambda: _b.crypto_core_ed25519_sub(p, q),
        "map": lambda: _b.crypto_core_ed25519_from_uniform(h),
    }
    costs: dict[str, float] = {}
    for op, f in ops.items():
        best = float("inf")
        for _ in range(repeats):
            t0 = time.process_time()
            for _ in range(calls):
                f()
            best = min(best, time.process_time() - t0)
        costs[op] = best / calls
    return costs


@dataclass
class State:
    """One simulated round: every peer's secrets and everything on the public log so far."""

    ctx: D.RoundContext
    cards: tuple[D.Card, ...]
    tags: tuple[str, ...] | None
    outboxes: list[Outbox]
    secrets: list[D.RoundSecret] | None = None
    anns: list[D.KeyAnnouncement] | None = None
    keys: D.RoundKeys | None = None
    book: D.CardBook | None = None
    passes: list[D.EncryptedDeck] | None = None
    first: D.EncryptedDeck | None = None
    private: list[D.Reveal] | None = None
    public: list[D.Reveal] | None = None

    @property
    def final(self) -> D.EncryptedDeck:
        """The fully shuffled deck."""
        assert self.passes is not None
        return self.passes[-1]


def _wire(st: State, seat: int, kind: str, body: dict[str, Value]) -> int:
    """Bytes of one signed frame carrying `body` from `seat`."""
    return len(st.outboxes[seat].seal(st.ctx.round, kind, body).frame)


def step_keys(st: State, seeds: list[bytes]) -> int:
    """Each seat announces its round key; every peer verifies the others', builds the card book and deck 0."""
    ctx = st.ctx
    st.secrets = [D.round_secret(ctx, i, seeds[i]) for i in range(ctx.seats)]
    st.anns = [D.announce(ctx, s) for s in st.secrets]
    for peer in range(ctx.seats):
        st.keys = D.round_keys(ctx, st.anns, own=peer)
        st.book = D.card_book(ctx, st.cards)
        D.initial_deck(ctx, st.keys, st.book, st.cards, st.tags)
    return sum(_wire(st, a.seat, "round-key", a.to_wire()) for a in st.anns)


def step_pass(st: State) -> int:
    """Seat 0 makes its proven pass on the starting deck (the pass, then its proof of shuffle)."""
    assert st.secrets is not None and st.keys is not None and st.book is not None
    start = D.initial_deck(st.ctx, st.keys, st.book, st.cards, st.tags)
    return _wire(st, 0, "pass", D.shuffle_pass(st.ctx, st.keys, st.secrets[0], start).to_wire())


def step_verify(st: State) -> int:
    """One peer verifies seat 0's pass (the shape, the named input and the proof of shuffle)."""
    assert st.secrets is not None and st.keys is not None and st.book is not None
    start = D.initial_deck(st.ctx, st.keys, st.book, st.cards, st.tags)
    if st.first is None:
        st.first = D.shuffle_pass(st.ctx, st.keys, st.secrets[0], start)
    D.verify_pass(st.ctx, st.keys, start, st.first)
    return 0


def step_shuffle(st: State) -> int:
    """Each seat makes its pass in turn; every other peer verifies it."""
    assert st.secrets is not None and st.keys is not None and st.book is not None
    ctx = st.ctx
    cur = D.initial_deck(ctx, st.keys, st.book, st.cards, st.tags)
    st.passes = []
    for s in st.secrets:
        nxt = D.shuffle_pass(ctx, st.keys, s, cur)
        for _ in range(ctx.seats - 1):
            D.verify_pass(ctx, st.keys, cur, nxt)
        st.passes.append(nxt)
        cur = nxt
    return sum(_wire(st, p.stage - 1, "pass", p.to_wire()) for p in st.passes)


def step_private(st: State) -> int:
    """The deal: HAND cards to each seat; the others send proven shares, the recipient checks them and opens."""
    assert st.secrets is not None and st.keys is not None and st.book is not None
    ctx, final = st.ctx, st.final
    st.private = []
    for r in range(ctx.seats):
        hand = [HAND * r + k for k in range(HAND)]
        got = [D.make_reveal(ctx, st.keys, s, final, hand, r) for s in st.secrets if s.seat != r]
        for rv in got:
            D.verify_reveal(ctx, st.keys, final, rv, prover=rv.prover, recipient=r, positions=hand)
        D.open_cards(ctx, st.book, final, got, st.secrets[r])
        st.private.extend(got)
    return sum(_wire(st, rv.prover, "shares", rv.to_wire()) for rv in st.private)


def step_public(st: State) -> int:
    """One card turned face up: every seat sends a proven share; every peer checks the others' and opens it."""
    assert st.secrets is not None and st.keys is not None and st.book is not None
    ctx, final = st.ctx, st.final
    pos = [HAND * ctx.seats]
    st.public = [D.make_reveal(ctx, st.keys, s, final, pos, None) for s in st.secrets]
    for peer in range(ctx.seats):
        for rv in st.public:
            if rv.prover != peer:
                D.verify_reveal(ctx, st.keys, final, rv, prover=rv.prover, recipient=None, positions=pos)
        D.open_cards(ctx, st.book, final, st.public)
    return sum(_wire(st, rv.prover, "shares", rv.to_wire()) for rv in st.public)


def step_audit(st: State) -> int:
    """Every seat opens its commitment; every peer replays the whole round."""
    assert st.secrets is not None and st.anns is not None and st.book is not None and st.passes is not None
    assert st.private is not None and st.public is not None
    ctx = st.ctx
    openings = [D.open_commitment(s) for s in st.secrets]
    record = D.DeckRecord(0, st.cards, st.tags, tuple(st.passes))
    for _ in range(ctx.seats):
        report = D.audit(ctx, st.anns, openings, st.book, [record], st.private + st.public)
        if not report.verified:  # pragma: no cover - an honest round
            raise RuntimeError(str(report))
    return sum(_wire(st, o.seat, "opening", o.to_wire()) for o in openings)


@dataclass(frozen=True, slots=True)
class Row:
    """One step of one configuration: measured time, bound, operation counts and wire bytes."""

    cards: int
    seats: int
    step: str
    seconds: float
    bound: float
    counts: dict[str, int]
    wire: int

    @property
    def ratio(self) -> float:
        """Measured time over the lower bound."""
        return self.seconds / self.bound if self.bound else float("nan")


def bench_config(n: int, seats: int, costs: dict[str, float], repeat: int) -> list[Row]:
    """All steps for n cards (52: Crisp, 104: Crescendo with backs) and `seats` seats."""
    if n == 52:
        cards: tuple[D.Card, ...] = CRISP_DECK
        tags = None
    elif n == 104:
        cards = CRESCENDO_DECK
        tags = tuple(str(crescendo_back(c)) for c in cards)
    else:
        raise InputError("decks have 52 or 104 cards")
    ctx = D.RoundContext(b"bench-table-0001", 1, tuple(f"seat{i}" for i in range(seats)))
    ids = [identity.generate(f"p{i}") for i in range(seats)]
    st = State(ctx, cards, tags, [Outbox(i, ctx.table) for i in ids])
    seeds = [D.draw_seed() for _ in range(seats)]
    shuffle.generators(n)  # derived once per process and deck size: outside every count
    steps: dict[str, Callable[[], int]] = {
        "keys": lambda: step_keys(st, seeds),
        "pass": lambda: step_pass(st),
        "verify": lambda: step_verify(st),
        "shuffle": lambda: step_shuffle(st),
        "private": lambda: step_private(st),
        "public": lambda: step_public(st),
        "audit": lambda: step_audit(st),
    }
    rows = []
    for name in STEPS:
        run_step = steps[name]
        if name == "verify":
            run_step()  # the pass it checks is made outside the count and the clock
        with counting() as counts:
            wire = run_step()
        best = float("inf")
        for _ in range(repeat):
            t0 = time.process_time()
            run_step()
            best = min(best, time.process_time() - t0)
        bound = sum(counts[op] * costs[op] for op in PRIMITIVES)
        rows.append(Row(n, seats, name, best, bound, dict(counts), wire))
    return rows


def parse_configs(text: str) -> list[tuple[int, int]]:
    """'52x2,104x4' -> [(52, 2), (104, 4)]."""
    out = []
    for part in text.split(","):
        try:
            n, s = part.strip().lower().split("x")
            out.append((int(n), int(s)))
        except ValueError:
            raise InputError(f"bad configuration {part!r}: use CARDSxSEATS, e.g. 52x4") from None
        if out[-1][0] not in (52, 104) or not D.MIN_SEATS <= out[-1][1] <= D.MAX_SEATS:
            raise InputError(f"bad configuration {part!r}: 52 or 104 cards, 2 to {D.MAX_SEATS} seats")
    return out


def format_table(rows: list[Row], costs: dict[str, float]) -> str:
    """The results as a plain-text table."""
    lines = [
        "costs per call (µs, best seen): " + ", ".join(f"{op} {costs[op] * 1e6:.1f}" for op in PRIMITIVES),
        "times are total CPU of all peers, best of the repeats; bound = Σ count(op) × cost(op), costs measured",
        "before and after each configuration (best of the two); wire = bytes of signed frames, each counted once",
        "",
        f"{'cards':>5} {'seats':>5} {'step':<8} {'time ms':>9} {'bound ms':>9} {'ratio':>6}  "
        f"{'mul':>6} {'base':>6} {'valid':>6} {'add+sub':>7} {'map':>5} {'wire B':>8}",
    ]
    for r in rows:
        c = r.counts
        lines.append(
            f"{r.cards:>5} {r.seats:>5} {r.step:<8} {r.seconds * 1e3:>9.1f} {r.bound * 1e3:>9.1f} {r.ratio:>6.2f}  "
            f"{c.get('mul', 0):>6} {c.get('base', 0):>6} {c.get('valid', 0):>6} "
            f"{c.get('add', 0) + c.get('sub', 0):>7} {c.get('map', 0):>5} {r.wire:>8}"
        )
    worst = max(rows, key=lambda r: r.ratio)
    lines.append("")
    lines.append(f"worst ratio {worst.ratio:.2f} ({worst.cards}x{worst.seats} {worst.step}); goal ≤ 1.50")
    lines.append("")
    lines.append("proven shuffle per peer (one proven pass made, one verified per other seat), CPU seconds:")
    for (cards, seats), total in per_peer(rows).items():
        ref = f"   LibTMCG (Groth's argument) {LIBTMCG_SECONDS:.1f} s" if (cards, seats) == (104, 6) else ""
        lines.append(f"  {cards:>3} cards x {seats:>2} seats: {total:6.3f} s{ref}")
    return "\n".join(lines)


def per_peer(rows: list[Row]) -> dict[tuple[int, int], float]:
    """CPU seconds one peer spends on a proven shuffle: its own pass and proof, plus S-1 verifications."""
    out: dict[tuple[int, int], float] = {}
    for r in rows:
        if r.step in ("pass", "verify"):
            share = r.seconds if r.step == "pass" else (r.seats - 1) * r.seconds
            out[(r.cards, r.seats)] = out.get((r.cards, r.seats), 0.0) + share
    return out


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of `p2pcards bench crypto`."""
    parser.add_argument("--configs", default=DEFAULT_CONFIGS, help=f"CARDSxSEATS list (default {DEFAULT_CONFIGS})")
    parser.add_argument("--repeat", type=whole(1), default=3, help="timed runs per step; the best is kept (default 3)")


def run(args: argparse.Namespace) -> Figures:
    """Run the benchmark and print the table."""
    configs = parse_configs(args.configs)
    rows: list[Row] = []
    all_costs: list[dict[str, float]] = []
    with Progress("bench crypto", total=len(configs)) as progress:
        for done, (n, seats) in enumerate(configs):
            progress.update(done, f"{n} cards, {seats} seats", force=True)
            # Costs are measured next to the steps they bound, so a change in machine load hits both alike.
            costs = measure_costs()
            config_rows = bench_config(n, seats, costs, args.repeat)
            after = measure_costs()
            costs = {op: min(costs[op], after[op]) for op in PRIMITIVES}
            for r in config_rows:
                bound = sum(r.counts.get(op, 0) * costs[op] for op in PRIMITIVES)
                rows.append(Row(r.cards, r.seats, r.step, r.seconds, bound, r.counts, r.wire))
            all_costs.append(costs)
    best = {op: min(c[op] for c in all_costs) for op in PRIMITIVES}
    print(format_table(rows, best))
    return figures(configs, args.repeat, rows, best)


def figures(configs: list[tuple[int, int]], repeat: int, rows: list[Row], costs: dict[str, float]) -> Figures:
    """The table as numbers: a row per step (seconds, not ms), the costs per call, the worst ratio, and each
    configuration's proven shuffle per peer."""
    worst = max(rows, key=lambda r: r.ratio)
    return Figures(
        {"configs": [{"cards": n, "seats": s} for n, s in configs], "repeat": repeat},
        [{"cards": r.cards, "seats": r.seats, "step": r.step, "seconds": r.seconds, "bound_s": r.bound,
          "ratio": r.ratio, "counts": {op: r.counts.get(op, 0) for op in PRIMITIVES}, "wire_bytes": r.wire}
         for r in rows],
        {"cost_s_per_call": costs,
         "worst": {"cards": worst.cards, "seats": worst.seats, "step": worst.step, "ratio": worst.ratio},
         "shuffle_per_peer_s": [{"cards": c, "seats": s, "seconds": t} for (c, s), t in per_peer(rows).items()]})
