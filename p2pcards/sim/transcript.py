"""Transcripts: every signed frame of a game saved to a file, and checked offline by a witness.

A transcript is the table's config and every frame any peer sent, with the time it was sent
(protocol.md §14.8), and the frames of each table that went on without a seat (§14.9) after them. `verify` feeds it to a `Witness`: a `TablePeer` with no seat that
takes every frame as a peer does (signatures, chains, proofs of shuffle, share proofs, the
log's stamps, the rules) and audits every round from its openings, but never sends. It can
read every public card; the private boxes were sealed to their recipients, so it reports how
many it could not open (the openings still show it every face, so the audit is complete).
"""

from __future__ import annotations

import functools
import math
import sys
from collections import deque
from dataclasses import dataclass, field
from typing import Any

from ..crypto.encoding import MAX_FRAME, Value, decode, digest, encode
from ..crypto.envelope import parse
from ..crypto.identity import generate
from ..crypto.identity import verify as verify_signature
from ..errors import InputError, MalformedMessage
from ..files import write_file
from ..table.config import Game, TableConfig
from ..table.decks import Decks
from ..table.outputs import Emitter, Note, Port
from ..table.peer import TablePeer
from ..table.reveals import Reveals
from ..table.round import Parts

FORMAT = "p2pcards transcript"
VERSION = 1
PERSON = b"p2pc/transcr/v1"
MAX_TRANSCRIPT = 64 * 1024 * 1024  # a whole Crescendo game at six is about 1.3 MiB, a long Crisp game a few
# No signed frame is shorter than this (a signature and the smallest envelope, 179 bytes), so a file holds at most
# MAX_TRANSCRIPT // MIN_FRAME frames: a file of empty items cannot make millions of objects of a few bytes each.
MIN_FRAME = 160


@dataclass
class Transcript:
    """A table's config and every frame sent at it, as (time sent in microseconds, frame), in sending order."""

    config: TableConfig
    frames: list[tuple[int, bytes]] = field(default_factory=list)
    _kept: set[bytes] = field(default_factory=set, repr=False, compare=False)
    _tables: dict[bytes, TableConfig] = field(default_factory=dict, repr=False, compare=False)

    def follow(self, config: TableConfig) -> None:
        """Keep the frames of `config` too: the table that went on without a seat (protocol.md §14.9)."""
        self._tables[config.context] = config

    def add(self, now: float, frame: bytes) -> None:
        """Record one frame sent at `now` (seconds of the table's clock)."""
        self.frames.append((round(now * 1_000_000), frame))

    def keep(self, now: float, frame: bytes) -> bool:
        """A peer's hook: record a frame it sent or received at `now`, once, if a seated key signed it for this table.

        A client calls it on every frame it sends and every frame it receives; garbage, frames of
        other tables (but those it `follow`s) or unseated keys, bad signatures and copies are left
        out (True when kept).
        """
        if frame in self._kept or foreign(frame, {**self._tables, self.config.context: self.config}) is not None:
            return False
        self._kept.add(frame)
        self.add(now, frame)
        return True

    def body(self) -> dict[str, Value]:
        """The map the digest covers."""
        return {"format": FORMAT, "v": VERSION, "config": self.config.to_wire(),
                "frames": [[t, f] for t, f in self.frames]}

    def to_bytes(self) -> bytes:
        """The file's bytes: the body and its digest."""
        body = encode(self.body())
        return encode({"body": body, "digest": digest(PERSON, body)})

    def save(self, path: str, overwrite: bool = False) -> None:
        """Write the file all at once, over an existing one only when `overwrite` (InputError when it cannot)."""
        write_file(path, self.to_bytes(), overwrite)

    @classmethod
    def from_bytes(cls, data: bytes) -> Transcript:
        """Parse a transcript; MalformedMessage on anything but the exact format with a matching digest."""
        if not data:
            raise MalformedMessage("an empty file, not a transcript")
        try:
            outer = decode(data, MAX_TRANSCRIPT, max_bin=MAX_TRANSCRIPT)  # the body, one bin
        except MalformedMessage as exc:
            raise MalformedMessage(_unread(data, exc)) from None
        if not isinstance(outer, dict) or set(outer) != {"body", "digest"}:
            raise MalformedMessage("not a transcript")
        body, dig = outer["body"], outer["digest"]
        if not isinstance(body, bytes) or dig != digest(PERSON, body):
            raise MalformedMessage("the transcript's digest does not match its contents (the file was changed)")
        try:
            v = decode(body, MAX_TRANSCRIPT, max_bin=MAX_FRAME, max_array=MAX_TRANSCRIPT // MIN_FRAME)  # every frame
        except MalformedMessage as exc:
            raise MalformedMessage(f"not a transcript's contents: {exc}") from None
        if not isinstance(v, dict) or set(v) != {"format", "v", "config", "frames"} or v["format"] != FORMAT:
            raise MalformedMessage("not a transcript")
        if v["v"] != VERSION:
            raise MalformedMessage(f"transcript version {v['v']!r}; this program reads version {VERSION}")
        frames = v["frames"]
        if not isinstance(frames, list):
            raise MalformedMessage("frames: not a list")
        out: list[tuple[int, bytes]] = []
        for item in frames:
            if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], int)
                    and isinstance(item[1], bytes)) or isinstance(item[0], bool):
                raise MalformedMessage("frames: each is [microseconds, frame]")
            if len(item[1]) < MIN_FRAME:
                raise MalformedMessage(f"frame {len(out)} is {len(item[1])} bytes: too short to be a signed frame")
            out.append((item[0], item[1]))
        return cls(TableConfig.from_wire(v["config"]), out)

    @classmethod
    def load(cls, path: str) -> Transcript:
        """Read a transcript file, `-` standard input (InputError when it cannot be read or is not a transcript)."""
        name = "standard input" if path == "-" else path
        try:
            if path == "-":
                data = sys.stdin.buffer.read(MAX_TRANSCRIPT + 1)
            else:
                with open(path, "rb") as f:
                    data = f.read(MAX_TRANSCRIPT + 1)
        except OSError as exc:
            raise InputError(f"{name}: {exc.strerror or exc}") from None
        if len(data) > MAX_TRANSCRIPT:  # only so much was read: the file's own size is not known here
            raise InputError(f"{name}: over {MAX_TRANSCRIPT} bytes, the most a transcript may be (protocol.md §14.8)")
        try:
            return cls.from_bytes(data)
        except MalformedMessage as exc:
            raise InputError(f"{name}: {exc}") from None


