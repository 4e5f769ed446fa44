"""`p2pcards bench table`: whole games between peers over the in-memory network, and where their CPU goes.

Each game is played twice with the same seed (so the same keys, shuffles, delays and moves):
once plain, for wall and CPU time, and once under cProfile, for the split of the CPU between

  crypto    group operations (libsodium), proofs and the mental-poker deck, with their hashing
  signing   Ed25519 signatures and their checks (cryptography), the identity's key handling
  encoding  msgpack, canonical encoding, strict decoding, envelopes and message hashes
  rules     the game engines (p2pcards/games, cards) and the bots (p2pcards/bots)
  rest      table bookkeeping (p2pcards/table) and the network simulator (p2pcards/sim)

Attribution: every function's own time (cProfile `tottime`, C functions included) goes to a
category chosen by its module. Shared helpers that serve several layers (p2pcards.crypto.encoding,
msgpack, hashlib, the standard library and C builtins such as `len` or `sorted`) have no category
of their own: their time goes to their callers' categories, split by the time spent under each
caller (cProfile's per-caller edges, followed up through chains of helpers). Encoding helpers
called from the table or the simulator count as encoding: `encode` under a proof is crypto, `encode`
of an envelope is encoding. cProfile's own overhead falls on every call, so it inflates the
many small Python calls (rules, bookkeeping) more than the few long C calls (crypto): the profiled
crypto share is conservative. So the plain run also times every libsodium and Ed25519 call with the
CPU clock (about a microsecond of overhead on calls of 30 to 200); the plain-run estimate is those
measured seconds plus the plain run's remaining CPU, split between categories as the profile splits
its Python time. Games are identical between the two runs of one invocation; across invocations
they may differ (set iteration order follows PYTHONHASHSEED).
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import random
import time
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Final, cast

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl import bindings as _b

from ..bots.base import Bot, RandomBot
from ..crypto.envelope import parse
from ..crypto.identity import Identity
from ..cli import add_limit, whole
from ..progress import Progress, game_progress
from ..sim.memnet import MemNet
from ..sim.table_game import make_table
from ..table.lobby import check_host_options
from ..table.peer import Note, Send, TablePeer
from ..table.resume import whole_journal
from . import Figures, add_table_options, chosen_tables

CATEGORIES: Final = ("crypto", "signing", "encoding", "rules", "rest")
# Sub-labels shown under their category (the part before the slash).
LABELS: Final = ("crypto", "signing", "encoding", "rules/games", "rules/bots", "rest/table", "rest/sim", "rest/other")

# (path fragment, label) checked in order on a Python function's file; None = a shared helper.
_FILES: Final[tuple[tuple[str, str | None], ...]] = (
    ("/p2pcards/crypto/encoding.py", None),
    ("/p2pcards/crypto/envelope.py", "encoding"),
    ("/p2pcards/crypto/identity.py", "signing"),
    ("/p2pcards/crypto/", "crypto"),
    ("/nacl/", "crypto"),
    ("/cryptography/", "signing"),
    ("/msgpack/", None),
    ("/p2pcards/games/", "rules/games"),
    ("/p2pcards/cards.py", "rules/games"),
    ("/p2pcards/bots/", "rules/bots"),
    ("/p2pcards/table/", "rest/table"),
    ("/p2pcards/sim/", "rest/sim"),
    ("/p2pcards/bench/", "rest/sim"),
    ("/p2pcards/", "rest/other"),
)
# Shared helpers whose time counts as encoding when no crypto, signing or rules caller claims it.
_CODEC_FILES: Final = ("/p2pcards/crypto/encoding.py", "/msgpack/", "/hashlib.py")
_CODEC_BUILTINS: Final = ("msgpack", "_blake2", "blake2b", "_cmsgpack", "Packer", "Unpacker", "unpackb", "packb")

# Every libsodium binding p2pcards.crypto.group calls (through the module attribute, so they can be timed).
_SODIUM_OPS: Final = (
    "crypto_scalarmult_ed25519_noclamp",
    "crypto_scalarmult_ed25519_base_noclamp",
    "crypto_core_ed25519_is_valid_point",
    "crypto_core_ed25519_add",
    "crypto_core_ed25519_sub",
    "crypto_core_ed25519_from_uniform",
    "crypto_core_ed25519_scalar_reduce",
    "crypto_core_ed25519_scalar_add",
    "crypto_core_ed25519_scalar_sub",
    "crypto_core_ed25519_scalar_mul",
)

Key = tuple[str, int, str]
Dist = dict[str, float]


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: seed, table sizes, Crisp's limit, which games, which bots, how many hot spots to list."""
    add_table_options(parser, crisp=4, crescendo=6)
    add_limit(parser, 100, "default 100")
    parser.add_argument("--seed", type=int, default=1, help="seed of the keys, shuffles, delays and bots (default 1)")
    parser.add_argument("--bots", choices=("random", "good"), default="random",
                        help="who plays every seat: random bots (default) or good ones")
    parser.add_argument("--top", type=whole(0), default=12, help="non-crypto hot spots to list per game (default 12)")


