"""Typed bodies of the table's own messages, parsed where they arrive: MalformedMessage on any bad shape.

The deck's bodies (key, pass, shares' reveals, open) are parsed by p2pcards/crypto/deck.py and a
move's by `messages.move_from_wire`; the ones here are the table's: ready, order, private,
result, leave, fault, aid, gone and out. Each has `from_wire` (the only place its shape is checked) and, where we
send it, `to_wire`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal, get_args

from ..crypto import deck as dk
from ..crypto.encoding import Value
from ..errors import MalformedMessage
from ..games.base import Move
from .messages import MAX_EVIDENCE, move_from_wire, reason

EntryKind = Literal["deal", "move", "tie", "tick"]
ENTRY_KINDS: tuple[EntryKind, ...] = get_args(EntryKind)
Ref = tuple[int, int]  # (seat, seq) of a move message


def _seat_or_none(v: Value, n: int) -> int | None:
    if v is None:
        return None
    if type(v) is not int or not 0 <= v < n:
        raise MalformedMessage("expected a seat index or nil")
    assert isinstance(v, int)
    return v


def _ints(v: Value, what: str) -> tuple[int, ...]:
    if not isinstance(v, list) or not all(type(x) is int for x in v):
        raise MalformedMessage(f"{what} is a list of integers")
    return tuple(x for x in v if isinstance(x, int))


@dataclass(frozen=True, slots=True)
class Ready:
    """A seat agrees to play at the table whose config hashes to `config`."""

    config: bytes

    @classmethod
    def from_wire(cls, body: Mapping[str, Value]) -> Ready:
        """Parse a ready body."""
        config = body["config"]
        if not isinstance(config, bytes):
            raise MalformedMessage("ready carries the config's hash")
        return cls(config)


@dataclass(frozen=True, slots=True)
class Order:
    """The orderer places entry `index` in the log at `time_ms`: a deal, a tick, a move or tied claims."""

    index: int
    time_ms: int
    kind: EntryKind
    refs: tuple[Ref, ...]
    frames: tuple[bytes, ...]  # the signed frame of each move named, relayed in its order
    why: str = ""

    @classmethod
    def from_wire(cls, body: Mapping[str, Value], seats: int) -> Order:
        """Parse an order body (its place in the log is checked by the log)."""
        i, t_ms, kind, refs, frames, why = (body[k] for k in ("i", "t", "k", "refs", "frames", "why"))
        if type(i) is not int or type(t_ms) is not int or kind not in ENTRY_KINDS or not isinstance(refs, list):
            raise MalformedMessage("bad order")
        assert isinstance(i, int) and isinstance(t_ms, int) and isinstance(kind, str)
        if len(refs) > seats:
            raise MalformedMessage("an order names one move per seat at most")
        parsed: list[Ref] = []
        for ref in refs:
            if not (isinstance(ref, list) and len(ref) == 2 and all(type(x) is int for x in ref)):
                raise MalformedMessage("bad order reference")
            seat, seq = ref
            assert isinstance(seat, int) and isinstance(seq, int)
            if not 0 <= seat < seats or (seat, seq) in parsed:
                raise MalformedMessage("an order names no seat, or one move twice")
            parsed.append((seat, seq))
        if not isinstance(frames, list) or len(frames) != len(parsed) or not all(isinstance(f, bytes) for f in frames):
            raise MalformedMessage("an order carries the frame of each move it names")
        return cls(i, t_ms, kind, tuple(parsed), tuple(f for f in frames if isinstance(f, bytes)),
                   why if isinstance(why, str) else "")

    @property
    def time(self) -> float:
        """The stamp in seconds."""
        return self.time_ms / 1000

    def to_wire(self) -> dict[str, Value]:
        """The body of an order message."""
        return {"i": self.index, "t": self.time_ms, "k": self.kind, "refs": [[s, q] for s, q in self.refs],
                "frames": list(self.frames), "why": self.why}


@dataclass(frozen=True, slots=True)
class Private:
    """Shares for one seat's eyes only: a sealed box of reveals addressed to seat `to`."""

    to: int
    box: bytes

    @classmethod
    def from_wire(cls, body: Mapping[str, Value], seats: int, sender: int) -> Private:
        """Parse a private body sent by `sender`."""
        to, box = body["to"], body["box"]
        if type(to) is not int or not 0 <= to < seats or to == sender or not isinstance(box, bytes):
            raise MalformedMessage("a private message names another seat and carries a box")
        assert isinstance(to, int)
        return cls(to, box)


@dataclass(frozen=True, slots=True)
class Shares:
    """Decryption shares with their proofs, one reveal per deck (a shares body, or an opened private box)."""

    reveals: tuple[dk.Reveal, ...]

    @classmethod
    def from_wire(cls, body: Value) -> Shares:
        """Parse a map of a non-empty list of reveals."""
        if not isinstance(body, dict) or set(body) != {"reveals"}:
            raise MalformedMessage("a private box holds a map of reveals")
        reveals = body["reveals"]
        if not isinstance(reveals, list) or not reveals:
            raise MalformedMessage("shares carry a list of reveals")
        return cls(tuple(dk.Reveal.from_wire(v) for v in reveals))

    def to_wire(self) -> dict[str, Value]:
        """The body of a shares message (or a private box's contents)."""
        return {"reveals": [rv.to_wire() for rv in self.reveals]}


