"""`p2pcards sim … --cheat KIND`: the options that seat a cheater, and the catalogue as the help shows it."""

from __future__ import annotations

import argparse

from ..cli import whole
from ..errors import InputError
from ..games.crescendo import ROUNDS as CRESCENDO_ROUNDS
from .catalogue import CATALOGUE, CheatKind


def catalogue_lines() -> list[str]:
    """One line per cheat: its name, the games it fits, what it does and what honest peers must do."""
    width = max(map(len, CATALOGUE))
    return [f"{k.name:<{width}}  {' or '.join(k.games):<19}{k.what} ({k.expect})"
            + ("" if k.not_at is None else f"; never from seat {k.not_at[0]}")
            + ("" if not k.orders else "; only in a round its seat deals (seat S deals round S + 1: crisp's default "
               f"--limit lasts that long; crescendo's {CRESCENDO_ROUNDS} rounds are dealt by seats 0 to "
               f"{CRESCENDO_ROUNDS - 1})")
            for k in CATALOGUE.values()]


def catalogue_json() -> dict[str, object]:
    """The catalogue as `sim --cheat list --json` writes it: what each expected outcome means, and every cheat."""
    return {"expect": dict(EXPECT),
            "cheats": [{"name": k.name, "games": list(k.games), "what": k.what, "expect": k.expect,
                        "never_from_seat": None if k.not_at is None else k.not_at[0], "orders": k.orders}
                       for k in CATALOGUE.values()]}


# What every honest peer must do, for each outcome a cheat of the catalogue expects (catalogue.Expect).
EXPECT = {"rejected": "refuse the move and blame the cheater",
          "void": "stop the table blaming it",
          "void-claim": "stop the table, at least one peer blaming it by its own check (one that another's "
                        "report reaches first may name it on that report's word only)",
          "dropped": "drop a frame that proves nothing, blaming no one",
          "ignored": "a replay changes nothing"}


def legend() -> str:
    """The line that says what each expected outcome in the catalogue means."""
    return ("cheats (--cheat KIND), the games they fit, and what every honest peer must do ("
            + "; ".join(f"{k}: {v}" for k, v in EXPECT.items()) + "):")


def kind_of(name: str, game: str) -> CheatKind:
    """The cheat named `name`, checked to fit `game` (InputError, one line, otherwise)."""
    kind = CATALOGUE.get(name)
    if kind is None:
        raise InputError(f"--cheat: no cheat {name!r} (`p2pcards sim --cheat list` lists them)")
    if game not in kind.games:
        fits = ", ".join(k.name for k in CATALOGUE.values() if game in k.games)
        raise InputError(f"--cheat {name} is a cheat at {' and '.join(kind.games)}; at {game}: {fits}")
    return kind


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--cheat and --cheater for `p2pcards sim`."""
    parser.add_argument("--cheat", metavar="KIND",
                        help="one seat cheats this way (at a table of random bots), and the report says whom each "
                             "honest peer blamed; `--cheat list` prints the catalogue, also below")
    parser.add_argument("--cheater", type=whole(0), default=None, metavar="SEAT",
                        help="with --cheat: the cheating seat (default 1); a cheat of the round's orderer "
                             "(early-timeout, bad-stamp) has its chance only once SEAT deals, in round SEAT + 1")
    parser.epilog = legend() + "\n  " + "\n  ".join(catalogue_lines())
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
