"""The `p2pcards` command: one subcommand per job, each in its own module."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from .errors import InputError

# name -> (module, one-line help). Each module has `add_arguments(parser)` and `run(args) -> int`.
COMMANDS: dict[str, tuple[str, str]] = {
    "scenario": ("p2pcards.scenario", "play a scenario file on the rules engine and print the result as JSON"),
    "botgame": ("p2pcards.bots.cli", "watch bots play a whole game of Crisp or Crescendo on the rules engine"),
    "bench": ("p2pcards.bench", "run a benchmark: engine, bots, crypto or table"),
}


def build_parser() -> argparse.ArgumentParser:
    """The top-level parser with every subcommand registered."""
    parser = argparse.ArgumentParser(
        prog="p2pcards",
        description="Peer-to-peer Crisp and Crescendo for people on the same network.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name, (module_name, help_text) in COMMANDS.items():
        p = sub.add_parser(name, help=help_text, description=help_text)
        module = importlib.import_module(module_name)
        module.add_arguments(p)
        p.set_defaults(_module=module)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return 2
    try:
        status: int = args._module.run(args)
    except InputError as exc:
        print(f"p2pcards {args.command}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    return status


if __name__ == "__main__":
    sys.exit(main())
