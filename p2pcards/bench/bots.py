"""`p2pcards bench bots`: each good bot's win rate against random bots or its frozen baseline, with a 95% Wilson interval."""

from __future__ import annotations

import argparse
import math
import os
import random
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import dataclass
from typing import Any

from ..bots import baseline_crescendo, baseline_crisp
from ..bots.base import Bot, Game, RandomBot, play_game
from ..bots.crescendo_bot import CrescendoBot
from ..bots.crisp_bot import CrispBot
from ..cli import whole
from ..games.crescendo import CrescendoGame
from ..games.crisp import CrispGame
from ..progress import Progress
from . import Figures, add_table_options, chosen_tables

BATCH = 25  # games per task given to a worker process
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


def make_baseline_bot(name: str) -> Bot:
    """The good bot of a game as it was before head-to-head tuning (frozen)."""
    return baseline_crisp.CrispBot() if name == "crisp" else baseline_crescendo.CrescendoBot()


def play_one(name: str, players: int, seed: int, index: int, against: str = "random") -> tuple[float, int]:
    """Game `index`: the good bot sits at seat index % players; its share of the win and the moves made."""
    rng = random.Random(f"{name}/{players}/{seed}/{index}")
    seat = index % players
    bots: list[Bot] = [RandomBot(random.Random(rng.random())) for _ in range(players)]
    if against == "good":
        bots = [make_baseline_bot(name) for _ in range(players)]
    bots[seat] = make_good_bot(name)
    record = play_game(make_game(name, players), bots, rng)
    share = 1.0 / len(record.winners) if seat in record.winners else 0.0
    return share, record.moves


def play_batch(name: str, players: int, seed: int, indices: range, against: str = "random") -> Tally:
    """Play the games numbered `indices` (one worker's share)."""
    wins, moves = 0.0, 0
    for i in indices:
        share, m = play_one(name, players, seed, i, against)
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


def run_table(name: str, players: int, games: int, seed: int, jobs: int,
              progress: Progress | None = None, against: str = "random") -> tuple[Tally, float]:
    """Play `games` games over `jobs` processes; the tally and the wall-clock seconds."""
    start = time.perf_counter()
    # Batches of at most BATCH games, so that progress can be shown as they come back.
    chunks = [range(k, min(k + BATCH, games)) for k in range(0, games, BATCH)]
    tallies: list[Tally] = []

    def done(tally: Tally) -> None:
        tallies.append(tally)
        if progress is not None:
            progress.update(sum(t.games for t in tallies), f"{sum(t.games for t in tallies)} of {games} games")

    if jobs == 1:
        for chunk in chunks:
            done(play_batch(name, players, seed, chunk, against))
    else:
        with ProcessPoolExecutor(max_workers=jobs) as pool:
            for future in as_completed([pool.submit(play_batch, name, players, seed, c, against) for c in chunks]):
                done(future.result())
    elapsed = time.perf_counter() - start
    total = Tally(sum(t.wins for t in tallies), sum(t.games for t in tallies), sum(t.moves for t in tallies))
    return total, elapsed


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options: games per game, seed, worker processes, which game, table sizes."""
    parser.add_argument("--games", type=whole(1), default=1000, help="how many games of each chosen game (default 1000)")
    add_table_options(parser, crisp=4, crescendo=4)
    parser.add_argument("--seed", type=int, default=1, help="seed of every deck and random bot (default 1)")
    parser.add_argument("--jobs", type=whole(1), default=min(2, os.cpu_count() or 1),
                        help="worker processes (default: 2, or 1 on a one-core machine)")
    parser.add_argument("--against", choices=("random", "good"), default="random",
                        help="the other seats: random bots, or the good bot as it was before head-to-head tuning "
                             "(frozen baseline; equal play wins 1/players) (default random)")


def run(args: argparse.Namespace) -> Figures:
    """Play the tables and print one line of figures per game."""
    tables = {
        "crisp": ("CrispBot", "limit 100, no discard-pile draws, no time limit"),
        "crescendo": ("CrescendoBot", "three rounds, 2 s NUMBER windows"),
    }
    chosen = chosen_tables(args)
    print(f"bench bots: {args.games} games per game, seed {args.seed}, {args.jobs} process(es)")
    against = args.against
    if against == "good":
        print("Each game: one good bot against the frozen baseline good bot at every other seat (equal play")
        print("would win 1/players). The good bot's seat rotates game by game. A win shared by k")
    else:
        print("Each game: one good bot against random bots (RandomBot: uniform legal moves, out-of-turn")
        print("moves 10% of the chances). The good bot's seat rotates game by game. A win shared by k")
    print("players counts 1/k. Interval: Wilson score, 95%.")
    rows: list[dict[str, Any]] = []
    for name, players in chosen:
        bot, options = tables[name]
        others = "RandomBot" if against == "random" else f"baseline {bot}"
        print(f"\n{name}: {players} players, 1 {bot} + {players - 1} {others} ({options})", flush=True)
        with Progress(name, total=args.games) as progress:
            tally, elapsed = run_table(name, players, args.games, args.seed, args.jobs, progress, against)
        row = figures(name, players, bot, tally, elapsed)
        row["against"] = against
        rows.append(row)
        print(f"  {bot} win rate {row['win_rate']:6.1%}  95% CI [{row['ci95_low']:.1%}, {row['ci95_high']:.1%}]  "
              f"{'random' if against == 'random' else 'equal-play'} baseline {row['random_baseline']:.1%}")
        print(f"  {tally.games} games in {elapsed:.1f} s: {row['games_per_s']:.1f} games/s "
              f"({row['moves_per_game']:.0f} moves per game)")
    params = {"games": args.games, "seed": args.seed, "jobs": args.jobs, "game": args.game,
              "crisp_players": args.crisp_players, "crescendo_players": args.crescendo_players,
              "against": against}
    return Figures(params, rows)


def figures(game: str, players: int, bot: str, tally: Tally, seconds: float) -> dict[str, Any]:
    """One game's row: the good bot's wins and win rate with its 95% interval, the baseline, the pace."""
    low, high = wilson(tally.wins, tally.games)
    return {"game": game, "players": players, "bot": bot, "games": tally.games, "wins": tally.wins,
            "win_rate": tally.wins / tally.games, "ci95_low": low, "ci95_high": high,
            "random_baseline": 1 / players, "seconds": seconds, "games_per_s": tally.games / seconds,
            "moves_per_game": tally.moves / tally.games}