def _unread(data: bytes, exc: MalformedMessage) -> str:
    """Why a file that is no msgpack at all is not a transcript, in words a tester can act on."""
    if data.startswith(encode({"body": b"", "digest": b""})[:6]):  # a transcript's first bytes: {"body": …
        return f"a transcript cut short or damaged ({exc})"
    if data.lstrip()[:1] in (b"{", b"["):
        return "JSON, not a transcript (verify reads the file --record saves, not a --json report)"
    return f"not a transcript, the file --record saves ({exc})"


# ---------------------------------------------------------------- the witness


class MuteEmitter(Emitter):
    """An emitter that notes and stops like a peer's, but sends nothing (a witness has no seat to sign for)."""

    def send(self, rnd: int, mtype: str, body: dict[str, Value]) -> None:
        """Nothing is sent."""


class WitnessReveals(Reveals):
    """Reveals seen from no seat: no shares of our own, a face learned only once every seat's share is in;
    each private box that goes by is counted in `boxes` (by sender and recipient, over every round)."""

    def __init__(self, decks: Decks, game: Game, keys: tuple[bytes, ...], port: Port,
                 boxes: dict[tuple[int, int], int]) -> None:
        super().__init__(decks, game, keys, port)
        self.boxes = boxes

    def box_seen(self, prover: int, recipient: int) -> None:
        """Count the box, as a seated peer would (see Reveals)."""
        super().box_seen(prover, recipient)
        self.boxes[(prover, recipient)] = self.boxes.get((prover, recipient), 0) + 1

    def send_shares(self, handles: list[int], recipient: int | None) -> None:
        """A witness holds no share."""

    def learn(self) -> None:
        """Combine only the cards whose every share came (a peer supplies its own; a witness has none)."""
        short = {h for h in self.learning if len(self.shares.get(self.decks.loc[h], {})) < self.seats}
        self.learning -= short
        try:
            super().learn()
        finally:
            self.learning |= short


