"""`p2pcards bench net`: whole games between `p2pcards peer` processes on loopback, next to the same table in memory.

For each game and table size, one host and its guests run as separate processes linked by the
authenticated TCP links of `p2pcards.net` (joined by address: no multicast), each played by a
random bot; `--repeat N` plays N such games per row. Figures, from each peer's own summary
(wall-clock times compare across processes on one machine):

  set-up   from the host seating the table to the last seat's first chance to move (links,
           ready, keys, shuffle, deal, first looks); the median game's
  game     from the host seating the table to the last peer's end; the median game's
  CPU      process CPU per peer (mean; start-up and imports included)
  memory   the largest peak resident set among the peers
  traffic  frames and KiB each peer sent (mean; heartbeats count in bytes, not frames)
  draws    how many draws the games had (every peer's): the 99th percentile of fewer than 100 is
           their slowest
  draw     from a bot's draw to its card shown to it (the draw ordered, applied and the card's
           shares in), over every draw of every peer of every game: median and 99th percentile
           (nearest rank), in ms (a Crescendo draw from an empty Reserve waits while every seat
           shuffles the discards afresh: in a game that has one, it is the 99th percentile)
  move     the same for every move of any kind (a move that reveals nothing: until it is applied)

With `--journal` every peer process journals its seat (`--state`), as the terminal client does at
a LAN table: each step's records are fsync'd before it sends anything (rows `tcp+j`).

Under each row, the same table in memory: every peer's shell in this one process and event loop,
each frame handed straight to the others on the next turn of the loop, on the wall clock: no
sockets, no processes, no handshake, so the difference is the network's own cost (but one core
for every peer, where the processes share both).

Under that, `cores`: the same table on the in-memory network's virtual clock, each peer with a core of its
own (its calls take the CPU time they took here, what it sends leaves when the call ends, what comes
meanwhile waits) and links of LAN_DELAY_S plus up to LAN_JITTER_S: a LAN of machines, one per player,
where the rows above share this machine's cores among every peer. Its set-up and game times are on
that clock (waits, windows and bots' thinking take their time on it, none of the machine's: the row
runs as fast as its CPU work); CPU is per peer, measured here.

Then, on the in-memory network (virtual clock), what a slow link costs: 3 peers, seat 1's links
either slow on every frame (`--slow` seconds, give or take 0.1 s) or with a spike of that much on
one frame in five, next to the same table with no slow link: the game's length on the table
clock, a draw's and a move's time until shown (median, ms) for the slow seat and for the others,
and any blame (there should be none: protocol.md, "Timed calls over a slow link").

Under the rows, the issue's goals: per row between processes, its draw's 99th percentile (the goal: 10 ms with 8
peers), and its set-up over the set-up's crypto cost (the goal: 3×), taken as the `cores` row's set-up: the same
keys, passes, proofs and shares, each peer on a core of its own, with nothing else to wait for but LAN links.

`--json FILE` writes the same figures as numbers (`row_line` prints a row from them), with the options.

The timed windows of the rules (Crisp's 3 s crisp window, Crescendo's 2 s number window) are
part of a game's wall time: compare set-up times and CPU, not game times, across sizes.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import random
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from ..bench import Figures
from ..bots.base import Bot
from ..cli import add_limit
from ..errors import InputError, RunFailed
from ..games.crisp import MAX_LIMIT
from ..sim.memnet import LinkModel, MemNet
from ..sim.table_game import make_table, play_table
from ..table.config import SEATS
from .botpeer import make_bot
from .shell import TableShell


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Games, table sizes, Crisp's limit."""
    parser.add_argument("--games", default="crisp,crescendo", help="comma-separated (default crisp,crescendo)")
    parser.add_argument("--peers", default="2,4,6,8", help="table sizes, comma-separated (default 2,4,6,8)")
    add_limit(parser, 10, "default 10: a round or two")
    parser.add_argument("--slow", type=float, default=1.2,
                        help="seconds of the slow link in memory (default 1.2; 0 skips that part)")
    parser.add_argument("--repeat", type=int, default=1,
                        help="games per row (default 1): the draws of every game are pooled, so that with 100 or "
                             "more the 99th percentile is not simply the slowest")
    parser.add_argument("--journal", action="store_true",
                        help="each peer process journals its seat (fsync'd before it sends), as a client at a "
                             "LAN table does; its rows say tcp+j")


