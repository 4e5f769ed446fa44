"""`p2pcards sim`: whole games between simulated peers, every message real: over the in-memory network,
or (`--transport tcp`) with every peer a process of its own on loopback, through the real network layer.

One game in memory shows the first peer's log as it goes; `--games N` plays a seeded batch;
`--cheat KIND` seats a cheater (`--cheat list`: the catalogue); every run ends with a report,
and the exit status says whether the honest peers agreed and every cheat was caught as it should be.
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import textwrap
from collections.abc import Callable, Sequence
from typing import Any

from ..bots.base import Bot, RandomBot
from ..bots.crescendo_bot import CrescendoBot
from ..bots.crisp_bot import CrispBot
from ..cli import JSON_HELP, add_game_options, add_limit, amount, check_good, check_seats, json_file, out_file, seed_of, whole
from ..errors import InputError
from ..files import STDOUT, json_output, overwrite_help, refuse_existing, refuse_lone_overwrite
from ..progress import Progress, game_progress
from ..table.peer import TablePeer
from . import cheat_cli, tcp
from .batch import TRIES, GameReport, batch_json, check_cheat, check_crash, mark_missed, play_batch, report_lines
from .catalogue import CHEAT_LIMIT, CheatKind, cheat_limit
from .cheaters import Run
from .faults import MAX_DELAY_MS, FaultSpec
from .load import MAX_TABLES, load_lines, run_tables
from .memnet import LinkModel, MemNet
from .outcome import JUDGED
from .proxy import FaultProxy
from .tcp import check_tcp_cheat
from .transcript import Transcript, record

def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Game, players, bots, link model, seed, batch, report, transcript, and a cheating seat."""
    add_game_options(parser, "the keys, shuffles, network delays and random bots (over tcp: the bots and faults only)",
                     game_optional=True)
    parser.add_argument("--transport", choices=("memory", "tcp"), default="memory",
                        help="memory (default): every peer in this process on a simulated network with a virtual "
                             "clock; tcp: every peer a process of its own, linked by real TCP on 127.0.0.1 in real "
                             "time (faults through a proxy between them; a cheat runs in the cheater's own process)")
    add_limit(parser, None, f"default 100; with --cheat {CHEAT_LIMIT}, and {CHEAT_LIMIT} × (SEAT + 1) for a cheat by "
                            "the round's orderer, so that the game lasts into the round the cheater's SEAT deals")
    # As --faults delay= and jitter=: a link slower than that is a link gone (1e308 ms played a game that failed).
    parser.add_argument("--delay-ms", type=amount(0, most=MAX_DELAY_MS), default=None, metavar="MS",
                        help=f"memory: per-link delay in ms, at most {MAX_DELAY_MS:g} (default 4)")
    parser.add_argument("--jitter-ms", type=amount(0, most=MAX_DELAY_MS), default=None, metavar="MS",
                        help=f"memory: random extra delay per message in ms, up to this, at most {MAX_DELAY_MS:g} "
                             "(default 12)")
    parser.add_argument("--games", type=whole(1), default=1,
                        help="play this many seeded games (seeds from --seed on) and report on them all (default 1)")
    parser.add_argument("--tables", type=whole(1), default=None, metavar="N",
                        help="load: run this many tables at once (in memory one process each, over tcp one process "
                             "per peer), each playing --games games, and report each table's rate and every failure "
                             f"(at most {MAX_TABLES}; default: one table, no load report)")
    parser.add_argument("--json", metavar="FILE", type=json_file, default=None,
                        help="also write the report (every game and the totals; with --cheat list, the catalogue: "
                             "expect, and cheats, each with name, games, what, expect, never_from_seat and orders) "
                             "as JSON to FILE; " + JSON_HELP)
    parser.add_argument("--faults", metavar="SPEC", default=None,
                        help="network faults on every link, e.g. delay=20,jitter=30,reorder=0.1,dup=0.05,drop=0.01 "
                             "(ms; chances per frame); restart=T: the last seat crashes at T s of table time and "
                             "comes back from its journal; gone=T (tcp): it is killed for good and the others go on "
                             "without it (gone=T:N: the last N seats at once); partition=AT:FOR[:SEATS]: the links between SEATS "
                             "(joined by +; default the last seat) and the others cut from AT s of the table's time "
                             "for FOR s, then healed; the report says whether each game survived them")
    parser.add_argument("--quiet", action="store_true", help="print only the report, not the first peer's log")
    parser.add_argument("--record", metavar="FILE", type=out_file, default=None,
                        help="save the game's transcript (every signed frame) to FILE; `p2pcards verify FILE` "
                             "checks it (one game in memory only)")
    parser.add_argument("--overwrite", action="store_true", help=overwrite_help("--record", "--json"))
    parser.set_defaults(good=None)  # so that --cheat can tell it was given; 1 otherwise
    cheat_cli.add_arguments(parser)
    parser.epilog = textwrap.fill(EXIT_STATUS, 79) + "\n\n" + (parser.epilog or "")


