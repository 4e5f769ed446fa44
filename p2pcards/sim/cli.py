"""`p2pcards sim`: whole games between simulated peers over the in-memory network, every message real.

One game shows the first peer's log as it goes; `--games N` plays a seeded batch; `--cheat KIND`
seats a cheater (`--cheat list`: the catalogue); every run ends with a report, and the exit
status says whether the honest peers agreed and every cheat was caught as it should be.
"""

from __future__ import annotations

import argparse
import random
from collections.abc import Callable, Sequence
from typing import Any

from ..bots.base import Bot, RandomBot
from ..bots.crescendo_bot import CrescendoBot
from ..bots.crisp_bot import CrispBot
from ..cli import add_game_options, amount, check_good, check_seats, seed_of, whole
from ..errors import InputError
from ..progress import Progress, game_progress
from ..table.peer import TablePeer
from . import cheat_cli
from .batch import GameReport, play_batch, report_lines, to_json
from .cheaters import Run
from .faults import FaultSpec
from .load import load_lines, run_tables
from .memnet import LinkModel, MemNet
from .transcript import Transcript, record

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Game, players, bots, link model, seed, batch, report, transcript, and a cheating seat."""
    add_game_options(parser, "the keys, shuffles, network delays and random bots", game_optional=True)
    parser.add_argument("--limit", type=whole(1), default=None,
                        help="Crisp's game limit (default 100; 30 with --cheat)")
    parser.add_argument("--delay-ms", type=amount(0), default=None, help="per-link delay in ms (default 4)")
    parser.add_argument("--jitter-ms", type=amount(0), default=None,
                        help="random extra delay per message in ms, up to this (default 12)")
    parser.add_argument("--games", type=whole(1), default=1,
                        help="play this many seeded games (seeds from --seed on) and report on them all")
    parser.add_argument("--tables", type=whole(1), default=None,
                        help="load: run this many tables at once, one process each, each playing --games games, "
                             "and report each table's rate and every failure")
    parser.add_argument("--json", metavar="FILE", default=None,
                        help="also write the report (every game and the totals) as JSON to FILE")
    parser.add_argument("--faults", metavar="SPEC", default=None,
                        help="network faults on every link, e.g. delay=20,jitter=30,reorder=0.1,dup=0.05,drop=0.01 "
                             "(ms; chances per frame), and restart=T: the last seat crashes at T s of table time and "
                             "comes back from its journal; the report says whether each game survived them")
    parser.add_argument("--quiet", action="store_true", help="print only the report, not the first peer's log")
    parser.add_argument("--record", metavar="FILE", default=None,
                        help="save the game's transcript (every signed frame) to FILE; `p2pcards verify FILE` "
                             "checks it (one game only)")
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
    """Play, print the report, write the JSON and the transcript; 0 when every game came out right."""
    if args.cheat == "list":
        print("\n".join(cheat_cli.catalogue_lines()))
        return 0
    if args.game is None:
        raise InputError("the game: crisp or crescendo (or --cheat list)")
    check_seats(args.game, args.players)
    seed = seed_of(args)
    if args.record is not None and (args.games > 1 or args.tables is not None):
        raise InputError("--record: one game only (not with --games or --tables)")
    cheat = cheat_cli.kind_of(args.cheat, args.game) if args.cheat else None
    faults = FaultSpec.parse(args.faults) if args.faults is not None else None
    if cheat is not None and args.good is not None:
        raise InputError("--good: not with --cheat (a cheating table seats random bots)")
    if cheat is None and args.cheater is not None:
        raise InputError("--cheater: only with --cheat (which names the cheat)")
    good_bots = 1 if args.good is None or cheat is not None else args.good
    if cheat is None:
        check_good(good_bots, args.players)
    limit = args.limit if args.limit is not None else (30 if cheat is not None else None)
    options = {"limit": limit} if limit is not None and args.game == "crisp" else {}
    link = LinkModel((4.0 if args.delay_ms is None else args.delay_ms) / 1000,
                     (12.0 if args.jitter_ms is None else args.jitter_ms) / 1000)
    good: type[CrispBot] | type[CrescendoBot] = CrispBot if args.game == "crisp" else CrescendoBot

    def bots(game_seed: int) -> Sequence[Bot | None] | None:
        if cheat is not None:
            return None  # random bots, the cheater's wrapped by its cheat
        rng = random.Random(f"bots/{game_seed}")
        return [good() if i < good_bots else RandomBot(random.Random(rng.random()), 0.05)
                for i in range(args.players)]

    # A cheating table is short (Crisp to 30) and its stalls are timed out sooner.
    common: dict[str, Any] = {"cheater": 1 if args.cheater is None else args.cheater, "faults": faults, "link": link,
                              "timeout": 5.0 if cheat is not None else 15.0,
                              "until": 300.0 if cheat is not None else 36000.0}
    params: dict[str, Any] = {"game": args.game, "players": args.players, "seed": seed, "games": args.games,
                              "options": options, "cheat": None if cheat is None else cheat.name,
                              "cheater": None if cheat is None else common["cheater"],
                              "faults": None if faults is None else faults.text()}
    if args.tables is not None:  # random bots at every seat (a good bot is not sent to another process)
        runs, wall = run_tables(args.tables, args.game, args.players, options, seed, args.games,
                                cheat=None if cheat is None else cheat.name, **common)
        reports = [g for r in runs for g in r.reports]
        print("\n".join(load_lines(runs, wall) + report_lines(reports, cheat, faults)))
        if args.json is not None:
            to_json(args.json, params | {"tables": args.tables, "wall_s": wall,
                                         "per_table_frames_per_s": [r.frames_per_s for r in runs]}, reports)
        return 0 if all(r.ok for r in reports) else 1
    transcripts: list[Transcript] = []
    show_log = args.games == 1 and cheat is None and not args.quiet
    label = f"sim {args.game}" + (f" --cheat {cheat.name}" if cheat else "")
    with Progress(label, total=args.games) as progress:
        hook = watch(progress, show_log)
        done = 0

        def setup(game_seed: int) -> Callable[[MemNet, list[TablePeer]], None]:
            def on(net: MemNet, peers: list[TablePeer]) -> None:
                def deliver(net: MemNet, receiver: int) -> None:
                    hook(net, receiver)
                    if progress.enabled:
                        part, note = game_progress(net.peers[0].game)
                        progress.update(done + part, f"seed {game_seed}, {note}")
                net.on_deliver = deliver
            return on

        def on_game(report: GameReport, game_run: Run) -> None:
            nonlocal done
            done += 1
            hook(game_run.net, 0)  # the notes made after the last delivery

        def prepare(net: MemNet, peers: list[TablePeer]) -> None:
            if args.record is not None:
                transcripts[:] = [record(net, peers[0].cfg)]

        reports = play_batch(args.game, args.players, options, seed, args.games, cheat=cheat, bots=bots,
                             prepare=prepare, setup=setup, on_game=on_game, **common)
    if transcripts:
        transcripts[0].save(args.record)
    seeds = f"seed {reports[0].seed}" if len(reports) == 1 else f"seeds {reports[0].seed} to {reports[-1].seed}"
    print(f"\nsim {args.game}, {args.players} players, {seeds}"
          + (f", seat {reports[0].cheater} cheats" if cheat is not None else ""))
    if cheat is None and args.games == 1:
        for name, ended in reports[0].ended.items():
            print(f"  {name:<4} {ended:<10} totals {reports[0].totals[name]}")
    print("\n".join(report_lines(reports, cheat, faults)))
    if args.json is not None:
        to_json(args.json, params, reports)
    return 0 if all(r.ok for r in reports) else 1
