"""Types shared by both rules engines: moves, events, options errors, faces and knowledge."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Generic, TypeVar

from ..errors import IllegalMove, LocalError

Handle = int  # a card's identity for one round; its face may be unknown to this engine
F = TypeVar("F")  # a face: str for Crisp, int | str for Crescendo

CRISP_SLOTS = ("left", "middle", "right")


class HiddenFace(LocalError):
    """The engine needs a face it has not been shown (the table must reveal it first)."""


@dataclass(frozen=True, slots=True)
class Move:
    """One move by one player; `str(move)` is its compact text form (`bob queen 2 ann 0`)."""

    player: str
    action: str
    pos: int | None = None
    target: str | None = None
    target_pos: int | None = None
    pos2: int | None = None
    source: str | None = None

    def __str__(self) -> str:
        parts = [self.player, self.action]
        if self.source is not None:
            parts.append(self.source)
        if self.pos is not None:
            parts.append(str(self.pos))
        if self.pos2 is not None:
            parts.append(str(self.pos2))
        if self.target is not None:
            parts.append(self.target)
        if self.target_pos is not None:
            parts.append(str(self.target_pos))
        return " ".join(parts)


@dataclass(frozen=True, slots=True)
class Event:
    """Something that happened: `kind`, who did it, and a few public details."""

    kind: str
    player: str | None = None
    detail: tuple[object, ...] = ()

    def __str__(self) -> str:
        who = f"{self.player} " if self.player else ""
        rest = " " + " ".join(map(str, self.detail)) if self.detail else ""
        return f"{who}{self.kind}{rest}"


@dataclass(frozen=True, slots=True)
class Provisional:
    """A move accepted without seeing a face it depends on; the round audit re-checks it."""

    move_index: int
    move: Move
    handle: Handle
    requirement: str


@dataclass
class Faces(Generic[F]):
    """The faces this engine has been shown, by handle; the referee is shown all of them."""

    known: dict[Handle, F] = field(default_factory=dict)

    def get(self, handle: Handle) -> F | None:
        """The face of `handle`, or None when this engine has not been shown it."""
        return self.known.get(handle)

    def need(self, handle: Handle) -> F:
        """The face of `handle`; HiddenFace when it has not been revealed to this engine."""
        try:
            return self.known[handle]
        except KeyError:
            raise HiddenFace(f"card #{handle} has not been revealed") from None


def illegal(reason: str) -> IllegalMove:
    """An IllegalMove with the reason a person reads."""
    return IllegalMove(reason)


def tie_order(active: int, seats: int) -> list[int]:
    """Seats in priority order for simultaneous claims: the active player, then to their left."""
    return [(active + k) % seats for k in range(seats)]


class Knowledge:
    """Which handles each seat has seen; knowledge follows the card until it is shuffled."""

    __slots__ = ("seen", "public")

    def __init__(self, seats: int) -> None:
        self.seen: list[set[Handle]] = [set() for _ in range(seats)]
        self.public: set[Handle] = set()

    def show(self, seat: int, handle: Handle) -> None:
        """Seat `seat` has now seen `handle`."""
        self.seen[seat].add(handle)

    def show_all(self, handle: Handle) -> None:
        """Everyone has now seen `handle` (it was face up)."""
        self.public.add(handle)

    def knows(self, seat: int, handle: Handle) -> bool:
        """True when `seat` has seen `handle`."""
        return handle in self.public or handle in self.seen[seat]


@dataclass(frozen=True, slots=True)
class Window:
    """An out-of-turn window: who it belongs to (or who just ended a turn) and when it closes."""

    seat: int
    opened: float
    deadline: float