class Witness(TablePeer):
    """A table peer with no seat: it takes every frame of a table as a seated peer would, and sends nothing."""

    def __init__(self, config: TableConfig, carry: tuple[tuple[int, ...], int] | None = None) -> None:
        boxes: dict[tuple[int, int], int] = {}  # (sender, recipient) -> private boxes seen, over every round
        # No seat: `me` is past the last seat, and the emitter is mute (it never signs). The tolerance
        # is set by `verify` (a transcript's times are the sender's clock).
        super().__init__(config, generate("witness"), tolerance=float("inf"), timeout=float("inf"), carry=carry,
                         emitter=MuteEmitter, parts=Parts(reveals=functools.partial(WitnessReveals, boxes=boxes)))
        self.boxes = boxes

    @property
    def rounds(self) -> list[tuple[int, tuple[int, ...], str]]:
        """(round, scores, audit verdict) of each round settled."""
        return [(r.round, r.scores, r.audit) for r in self.settled]

    def going_on(self) -> Witness | None:
        """The witness of the table that goes on without the seats voted out (§14.9), once this one names it."""
        if self.successor is None:
            return None
        return Witness(self.successor, self.seating.passed_on)


@dataclass
class Verdict:
    """What a witness made of a transcript."""

    ok: bool  # a whole game, every round audited and signed alike by every seat, no fault
    lines: list[str]
    fault: Note | None
    witness: Witness | None
    # "verified"; "fault": a seat broke the protocol (or the table stopped on a report: `fault` says whom it
    # blames); "not-record": the file holds frames that are not the game's (or in the wrong order), so it is
    # not a record as a peer keeps one; "incomplete": the game stops short, waiting on a seat.
    kind: str = "verified"
    tables: list[Witness] = field(default_factory=list)  # the witness of each table of the game, the first's first
    clocked: bool = False  # the fault rests on the file's times, which no seat signs
    unclocked: Note | None = None  # then the fault by the signed frames alone (None: the game stops short)
    waiting: list[str] | None = None  # incomplete: the seats the game was still waiting on
    foreign: dict[str, int] = field(default_factory=dict)  # frames that are not the game's, counted by reason


