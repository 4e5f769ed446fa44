"""`p2pcards bench KIND`: benchmarks that print figures and ratios, never pass/fail verdicts."""

from __future__ import annotations

import argparse
import importlib

from ..cli import check_seats, whole

KINDS: dict[str, tuple[str, str]] = {
    "engine": ("p2pcards.bench.engine", "full games per second with random bots on the referee engine"),
    "bots": ("p2pcards.bench.bots", "each good bot's win rate against random bots, with a confidence interval"),
    "crypto": ("p2pcards.bench.crypto", "each mental-poker deck step's time against its lower bound, and its wire bytes"),
    "net": ("p2pcards.net.bench", "whole games between peer processes over loopback TCP: set-up, CPU, memory, traffic"),
    "table": ("p2pcards.bench.table", "whole games between peers in memory: times, traffic and the CPU split crypto/signing/encoding/rules"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`bench KIND [OPTIONS]`: one subcommand per benchmark, each with its own options and --help."""
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND",
                                  help="which benchmark; `p2pcards bench KIND --help` lists its options")
    for kind, (module_name, help_text) in KINDS.items():
        module = importlib.import_module(module_name)
        sub = kinds.add_parser(kind, help=help_text, description=help_text)
        module.add_arguments(sub)
        sub.set_defaults(_bench=module)


def run(args: argparse.Namespace) -> int:
    """Run the chosen benchmark."""
    status: int = args._bench.run(args)
    return status


def add_table_options(parser: argparse.ArgumentParser, crisp: int, crescendo: int) -> None:
    """--game and the seats at each game's table, named alike in every benchmark."""
    parser.add_argument("--game", choices=("crisp", "crescendo", "both"), default="both",
                        help="which game (default both)")
    parser.add_argument("--crisp-players", type=whole(1), default=crisp,
                        help=f"seats at the Crisp table, 2 to 8 (default {crisp})")
    parser.add_argument("--crescendo-players", type=whole(1), default=crescendo,
                        help=f"seats at the Crescendo table, 2 to 6 (default {crescendo})")


def chosen_tables(args: argparse.Namespace) -> list[tuple[str, int]]:
    """The games chosen with --game and their seats, each checked (InputError before anything is printed)."""
    games = ("crisp", "crescendo") if args.game == "both" else (args.game,)
    for game in ("crisp", "crescendo"):  # a bad number is an error even for a game not chosen
        check_seats(game, getattr(args, f"{game}_players"), f"--{game}-players")
    return [(game, getattr(args, f"{game}_players")) for game in games]
