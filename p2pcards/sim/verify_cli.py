"""`p2pcards verify FILE`: check a game's transcript offline, from the file alone."""

from __future__ import annotations

import argparse

from .transcript import Transcript, verify


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The transcript file."""
    parser.add_argument("file", metavar="FILE", help="a transcript saved by `p2pcards sim --record FILE` or `p2pcards play --record FILE`")
    parser.epilog = ("Checks every signature and chain, every proof of shuffle and of share, every opening, the "
                     "audit and a replay of the rules with the scores every seat signed. Exit status: 0 a whole "
                     "game verified; 1 a fault (its blame printed) or a game that stops short; 2 a file that is "
                     "not an intact transcript.")


def run(args: argparse.Namespace) -> int:
    """Print what the transcript shows: the outcome, or the first fault with its blame."""
    verdict = verify(Transcript.load(args.file))
    print("\n".join(verdict.lines))
    return 0 if verdict.ok else 1
