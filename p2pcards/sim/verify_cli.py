"""`p2pcards verify FILE`: check a game's transcript offline, from the file alone."""

from __future__ import annotations

import argparse

from .transcript import Transcript, verify


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The transcript file."""
    parser.add_argument("file", metavar="FILE", help="a transcript saved by `p2pcards sim --record FILE` or `p2pcards play --record FILE`")
    parser.epilog = ("Checks every signature and chain, every proof of shuffle and of share, every opening, the "
                     "audit and a replay of the rules with the scores every seat signed. Exit status: 0 a whole "
                     "game verified; 1 a fault found (a seat broke the protocol: its blame printed, or the table "
                     "stopped on a report no frame proves); 2 a file that cannot be read as a transcript; 3 a "
                     "transcript that is not a whole game's record (the game stops short, or the file holds "
                     "frames that are not the game's: a changed, copied or foreign frame; no seat is blamed).")


def run(args: argparse.Namespace) -> int:
    """Print what the transcript shows: the outcome, or the first fault with its blame."""
    verdict = verify(Transcript.load(args.file))
    print("\n".join(verdict.lines))
    return STATUS[verdict.kind]


STATUS = {"verified": 0, "fault": 1, "not-record": 3, "incomplete": 3}  # 2: unreadable (an InputError)