@dataclass(frozen=True, slots=True)
class RoundResult:
    """A round's signed result: only what every honest peer computes alike (no free text)."""

    round: int
    scores: tuple[int, ...]
    totals: tuple[int, ...]
    over: bool
    log: bytes  # the hash of the round's log
    audit: str  # "verified", "rules", or the kind of deck fault the audit found
    at: int | None = None  # the index of the illegal move the rules audit found
    blame: int | None = None

    @classmethod
    def from_wire(cls, body: Mapping[str, Value], seats: int) -> RoundResult:
        """Parse a result body."""
        rnd, over, log, audit, at = body["round"], body["over"], body["log"], body["audit"], body["at"]
        if type(rnd) is not int or not isinstance(over, bool) or not isinstance(log, bytes) \
                or not isinstance(audit, str) or not (at is None or type(at) is int):
            raise MalformedMessage("bad result")
        assert isinstance(rnd, int) and (at is None or isinstance(at, int))
        return cls(rnd, _ints(body["scores"], "scores"), _ints(body["totals"], "totals"), over, log, audit, at,
                   _seat_or_none(body["blame"], seats))

    def to_wire(self) -> dict[str, Value]:
        """The body of a result message."""
        return {"round": self.round, "scores": list(self.scores), "totals": list(self.totals), "over": self.over,
                "log": self.log, "audit": self.audit, "at": self.at, "blame": self.blame}


@dataclass(frozen=True, slots=True)
class Leave:
    """A seat leaves for good (its reason, cut short; not a string: none)."""

    why: str

    @classmethod
    def from_wire(cls, body: Mapping[str, Value]) -> Leave:
        """Parse a leave body (any reason is accepted: the leaving itself is what counts)."""
        why = body["why"]
        return cls(reason(why) if isinstance(why, str) else "")


@dataclass(frozen=True, slots=True)
class Fault:
    """A peer stopped the table and says whom it blames; `stall`: for a time-out (a claim every peer can weigh);
    `evidence`: the signed frames that showed it the fault, for every receiver to check for itself."""

    blame: int | None
    why: str
    stall: bool = False
    evidence: tuple[bytes, ...] = ()

    @classmethod
    def from_wire(cls, body: Mapping[str, Value], seats: int) -> Fault:
        """Parse a fault report."""
        why, stall, evidence = body["why"], body["stall"], body["evidence"]
        if not isinstance(why, str) or not isinstance(stall, bool):
            raise MalformedMessage("a fault report gives its reason and whether it is a time-out")
        if not (isinstance(evidence, list) and len(evidence) <= MAX_EVIDENCE
                and all(isinstance(f, bytes) for f in evidence)):
            raise MalformedMessage(f"a fault report's evidence is at most {MAX_EVIDENCE} frames")
        return cls(_seat_or_none(body["blame"], seats), reason(why), stall, tuple(evidence))  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Aid:
    """A seat turns its memory aid on or off: told to everyone, it changes no move and no result."""

    on: bool

    @classmethod
    def from_wire(cls, body: Mapping[str, Value]) -> Aid:
        """Parse an aid body."""
        on = body["on"]
        if not isinstance(on, bool):
            raise MalformedMessage("an aid message says on (true) or off (false)")
        return cls(on)

    def to_wire(self) -> dict[str, Value]:
        """The body of an aid message."""
        return {"on": self.on}


@dataclass(frozen=True, slots=True)
class Gone:
    """Its sender has had no link to `seat` for its `gone_after`: it votes the seat out (protocol.md §14.9)."""

    seat: int

    @classmethod
    def from_wire(cls, body: Mapping[str, Value], seats: int, sender: int) -> Gone:
        """Parse a gone body: another seat than the sender's."""
        seat = body["seat"]
        if type(seat) is not int or not 0 <= seat < seats or seat == sender:
            raise MalformedMessage("a gone message names a seat other than its sender's")
        return cls(seat)


@dataclass(frozen=True, slots=True)
class Out:
    """Its sender decided that the seats `seats` are out (its last frame at this table, protocol.md §14.9)."""

    seats: tuple[int, ...]

    @classmethod
    def from_wire(cls, body: Mapping[str, Value], seats: int, sender: int) -> Out:
        """Parse an out body: one seat or more, in increasing order, none of them the sender's."""
        out = _ints(body["seats"], "an out message's seats")
        if not out or list(out) != sorted(set(out)) or not all(0 <= s < seats for s in out) or sender in out:
            raise MalformedMessage("an out message names, in order, some seats other than its sender's")
        return cls(out)

    def to_wire(self) -> dict[str, Value]:
        """The body on the wire."""
        return {"seats": list(self.seats)}


Body = (Ready | Fault | Leave | Aid | Gone | Out | dk.KeyAnnouncement | dk.EncryptedDeck | Move | Order | Shares
        | Private | dk.Opening | RoundResult)


def parse_body(mtype: str, body: Mapping[str, Value], names: tuple[str, ...], sender: int) -> Body:
    """The typed body of a table message of type `mtype` from seat `sender`; MalformedMessage on a bad one."""
    seats = len(names)
    match mtype:
        case "ready":
            return Ready.from_wire(body)
        case "fault":
            return Fault.from_wire(body, seats)
        case "leave":
            return Leave.from_wire(body)
        case "aid":
            return Aid.from_wire(body)
        case "gone":
            return Gone.from_wire(body, seats, sender)
        case "out":
            return Out.from_wire(body, seats, sender)
        case "key":
            return dk.KeyAnnouncement.from_wire(dict(body))
        case "pass":
            return dk.EncryptedDeck.from_wire(dict(body))
        case "move":
            return move_from_wire(body["m"], names[sender], names)
        case "order":
            return Order.from_wire(body, seats)
        case "shares":
            return Shares.from_wire(dict(body))
        case "private":
            return Private.from_wire(body, seats, sender)
        case "open":
            return dk.Opening.from_wire(dict(body))
        case "result":
            return RoundResult.from_wire(body, seats)
    raise MalformedMessage(f"no table message of type {mtype!r}")
