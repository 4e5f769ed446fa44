"""`p2pcards bench engine`: full games per second with random bots, and the engine's cost per move."""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable

from ..bots.base import Game, RandomBot, play_game, replay
from ..cli import amount
from ..games.crescendo import CrescendoGame
from ..games.crisp import CrispGame
from ..progress import Progress
from . import add_table_options, chosen_tables

TABLES: dict[str, Callable[[int], Game]] = {
    "crisp": lambda n: CrispGame([f"p{i}" for i in range(n)]),
    "crescendo": lambda n: CrescendoGame([f"p{i}" for i in range(n)]),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: how long to run each game, which games at how many seats, the seed."""
    parser.add_argument("--seconds", type=amount(0, above=True), default=5.0,
                        help="seconds of play for each game (default 5)")
    add_table_options(parser, crisp=4, crescendo=4)
    parser.add_argument("--seed", type=int, default=1, help="seed of every deck and random bot (default 1)")


def _pin_one_core() -> str:
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        return "pinned to one core"
    except (AttributeError, OSError):
        return "not pinned (no sched_setaffinity here)"


def run(args: argparse.Namespace) -> int:
    """Play games until the time is up, then replay their inputs on fresh engines to time the engine alone."""
    tables = chosen_tables(args)
    print(f"bench engine: random bots, {_pin_one_core()}")
    print(f"{'game':<10} {'players':>7} {'games':>6} {'games/s':>9} {'moves/game':>11} {'engine games/s':>15} "
          f"{'µs/move':>9}")
    for name, players in tables:
        make = TABLES[name]
        rng = random.Random(args.seed)
        traces: list[list[tuple[str, object]]] = []
        moves = 0
        with Progress(f"{name}: playing", total=args.seconds) as progress:
            start = time.perf_counter()
            while (elapsed := time.perf_counter() - start) < args.seconds or not traces:
                progress.update(elapsed, f"{len(traces)} games")
                trace: list[tuple[str, object]] = []
                record = play_game(make(players), [RandomBot(rng, 0.05) for _ in range(players)], rng, trace=trace)
                traces.append(trace)
                moves += record.moves
            played = time.perf_counter() - start
            progress.label = f"{name}: replaying"
            progress.update(None, force=True)
            start = time.perf_counter()
            for trace in traces:
                replay(make(players), trace)
            engine_s = time.perf_counter() - start
        games = len(traces)
        print(f"{name:<10} {players:>7} {games:>6} {games / played:>9.1f} {moves / games:>11.1f} "
              f"{games / engine_s:>15.1f} {engine_s / moves * 1e6:>9.1f}")
    print("games/s: whole games with bots choosing from their views; engine games/s and µs/move: the same")
    print("games replayed on fresh referee engines (deal, moves, clock ticks), bots excluded.")
    return 0
