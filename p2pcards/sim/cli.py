"""`p2pcards sim`: a whole game between simulated peers over the in-memory network, every message real."""

from __future__ import annotations

import argparse
import random
import time
from collections.abc import Callable

from ..bots.base import Bot, RandomBot
from ..bots.crescendo_bot import CrescendoBot
from ..bots.crisp_bot import CrispBot
from ..cli import add_game_options, amount, check_good, check_seats, seed_of, whole
from ..errors import InputError
from ..progress import Progress, game_progress
from . import cheat_cli
from .memnet import LinkModel, MemNet
from .table_game import make_table
from .transcript import record

# Options a cheating table does not use (it seats random bots on the default links).
NOT_WITH_CHEAT = ("good", "delay_ms", "jitter_ms", "quiet")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Game, players, bots, link model, seed, and a cheating seat."""
    add_game_options(parser, "the keys, shuffles, network delays and random bots")
    parser.add_argument("--limit", type=whole(1), default=None, help="Crisp's game limit (default 100)")
    parser.add_argument("--delay-ms", type=amount(0), default=None, help="per-link delay in ms (default 4)")
    parser.add_argument("--jitter-ms", type=amount(0), default=None,
                        help="random extra delay per message in ms, up to this (default 12)")
    parser.add_argument("--quiet", action="store_true", help="print only the summary, not the first peer's log")
    parser.add_argument("--record", metavar="FILE", default=None,
                        help="save the game's transcript (every signed frame) to FILE; `p2pcards verify FILE` checks it")
    parser.set_defaults(good=None)  # so that --cheat can tell it was given; 1 otherwise
    cheat_cli.add_arguments(parser)


def watch(progress: Progress, show_log: bool) -> Callable[[MemNet, int], None]:
    """A MemNet delivery hook: the first peer's log lines as they come (when `show_log`), and the game's progress."""
    shown = 0

    def hook(net: MemNet, receiver: int) -> None:
        nonlocal shown
        if show_log:
            notes = net.notes[0]
            for line in notes[shown:]:
                if line.kind != "event":
                    blame = f"  [blame: {line.blame}]" if line.blame else ""
                    progress.print(f"{line.kind:>8}  {line.detail}{blame}")
            shown = len(notes)
        if progress.enabled:
            progress.update(*game_progress(net.peers[0].game))
    return hook


def run(args: argparse.Namespace) -> int:
    """Play and print the first peer's log as it goes, the traffic and every peer's verdict."""
    check_seats(args.game, args.players)
    seed = seed_of(args)
    if args.cheat:
        given = [f"--{name.replace('_', '-')}" for name in NOT_WITH_CHEAT
                 if getattr(args, name) is not None and getattr(args, name) is not False]
        if given:
            raise InputError(f"{' and '.join(given)}: not with --cheat (a cheating table has random bots "
                             "on the default links)")
        options = {"limit": args.limit if args.limit is not None else 30} if args.game == "crisp" else {}
        return cheat_cli.run_cheat(args.cheat, args.game, args.players, options, seed, args.cheater, args.record)
    if args.cheater is not None:
        raise InputError("--cheater: only with --cheat (which names the cheat)")
    good_bots = 1 if args.good is None else args.good
    check_good(good_bots, args.players)
    rng = random.Random(seed)
    good: type[CrispBot] | type[CrescendoBot] = CrispBot if args.game == "crisp" else CrescendoBot
    bots: list[Bot | None] = [good() if i < good_bots else RandomBot(random.Random(rng.random()), 0.05)
                              for i in range(args.players)]
    options = {"limit": args.limit} if args.limit is not None and args.game == "crisp" else {}
    link = LinkModel((4.0 if args.delay_ms is None else args.delay_ms) / 1000,
                     (12.0 if args.jitter_ms is None else args.jitter_ms) / 1000)
    start = time.perf_counter()
    with Progress(f"sim {args.game}", total=1.0) as progress:
        # As play_table, with a hook: the same seed plays the same game.
        table_rng = random.Random(seed)
        peers = make_table(args.game, args.players, options, random.Random(table_rng.random()))
        net = MemNet(peers, bots, table_rng, link)
        transcript = record(net, peers[0].cfg) if args.record else None
        hook = watch(progress, not args.quiet)
        net.on_deliver = hook
        net.start()
        net.run()
        hook(net, 0)  # the notes made after the last delivery
    wall = time.perf_counter() - start
    if transcript is not None:
        transcript.save(args.record)
    print(f"\n{net.stats.frames} messages, {net.stats.bytes / 1024:.0f} KiB, {net.now:.1f} s of table time "
          f"in {wall:.1f} s of CPU on this machine (seed {seed})")
    ok = True
    for peer in net.peers:
        state = "finished" if peer.finished else f"stopped: {peer.stopped}" if peer.stopped else "unfinished"
        print(f"  {peer.names[peer.me]:<4} {state:<10} totals {peer.game.totals} log {peer.log_hash.hex()[:12] if peer.log_hash else '-'}")
        ok = ok and peer.finished
    return 0 if ok else 1