EXIT_STATUS = ("Exit status: 0 every game came out right; 1 honest peers disagreed, a fault was not survived (or, due "
               "at a time, never fell: the game was over first) or a cheat went uncaught (or had no chance in "
               f"{TRIES} seeds); 2 a bad option or file; 130 (Ctrl-C) or 128 + the signal (SIGTERM: 143) when "
               "stopped, after the report on the games finished.")


def game_until(game: str, limit: int | None, *, cheat: bool, tcp: bool) -> float:
    """How long a game may last before it counts as stuck: table time in memory, real time over tcp.

    A cheating Crisp table is short (to 30 by default: 300 s, 10 s per point of its limit); Crescendo
    has no limit to shorten, so its cheating table is given as long as an honest one over tcp.
    """
    whole = 1800.0 if tcp else 36000.0
    if not cheat:
        return whole
    return 10.0 * (limit or 100) if game == "crisp" else 1800.0


def watch(progress: Progress, show_log: bool) -> Callable[[MemNet, int], None]:
    """A MemNet delivery hook: the first peer's log lines as they come (when `show_log`), and the game's progress."""
    shown = 0

    def hook(net: MemNet, receiver: int) -> None:
        nonlocal shown
        if show_log:
            notes = net.notes[0]
            for line in notes[shown:]:
                if line.kind != "event":
                    # A missing or back note names its seat where a blame goes: only a judged note blames it
                    blame = f"  [blame: {line.blame}]" if line.blame and line.kind in JUDGED else ""
                    progress.print(f"{line.kind:>8}  {line.detail}{blame}")
            shown = len(notes)
        if progress.enabled:
            progress.update(*game_progress(net.peers[0].game))
    return hook


def run(args: argparse.Namespace) -> int:
    """Play, print the report, write the JSON and the transcript; 0 when every game came out right."""
    with json_output(args.json, args.overwrite) as write:
        return _run(args, write)


