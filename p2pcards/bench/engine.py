"""`p2pcards bench engine`: full games per second with random bots, and the engine's cost per move."""

from __future__ import annotations

import argparse
import os
import random
import time
from collections.abc import Callable
from typing import Any

from ..bots.base import Game, RandomBot, play_game, replay
from ..cli import amount
from ..games.crescendo import CrescendoGame
from ..games.crisp import CrispGame
from ..progress import Progress
from . import Figures, add_table_options, chosen_tables

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


def _pin_one_core() -> bool:
    """Run on one core from now on; False where that cannot be done."""
    try:
        os.sched_setaffinity(0, {min(os.sched_getaffinity(0))})
        return True
    except (AttributeError, OSError):
        return False


def run(args: argparse.Namespace) -> Figures:
    """Play games until the time is up, then replay their inputs on fresh engines to time the engine alone."""
    tables = chosen_tables(args)
    pinned = _pin_one_core()
    print(f"bench engine: random bots, {'pinned to one core' if pinned else 'not pinned (no sched_setaffinity here)'}")
    print(f"{'game':<10} {'players':>7} {'games':>6} {'games/s':>9} {'moves/game':>11} {'engine games/s':>15} "
          f"{'µs/move':>9}")
    rows: list[dict[str, Any]] = []
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
        row = figures(name, players, len(traces), moves, played, engine_s)
        rows.append(row)
        print(f"{name:<10} {players:>7} {row['games']:>6} {row['games_per_s']:>9.1f} {row['moves_per_game']:>11.1f} "
              f"{row['engine_games_per_s']:>15.1f} {row['engine_us_per_move']:>9.1f}")
    print("games/s: whole games with bots choosing from their views; engine games/s and µs/move: the same")
    print("games replayed on fresh referee engines (deal, moves, clock ticks), bots excluded.")
    params = {"seconds": args.seconds, "seed": args.seed, "game": args.game, "crisp_players": args.crisp_players,
              "crescendo_players": args.crescendo_players, "pinned": pinned}
    return Figures(params, rows)


def figures(game: str, players: int, games: int, moves: int, played_s: float, engine_s: float) -> dict[str, Any]:
    """One row: `games` games of `moves` moves in all, played in `played_s` seconds and replayed in `engine_s`."""
    return {"game": game, "players": players, "games": games, "moves": moves, "played_s": played_s,
            "engine_s": engine_s, "games_per_s": games / played_s, "moves_per_game": moves / games,
            "engine_games_per_s": games / engine_s, "engine_us_per_move": engine_s / moves * 1e6}
