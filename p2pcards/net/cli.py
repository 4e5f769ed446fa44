"""`p2pcards localgame`: a whole game with one real process per seat, linked by TCP on this machine."""

from __future__ import annotations

import argparse
import time

from ..errors import InputError
from ..table.config import SEATS
from .local import run_local_game


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Game, players, bots, limit."""
    parser.add_argument("game", choices=sorted(SEATS))
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--good", type=int, default=1, help="how many seats get a good bot (default 1)")
    parser.add_argument("--limit", type=int, default=None, help="Crisp's game limit (default 100)")


def run(args: argparse.Namespace) -> int:
    """Start the seats, wait for the game's end, print each seat's verdict."""
    low, high = SEATS[args.game]
    if not low <= args.players <= high or not 0 <= args.good <= args.players:
        raise InputError(f"{args.game} takes {low} to {high} players, and --good at most that many")
    options = {"limit": args.limit} if args.limit is not None and args.game == "crisp" else {}
    bots = ["good"] * args.good + ["random"] * (args.players - args.good)
    print(f"{args.players} processes, one per seat, linked by TCP on 127.0.0.1 ...", flush=True)
    start = time.perf_counter()
    seats = run_local_game(args.game, args.players, options, bots)
    print(f"done in {time.perf_counter() - start:.1f} s")
    ok = True
    for s in seats:
        state = "finished" if s.get("finished") else f"stopped: {s.get('stopped')}"
        print(f"  seat {s.get('seat')}: {state}; totals {s.get('totals')}; log {str(s.get('log'))[:12]}; "
              f"sent {s.get('bytes_out', 0) / 1024:.0f} KiB")
        ok = ok and bool(s.get("finished"))
    return 0 if ok else 1
