"""`p2pcards sim`: a whole game between simulated peers over the in-memory network, every message real."""

from __future__ import annotations

import argparse
import random
import time

from ..bots.base import Bot, RandomBot
from ..bots.crescendo_bot import CrescendoBot
from ..bots.crisp_bot import CrispBot
from ..errors import InputError
from ..table.config import SEATS
from . import cheat_cli
from .memnet import LinkModel
from .table_game import play_table


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Game, players, bots, link model, seed."""
    parser.add_argument("game", choices=sorted(SEATS))
    parser.add_argument("--players", type=int, default=3)
    parser.add_argument("--good", type=int, default=1, help="how many seats get a good bot (default 1)")
    parser.add_argument("--limit", type=int, default=None, help="Crisp's game limit (default 100)")
    parser.add_argument("--delay-ms", type=float, default=4.0, help="per-link delay (default 4 ms)")
    parser.add_argument("--jitter-ms", type=float, default=12.0, help="per-frame jitter on top (default 12 ms)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quiet", action="store_true", help="only the summary")
    cheat_cli.add_arguments(parser)


def run(args: argparse.Namespace) -> int:
    """Play and print the first peer's log, the traffic and every peer's verdict."""
    low, high = SEATS[args.game]
    if not low <= args.players <= high:
        raise InputError(f"{args.game} takes {low} to {high} players")
    if not 0 <= args.good <= args.players:
        raise InputError("--good must be between 0 and --players")
    if args.cheat:
        options = {"limit": args.limit if args.limit is not None else 30} if args.game == "crisp" else {}
        return cheat_cli.run_cheat(args.cheat, args.game, args.players, options, args.seed, args.cheater)
    rng = random.Random(args.seed)
    good: type[CrispBot] | type[CrescendoBot] = CrispBot if args.game == "crisp" else CrescendoBot
    bots: list[Bot | None] = [good() if i < args.good else RandomBot(random.Random(rng.random()), 0.05)
                              for i in range(args.players)]
    options = {"limit": args.limit} if args.limit is not None and args.game == "crisp" else {}
    start = time.perf_counter()
    net = play_table(args.game, args.players, options, seed=args.seed, bots=bots,
                     link=LinkModel(args.delay_ms / 1000, args.jitter_ms / 1000))
    wall = time.perf_counter() - start
    if not args.quiet:
        for note in net.notes[0]:
            if note.kind != "event":
                blame = f"  [blame: {note.blame}]" if note.blame else ""
                print(f"{note.kind:>8}  {note.detail}{blame}")
    print(f"\n{net.stats.frames} messages, {net.stats.bytes / 1024:.0f} KiB, {net.now:.1f} s of table time "
          f"in {wall:.1f} s of CPU on this machine")
    ok = True
    for peer in net.peers:
        state = "finished" if peer.finished else f"stopped: {peer.stopped}" if peer.stopped else "unfinished"
        print(f"  {peer.names[peer.me]:<4} {state:<10} totals {peer.game.totals} log {peer.log_hash.hex()[:12] if peer.log_hash else '-'}")
        ok = ok and peer.finished
    return 0 if ok else 1