# ------------------------------------------------------------------ one game


class _CountingNet(MemNet):
    """MemNet that keeps every broadcast frame (decoded by type only after the game)."""

    frames: list[bytes]

    def _outputs(self, sender: int, outputs: list[Send | Note]) -> None:
        for out in outputs:
            if isinstance(out, Send):
                self.frames.append(out.frame)
        super()._outputs(sender, outputs)


def _make_bots(game: str, players: int, kind: str, rng: random.Random) -> list[Bot | None]:
    if kind == "random":
        return [RandomBot(random.Random(rng.random()), 0.05) for _ in range(players)]
    if game == "crisp":
        from ..bots.crisp_bot import CrispBot
        return [CrispBot() for _ in range(players)]
    from ..bots.crescendo_bot import CrescendoBot
    return [CrescendoBot() for _ in range(players)]


def _make_net(game: str, players: int, options: dict[str, Any], seed: int, bots: str) -> _CountingNet:
    """A table whose keys, table id, round seeds, bots and delays all follow from `seed`."""
    rng = random.Random(f"bench-table/{game}/{seed}")
    peers = make_table(game, players, options, rng, journal=True)  # a journal in memory: for the resume figure
    net = _CountingNet(peers, _make_bots(game, players, bots, rng), random.Random(rng.random()))
    net.frames = []
    return net


class _Clock:
    """CPU seconds and calls spent inside the wrapped primitives during the plain run."""

    def __init__(self) -> None:
        self.secs: dict[str, float] = {}
        self.calls: Counter[str] = Counter()

    def wrap(self, name: str, f: Callable[..., Any]) -> Callable[..., Any]:
        clock = time.process_time

        def timed(*args: Any) -> Any:
            t0 = clock()
            try:
                return f(*args)
            finally:
                self.secs[name] = self.secs.get(name, 0.0) + clock() - t0
                self.calls[name] += 1

        return timed


class _TimedPublicKey:
    """An Ed25519 public key whose `verify` is timed (ChainTracker calls `key.verify` on every frame)."""

    def __init__(self, key: Any, clock: _Clock) -> None:
        self.verify = clock.wrap("verify", key.verify)


class _TimedPrivateKey:
    """An Ed25519 private key whose `sign` is timed."""

    def __init__(self, key: Ed25519PrivateKey, clock: _Clock) -> None:
        self.sign = clock.wrap("sign", key.sign)
        self.public_key = key.public_key


@contextmanager
def _timing(net: _CountingNet) -> Iterator[_Clock]:
    """Time every libsodium group operation and every Ed25519 sign and verify of the peers in `net`."""
    clock = _Clock()
    saved = {name: getattr(_b, name) for name in _SODIUM_OPS}
    for name, f in saved.items():
        setattr(_b, name, clock.wrap(name, f))
    for peer in net.peers:
        ident = peer.identity
        timed = Identity(cast(Ed25519PrivateKey, _TimedPrivateKey(ident.key, clock)), ident.name)
        peer.identity = peer.outbox.identity = timed
        for chain in peer.tracker._chains.values():  # noqa: SLF001 - a benchmark's probe
            chain.key = cast(Any, _TimedPublicKey(chain.key, clock))
    try:
        yield clock
    finally:
        for name, f in saved.items():
            setattr(_b, name, f)


