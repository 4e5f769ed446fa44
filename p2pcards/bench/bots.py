"""`p2pcards bench bots`: each good bot's win rate against random bots, with a 95% Wilson interval."""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass

from ..bots.base import Bot, Game, RandomBot, play_game
from ..bots.crescendo_bot import CrescendoBot
from ..bots.crisp_bot import CrispBot
from ..games.crescendo import CrescendoGame
from ..games.crisp import CrispGame

NAMES = ("ann", "bob", "cat", "dan", "eve", "fay", "gus", "hal")


@dataclass(frozen=True, slots=True)
class Table:
    """One benchmark table: the game, how many seats, and how to make the game and the good bot."""

    game: str
    players: int
    describe: str


@dataclass(frozen=True, slots=True)
class Tally:
    """Outcome of a batch of games: the good bot's wins (shared wins as fractions), games and moves."""

    wins: float
    games: int
    moves: int


def make_game(name: str, players: int) -> Game:
    """A fresh game with default table options."""
    seats = list(NAMES[:players])
    return CrispGame(seats) if name == "crisp" else CrescendoGame(seats)


def make_good_bot(name: str) -> Bot:
    """The good bot of a game."""
    return CrispBot() if name == "crisp" else CrescendoBot()


def play_one(name: str, players: int, seed: int, index: int) -> tuple[float, int]:
    """Game `index`: the good bot sits at seat index % players; its share of the win and the moves made."""
    rng = random.Random(f"{name}/{players}/{seed}/{index}")
    seat = index % players
    bots: list[Bot] = [RandomBot(random.Random(rng.random())) for _ in range(players)]
    bots[seat] = make_good_bot(name)
    record = play_game(make_game(name, players), bots, rng)
    share = 1.0 / len(record.winners) if seat in record.winners else 0.0
    return share, record.moves


def play_batch(name: str, players: int, seed: int, indices: range) -> Tally:
    """Play the games numbered `indices` (one worker's share)."""
    wins, moves = 0.0, 0
    for i in indices:
        share, m = play_one(name, players, seed, i)
        wins += share
        moves += m
    return Tally(wins, len(indices), moves)


def wilson(successes: float, n: int, z: float = 1.959964) -> tuple[float, float]:
    """The Wilson score interval for a proportion (fractional successes allowed)."""
    if n == 0:
        return 0.0, 1.0
    p = successes / n
    denom = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denom
    return max(0.0, centre - half), min(1.0, centre + half)


def run_table(name: str, players: int, games: int, seed: int, jobs: int) -> tuple[Tally, float]:
    """Play `games` games over `jobs` processes; the tally and the wall-clock seconds."""
    start = time.perf_counter()
    chunks = [range(k, games, jobs) for k in range(jobs)]
    if jobs == 1:
        tallies = [play_batch(name, players, seed, chunks[0])]
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(play_batch, name, players, seed, c) for c in chunks]
            tallies = [f.result() for f in futures]
    elapsed = time.perf_counter() - start
    total = Tally(sum(t.wins for t in tallies), sum(t.games for t in tallies), sum(t.moves for t in tallies))
    return total, elapsed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: games per game, seed, worker processes, which game, table sizes."""
    parser.add_argument("--games", type=int, default=1000, help="games per game (default 1000)")
    parser.add_argument("--seed", type=int, default=1, help="seed of every deck and random bot (default 1)")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="worker processes (default: 2, or 1 on a one-core machine)")
    parser.add_argument("--game", choices=("crisp", "crescendo", "both"), default="both", help="which game (default both)")
    parser.add_argument("--crisp-players", type=int, default=4, help="seats at the Crisp table (default 4)")
    parser.add_argument("--crescendo-players", type=int, default=4, help="seats at the Crescendo table (default 4)")


def run(args: argparse.Namespace) -> int:
    """Play the tables and print one line of figures per game."""
    if args.games < 1 or args.jobs < 1:
        print("p2pcards bench bots: --games and --jobs must be at least 1")
        return 2
    tables = {
        "crisp": (args.crisp_players, "CrispBot", "limit 100, no discard-pile draws, no time limit"),
        "crescendo": (args.crescendo_players, "CrescendoBot", "three rounds, 2 s NUMBER windows"),
    }
    chosen = ["crisp", "crescendo"] if args.game == "both" else [args.game]
    print(f"bench bots: {args.games} games per game, seed {args.seed}, {args.jobs} process(es)")
    print("Each game: one good bot against random bots (RandomBot: uniform legal moves, out-of-turn")
    print("moves 10% of the chances). The good bot's seat rotates game by game. A win shared by k")
    print("players counts 1/k. Interval: Wilson score, 95%.")
    runner: Callable[[str, int, int, int, int], tuple[Tally, float]] = run_table
    for name in chosen:
        players, bot, options = tables[name]
        print(f"\n{name}: {players} players, 1 {bot} + {players - 1} RandomBot ({options})")
        tally, elapsed = runner(name, players, args.games, args.seed, args.jobs)
        low, high = wilson(tally.wins, tally.games)
        rate = tally.wins / tally.games
        print(f"  {bot} win rate {rate:6.1%}  95% CI [{low:.1%}, {high:.1%}]  "
              f"random baseline {1 / players:.1%}")
        print(f"  {tally.games} games in {elapsed:.1f} s: {tally.games / elapsed:.1f} games/s "
              f"({tally.moves / tally.games:.0f} moves per game)")
    return 0
