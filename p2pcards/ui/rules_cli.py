"""`p2pcards rules GAME`: the rules of Crisp or Crescendo, with a table's options."""

from __future__ import annotations

import argparse

from ..games.crisp import DRAW_SECONDS_CHOICES, LIMIT_CHOICES
from ..rulestext import rules_text
from ..table.config import SEATS
from .cli import table_options


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The game and the host's options, as for `p2pcards play` (Crescendo has none)."""
    parser.add_argument("game", choices=sorted(SEATS), help="the game whose rules to print")
    # The limits a host may choose (the rulebook's online rules), as `play --limit`: a rulebook for a table that
    # cannot be set up (`--limit 7`) was printed without a word.
    parser.add_argument("--limit", type=int, default=None, choices=LIMIT_CHOICES,
                        help="Crisp: the game ends at the end of the round someone reaches this many points: "
                             f"{', '.join(map(str, LIMIT_CHOICES[:-1]))} or {LIMIT_CHOICES[-1]} (default 100)")
    parser.add_argument("--draw-seconds", type=int, default=None,
                        choices=[c for c in DRAW_SECONDS_CHOICES if c is not None],
                        help="Crisp: seconds for each draw (default: no limit)")
    parser.add_argument("--discard-draw", action="store_true",
                        help="Crisp: drawing from the discard pile allowed (default: not)")


def run(args: argparse.Namespace) -> int:
    """Print the rules."""
    print(rules_text(args.game, table_options(args)))
    return 0
