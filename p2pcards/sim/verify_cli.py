"""`p2pcards verify FILE`: check a game's transcript offline, from the file alone."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ..errors import InputError
from ..table.outputs import Note
from .transcript import Transcript, Verdict, verify

JSON_HELP = (
    "print one JSON object instead of the text (also for a file that cannot be read, with the error line on "
    "standard error as well); its keys: status (verified, fault, incomplete, not-record or unreadable), exit (the "
    "exit status), file, error (unreadable only), game, table (hex), players, frames, rounds (each table, round, "
    "scores, audit), refused (moves the rules refused, by seat), fault (detail, blame or null, claim: when the "
    "table stopped on a report whose blame nothing in the file bears out, {reporter, blames}: whom its reporter "
    "blamed, on its word only, else null; clocked: judged by the file's unsigned times, unclocked: the fault by the "
    "signed frames alone), waiting_on (incomplete: the "
    "seats), not_the_games (frames that are not the game's, by reason), totals and winners (verified only), "
    "lines (the text)")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """The transcript file, and --json."""
    parser.add_argument("file", metavar="FILE", help="a transcript saved by `p2pcards sim --record FILE` or "
                                                     "`p2pcards play --record FILE` (`-`: read from standard input)")
    parser.add_argument("--json", action="store_true", help=JSON_HELP)
    parser.epilog = ("Checks every signature and chain, every proof of shuffle and of share, every opening, the "
                     "audit and a replay of the rules with the scores every seat signed. Exit status: 0 a whole "
                     "game verified; 1 a fault found (a seat broke the protocol: its blame printed, or the table "
                     "stopped on a report no frame proves); 2 a file that cannot be read as a transcript; 3 a "
                     "transcript that is not a whole game's record (the game stops short, or the file holds "
                     "frames that are not the game's: a changed, copied or foreign frame; no seat is blamed).")


def run(args: argparse.Namespace) -> int:
    """Print what the transcript shows: the outcome, or the first fault with its blame (as JSON with --json)."""
    try:
        transcript = Transcript.load(args.file)
    except InputError as exc:
        if args.json:
            print(json.dumps({"status": "unreadable", "exit": 2, "file": args.file, "error": str(exc)}))
        raise
    verdict = verify(transcript)
    if args.json:
        print(json.dumps(as_json(args.file, transcript, verdict)))
    else:
        print("\n".join(verdict.lines))
    sys.stdout.flush()
    return STATUS[verdict.kind]


def _fault(note: Note | None) -> dict[str, Any] | None:
    """A fault as JSON: what it is, whom it blames (None: no seat named) and a report's claim it blames on no one."""
    return None if note is None else {"detail": note.detail, "blame": note.blame,
                                      "claim": None if note.claim is None else note.claim.to_json()}


def as_json(path: str, transcript: Transcript, verdict: Verdict) -> dict[str, Any]:
    """What `verify --json` prints: the verdict's facts, for a script to read (the keys of JSON_HELP)."""
    cfg = transcript.config
    refused: dict[str, int] = {}
    for x in verdict.tables:
        for note in x.notes:
            if note.kind == "rejected" and not note.detail.startswith(("message dropped", "frames of")):
                seat = note.blame or "no seat"
                refused[seat] = refused.get(seat, 0) + 1
    fault = _fault(verdict.fault)
    if fault is not None:
        fault |= {"clocked": verdict.clocked, "unclocked": _fault(verdict.unclocked) if verdict.clocked else None}
    w = verdict.witness
    done = verdict.kind == "verified" and w is not None
    return {"status": verdict.kind, "exit": STATUS[verdict.kind], "file": path, "game": cfg.game,
            "table": cfg.table.hex(), "players": list(cfg.names), "frames": len(transcript.frames),
            "rounds": [{"table": x.cfg.table.hex(), "round": number, "scores": list(scores), "audit": audit}
                       for x in verdict.tables for number, scores, audit in x.rounds],
            "refused": refused, "fault": fault, "waiting_on": verdict.waiting, "not_the_games": verdict.foreign,
            "totals": list(w.game.totals) if done and w is not None else None,
            "winners": [w.names[i] for i in w.game.winners] if done and w is not None else None,
            "lines": verdict.lines}


STATUS = {"verified": 0, "fault": 1, "not-record": 3, "incomplete": 3}  # 2: unreadable (an InputError)
