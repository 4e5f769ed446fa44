"""`p2pcards play`: the terminal client: the lobby of LAN tables, or at once against N bot peers (`--bots N`)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import itertools
import shlex
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..cli import hung_up, out_file, say_made, state_dir
from ..crypto.identity import load_or_create, set_name
from ..errors import InputError
from ..files import numbered, overwrite_help, refuse_existing, refuse_lone_overwrite
from ..games.crisp import DRAW_SECONDS_CHOICES, LIMIT_CHOICES
from ..net.botpeer import _address
from ..rulestext import rules_text
from ..table.config import SEATS
from ..table.lobby import check_host_options

if TYPE_CHECKING:  # the client's modules load only when it runs
    from .client import Rules


def rules_function() -> Rules:
    """The rules in the project's own words (`p2pcards.rulestext`), for the `?` screen."""
    return rules_text


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Bots, game, the host's options and the player's name."""
    parser.add_argument("--bots", type=int, default=None, metavar="N",
                        help="play at once against N bot peers on this machine (Crisp 1-7, Crescendo 1-5; default: "
                             "none, the lobby of tables on the network)")
    parser.add_argument("--game", choices=sorted(SEATS), default="crisp", help="the game (default crisp)")
    parser.add_argument("--name", default=None,
                        help="your display name, kept for next time (default: the one kept, else your login name)")
    parser.add_argument("--record", metavar="FILE", type=out_file, default=None,
                        help="save your game's transcript (every signed frame you sent or received) to FILE when "
                             "you leave; `p2pcards verify FILE` checks it offline")
    parser.add_argument("--overwrite", action="store_true", help=overwrite_help("--record"))
    parser.add_argument("--state", metavar="DIR", type=state_dir, default=None,
                        help="where your seat at a LAN table is journaled, so that after a crash `p2pcards play` "
                             "takes you back into the game (default $XDG_STATE_HOME/p2pcards, or "
                             "~/.local/state/p2pcards; $P2PCARDS_HOME/state when that is set); made if missing, "
                             "said once; a DIR that holds other files named journal, node or table is refused")
    crisp = parser.add_argument_group("Crisp options (the host's)")
    crisp.add_argument("--limit", type=int, choices=LIMIT_CHOICES, default=None,
                       help="the game ends at the end of the round someone reaches this total (default 100)")
    crisp.add_argument("--draw-seconds", type=int, default=None,
                       choices=[c for c in DRAW_SECONDS_CHOICES if c is not None],
                       help="time for each draw (default: no limit)")
    crisp.add_argument("--discard-draw", action="store_true", help="allow drawing the top card of the discard pile")
    net = parser.add_argument_group("the network (the lobby)")
    net.add_argument("--interface", action="append", default=None, metavar="IF",
                     help="an IPv4 interface (name or address) to use; repeat for several (default every one)")
    net.add_argument("--peer", default=None, metavar="HOST:PORT",
                     help="join the host at this address without multicast (the host's lobby shows its port)")


def table_options(args: argparse.Namespace) -> dict[str, Any]:
    """The host's options for the chosen game; InputError for an option of the other game."""
    crisp = {"limit": args.limit, "draw_seconds": args.draw_seconds, "discard_draw": args.discard_draw or None}
    if args.game != "crisp":
        wrong = [k for k, v in crisp.items() if v is not None]
        if wrong:
            flags = ", ".join("--" + k.replace("_", "-") for k in wrong)  # as typed: --discard-draw, not discard_draw
            raise InputError(f"{flags} {'is not an option' if len(wrong) == 1 else 'are not options'} of {args.game}")
        return {}
    options = {k: v for k, v in crisp.items() if v is not None}
    check_host_options(args.game, options)
    return options


def check_bots(game: str, bots: int) -> None:
    """InputError unless the table has room for us and `bots` bots."""
    low, high = SEATS[game]
    if not low - 1 <= bots <= high - 1:
        raise InputError(f"{game} takes {low} to {high} players: --bots must be {low - 1} to {high - 1}")


def run(args: argparse.Namespace) -> int:
    """Start the client on this terminal."""
    from ..net.store import not_a_seat
    from .app import Signals, run_table, with_signals  # prompt_toolkit only loads for the client itself
    from .client import TableClient
    from .comeback import default_state_dir
    from .session import NetTable

    refuse_lone_overwrite(args.overwrite, {"--record": args.record})
    refuse_existing(args.record, "--record", args.overwrite)
    options = table_options(args)
    if args.bots is None:
        from .lobby import run_lobby
        peer = _address(args.peer) if args.peer is not None else None
        if not (sys.stdin.isatty() and sys.stdout.isatty()):
            raise InputError("the client needs a terminal")
        if args.state is not None and (why := not_a_seat(Path(args.state))) is not None:
            # A directory the player named may be one of theirs: its files are not ours to clear (the default is).
            raise InputError(f"--state {why}")
        say_made("play", "--state", args.state)
        state = Path(args.state) if args.state is not None else default_state_dir()
        with saying_saved() as saved:
            signals = Signals()
            status: int = asyncio.run(with_signals(run_lobby(
                args.name, rules_function(), interfaces=args.interface, peer=peer, record=args.record, state=state,
                host_options=options, overwrite=args.overwrite, saved=saved), signals))
            signals.end()
        return status
    if args.peer is not None or args.interface is not None or args.state is not None:
        raise InputError("--bots plays on this machine only and keeps no journal: no --peer, --interface or --state")
    check_bots(args.game, args.bots)
    if not (sys.stdin.isatty() and sys.stdout.isatty()):
        raise InputError("the client needs a terminal (stdin and stdout are not one)")
    if args.name is not None:
        set_name(args.name)
    identity = load_or_create()
    rules = rules_function()
    with saying_saved() as saved:
        aid = False
        for game in itertools.count(1):  # `n` once a game is over: another against the same bots, same options
            record = None if args.record is None else numbered(args.record, game, args.overwrite)
            session = NetTable(identity, args.game, options, bots=args.bots, record=record, overwrite=args.overwrite)
            # The memory aid stays as the player left it: on in the game before, on in this one (and said).
            client = TableClient(session, rules, against_bots=True, again=True, aid_again=aid)
            signals = Signals()
            try:
                asyncio.run(with_signals(run_table(session, rules, client=client), signals))
            finally:
                saved += [session.recorded] if session.recorded else []
            signals.end()
            if client.outcome != "again":
                break
            aid = client.aid_at_end
    return 0


@contextlib.contextmanager
def saying_saved() -> Iterator[list[str]]:
    """A list for where each game's transcript was saved, said (`saved_words`) once the client is gone, however
    it ended."""
    saved: list[str] = []
    try:
        yield saved
    finally:
        if saved and not hung_up():  # (no terminal left to say it on)
            print(saved_words(saved))


def saved_words(paths: Sequence[str]) -> str:
    """Where --record saved the games' transcripts, said once the screen is gone (a later game's name is numbered)."""
    if len(paths) == 1:  # the command whole, to paste: "FILE" alone read as a word to type
        return f"Your game's transcript is saved in {paths[0]}: p2pcards verify {shlex.quote(paths[0])} checks it."
    return f"Your games' transcripts are saved in {', '.join(paths)}: p2pcards verify FILE checks one."