def verify(transcript: Transcript, tolerance: float = 1.0) -> Verdict:
    """Replay a transcript into a witness, and into one for each table that went on without a seat (§14.9),
    and say what they found (never raises on what the file holds)."""
    cfg = transcript.config
    head = f"{cfg.game} table {cfg.table.hex()[:12]}: {', '.join(cfg.names)}; {len(transcript.frames)} frames"
    if len(set(cfg.keys)) != len(cfg.keys):
        return Verdict(False, [head, "NOT THE GAME'S RECORD: the config seats one key twice"], None, None, "not-record")
    last: int | None = None
    for i, (t, _) in enumerate(transcript.frames):
        if last is not None and t < last:
            return Verdict(False, [head, f"NOT THE GAME'S RECORD: frame {i} is recorded at {t / 1e6:.6f} s, before the "
                                         f"one ahead of it ({last / 1e6:.6f} s): a recorder keeps frames in the "
                                         "order it took them (no seat is to blame)"], None, None, "not-record")
        last = t
    witnesses, w, later = replay(transcript, tolerance)
    fault = next((x.faults[0] for x in witnesses if x.faults), None)
    clocked = False  # the fault rests on the times the file records
    unclocked: Note | None = None
    if fault is not None and math.isfinite(tolerance):
        # A transcript's times are the recorder's, signed by no one: anyone can move them (and make the
        # digest again). A fault that goes away when no stamp is judged by them is no proof against a seat.
        again, w2, _ = replay(transcript, math.inf)
        unclocked = next((x.faults[0] for x in again if x.faults), None)
        if unclocked is None or (unclocked.detail, unclocked.blame) != (fault.detail, fault.blame):
            clocked = True
            if unclocked is None and w2.finished:  # and every seat signed the results that took that order: the times were moved
                return Verdict(False, [head, f"NOT THE GAME'S RECORD: the times it records are not when the frames "
                                             f"came ({fault.detail}), yet every seat signed the results that took "
                                             "that frame in time: the file's times were changed (no seat is to "
                                             "blame for what a file holds)"], None, w2, "not-record")
    lines = [head]
    foreign = not_the_games(transcript.frames, {x.cfg.context: x.cfg for x in witnesses})
    rejected: list[Note] = []
    for x in witnesses:
        if x is not witnesses[0]:
            lines.append(f"the table goes on without the seats voted out (protocol.md §14.9) as table "
                         f"{x.cfg.table.hex()[:12]}: {', '.join(x.cfg.names)}")
        for number, scores, audit in x.rounds:
            lines.append(f"round {number}: audit {audit}, scores {list(scores)}")
        if x.boxes:
            boxes = ", ".join(f"{x.names[s]}->{x.names[r]}: {k}" for (s, r), k in sorted(x.boxes.items()))
            lines.append(f"private boxes not opened (sealed to their recipients; the openings show every face): {boxes}")
        rejected += [n for n in x.notes if n.kind == "rejected"]
    lines += rejected_lines(rejected)
    # A record holds each frame sent once, each signed by a seated key for a table of the game: anything else
    # (a frame whose signature fails, a copy, a frame of no table of this game, bytes that are no frame) means
    # the file is not the game's record, whatever else it shows.
    copies = len(transcript.frames) - len({f for _, f in transcript.frames})
    if copies:
        foreign["copies"] = copies
    record_line = None
    if foreign:
        record_line = "NOT THE GAME'S RECORD: " + "; ".join(
            f"{n} {FOREIGN[reason]}" for reason, n in foreign.items()) + " (no seat is to blame for what a file holds)"
    if fault is not None:
        if record_line is not None:
            lines.append(record_line)
        lines.append(f"FAULT: {fault.detail}" + (f" [blame: {fault.blame}]" if fault.blame else " [no seat named]"))
        if clocked:
            lines.append("  (judged by the times the file records, which no seat signs and anyone can change; by "
                         "the signed frames alone: " + ("the game stops short, nobody blamed" if unclocked is None else
                         unclocked.detail + (f" [blame: {unclocked.blame}]" if unclocked.blame else " [no seat named]"))
                         + ")")
        return Verdict(False, lines, fault, w, "fault", witnesses, clocked, unclocked, foreign=foreign)
    for x in witnesses:
        lines += [f"{x.names[s]} left the table in round {rnd} ({why})"
                  for s, (rnd, why) in sorted(x.seating.left.items())]
    kind = "verified"
    waiting: list[str] | None = None
    if not w.finished:
        waiting, what = stops_on(w)
        where = f"in round {w.round}" if w.round else f"before round {w.seating.first} begins"  # not "round 0"
        lines.append(f"INCOMPLETE: the game stops {where}, {what}")
        kind = "incomplete"
    if record_line is not None:
        lines.append(record_line)
        kind = "not-record"
    if kind != "verified":
        return Verdict(False, lines, None, w, kind, witnesses, waiting=waiting, foreign=foreign)
    rounds = sum(len(x.rounds) for x in witnesses)
    lines.append(f"checked: {len(transcript.frames)} frames' signatures and chains; {rounds} round(s): every proof of "
                 "shuffle and of share, the openings, the audit and a replay of the rules; every seat's signed results "
                 "alike. Not checked: the contents of the boxes sealed to a seat (their faces are checked through the "
                 "openings), and when the frames came (the file's times are signed by no one)")
    if w.game.winners:
        lines.append(f"verified: game over, totals {list(w.game.totals)}, "
                     f"winners {', '.join(w.names[i] for i in w.game.winners)}")
    else:  # too few seats remained (§14.9): the game ended with no winner
        over = next((n.detail for n in reversed(w.notes) if n.kind == "over"), "game over")
        lines.append(f"verified: {over}, totals {list(w.game.totals)}, no winner")
    return Verdict(True, lines, None, w, tables=witnesses)


def stops_on(w: Witness) -> tuple[list[str], str]:
    """The seats a game that stops short at `w` waits on, and what it waits for, in words."""
    left, votes = w.seating.left, w.seating.votes
    if left:  # every other seat votes a leaver gone at once, then says who is out (§14.6, §14.9): not what it owed
        leavers = ", ".join(f"{w.names[s]} left the table ({why})" for s, (_, why) in sorted(left.items()))
        stay = [s for s in range(w.n) if s not in left]
        unvoted = [w.names[s] for s in stay if not set(left) <= votes.by(s)]
        if unvoted:
            them = "it" if len(left) == 1 else "them"
            return unvoted, f"after {leavers}: waiting on {', '.join(unvoted)} to vote {them} gone"
        unsaid = [w.names[s] for s in stay if s not in votes.outs]
        if unsaid:
            return unsaid, f"after {leavers}: waiting on {', '.join(unsaid)} to say who is out (its `out`)"
    owed = w._owed()[0] if w.rs is not None or w.round == 0 else frozenset()  # pylint: disable=protected-access
    if owed:
        waiting = [w.names[s] for s in sorted(owed)]
        return waiting, f"waiting on {', '.join(waiting)}"
    if w.rs is None:
        return [], "waiting on no seat's frame (the round has not begun)"
    wake = w.rs.rules.game.wake_time()
    due = "a player's move" if wake is None else f"a player's move or the deadline at {wake:.1f} s by the file's times"
    return [], f"waiting on no seat's frame: the file ends where the game waits on {due}"


