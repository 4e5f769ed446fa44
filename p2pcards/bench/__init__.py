"""`p2pcards bench KIND`: benchmarks that print figures and ratios, never pass/fail verdicts."""

from __future__ import annotations

import argparse
import importlib

KINDS: dict[str, tuple[str, str]] = {
    "engine": ("p2pcards.bench.engine", "full games per second with random bots on the referee engine"),
    "bots": ("p2pcards.bench.bots", "each good bot's win rate against random bots, with a confidence interval"),
    "crypto": ("p2pcards.bench.crypto", "each mental-poker deck step's time against its lower bound, and its wire bytes"),
    "net": ("p2pcards.net.bench", "whole games between peer processes over loopback TCP: set-up, CPU, memory, traffic"),
    "table": ("p2pcards.bench.table", "whole games between peers in memory: times, traffic and the CPU split crypto/signing/encoding/rules"),
}


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`bench KIND [ARGS...]`: the kind's own arguments are parsed by its module."""
    parser.add_argument("kind", choices=sorted(KINDS), help="which benchmark")
    parser.add_argument("rest", nargs=argparse.REMAINDER, help="the benchmark's own options")


def run(args: argparse.Namespace) -> int:
    """Run the chosen benchmark; only its module is imported."""
    module_name, help_text = KINDS[args.kind]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"p2pcards bench {args.kind}", description=help_text)
    module.add_arguments(parser)
    status: int = module.run(parser.parse_args(args.rest))
    return status
