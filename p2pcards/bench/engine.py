"""`p2pcards bench engine`: full games per second with random bots, and the engine's cost per move."""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable

from ..bots.base import Game, RandomBot, play_game, replay
from ..games.crescendo import CrescendoGame
from ..games.crisp import CrispGame

TABLES: dict[str, Callable[[int], Game]] = {
    "crisp": lambda n: CrispGame([f"p{i}" for i in range(n)]),
    "crescendo": lambda n: CrescendoGame([f"p{i}" for i in range(n)]),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: how long to run each game, how many players, the seed."""
    parser.add_argument("--seconds", type=float, default=5.0, help="time to spend on each game (default 5)")
    parser.add_argument("--players", type=int, default=4, help="players at the table (default 4)")
    parser.add_argument("--seed", type=int, default=1)


def _pin_one_core() -> str:
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        return "pinned to one core"
    except (AttributeError, OSError):
        return "not pinned (no sched_setaffinity here)"


def run(args: argparse.Namespace) -> int:
    """Play games until the time is up, then replay their inputs on fresh engines to time the engine alone."""
    print(f"bench engine: random bots, {args.players} players, {_pin_one_core()}")
    print(f"{'game':<10} {'games':>6} {'games/s':>9} {'moves/game':>11} {'engine games/s':>15} {'µs/move':>9}")
    for name, make in TABLES.items():
        rng = random.Random(args.seed)
        traces: list[list[tuple[str, object]]] = []
        moves = 0
        start = time.perf_counter()
        while time.perf_counter() - start < args.seconds or not traces:
            trace: list[tuple[str, object]] = []
            record = play_game(make(args.players), [RandomBot(rng, 0.05) for _ in range(args.players)], rng, trace=trace)
            traces.append(trace)
            moves += record.moves
        played = time.perf_counter() - start
        start = time.perf_counter()
        for trace in traces:
            replay(make(args.players), trace)
        engine_s = time.perf_counter() - start
        games = len(traces)
        print(f"{name:<10} {games:>6} {games / played:>9.1f} {moves / games:>11.1f} "
              f"{games / engine_s:>15.1f} {engine_s / moves * 1e6:>9.1f}")
    print("games/s: whole games with bots choosing from their views; engine games/s and µs/move: the same")
    print("games replayed on fresh referee engines (deal, moves, clock ticks), bots excluded.")
    return 0