def _peer(*args: str, log: Path | None = None) -> subprocess.Popen[str]:
    """A peer process whose standard output is its JSON summary alone; its log (stderr) goes to the file `log`,
    else to a pipe (the host's: `_port` reads it)."""
    with (open(log, "w") if log is not None else contextlib.nullcontext()) as err:
        return subprocess.Popen([sys.executable, "-m", "p2pcards.cli", "peer", "--json", "--interface", "127.0.0.1",
                                 *args], stdout=subprocess.PIPE, stderr=err or subprocess.PIPE, text=True)


def _port(host: subprocess.Popen[str]) -> str:
    """The port the host's log says it listens on; the rest of its log is read away (a full pipe would stop it)."""
    assert host.stderr is not None
    for line in host.stderr:
        if " on port " in line:
            threading.Thread(target=host.stderr.read, daemon=True).start()
            return line.rsplit("port", 1)[-1].split()[0]
    raise RunFailed("the host stopped before it listened")


def _summary(proc: subprocess.Popen[str]) -> dict[str, Any]:
    out, _ = proc.communicate()
    lines = [line for line in out.splitlines() if line.startswith("{")]
    if not lines:
        raise RunFailed("a peer printed no summary")
    result: dict[str, Any] = json.loads(lines[-1])
    return result


def _wait(procs: list[subprocess.Popen[str]], logs: list[Path | None], limit_s: float) -> None:
    """Wait until every peer process has ended; RunFailed (the rest killed by the caller) as soon as one ends in
    an error (1: its link broke, 2: it could not start; 3, a seat cut off that gave up, is a game's outcome), or
    after `limit_s`: a guest that never joined would leave the host waiting for its seat for ever."""
    deadline = time.monotonic() + limit_s
    while [p.poll() for p in procs].count(None):  # every one polled: `any` would stop at the first that runs
        for i, p in enumerate(procs):
            if p.returncode in (1, 2):
                log = logs[i]
                said = log.read_text(errors="replace").strip().splitlines()[-3:] if log is not None else []
                raise RunFailed(f"peer {i} ended with status {p.returncode} before the game did"
                                + (": " + " / ".join(said) if said else ""))
        if time.monotonic() > deadline:
            raise RunFailed(f"the game did not end within {limit_s:g} s")
        time.sleep(0.05)


def play_net(game: str, n: int, limit: int, limit_s: float = 900, journal: bool = False) -> list[dict[str, Any]]:
    """One game between n peer processes (each journaling its seat in a directory of its own, if `journal`);
    each peer's summary, the host's first."""
    with tempfile.TemporaryDirectory(prefix="p2pcards-bench-") as states:

        def state(i: int) -> list[str]:
            return ["--state", str(Path(states) / str(i))] if journal else []

        host_args = ["--create", "--game", game, "--players", str(n), "--no-mdns", *state(0)]
        host = _peer(*host_args, *(["--limit", str(limit)] if game == "crisp" else []))
        procs = [host]
        logs: list[Path | None] = [None] + [Path(states) / f"{i}.log" for i in range(1, n)]
        try:
            port = _port(host)
            procs += [_peer("--peer", f"127.0.0.1:{port}", *state(i), log=logs[i]) for i in range(1, n)]
            _wait(procs, logs, limit_s)
            return [_summary(p) for p in procs]
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()


def play_memory(game: str, n: int, limit: int, limit_s: float = 900) -> dict[str, Any]:
    """One game of the same table in memory on the wall clock; the figures `run` prints for a row."""

    async def main() -> dict[str, Any]:
        peers = make_table(game, n, {"limit": limit} if game == "crisp" else {})
        loop = asyncio.get_running_loop()
        shells: list[TableShell] = []

        def broadcast(sender: int) -> Any:
            return lambda out: [loop.call_soon(s.receive, out.frame) for i, s in enumerate(shells) if i != sender]

        shells += [TableShell(p, broadcast(i), make_bot(game, "random", i)) for i, p in enumerate(peers)]
        cpu, start = time.process_time(), time.time()
        for shell in shells:
            shell.start()
        async with asyncio.timeout(limit_s):
            await asyncio.gather(*(s.done() for s in shells))
        firsts = [s.first_turn for s in shells if s.first_turn is not None]
        return {"setup": max(firsts) - start if len(firsts) == n else float("nan"),
                "game": time.time() - start, "cpu": (time.process_time() - cpu) / n,
                "finished": sum(p.finished for p in peers),
                "latency": [{a: list(t) for a, t in s.latency.items()} for s in shells]}

    return asyncio.run(main())


