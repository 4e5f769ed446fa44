"""`p2pcards bench KIND`: benchmarks that print figures and ratios, never pass/fail verdicts.

Each benchmark's module has `add_arguments(parser)` and `run(args) -> Figures`: it prints its rows
as they come and hands back the same figures as numbers, which `--json FILE` writes.
"""

from __future__ import annotations

import argparse
import importlib
from dataclasses import dataclass, field
from typing import Any

from ..cli import JSON_HELP, check_seats, json_file, whole
from ..files import json_output, overwrite_help, refuse_existing, refuse_lone_overwrite

KINDS: dict[str, tuple[str, str]] = {
    "engine": ("p2pcards.bench.engine", "full games per second with random bots on the referee engine"),
    "bots": ("p2pcards.bench.bots", "each good bot's win rate against random bots, with a confidence interval"),
    "crypto": ("p2pcards.bench.crypto", "each mental-poker deck step's time against its lower bound, and its wire bytes"),
    "net": ("p2pcards.net.bench", "whole games between peer processes over loopback TCP: set-up, CPU, memory, traffic"),
    "table": ("p2pcards.bench.table", "whole games between peers in memory: times, traffic and the CPU split crypto/signing/encoding/rules"),
}


@dataclass(frozen=True)
class Figures:
    """What one benchmark measured, as `--json` writes it: the parameters that produced it, its rows (one per
    row printed, numbers where the printout has text), and any figures printed beside the rows."""

    params: dict[str, Any]
    rows: list[dict[str, Any]]
    more: dict[str, Any] = field(default_factory=dict)

    def to_json(self, kind: str) -> dict[str, Any]:
        """The JSON object of `bench KIND --json`: bench (the kind), params, rows, and the figures beside them."""
        return {"bench": kind, "params": self.params, "rows": self.rows, **self.more}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`bench KIND [OPTIONS]`: one subcommand per benchmark, each with its own options and --help."""
    kinds = parser.add_subparsers(dest="kind", required=True, metavar="KIND",
                                  help="which benchmark; `p2pcards bench KIND --help` lists its options")
    for kind, (module_name, help_text) in KINDS.items():
        module = importlib.import_module(module_name)
        sub = kinds.add_parser(kind, help=help_text, description=help_text)
        module.add_arguments(sub)
        sub.add_argument("--json", metavar="FILE", type=json_file, default=None,
                         help="also write the figures as JSON to FILE: bench (the kind), params (every option, "
                              "resolved), rows (one object per row printed, its figures as numbers: null where "
                              "the row shows none) and the figures printed beside the rows; " + JSON_HELP)
        sub.add_argument("--overwrite", action="store_true", help=overwrite_help("--json"))
        sub.set_defaults(_bench=module)


def run(args: argparse.Namespace) -> int:
    """Run the chosen benchmark, and write its figures as JSON when --json is given."""
    refuse_lone_overwrite(args.overwrite, {"--json": args.json})
    refuse_existing(args.json, "--json", args.overwrite)
    with json_output(args.json, args.overwrite) as write:
        figures: Figures = args._bench.run(args)
        write(figures.to_json(args.kind))
    return 0


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
