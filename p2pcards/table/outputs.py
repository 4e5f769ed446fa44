"""What a peer hands back (frames to broadcast, notes), the emitter that signs and queues them, and the port through which a round's parts emit them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Literal, Protocol

from ..crypto.encoding import MAX_BIN, MAX_FRAME, Value
from ..crypto.envelope import Outbox, Signed
from ..errors import DeckFault, EquivocationEvidence, MalformedMessage, RemoteProtocolError
from .messages import MAX_EVIDENCE, reason

MAX_EVIDENCE_BYTES = MAX_FRAME - (4 << 10)  # what a fault report's evidence may weigh: it must fit in one frame

# "local": what our own program found, not the table (a recording that cannot be made whole, say)
NoteKind = Literal["event", "rejected", "audit", "fault", "void", "round", "over", "missing", "back", "aid", "local"]
# How `stopped` begins when our own seat stopped the table: we left, or (said when the journal is taken up again)
# we had left or reported a fault before the program restarted.
WE_LEFT = "we left"
LEFT_BEFORE_RESTART = "we left before the restart"
FAULT_BEFORE_RESTART = "we reported a fault before the restart"
# How `stopped` begins when we gave up a table whose every other seat went missing at once (protocol.md §14.9).
CUT_OFF = "cut off from every other seat"


class Cut(Enum):
    """How a seat takes it that its own network was lost, every other seat missing at once (protocol.md §14.9)."""

    NETWORK_LOST = "network lost"  # every other seat went missing at once while we played, none by closing its link
    AWAY_TOO_LONG = "away too long"  # no other seat was back since we came back from our journal


@dataclass(frozen=True, slots=True)
class Send:
    """A frame to broadcast to every other peer at the table; `to`, for a private box, is the one seat
    that can open it (the only one waiting on it), else None; `again` for one sent before (protocol.md
    §18.5: when it comes says nothing of when it was first sent)."""

    frame: bytes
    to: int | None = None
    again: bool = False


@dataclass(frozen=True, slots=True)
class Claim:
    """A fault report's blame that nothing we hold bears out (protocol.md §14, step 4): whom its reporter blamed,
    on its word only (we blame no one)."""

    reporter: str
    blames: str

    def to_json(self) -> dict[str, str]:
        """{"reporter": …, "blames": …}, as every JSON output that lists faults gives it."""
        return {"reporter": self.reporter, "blames": self.blames}


@dataclass(frozen=True, slots=True)
class Note:
    """Something a user or a log should hear of, whom it blames (a seat's name) if anyone, and, for a fault that
    blames no one on a report's word only, that report's claim."""

    kind: NoteKind
    detail: str
    blame: str | None = None
    claim: Claim | None = None
    cut: Cut | None = None  # a note of our being cut off (missing) or of our giving up for it (void): how (§14.9)


Output = Send | Note


class Port(Protocol):
    """How a round's parts speak: sign and send a message of their round, note, or stop the table."""

    @property
    def stopped(self) -> bool:
        """True once the table has stopped (a part does nothing more then)."""

    def send(self, mtype: str, body: dict[str, Value]) -> None:
        """Sign and broadcast a message of this round (we apply it too, once the step is done)."""

    def note(self, kind: NoteKind, detail: str, blame: int | None = None) -> None:
        """Tell the user (and the log) something, blaming seat `blame` if not None."""

    def relay(self, frame: bytes) -> None:
        """Send another seat's signed frame we hold to every other peer, as a frame sent again (§18.5)."""

    def fault(self, detail: str, blame: int | None, evidence: Sequence[bytes] = ()) -> None:
        """A peer broke the protocol: the round is void and the table stops; the report carries `evidence`
        (the frames that show it), else the frame in hand."""

    def deck_fault(self, exc: DeckFault, fallback: int | None, evidence: Sequence[bytes] = ()) -> None:
        """A proof, pass or point that failed: blame the seat the deck names, else `fallback`; the report carries
        `evidence` (the frames the check rests on), else the frame in hand."""


class Emitter:
    """Everything a peer emits: signed frames (queued to be applied as our own too), notes and faults.

    The first fault stops the table: the round is void, and a `fault` message tells the others.
    """

    def __init__(self, outbox: Outbox, names: tuple[str, ...], round: Callable[[], int]) -> None:
        self.outbox = outbox
        self.names = names
        self.round = round  # the round a fault voids
        self.stopped: str | None = None
        self.notes: list[Note] = []
        self.faults: list[Note] = []
        self.out: list[Output] = []  # what the current step hands back
        self.own: list[Signed] = []  # what we signed in it, to apply once the step is done
        self.sent: dict[int, tuple[int, bytes]] = {}  # seq -> (round, frame) of what we signed, to send again
        self.on_sign: Callable[[bytes], None] | None = None  # told of every frame we sign, before it leaves
        self.in_hand: bytes | None = None  # the frame whose taking we are in: a fault found meanwhile carries it
        self.evidence: list[tuple[bytes, bytes]] = []  # two signed frames for one place, per equivocation found

    def send(self, rnd: int, mtype: str, body: dict[str, Value]) -> None:
        """Sign and broadcast a message of round `rnd`."""
        signed = self.outbox.seal(rnd, mtype, body)
        to = body.get("to") if mtype == "private" else None
        self.out.append(Send(signed.frame, to if isinstance(to, int) else None))
        self.own.append(signed)
        self.sent[signed.envelope.seq] = (rnd, signed.frame)
        if self.on_sign is not None:
            self.on_sign(signed.frame)

    def relay(self, frame: bytes) -> None:
        """Send another seat's signed frame we hold to every other peer, as a frame sent again (not ours to apply)."""
        if self.stopped is None:
            self.out.append(Send(frame, again=True))

    def note(self, kind: NoteKind, detail: str, blame: int | None = None, claim: Claim | None = None,
             cut: Cut | None = None) -> None:
        """Tell the user something, blaming seat `blame` if not None (or noting a report's `claim`, or how we are `cut`
        off)."""
        note = Note(kind, detail, None if blame is None else self.names[blame], claim, cut)
        self.notes.append(note)
        self.out.append(note)
        if kind == "fault":
            self.faults.append(note)

    def fault(self, detail: str, blame: int | None, stall: bool = False, evidence: Sequence[bytes] = (),
              claim: Claim | None = None) -> None:
        """A peer broke the protocol (`stall`: it held us up too long): the round is void and the table stops
        (`claim`: on a report whose blame we take as its reporter's word only).

        The report carries `evidence` (signed frames), else the frame in hand, so that each receiver
        checks the fault for itself instead of taking our word for it.
        """
        self.note("fault", detail, blame, claim)
        if self.stopped is None:
            self.stopped = detail
            self.note("void", f"round {self.round()} is void; the table stops")
            # Tell the others: a fault one peer sees (a share withheld from it) must stop every peer.
            frames = list(evidence[:MAX_EVIDENCE])
            if not frames and not stall and self.in_hand is not None:
                frames = [self.in_hand]
            if sum(map(len, frames)) > MAX_EVIDENCE_BYTES or any(len(f) > MAX_BIN for f in frames):
                frames = []  # too big to carry: the report is our word only
            self.send(self.round(), "fault", {"blame": blame, "why": reason(detail), "stall": stall,
                                              "evidence": list[Value](frames)})

    def deck_fault(self, exc: DeckFault, fallback: int | None, evidence: Sequence[bytes] = ()) -> None:
        """A proof, pass or point that failed: blame the seat the deck names (its prover or passer), else `fallback`;
        the report carries `evidence`, else the frame in hand."""
        seat = exc.seat if isinstance(exc.seat, int) and 0 <= exc.seat < len(self.names) else fallback
        self.fault(f"{type(exc).__name__}: {exc}", seat, evidence=evidence)

    def blame(self, exc: RemoteProtocolError, mtype: str, seat: int) -> None:
        """`seat`'s message of type `mtype` could not be taken (`exc`): the fault that is."""
        name = self.names[seat]
        if isinstance(exc, MalformedMessage):
            self.fault(f"malformed {mtype} from {name}: {exc}", seat)
        elif isinstance(exc, DeckFault):
            self.deck_fault(exc, seat)
        elif isinstance(exc, EquivocationEvidence):
            self.evidence.append(exc.frames)
            self.fault(f"equivocation by {name}: {exc}", seat, evidence=exc.frames)
        else:
            self.fault(f"{mtype} from {name} cannot be applied: {exc}", seat)

    def port(self, number: int) -> RoundPort:
        """The port of round `number`'s parts."""
        return RoundPort(self, number)


class RoundPort:
    """A `Port` for one round: its messages are signed for that round."""

    def __init__(self, emitter: Emitter, number: int) -> None:
        self.emitter = emitter
        self.number = number

    @property
    def stopped(self) -> bool:
        """True once the table has stopped."""
        return self.emitter.stopped is not None

    def send(self, mtype: str, body: dict[str, Value]) -> None:
        """Sign and send a message of this round."""
        self.emitter.send(self.number, mtype, body)

    def note(self, kind: NoteKind, detail: str, blame: int | None = None) -> None:
        """Tell the user something."""
        self.emitter.note(kind, detail, blame)

    def relay(self, frame: bytes) -> None:
        """Send another seat's frame we hold to every other peer."""
        self.emitter.relay(frame)

    def fault(self, detail: str, blame: int | None, evidence: Sequence[bytes] = ()) -> None:
        """Stop the table, the report carrying `evidence` (else the frame in hand)."""
        self.emitter.fault(detail, blame, evidence=evidence)

    def deck_fault(self, exc: DeckFault, fallback: int | None, evidence: Sequence[bytes] = ()) -> None:
        """Stop the table over a deck fault, the report carrying `evidence` (else the frame in hand)."""
        self.emitter.deck_fault(exc, fallback, evidence)
