"""The `p2pcards` command: one subcommand per job, each in its own module."""

from __future__ import annotations

import argparse
import importlib
import math
import os
import random
import signal
import sys
import tempfile
from collections.abc import Callable, Sequence
from typing import Any, NoReturn

from .errors import InputError, RunFailed, Terminated
from .files import STDOUT
from .games.crisp import LIMIT_CHOICES, MAX_LIMIT

# name -> (module, one-line help), in the README's order. Each module has `add_arguments(parser)` and `run(args) -> int`.
COMMANDS: dict[str, tuple[str, str]] = {
    "play": ("p2pcards.ui.cli", "play in the terminal: `--bots N` starts a game against N bots at once"),
    "rules": ("p2pcards.ui.rules_cli", "print the rules of crisp or crescendo, with a host's options"),
    "botgame": ("p2pcards.bots.cli", "watch good and random bots play one whole game of crisp or crescendo, move by move"),
    "scenario": ("p2pcards.scenario", "play a scenario file (format: docs/scenarios.md) on the rules engine "
                 "and print the result as JSON"),
    "sim": ("p2pcards.sim.cli", "play whole games between simulated peers: real crypto, signed messages, "
            "an in-memory network or a process per peer over TCP; cheats, faults, load"),
    "verify": ("p2pcards.sim.verify_cli", "check a game's transcript (saved by `sim --record` or `play --record`) offline: "
               "signatures, proofs, audits, rules and scores"),
    "localgame": ("p2pcards.net.cli", "play a whole game with one real process per seat, linked by TCP on this machine"),
    "peer": ("p2pcards.net.botpeer", "one headless peer played by a bot: finds or hosts a table on this network and plays"),
    "id": ("p2pcards.crypto.id_cli", "show this player's name and key fingerprint; --new makes a new key"),
    "bench": ("p2pcards.bench", "run a benchmark: engine, bots, crypto, net or table"),
}


def _terminated(signum: int, frame: object) -> NoReturn:
    Terminated.signalled.append(signum)
    raise Terminated(signum)


def hung_up() -> bool:
    """True once SIGHUP (our terminal closed) is ending this command."""
    return signal.SIGHUP in Terminated.signalled


def _take_over(sig: signal.Signals) -> Callable[[int, Any], Any] | int | None:
    """Raise Terminated on `sig` (unless it is ignored, as under nohup); the handler it had."""
    previous = signal.getsignal(sig)
    if previous != signal.SIG_IGN:
        signal.signal(sig, _terminated)
    return previous


class Parser(argparse.ArgumentParser):
    """An argument parser whose mistakes are one line (an InputError), not a usage block."""

    def error(self, message: str) -> NoReturn:
        """Raise the mistake as an InputError, pointing at --help."""
        raise InputError(f"{message} (see {self.prog} --help)")


def whole(low: int, most: int | None = None) -> Callable[[str], int]:
    """An option type: a whole number of at least `low`, and at most `most` when given."""
    def parse(text: str) -> int:
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
        if value < low:
            raise argparse.ArgumentTypeError(f"must be at least {low}, not {value}")
        if most is not None and value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most}, not {value}")
        return value
    parse.__name__ = "whole number"  # argparse names the type in its messages
    return parse


def add_limit(parser: argparse.ArgumentParser, default: int | None, default_words: str) -> None:
    """Add Crisp's `--limit POINTS`: any whole number a test or a scenario may set, saying what it does."""
    parser.add_argument("--limit", type=whole(1, MAX_LIMIT), default=default, metavar="POINTS",
                        help="Crisp: the game ends at the end of the round in which someone's running total reaches "
                             f"POINTS, any whole number from 1 to {MAX_LIMIT} (a host in the client offers "
                             f"{', '.join(map(str, LIMIT_CHOICES))}) ({default_words})")