def _run(args: argparse.Namespace, write: Callable[[object], None]) -> int:
    """`run`, its JSON written by `write` (with `--json -`, what it prints goes to standard error)."""
    if args.cheat == "list":
        print("\n".join(cheat_cli.catalogue_lines()))
        write(cheat_cli.catalogue_json())  # a script's --json got nothing at all (no file, or an empty stdout)
        return 0
    if args.game is None:
        raise InputError("the game: crisp or crescendo (or --cheat list)")
    check_seats(args.game, args.players)
    refuse_lone_overwrite(args.overwrite, {"--record": args.record, "--json": args.json})
    refuse_existing(args.record, "--record", args.overwrite)
    refuse_existing(args.json, "--json", args.overwrite)
    if args.record is not None and args.json not in (None, STDOUT) \
            and os.path.abspath(args.record) == os.path.abspath(args.json):
        raise InputError(f"--record and --json: one file each, not both {args.record}")
    seed = seed_of(args)
    if args.record is not None and (args.games > 1 or args.tables is not None):
        raise InputError("--record: one game only (not with --games or --tables)")
    cheat = cheat_cli.kind_of(args.cheat, args.game) if args.cheat is not None else None
    faults = FaultSpec.parse(args.faults) if args.faults is not None else None
    if cheat is not None and args.good is not None:
        raise InputError("--good: not with --cheat (a cheating table seats random bots)")
    if cheat is None and args.cheater is not None:
        raise InputError("--cheater: only with --cheat (which names the cheat)")
    good_bots = 1 if args.good is None or cheat is not None else args.good
    if cheat is None:
        check_good(good_bots, args.players)
    if args.limit is not None and args.game != "crisp":
        raise InputError(f"--limit: limit is not an option of {args.game}")
    if args.tables is not None and args.tables > MAX_TABLES:
        raise InputError(f"--tables: at most {MAX_TABLES} (each starts at once, a process of its own; over tcp one "
                         f"per peer), not {args.tables}")
    if args.tables is not None and args.good is not None:
        raise InputError("--good: not with --tables (a load table seats random bots)")
    cheater = 1 if args.cheater is None else args.cheater
    limit = args.limit if args.limit is not None or cheat is None else cheat_limit(cheat, cheater)
    options = {"limit": limit} if limit is not None and args.game == "crisp" else {}
    check_cheat(cheat, args.game, args.players, cheater)
    check_crash(cheat, faults, args.players, cheater)
    if faults is not None and faults.partition is not None:
        faults.partition.side(args.players)
    tcp = args.transport == "tcp"
    if tcp:
        if args.delay_ms is not None or args.jitter_ms is not None:
            raise InputError("--delay-ms and --jitter-ms set the in-memory links; over tcp: --faults delay=MS,jitter=MS")
        if args.record is not None:
            raise InputError("--record: with --transport memory (a player saves its own game with `play --record`)")
        check_tcp_cheat(cheat, args.players, cheater)
    delay_ms = 4.0 if args.delay_ms is None else args.delay_ms
    jitter_ms = 12.0 if args.jitter_ms is None else args.jitter_ms
    if faults is not None:  # --faults delay= and jitter= set the links instead (FaultSpec.link): the report says so
        delay_ms = delay_ms if faults.delay is None else faults.delay
        jitter_ms = jitter_ms if faults.jitter is None else faults.jitter
    link = LinkModel(delay_ms / 1000, jitter_ms / 1000)
    good: type[CrispBot] | type[CrescendoBot] = CrispBot if args.game == "crisp" else CrescendoBot

    def bots(game_seed: int) -> Sequence[Bot | None] | None:
        if cheat is not None or good_bots == 0:
            return None  # the table's own random bots (the cheater's wrapped by its cheat), as at a --tables table
        rng = random.Random(f"bots/{game_seed}")
        return [good() if i < good_bots else RandomBot(random.Random(rng.random()), 0.05)
                for i in range(args.players)]

    # A cheating table's stalls are timed out sooner (over tcp, in real time on a busy machine, a little less soon).
    common: dict[str, Any] = {"cheater": cheater, "faults": faults, "link": link,
                              "timeout": (8.0 if tcp else 5.0) if cheat is not None else 15.0,
                              "until": game_until(args.game, limit, cheat=cheat is not None, tcp=tcp)}
    params: dict[str, Any] = {"game": args.game, "players": args.players, "seed": seed, "games": args.games,
                              "options": options, "cheat": None if cheat is None else cheat.name,
                              "cheater": None if cheat is None else common["cheater"],
                              "faults": None if faults is None else faults.text(), "transport": args.transport,
                              # what else shapes a game, so that a run can be made again from its report
                              "good": 0 if cheat is not None or args.tables is not None else good_bots,
                              "delay_ms": None if tcp else delay_ms, "jitter_ms": None if tcp else jitter_ms}
    if args.tables is not None:  # random bots at every seat (a good bot is not sent to another process)
        runs, wall = run_tables(args.tables, args.game, args.players, options, seed, args.games,
                                cheat=None if cheat is None else cheat.name, transport=args.transport, **common)
        reports = [g for r in runs for g in r.reports]
        mark_missed(reports, faults)
        print("\n".join(load_lines(runs, wall) + report_lines(reports, cheat, faults)))
        write(batch_json(params | {"tables": args.tables, "wall_s": wall,
                                   "per_table_frames_per_s": [r.frames_per_s for r in runs]}, reports))
        return 0 if all(r.ok for r in reports) else 1
    if tcp:
        return _run_tcp(args, cheat, good_bots, options, seed, common, params, write)
    transcripts: list[Transcript] = []
    show_log = args.games == 1 and cheat is None and not args.quiet
    label = f"sim {args.game}" + (f" --cheat {cheat.name}" if cheat else "")
    with Progress(label, total=args.games) as progress:
        hook = watch(progress, show_log)
        finished: list[GameReport] = []  # the games over so far

        def setup(game_seed: int) -> Callable[[MemNet, list[TablePeer]], None]:
            def on(net: MemNet, peers: list[TablePeer]) -> None:
                def deliver(net: MemNet, receiver: int) -> None:
                    hook(net, receiver)
                    if progress.enabled:
                        part, note = game_progress(net.peers[0].game)
                        progress.update(len(finished) + part, f"seed {game_seed}, {note}")
                net.on_deliver = deliver
            return on

        def on_game(report: GameReport, game_run: Run) -> None:
            finished.append(report)
            hook(game_run.net, 0)  # the notes made after the last delivery

        def prepare(net: MemNet, peers: list[TablePeer]) -> None:
            if args.record is not None:
                transcripts[:] = [record(net, peers[0].cfg)]

        try:
            reports = play_batch(args.game, args.players, options, seed, args.games, cheat=cheat, bots=bots,
                                 prepare=prepare, setup=setup, on_game=on_game, **common)
        except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the game so far is saved, as `play --record` saves it
            if transcripts:
                transcripts[0].save(args.record, args.overwrite)
                print(f"p2pcards sim: stopped; the game so far is in {args.record}", file=sys.stderr)
            elif args.games > 1:
                _stopped(args, finished, cheat, faults, params, write)
            raise
    if transcripts:
        transcripts[0].save(args.record, args.overwrite)
    return _report(args, reports, cheat, faults, params, write)


