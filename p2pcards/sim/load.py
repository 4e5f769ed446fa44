"""`p2pcards sim --tables N`: N tables at once on this machine, over either transport.

In memory each table is one process holding all its peers; over tcp each table's every peer is
a process of its own (a thread here waits on each table). Each table plays its own seeded batch
(`play_batch`); the load report gives each table's rate (frames and moves per second of wall
time while all ran together) and every failure.
"""

from __future__ import annotations

import multiprocessing
import os
import signal
import time
from collections.abc import Mapping, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor, ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ..net.local import stop_all
from . import tcp
from .batch import GameReport, failure, play_batch
from .catalogue import CATALOGUE
from .faults import FaultSpec
from .memnet import LinkModel

SEED_STRIDE = 100_000  # table k plays seeds from seed + k * SEED_STRIDE: no two tables play one game
MAX_TABLES = 64  # all start at once, each a process (over tcp, one per peer): --tables 1000000 forked thousands
STOPS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}  # blocked while the pool starts the tables' processes


def _table_process() -> None:
    """A table's process leaves Ctrl-C and SIGTERM to the command, which stops every table (each printed its own
    traceback): a signal sent to the whole group (Ctrl-C, `timeout`) ends it quietly, or the command does."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    signal.signal(signal.SIGHUP, signal.SIG_DFL)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, STOPS)  # blocked by the command while it started us


@dataclass
class TableRun:
    """One table's batch and the wall time it took while the others ran too."""

    table: int
    reports: list[GameReport]
    wall_s: float

    @property
    def frames_per_s(self) -> float:
        """Frames its peers sent per second of wall time."""
        return sum(r.frames for r in self.reports) / self.wall_s if self.wall_s > 0 else 0.0

    @property
    def moves_per_s(self) -> float:
        """Moves per second of wall time."""
        return sum(r.moves for r in self.reports) / self.wall_s if self.wall_s > 0 else 0.0


def _one_table(table: int, game: str, players: int, options: Mapping[str, Any], seed: int, games: int,
               cheat: str | None, cheater: int, faults: FaultSpec | None, link: LinkModel, timeout: float,
               until: float, transport: str) -> TableRun:
    start = time.perf_counter()
    kind = None if cheat is None else CATALOGUE[cheat]
    if transport == "tcp":
        reports = tcp.play_batch(game, players, options, seed + table * SEED_STRIDE, games, cheat=kind,
                                 cheater=cheater, faults=faults, timeout=timeout, limit_s=until)
    else:
        reports = play_batch(game, players, options, seed + table * SEED_STRIDE, games, cheat=kind,
                             cheater=cheater, faults=faults, link=link, timeout=timeout, until=until)
    return TableRun(table, reports, time.perf_counter() - start)


def run_tables(tables: int, game: str, players: int, options: Mapping[str, Any], seed: int, games: int, *,
               cheat: str | None = None, cheater: int = 1, faults: FaultSpec | None = None,
               link: LinkModel | None = None, timeout: float = 15.0, until: float = 36000.0,
               transport: str = "memory") -> tuple[list[TableRun], float]:
    """Play `tables` tables at once (in memory one process each; over tcp one process per peer); their runs,
    and the wall time of the whole. `until` is each game's limit: table time in memory, real time over tcp."""
    start = time.perf_counter()
    pool: Executor = (ThreadPoolExecutor(tables) if transport == "tcp"
                      else ProcessPoolExecutor(tables, initializer=_table_process))
    # A signal that came while the pool forked its processes could leave one started but not yet known to
    # `active_children`, playing on as an orphan: so it waits until every one is started (a table's process
    # unblocks it for itself, having set what it does with it). Not for threads: they would keep it blocked, and
    # so would the seat processes they start.
    blocked = signal.pthread_sigmask(signal.SIG_BLOCK, set() if transport == "tcp" else STOPS)
    try:
        try:
            futures = [pool.submit(_one_table, k, game, players, dict(options), seed, games, cheat, cheater, faults,
                                   link or LinkModel(), timeout, until, transport) for k in range(tables)]
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, blocked)
        runs = [f.result() for f in futures]
    except BaseException:  # Ctrl-C or a signal: the tables stop now, not once every one has played its games
        pool.shutdown(wait=False, cancel_futures=True)
        for child in multiprocessing.active_children():
            child.terminate()
        stop_all()  # over tcp each table is a thread: its seat processes end now, and its thread with them
        raise
    pool.shutdown()
    return runs, time.perf_counter() - start


def load_lines(runs: Sequence[TableRun], wall: float) -> list[str]:
    """The load report: each table's rate while all ran, the whole's, and every failure."""
    rates = sorted(r.frames_per_s for r in runs)
    moves = [r.moves_per_s for r in runs]
    failed = [(r.table, g) for r in runs for g in r.reports if not g.ok]
    games = sum(len(r.reports) for r in runs)
    cpu = sum(sum(g.cpu_s) for r in runs for g in r.reports)
    tcp = bool(runs and runs[0].reports and runs[0].reports[0].transport == "tcp")
    lines = [
        f"load: {len(runs)} tables at once on {os.cpu_count()} cores, "
        f"{'one process per peer over tcp' if tcp else 'one process each in memory'}; {games} games in {wall:.1f} s",
        f"  per table: {sum(rates) / len(rates):.0f} frames/s (min {rates[0]:.0f}, max {rates[-1]:.0f}), "
        f"{sum(moves) / len(moves):.1f} moves/s; {sum(len(r.reports) for r in runs) / wall * 60:.1f} games/min "
        f"in all, {sum(rates):.0f} frames/s in all",
        f"  CPU of the peers: {cpu:.1f} s in all, {sum(g.frames for r in runs for g in r.reports) / cpu:.0f} frames "
        f"per CPU second (the wall-time rates fall with the cores and whatever else runs on them)",
        f"  failures: {len(failed) or 'none'}",
    ]
    for table, g in failed[:10]:
        lines.append(f"    table {table}, seed {g.seed}: {failure(g)}")
    return lines