def rejected_lines(rejected: list[Note], each: int = 3) -> list[str]:
    """The moves the rules refused, counted by the seat that made them with the first `each` of each seat
    (a cheat tried among a bot's slips is not left out), then the first frames dropped."""
    moves = [n for n in rejected if not n.detail.startswith(("message dropped", "frames of"))]
    by_seat: dict[str, list[Note]] = {}
    for note in moves:
        by_seat.setdefault(note.blame or "no seat", []).append(note)
    lines = []
    if by_seat:
        lines.append("moves refused by the rules (the game goes on, protocol.md §14.2): "
                     + ", ".join(f"{seat} {len(notes)}" for seat, notes in sorted(by_seat.items())))
    for seat, notes in sorted(by_seat.items()):
        lines += [f"rejected: {n.detail} [blame: {seat}]" for n in notes[:each]]
        if len(notes) > each:
            lines.append(f"rejected: ... and {len(notes) - each} more of {seat}'s")
    dropped = [n for n in rejected if n not in moves]
    lines += [f"rejected: {n.detail}" + (f" [blame: {n.blame}]" if n.blame else "") for n in dropped[:5]]
    return lines


FOREIGN: dict[str, str] = {
    "garbage": "frame(s) that are not signed frames at all",
    "table": "frame(s) for a table that is not this config's nor one that went on from it (the config was "
             "changed, or the frames are another game's)",
    "unseated": "frame(s) signed by a key with no seat at their table",
    "signature": "frame(s) whose signature does not verify (changed after they were signed)",
    "copies": "frame(s) recorded twice",
}


def replay(transcript: Transcript, tolerance: float) -> tuple[list[Witness], Witness, list[tuple[int, bytes]]]:
    """Feed the frames to a witness (and to one for each table that goes on, §14.9) until one stops: the
    witnesses, the last one, and the frames of no table of the game."""
    cfg = transcript.config
    w = Witness(cfg)
    w.tolerance = tolerance
    tables = {cfg.context: w}
    queue = deque(transcript.frames)
    later: list[tuple[int, bytes]] = []  # frames of a table no witness knows yet: one that goes on, once named
    while queue and all(x.stopped is None for x in tables.values()):
        t, frame = queue.popleft()
        context = parse_table(frame)
        target = w if context is None else tables.get(context)
        if target is None:
            later.append((t, frame))
            continue
        target.receive(frame, t / 1e6)
        nxt = w.going_on()
        if nxt is not None and nxt.cfg.context not in tables:
            w = tables[nxt.cfg.context] = nxt
            w.tolerance = tolerance
            queue.extendleft(reversed(later))  # held back until now: they go first, in their order
            later = []
    return list(tables.values()), w, later


def not_the_games(frames: list[tuple[int, bytes]], tables: dict[bytes, TableConfig]) -> dict[str, int]:
    """How many frames are not the game's, by why (keys of FOREIGN): not frames, of no table of the game,
    signed by no seat of theirs, or not by the key they name."""
    counts: dict[str, int] = {}
    for _, frame in frames:
        reason = foreign(frame, tables)
        if reason is not None:
            counts[reason] = counts.get(reason, 0) + 1
    return counts


def foreign(frame: bytes, tables: dict[bytes, TableConfig]) -> str | None:
    """Why `frame` is not a frame of these tables (a key of FOREIGN), or None when a key seated at its table
    signed it."""
    try:
        signed = parse(frame)
    except MalformedMessage:
        return "garbage"
    env = signed.envelope
    config = tables.get(env.table)
    if config is None:
        return "table"
    if env.sender not in config.keys:
        return "unseated"
    if not verify_signature(env.sender, signed.message, signed.signature):
        return "signature"
    return None


def parse_table(frame: bytes) -> bytes | None:
    """The table context a frame claims, or None when it does not parse."""
    try:
        return parse(frame).envelope.table
    except MalformedMessage:
        return None


def record(net: Any, config: TableConfig) -> Transcript:
    """Start recording every frame a MemNet's peers send (call before `net.start()`), each once, as §14.8 says:
    a frame sent again (asked for after a loss, or by a peer back from its journal) is kept at its first sending."""
    transcript = Transcript(config)
    net.on_send = lambda sender, frame: transcript.keep(net.now, frame)
    return transcript