@dataclass
class GameRun:
    """One game played: its times, its traffic, and its primitive timings or its profile."""

    wall: float
    cpu: float
    net: _CountingNet
    clock: _Clock | None = None
    stats: pstats.Stats | None = None

    @property
    def peer(self) -> TablePeer:
        return self.net.peers[0]


def play(game: str, players: int, options: dict[str, Any], seed: int, bots: str, profile: bool,
         progress: Progress | None = None) -> GameRun:
    """Play one whole game: under cProfile when `profile`, else with the crypto primitives timed."""
    net = _make_net(game, players, options, seed, bots)
    if progress is not None and progress.enabled:
        shown = progress
        step = 1.0 if profile else 0.0

        def show(net: MemNet, receiver: int) -> None:
            done, note = game_progress(net.peers[0].game)
            shown.update(step + done, f"{'profiled' if profile else 'plain'} run, {note}")

        net.on_deliver = show
    if profile:
        prof = cProfile.Profile()
        wall0, cpu0 = time.perf_counter(), time.process_time()
        prof.enable()
        net.start()
        net.run()
        prof.disable()
        return GameRun(time.perf_counter() - wall0, time.process_time() - cpu0, net, stats=pstats.Stats(prof))
    with _timing(net) as clock:
        wall0, cpu0 = time.perf_counter(), time.process_time()
        net.start()
        net.run()
        return GameRun(time.perf_counter() - wall0, time.process_time() - cpu0, net, clock=clock)


# ------------------------------------------------------------------ attribution


def _own_label(key: Key) -> str | None:
    """The label of a function by its module (C functions by name), or None for a shared helper."""
    filename, _, name = key
    if filename == "~":
        if "_sodium" in name:
            return "crypto"
        if "ed25519" in name.lower() and ("cryptography" in name or "generate_key" in name):
            return "signing"
        return None
    path = filename.replace("\\", "/")
    for frag, label in _FILES:
        if frag in path:
            return label
    return None


def _is_codec(key: Key) -> bool:
    filename, _, name = key
    if filename == "~":
        return any(c in name for c in _CODEC_BUILTINS)
    path = filename.replace("\\", "/")
    return any(c in path for c in _CODEC_FILES)


def _codec_map(dist: Dist) -> Dist:
    """Helper time under the table or the simulator is message encoding; crypto/signing/rules keep theirs."""
    out: Dist = {}
    for label, w in dist.items():
        label = "encoding" if label.startswith("rest/") else label
        out[label] = out.get(label, 0.0) + w
    return out


def _mix(parts: Iterable[tuple[float, Dist]]) -> Dist:
    out: Dist = {}
    total = 0.0
    for w, dist in parts:
        total += w
        for label, x in dist.items():
            out[label] = out.get(label, 0.0) + w * x
    if total <= 0:
        return {}
    return {label: x / total for label, x in out.items()}


