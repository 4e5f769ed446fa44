"""`p2pcards bench KIND`: benchmarks that print figures and ratios, never pass/fail verdicts."""

from __future__ import annotations

import argparse
import importlib

KINDS: dict[str, tuple[str, str]] = {
    "engine": ("p2pcards.bench.engine", "full games per second with random bots on the referee engine"),
    "bots": ("p2pcards.bench.bots", "each good bot's win rate against random bots, with a confidence interval"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Register one sub-subcommand per benchmark."""
    sub = parser.add_subparsers(dest="kind", metavar="KIND", required=True)
    for name, (module_name, help_text) in KINDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        module = importlib.import_module(module_name)
        module.add_arguments(p)
        p.set_defaults(_bench=module)


def run(args: argparse.Namespace) -> int:
    """Run the chosen benchmark."""
    status: int = args._bench.run(args)
    return status
