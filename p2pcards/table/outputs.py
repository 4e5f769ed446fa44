"""What a peer hands back (frames to broadcast, notes), and the port through which a round's parts emit them."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, Protocol

from ..crypto.encoding import Value
from ..errors import DeckFault

NoteKind = Literal["event", "rejected", "audit", "fault", "void", "round", "over"]


@dataclass(frozen=True, slots=True)
class Send:
    """A frame to broadcast to every other peer at the table."""

    frame: bytes


@dataclass(frozen=True, slots=True)
class Note:
    """Something a user or a log should hear of, and whom it blames (a seat's name) if anyone."""

    kind: NoteKind
    detail: str
    blame: str | None = None


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

    def fault(self, detail: str, blame: int | None) -> None:
        """A peer broke the protocol: the round is void and the table stops."""

    def deck_fault(self, exc: DeckFault, fallback: int | None) -> None:
        """A proof, pass or point that failed: blame the seat the deck names, else `fallback`."""
