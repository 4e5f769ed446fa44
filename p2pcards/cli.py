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
    "bench": ("p2pcards.bench", "run a benchmark: engine, bots, crypto or table"),
    "botgame": ("p2pcards.bots.cli", "watch good and random bots play one whole game of crisp or crescendo, move by move"),
    "sim": ("p2pcards.sim.cli", "play a whole game between simulated peers: real crypto, signed messages, in-memory network"),
    "localgame": ("p2pcards.net.cli", "play a whole game with one real process per seat, linked by TCP on this machine"),
    "play": ("p2pcards.ui.cli", "play in the terminal: `--bots N` starts a game against N bots at once"),
    "rules": ("p2pcards.ui.rules_cli", "print the rules of crisp or crescendo, with a host's options"),
    "id": ("p2pcards.crypto.identity", "show this player's name and key fingerprint; --new makes a new key"),
}


def load_command(name: str) -> argparse.ArgumentParser:
    """The parser of one subcommand; only its own module is imported."""
    module_name, help_text = COMMANDS[name]
    module = importlib.import_module(module_name)
    parser = argparse.ArgumentParser(prog=f"p2pcards {name}", description=help_text)
    module.add_arguments(parser)
    parser.set_defaults(_module=module)
    return parser


def usage() -> str:
    """The top-level help: every subcommand with its one line."""
    width = max(map(len, COMMANDS))
    lines = [
        "usage: p2pcards COMMAND [ARGS...]",
        "",
        "Peer-to-peer Crisp and Crescendo for people on the same network.",
        "",
        "commands:",
    ]
    lines += [f"  {name:<{width}}  {help_text}" for name, (_, help_text) in COMMANDS.items()]
    lines += ["", "`p2pcards COMMAND --help` describes one command."]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Run the command line; returns the exit status."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    if not args_list or args_list[0] in ("-h", "--help"):
        print(usage())
        return 0 if args_list else 2
    name = args_list[0]
    if name not in COMMANDS:
        print(f"p2pcards: unknown command {name!r}\n\n{usage()}", file=sys.stderr)
        return 2
    args = load_command(name).parse_args(args_list[1:])
    try:
        status: int = args._module.run(args)
    except InputError as exc:
        print(f"p2pcards {name}: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    return status


if __name__ == "__main__":
    sys.exit(main())