class Attribution:
    """Each function's own time assigned to labels, shared helpers through their callers."""

    def __init__(self, stats: pstats.Stats) -> None:
        self.raw: dict[Key, Any] = stats.stats  # type: ignore[attr-defined]
        self._ctx: dict[Key, Dist] = {}
        self._busy: set[Key] = set()
        self.by_label: Counter[str] = Counter()
        self.by_function: dict[Key, Dist] = {}  # seconds per label
        for key, (_, _, tt, _, callers) in self.raw.items():
            own = _own_label(key)
            if own is not None:
                split = {own: tt}
            else:
                parts = []
                for caller, edge in callers.items():
                    ctx = self.context(key) if caller == key else self.context(caller)
                    parts.append((edge[2], ctx))
                dist = _mix(parts) or {"rest/other": 1.0}
                if _is_codec(key):
                    dist = _codec_map(dist)
                split = {label: tt * x for label, x in dist.items()}
            self.by_function[key] = split
            for label, secs in split.items():
                self.by_label[label] += secs

    def context(self, key: Key) -> Dist:
        """The labels a function passes on to the helpers it calls."""
        own = _own_label(key)
        if own is not None:
            return {own: 1.0}
        if key in self._ctx:
            return self._ctx[key]
        if key in self._busy:
            return {}
        self._busy.add(key)
        entry = self.raw.get(key)
        parts = []
        if entry is not None:
            for caller, edge in entry[4].items():
                if caller != key:
                    parts.append((edge[3] or edge[2], self.context(caller)))
        dist = _mix(p for p in parts if p[1]) or {"rest/other": 1.0}
        if _is_codec(key):
            dist = _codec_map(dist)
        self._busy.discard(key)
        self._ctx[key] = dist
        return dist

    def category(self, label: str) -> float:
        """Seconds of one category (all its sub-labels)."""
        return sum(s for lab, s in self.by_label.items() if lab.split("/")[0] == label)

    @property
    def total(self) -> float:
        return sum(self.by_label.values())

    def calls(self, fragment: str) -> int:
        """Calls of the C function(s) whose name contains `fragment`."""
        return sum(v[1] for k, v in self.raw.items() if k[0] == "~" and fragment in k[2])

    def hot(self, top: int, exclude: str = "crypto") -> list[tuple[float, str, Key]]:
        """The functions with the most own time outside `exclude`, with their main label."""
        rows = []
        for key, split in self.by_function.items():
            secs = sum(s for lab, s in split.items() if lab.split("/")[0] != exclude)
            if secs > 0:
                label = max((lab for lab in split if lab.split("/")[0] != exclude), key=lambda lab: split[lab])
                rows.append((secs, label, key))
        rows.sort(reverse=True)
        return rows[:top]


# ------------------------------------------------------------------ report