LAN_DELAY_S = 0.0002  # a wired LAN's one-way time between two machines
LAN_JITTER_S = 0.0003


def play_cores(game: str, n: int, limit: int) -> dict[str, Any]:
    """One game of the same table in memory, each peer on a core of its own, over LAN-like links (virtual
    clock); the figures `run` prints for a row."""
    peers = make_table(game, n, {"limit": limit} if game == "crisp" else {})
    bots: list[Bot | None] = [make_bot(game, "random", i) for i in range(n)]
    net = MemNet(peers, bots, random.Random(), LinkModel(delay=LAN_DELAY_S, jitter=LAN_JITTER_S), cores=True)
    net.start()
    net.run()
    firsts = [t for t in net.first_turn if t is not None]
    return {"setup": max(firsts) if len(firsts) == n else float("nan"), "game": net.now,
            "cpu": sum(net.cpu) / n, "finished": sum(p.finished for p in net.peers), "latency": net.latency}


def _median_ms(times: list[list[float]]) -> float | None:
    """The median of all of `times` in ms, or None when there are none."""
    flat = [t for ts in times for t in ts]
    return statistics.median(flat) * 1000 if flat else None


def _ms(value: float | None) -> str:
    """A figure in ms as a row shows it, `-` for none."""
    return "-" if value is None else f"{value:.0f}"


def slow_link(game: str, limit: int, slow: float) -> list[dict[str, Any]]:
    """Print what one slow seat costs, in memory: no slow link, a slow link, spikes; each row's figures."""
    models: list[tuple[str, dict[int, LinkModel], float, bool]] = [
        ("none", {}, 0.0, False), (f"{slow:g} s", {1: LinkModel(delay=slow, jitter=0.1)}, slow, False),
        (f"{slow:g} s spikes", {1: LinkModel(spike=0.2, spike_s=slow)}, slow, True)]
    rows = []
    for name, seat_links, slow_s, spikes in models:
        net = play_table(game, 3, {"limit": limit} if game == "crisp" else {}, seed=4, seat_links=seat_links)
        draws = [net.latency[i].get("draw", []) for i in range(3)]
        moves = [[t for times in net.latency[i].values() for t in times] for i in range(3)]
        row: dict[str, Any] = {
            "game": game, "slow_s": slow_s, "spikes": spikes, "game_s": net.now,
            "draw_ms_slow": _median_ms(draws[1:2]), "draw_ms_others": _median_ms(draws[::2]),
            "move_ms_slow": _median_ms(moves[1:2]), "move_ms_others": _median_ms(moves[::2]),
            "faults": sum(len(p.faults) for p in net.peers), "finished": sum(p.finished for p in net.peers), "of": 3}
        rows.append(row)
        print(f"{game:<10} {name:<14} {row['game_s']:>8.0f} {_ms(row['draw_ms_slow']):>9} "
              f"{_ms(row['draw_ms_others']):>9} {_ms(row['move_ms_slow']):>9} {_ms(row['move_ms_others']):>9} "
              f"{row['faults']:>6}  {row['finished']}/3", flush=True)
    return rows


def _latencies(per_peer: list[dict[str, list[float]]]) -> tuple[list[float], list[float]]:
    """Every draw's latency, and every move's, over all peers."""
    draws = [t for lat in per_peer for t in lat.get("draw", [])]
    moves = [t for lat in per_peer for times in lat.values() for t in times]
    return draws, moves


