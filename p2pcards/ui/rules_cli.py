"""`p2pcards rules GAME`: the rules of Crisp or Crescendo, with a table's options."""

from __future__ import annotations

import argparse

from ..rulestext import rules_text
from ..table.config import SEATS
from .cli import table_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The game and the host's options, as for `p2pcards play` (Crescendo has none)."""
    parser.add_argument("game", choices=sorted(SEATS), help="the game whose rules to print")
    parser.add_argument("--limit", type=int, default=None, help="Crisp: the game's end total")
    parser.add_argument("--draw-seconds", type=int, default=None, help="Crisp: time for each draw")
    parser.add_argument("--discard-draw", action="store_true", help="Crisp: drawing from the discard pile allowed")


def run(args: argparse.Namespace) -> int:
    """Print the rules."""
    print(rules_text(args.game, table_options(args)))
    return 0