def _fmt_bytes(n: float) -> str:
    for unit in ("B", "kB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} GB"  # pragma: no cover


def _where(key: Key) -> str:
    filename, line, name = key
    if filename == "~":
        return name
    path = filename.replace("\\", "/")
    for root in ("/p2pcards/", "/site-packages/", "/lib/python"):
        if root in path:
            path = path.split(root, 1)[1]
            if root == "/p2pcards/":
                path = "p2pcards/" + path
            break
    return f"{path}:{line}({name})"


def _traffic(run: GameRun) -> dict[str, Any]:
    """Print the game's messages and bytes, in all and by type; the same figures."""
    net = run.net
    n = len(net.peers)
    sent = len(net.frames)
    size = sum(len(f) for f in net.frames)
    print(f"  messages   {sent} sent ({sent * (n - 1)} deliveries to {n - 1} peers each), "
          f"{_fmt_bytes(size)} sent ({_fmt_bytes(size * (n - 1))} delivered), "
          f"{size / max(sent, 1):.0f} B per message")
    count: Counter[str] = Counter()
    volume: Counter[str] = Counter()
    for frame in net.frames:
        mtype = parse(frame).envelope.type
        count[mtype] += 1
        volume[mtype] += len(frame)
    print(f"  {'type':<8} {'msgs':>7} {'msgs/round':>10} {'bytes':>10} {'B/msg':>8} {'share':>6}")
    rounds = max(run.peer.round, 1)
    by_type = {}
    for mtype, c in sorted(count.items(), key=lambda kv: -volume[kv[0]]):
        print(f"  {mtype:<8} {c:>7} {c / rounds:>10.1f} {_fmt_bytes(volume[mtype]):>10} "
              f"{volume[mtype] / c:>8.0f} {volume[mtype] / max(size, 1):>6.1%}")
        by_type[mtype] = {"messages": c, "per_round": c / rounds, "bytes": volume[mtype],
                          "bytes_per_message": volume[mtype] / c, "share": volume[mtype] / max(size, 1)}
    return {"messages": sent, "deliveries": sent * (n - 1), "bytes": size, "bytes_delivered": size * (n - 1),
            "bytes_per_message": size / max(sent, 1), "by_type": by_type}


def _primitive(key: Key) -> str | None:
    """"crypto" for a libsodium call, "signing" for an Ed25519 sign or verify, else None."""
    filename, _, name = key
    if filename != "~":
        return None
    if "_sodium." in name:
        return "crypto"
    if "ed25519" in name and (name.startswith("<method 'sign' of") or name.startswith("<method 'verify' of")):
        return "signing"
    return None


def _verdict(split: dict[str, float]) -> tuple[float, str]:
    crypto = split["crypto"]
    other = sum(split.values()) - crypto
    ratio = other / crypto if crypto else float("inf")
    largest = max(CATEGORIES, key=lambda c: split[c])
    met = largest == "crypto" and ratio < 1
    return ratio, f"{other:.2f} / {crypto:.2f} = {ratio:.2f}: goal {'met' if met else 'MISSED'} (largest: {largest})"


def _split(att: Attribution, plain: GameRun, top: int) -> dict[str, Any]:
    """Print the CPU split, profiled and as estimated for the plain run; the same figures."""
    assert plain.clock is not None
    clock = plain.clock
    cpu = plain.cpu
    sodium = sum(s for name, s in clock.secs.items() if name not in ("sign", "verify"))
    ed = clock.secs.get("sign", 0.0) + clock.secs.get("verify", 0.0)
    profiled = {c: att.category(c) for c in CATEGORIES}
    total = sum(profiled.values())
    # Python (everything but the primitive C calls) per category, from the profile.
    python = dict(profiled)
    for key, split in att.by_function.items():
        prim = _primitive(key)
        if prim is not None:
            python[prim] -= sum(split.values())
    py_total = sum(python.values()) or 1.0
    rest_cpu = max(cpu - sodium - ed, 0.0)
    est = {c: rest_cpu * python[c] / py_total for c in CATEGORIES}
    est["crypto"] += sodium
    est["signing"] += ed
    print(f"  CPU split       profiled ({total:.2f} s)   plain-run estimate ({cpu:.2f} s)   of which")
    for cat in CATEGORIES:
        subs = [(lab, x) for lab, x in att.by_label.items() if "/" in lab and lab.split("/")[0] == cat and x > 0]
        detail = ", ".join(f"{lab.split('/')[1]} {x / max(profiled[cat], 1e-12):.0%}"
                           for lab, x in sorted(subs, key=lambda x: -x[1]))
        if cat == "crypto":
            detail = f"libsodium calls {sodium:.2f} s measured"
        elif cat == "signing":
            detail = f"Ed25519 calls {ed:.2f} s measured"
        print(f"    {cat:<9} {profiled[cat]:>8.2f} s {profiled[cat] / total:>6.1%}   "
              f"{est[cat]:>8.2f} s {est[cat] / cpu:>6.1%}          {detail}")
    ratio_p, text_p = _verdict(profiled)
    ratio_e, text_e = _verdict(est)
    print(f"  everything else / crypto, profiled:           {text_p}")
    print(f"  everything else / crypto, plain-run estimate: {text_e}")
    bound = rest_cpu + ed
    print(f"  profiler-free bound: libsodium alone is {sodium / cpu:.1%} of the plain CPU, so everything else is "
          f"at most {bound:.2f} / {sodium:.2f} = {bound / sodium if sodium else float('inf'):.2f} of crypto")
    calls = ", ".join(f"{name.replace('crypto_', '').replace('_ed25519', '').replace('core_', '')} {n}"
                      for name, n in clock.calls.most_common())
    print(f"  primitive calls: {calls}")
    hot = att.hot(top) if top > 0 else []
    if hot:
        print("  largest costs outside crypto (own time, profiled; helpers charged to their callers' category):")
        for secs, label, key in hot:
            print(f"    {secs:>6.3f} s {secs / total:>6.1%}  {label:<12} {_where(key)}")
    return {"cpu_split_profiled_s": profiled, "cpu_split_estimate_s": est, "libsodium_s": sodium, "ed25519_s": ed,
            "else_over_crypto_profiled": ratio_p, "else_over_crypto_estimate": ratio_e,
            "else_over_libsodium_bound": bound / sodium if sodium else float("inf"),
            "primitive_calls": dict(clock.calls.most_common()),
            "hot": [{"seconds": secs, "share": secs / total, "label": label, "where": _where(key)}
                    for secs, label, key in hot]}


def _resume(peer: TablePeer, now: float) -> dict[str, Any]:
    """Time seat 0 coming back from its journal at the game's end: from its last checkpoint, and whole."""
    records = list(peer.journal or [])
    times = []
    for journal in (records, whole_journal(records)):
        start = time.perf_counter()
        TablePeer.resume(peer.cfg, peer.identity, journal, now)
        times.append(time.perf_counter() - start)
    print(f"  resume     {times[0]:.2f} s from the last checkpoint, {times[1]:.2f} s replaying the whole journal "
          f"({len(records)} records)")
    return {"resume_s": times[0], "resume_whole_s": times[1], "journal_records": len(records)}


def report(name: str, players: int, plain: GameRun, profiled: GameRun, top: int) -> dict[str, Any]:
    """Print one game's figures; the same figures (its everything-else / crypto ratio, plain-run estimate, too)."""
    peer = plain.peer
    status = "finished" if peer.finished else f"NOT finished ({peer.stopped or 'stalled'})"
    print(f"{name}, {players} players: {status}, {peer.round} rounds, totals {list(peer.game.totals)}")
    print(f"  wall time  {plain.wall:.2f} s, CPU time {plain.cpu:.2f} s (all {players} peers in one process), "
          f"virtual game time {plain.net.now:.1f} s")
    print(f"  per round  {plain.cpu / max(peer.round, 1):.2f} s CPU, "
          f"{len(plain.net.frames) / max(peer.round, 1):.0f} messages")
    row: dict[str, Any] = {"game": name, "players": players, "finished": peer.finished, "stopped": peer.stopped,
                           "rounds": peer.round, "totals": list(peer.game.totals), "wall_s": plain.wall,
                           "cpu_s": plain.cpu, "virtual_s": plain.net.now,
                           "cpu_s_per_round": plain.cpu / max(peer.round, 1),
                           "messages_per_round": len(plain.net.frames) / max(peer.round, 1)}
    row |= _traffic(plain)
    row |= _resume(profiled.peer, profiled.net.now)  # the plain run's keys are wrapped to be timed
    row["profiled_messages"] = len(profiled.net.frames)
    if len(plain.net.frames) != len(profiled.net.frames):
        print(f"  (the profiled replay sent {len(profiled.net.frames)} messages, not the same game)")
    assert profiled.stats is not None
    return row | _split(Attribution(profiled.stats), plain, top)


def run(args: argparse.Namespace) -> Figures:
    """Play each chosen game plain and under the profiler, and print its figures."""
    tables = chosen_tables(args)
    check_host_options("crisp", {"limit": args.limit})  # before anything is printed
    print(f"bench table: whole games of bots over the in-memory network (real signatures, real deck "
          f"crypto), seed {args.seed}, {args.bots} bots")
    print("Each game runs twice with the same seed: plain for the times and traffic, under cProfile for the")
    print("CPU split. Own time goes to a category by module (C functions by name: libsodium = crypto,")
    print("Ed25519 = signing); shared helpers (encoding.py, msgpack, hashlib, builtins, stdlib) are charged to")
    print("their callers' categories along cProfile's caller edges, and count as encoding under the table or")
    print("simulator. cProfile inflates many small Python calls more than few long C calls, so the profiled")
    print("crypto share is conservative. The plain run times every libsodium and Ed25519 call (CPU clock")
    print("around each); the plain-run estimate adds to those the plain run's remaining CPU, split between")
    print("categories as the profile splits its Python time.")
    rows: list[dict[str, Any]] = []
    for name, players in tables:
        options: dict[str, Any] = {"limit": args.limit} if name == "crisp" else {}
        print(flush=True)
        with Progress(f"{name}, {players} players", total=2.0) as progress:
            plain = play(name, players, options, args.seed, args.bots, profile=False, progress=progress)
            profiled = play(name, players, options, args.seed, args.bots, profile=True, progress=progress)
        rows.append(report(name, players, plain, profiled, args.top))
    print()
    print("everything else / crypto, plain-run estimate (goal: below 1): "
          + ", ".join(f"{row['game']} {row['else_over_crypto_estimate']:.2f}" for row in rows))
    params = {"game": args.game, "crisp_players": args.crisp_players, "crescendo_players": args.crescendo_players,
              "limit": args.limit, "seed": args.seed, "bots": args.bots, "top": args.top}
    return Figures(params, rows)