def latency_ms(times: list[float]) -> tuple[float, float] | None:
    """The median and the 99th percentile (nearest rank) of `times` (seconds), in ms; None when there are none."""
    if not times:
        return None
    ordered = sorted(times)
    p99 = ordered[(99 * len(ordered) + 99) // 100 - 1]  # nearest rank: the ceil(0.99 n)-th smallest
    return statistics.median(ordered) * 1000, p99 * 1000


def percentiles(times: list[float]) -> str:
    """`median/p99` of `times` (seconds) in ms, or `-` when there are none."""
    ms = latency_ms(times)
    return "-" if ms is None else f"{ms[0]:.0f}/{ms[1]:.0f}"


def _latency_figures(draws: list[float], moves: list[float]) -> dict[str, Any]:
    """A row's draws, every draw's latency in ms (in order, for figures of one's own from `--json`), and its latencies
    in ms (None: no draw, or no move)."""
    draw, move = latency_ms(draws), latency_ms(moves)
    return {"draws": len(draws), "draw_ms": sorted(t * 1000 for t in draws),
            "draw_ms_p50": None if draw is None else draw[0], "draw_ms_p99": None if draw is None else draw[1],
            "move_ms_p50": None if move is None else move[0], "move_ms_p99": None if move is None else move[1]}


def net_figures(game: str, n: int, games: list[list[dict[str, Any]]], kind: str) -> dict[str, Any]:
    """The figures of one row for `games`, each every peer's summary of one game between processes."""
    setups, walls = [], []
    for rs in games:
        seated = rs[0]["ready_at"]
        firsts = [r["first_turn_at"] for r in rs if r.get("first_turn_at")]
        setups.append(max(firsts) - seated if seated and len(firsts) == n else float("nan"))
        walls.append(max(r["end_at"] for r in rs) - seated if seated else float("nan"))
    peers = [r for rs in games for r in rs]
    return {"game": game, "peers": n, "kind": kind, "games": len(games), "setup_s": statistics.median(setups),
            "game_s": statistics.median(walls), "cpu_s_per_peer": statistics.mean(r["cpu_s"] for r in peers),
            "peak_mib": max(r["peak_rss_kib"] for r in peers) / 1024,
            "frames_per_peer": statistics.mean(r["frames_out"] for r in peers),
            "kib_per_peer": statistics.mean(r["bytes_out"] for r in peers) / 1024,
            **_latency_figures(*_latencies([r.get("latency", {}) for r in peers])),
            "finished": sum(bool(r.get("finished")) for r in peers), "of": len(peers)}


def memory_figures(game: str, n: int, games: list[dict[str, Any]], kind: str = "memory") -> dict[str, Any]:
    """The figures of a row under it: `games`, each one game of the same table in memory (`play_memory` or
    `play_cores`); no memory or traffic of its own (None)."""
    return {"game": game, "peers": n, "kind": kind, "games": len(games),
            "setup_s": statistics.median(m["setup"] for m in games),
            "game_s": statistics.median(m["game"] for m in games),
            "cpu_s_per_peer": statistics.mean(m["cpu"] for m in games), "peak_mib": None, "frames_per_peer": None,
            "kib_per_peer": None, **_latency_figures(*_latencies([lat for m in games for lat in m["latency"]])),
            "finished": sum(m["finished"] for m in games), "of": n * len(games)}


def _p(row: dict[str, Any], what: str) -> str:
    """A row's `median/p99` of draws or moves in ms, or `-`."""
    return "-" if row[f"{what}_ms_p50"] is None else f"{row[f'{what}_ms_p50']:.0f}/{row[f'{what}_ms_p99']:.0f}"


def row_line(row: dict[str, Any]) -> str:
    """A row as printed: a tcp row in full, a row in memory under it without its game, size, memory and traffic."""
    if row["peak_mib"] is None:
        head = f"{'':<10} {'':>5} {row['kind']:<6} "
        traffic = f"{'':>9} {'':>12} {'':>9}"
    else:
        head = f"{row['game']:<10} {row['peers']:>5} {row['kind']:<6} "
        traffic = f"{row['peak_mib']:>9.0f} {row['frames_per_peer']:>12.0f} {row['kib_per_peer']:>9.0f}"
    return (f"{head}{row['setup_s']:>9.2f} {row['game_s']:>8.1f} {row['cpu_s_per_peer']:>11.2f} {traffic} "
            f"{row['draws']:>6} {_p(row, 'draw'):>15} {_p(row, 'move'):>15}  {row['finished']}/{row['of']}")


def goal_figures(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per row between processes, the figures of the issue's goals: its draw's 99th percentile, and its set-up over
    the set-up's crypto cost, the `cores` row's set-up (see the module's docstring)."""
    crypto = {(r["game"], r["peers"]): r["setup_s"] for r in rows if r["kind"] == "cores"}
    return [{"game": r["game"], "peers": r["peers"], "kind": r["kind"], "draw_ms_p99": r["draw_ms_p99"],
             "setup_s": r["setup_s"], "crypto_setup_s": c, "setup_over_crypto": r["setup_s"] / c}
            for r in rows if r["kind"].startswith("tcp") and (c := crypto.get((r["game"], r["peers"])))]


def goal_line(goal: dict[str, Any]) -> str:
    """A goal row as printed."""
    draw = "-" if goal["draw_ms_p99"] is None else f"{goal['draw_ms_p99']:.1f}"
    return (f"{goal['game']:<10} {goal['peers']:>5} {goal['kind']:<6} {draw:>11}   "
            f"{goal['setup_s']:.2f} s / {goal['crypto_setup_s']:.2f} s = {goal['setup_over_crypto']:.1f}×")


def run(args: argparse.Namespace) -> Figures:
    """Print one row per game and table size, each with its rows in memory under it (and their figures)."""
    games = [g for g in args.games.split(",") if g]
    try:
        sizes = [int(s) for s in args.peers.split(",") if s]
    except ValueError:
        raise InputError("--peers wants numbers, e.g. 2,4") from None
    bad = [g for g in games if g not in SEATS]
    if bad or not games:
        raise InputError(f"--games: {', '.join(bad) or 'none given'}: the games are {', '.join(SEATS)}")
    if not sizes or any(not 2 <= s <= 8 for s in sizes):
        raise InputError(f"--peers: {args.peers}: table sizes are 2 to 8 peers")
    if not 1 <= args.limit <= MAX_LIMIT:
        raise InputError(f"--limit: 1 to {MAX_LIMIT}, not {args.limit}")
    if not any(n <= SEATS[g][1] for g in games for n in sizes):
        raise InputError(f"--peers {args.peers}: " + "; ".join(f"{g} seats {SEATS[g][0]} to {SEATS[g][1]}" for g in games))
    if not 1 <= args.repeat <= 100:
        raise InputError(f"--repeat: 1 to 100 games per row, not {args.repeat}")
    if not 0 <= args.slow <= 10:
        raise InputError(f"--slow: 0 to 10 seconds, not {args.slow:g}")
    print("bench net: one random bot per process, TCP on 127.0.0.1, joined by address; under each, the same "
          "table in memory in one process (memory), and in memory with a core per peer and LAN links, on a "
          f"virtual clock (cores: {LAN_DELAY_S * 1000:g} ms + up to {LAN_JITTER_S * 1000:g} ms a link)")
    print(f"{'game':<10} {'peers':>5} {'':<6} {'set-up s':>9} {'game s':>8} {'CPU s/peer':>11} "
          f"{'peak MiB':>9} {'frames/peer':>12} {'KiB/peer':>9} {'draws':>6} {'draw ms p50/99':>15} {'move ms p50/99':>15}"
          "  finished")
    rows: list[dict[str, Any]] = []
    for game in games:
        for n in sizes:
            if n > SEATS[game][1]:
                continue
            for row in (
                    net_figures(game, n, [play_net(game, n, args.limit, journal=args.journal)
                                          for _ in range(args.repeat)], "tcp+j" if args.journal else "tcp"),
                    memory_figures(game, n, [play_memory(game, n, args.limit) for _ in range(args.repeat)]),
                    memory_figures(game, n, [play_cores(game, n, args.limit) for _ in range(args.repeat)], "cores")):
                rows.append(row)
                print(row_line(row), flush=True)
    goals = goal_figures(rows)
    print("\nthe goals: a draw's card shown within 10 ms at the 99th percentile with 8 peers, and set-up within 3× its "
          "crypto cost (the cores row's set-up)")
    print(f"{'game':<10} {'peers':>5} {'':<6} {'draw ms p99':>11}   set-up / its crypto cost")
    for goal in goals:
        print(goal_line(goal))
    slow: list[dict[str, Any]] = []
    if args.slow > 0:
        print("\nslow link, in memory (virtual clock): 3 peers, seat 1's links slow; median ms, seat 1 / the others")
        print(f"{'game':<10} {'slow link':<14} {'game s':>8} {'draw s1':>9} {'draw oth':>9} {'move s1':>9} "
              f"{'move oth':>9} {'faults':>6}  finished")
        for game in games:
            slow += slow_link(game, args.limit, args.slow)
    params = {"games": games, "peers": sizes, "limit": args.limit, "repeat": args.repeat, "journal": args.journal,
              "slow": args.slow, "lan_delay_s": LAN_DELAY_S, "lan_jitter_s": LAN_JITTER_S}
    return Figures(params, rows, {"goals": goals, "slow_link": slow})
