"""`p2pcards localgame`: a whole game with one real process per seat, linked by TCP on this machine."""

from __future__ import annotations

import argparse
import time

from ..cli import add_game_options, add_limit, check_good, check_seats, seed_of, whole
from ..errors import InputError
from ..progress import Progress
from .local import run_local_game


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Game, players, bots, seed, limit."""
    add_game_options(parser, "the random bots; keys and shuffles stay secret, so a game cannot be replayed")
    add_limit(parser, None, "default 100")


def run(args: argparse.Namespace) -> int:
    """Start the seats, wait for the game's end, print each seat's verdict."""
    check_seats(args.game, args.players)
    check_good(args.good, args.players)
    if args.limit is not None and args.game != "crisp":  # it was dropped without a word
        raise InputError(f"--limit is not an option of {args.game}")
    seed = seed_of(args)
    options = {"limit": args.limit} if args.limit is not None else {}
    bots = ["good"] * args.good + ["random"] * (args.players - args.good)
    print(f"{args.players} processes, one per seat, linked by TCP on 127.0.0.1 ...", flush=True)
    start = time.perf_counter()
    # The seats report only at the end, so a terminal sees the time go by.
    note = f"{args.players} seats playing; they report when the game is over"
    with Progress(f"localgame {args.game}") as progress, progress.ticking(lambda: note):
        seats = run_local_game(args.game, args.players, options, bots, seed=seed)
    print(f"done in {time.perf_counter() - start:.1f} s (seed {seed})")
    ok = True
    for s in seats:
        state = "finished" if s.get("finished") else f"stopped: {s.get('stopped')}"
        print(f"  seat {s.get('seat')}: {state}; totals {s.get('totals')}; log {str(s.get('log'))[:12]}; "
              f"sent {s.get('bytes_out', 0) / 1024:.0f} KiB")
        ok = ok and bool(s.get("finished"))
    return 0 if ok else 1