def _run_tcp(args: argparse.Namespace, cheat: CheatKind | None, good_bots: int, options: dict[str, Any], seed: int,
             common: dict[str, Any], params: dict[str, Any], write: Callable[[object], None]) -> int:
    """Play the games over tcp, one process per peer; the seats report only when a game is over."""
    label = f"sim {args.game} over tcp" + (f" --cheat {cheat.name}" if cheat else "")
    done: list[GameReport] = []
    trying = (seed, 1)  # the seed being played, and which try of its game (a cheat may need several for its chance)

    def on_try(at: int, k: int) -> None:
        nonlocal trying
        trying = (at, k)

    proxies: list[FaultProxy] = []  # the game's proxy, with faults: it sees how far the game has gone

    def note() -> str:
        at, k = trying
        tries = f" (try {k}: the cheat had no chance in the last)" if k > 1 else ""
        seen = f": {proxies[-1].status()}" if proxies else ""
        return f"{args.players} processes playing seed {at}{tries}{seen}"
    try:
        with Progress(label, total=args.games) as progress, progress.ticking(note):
            def on_game(report: GameReport) -> None:
                done.append(report)
                progress.update(len(done), f"seed {report.seed}: {'ok' if report.ok else 'FAILED'}")
            reports = tcp.play_batch(args.game, args.players, options, seed, args.games, good=good_bots, cheat=cheat,
                                     cheater=common["cheater"], faults=common["faults"], timeout=common["timeout"],
                                     limit_s=common["until"], on_game=on_game, on_try=on_try,
                                     on_proxy=proxies.append if progress.enabled else None)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: the games already over are reported, then the status says why
        _stopped(args, done, cheat, common["faults"], params, write)
        raise
    return _report(args, reports, cheat, common["faults"], params, write)


def _stopped(args: argparse.Namespace, reports: list[GameReport], cheat: CheatKind | None, faults: FaultSpec | None,
             params: dict[str, Any], write: Callable[[object], None]) -> None:
    """A run stopped by Ctrl-C or a signal: the report on the games it finished (and their JSON), if any, so
    that hours of games are not lost with the one that was cut."""
    print(f"\np2pcards sim: stopped after {len(reports)} of {args.games} game{'s' if args.games != 1 else ''}"
          + (": the report on those" if reports else ""), file=sys.stderr)
    if reports:
        _report(args, reports, cheat, faults, params | {"stopped_after": len(reports)}, write)
    else:  # a script that waits for the JSON learns that no game was over
        write(batch_json(params | {"stopped_after": 0}, reports))


def _report(args: argparse.Namespace, reports: list[GameReport], cheat: CheatKind | None, faults: FaultSpec | None,
            params: dict[str, Any], write: Callable[[object], None]) -> int:
    """Print the report, write the JSON; 0 when every game came out right."""
    mark_missed(reports, faults)
    seeds = f"seed {reports[0].seed}" if len(reports) == 1 else f"seeds {reports[0].seed} to {reports[-1].seed}"
    print(f"\nsim {args.game}, {args.players} players{' over tcp' if args.transport == 'tcp' else ''}, {seeds}"
          + (f", seat {reports[0].cheater} cheats" if cheat is not None else ""))
    if cheat is None and args.games == 1:
        for name, ended in reports[0].ended.items():
            print(f"  {name:<4} {ended:<10} totals {reports[0].totals[name]}")
        killed = reports[0].faults.get("gone", 0) if faults is not None else 0
        for k in range(args.players - killed, args.players):  # no outcome of theirs is judged: say where they went
            print(f"  p{k:<3} killed for good at {faults.gone if faults else 0:g} s (--faults gone): the others went "
                  "on without it")
    print("\n".join(report_lines(reports, cheat, faults)))
    write(batch_json(params, reports))
    return 0 if all(r.ok for r in reports) else 1