def amount(low: float, above: bool = False, most: float = math.inf) -> Callable[[str], float]:
    """An option type: a finite number of at least `low` (greater than it when `above`), and at most `most`."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not a number") from None
        if not math.isfinite(value) or value < low or (above and value == low):
            raise argparse.ArgumentTypeError(f"must be {'more than' if above else 'at least'} {low:g}, not {text}")
        if value > most:
            raise argparse.ArgumentTypeError(f"must be at most {most:g}, not {text}")
        return value
    parse.__name__ = "number"
    return parse


def out_file(text: str) -> str:
    """An option type: a file to write, refused at once when its directory does not exist (not after the work)."""
    if text == STDOUT:  # what `-` means to a report's --json, never a file named so by accident
        raise argparse.ArgumentTypeError(f"{text!r} is standard output, where this file cannot go: give a file "
                                         f"(./{text} for one named {text})")
    parent = os.path.dirname(text) or "."
    if not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"no directory {parent!r} to write {text!r} in")
    if os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory")
    if os.path.exists(text) and not os.path.isfile(text):
        # The file is written whole, as a new one renamed over it: over /dev/null (as root) or a pipe, that would
        # put a plain file in its place.
        raise argparse.ArgumentTypeError(f"{text!r} is not a regular file: this writes a whole file in its place")
    try:  # a directory we may not write in (or no real one: /proc) is refused now too
        tempfile.TemporaryFile(dir=parent).close()
    except OSError as exc:
        raise argparse.ArgumentTypeError(f"cannot write in {parent!r}: {exc.strerror or exc}") from None
    if os.path.exists(text) and not os.access(text, os.W_OK):
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: it is read-only")
    return text


def state_dir(text: str) -> str:
    """An option type: a directory to keep a program's own files in, made when missing (`say_made` says so), refused
    at once when it is not a directory, or when the directory above it is missing too: a mistyped path, not one
    to make a whole tree for."""
    if os.path.exists(text) and not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory")
    parent = os.path.dirname(os.path.abspath(text))
    if not os.path.isdir(text) and not os.path.isdir(parent):
        raise argparse.ArgumentTypeError(f"no directory {parent!r} to make {text!r} in (check the path, or make "
                                         f"{parent!r} first)")
    return text


def say_made(command: str, option: str, directory: str | os.PathLike[str] | None) -> None:
    """Say once, on standard error, that the directory an option names does not exist yet and is made now (a
    misspelt --state would otherwise start a journal nobody looks for)."""
    if directory is not None and not os.path.exists(directory):
        print(f"p2pcards {command}: {option} {os.fspath(directory)} is a new directory: making it, readable by you "
              "alone", file=sys.stderr)


def json_file(text: str) -> str:
    """An option type: where a report's JSON goes, `-` for standard output, else a file as `out_file` checks it."""
    return text if text == STDOUT else out_file(text)


JSON_HELP = ("`-`: standard output, the JSON alone (what is printed otherwise goes to standard error); a FILE is "
             "written whole, and one that exists is refused unless --overwrite")


def check_seats(game: str, players: int, option: str = "--players") -> None:
    """Refuse a number of players the game does not seat (InputError naming the option and the range)."""
    from .table.config import SEATS  # here, so that `p2pcards --help` imports no game
    low, high = SEATS[game]
    if not low <= players <= high:
        raise InputError(f"{option}: {game} seats {low} to {high} players, not {players}")


def check_good(good: int, players: int) -> None:
    """Refuse more good bots than seats."""
    if good > players:
        raise InputError(f"--good: at most one good bot per seat ({players}), not {good}")


def add_game_options(parser: argparse.ArgumentParser, seeds: str, game_optional: bool = False) -> None:
    """The options every command that plays one game takes, with the same names and defaults; `seeds` says what --seed seeds."""
    if game_optional:
        parser.add_argument("game", choices=("crisp", "crescendo"), nargs="?", default=None, help="which game")
    else:
        parser.add_argument("game", choices=("crisp", "crescendo"), help="which game")
    parser.add_argument("--players", type=whole(1), default=3,
                        help="seats at the table: crisp 2 to 8, crescendo 2 to 6 (default 3)")
    parser.add_argument("--good", type=whole(0), default=1,
                        help="how many seats get a good bot; the rest play at random (default 1)")
    parser.add_argument("--seed", type=int, default=None,
                        help=f"seed of {seeds} (default: a random one, printed at the end)")


def seed_of(args: argparse.Namespace) -> int:
    """The --seed given, or a fresh random one."""
    seed: int = args.seed if args.seed is not None else random.randrange(1_000_000)
    return seed


def load_command(name: str) -> argparse.ArgumentParser:
    """The parser of one subcommand; only its own module is imported."""
    module_name, help_text = COMMANDS[name]
    module = importlib.import_module(module_name)
    parser = Parser(prog=f"p2pcards {name}", description=help_text)
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
        print(f"p2pcards: unknown command {name!r} (see p2pcards --help)", file=sys.stderr)
        return 2
    # A command that runs an event loop may take SIGTERM over for the loop's life (`peer` does). SIGHUP (the
    # terminal closed) ends a command the same way: the client's goodbyes and bots must not die with the window.
    Terminated.signalled.clear()
    previous = {sig: _take_over(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    try:
        args = load_command(name).parse_args(args_list[1:])
        status: int = args._module.run(args)
    except SystemExit as exc:  # --help
        return exc.code if isinstance(exc.code, int) else 0
    except InputError as exc:
        print(f"p2pcards {name}: {exc}", file=sys.stderr)
        return 2
    except RunFailed as exc:
        print(f"p2pcards {name}: {exc}", file=sys.stderr)
        return 1
    except Terminated as exc:
        return 128 + exc.signum
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:  # output piped into `head` and closed early
        sys.stderr.close()
        return 0
    finally:
        for sig, handler in previous.items():
            if handler is not None:  # None: a handler not set from Python, which cannot be put back
                signal.signal(sig, handler)
    return status


if __name__ == "__main__":
    sys.exit(main())
