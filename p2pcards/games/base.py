"""Types shared by both rules engines: moves, events, options errors, faces and knowledge."""

from __future__ import annotations

import math

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Final, Generic, TypeVar

from ..errors import IllegalMove, LocalError

MAX_SECONDS = 86_400.0  # no timed rule of either game lasts a day: bounds every time option


def is_duration(value: object, positive: bool = False, most: float = MAX_SECONDS) -> bool:
    """True for a finite number (not a bool) from 0 (above 0 when `positive`) to `most`."""
    return (isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)
            and (value > 0 if positive else value >= 0) and value <= most)


GRID_EPS: Final = 1e-6  # in milliseconds: a float this close to a whole millisecond is that millisecond


def later(t: float, seconds: float) -> float:
    """`seconds` after `t`, on the table's millisecond grid when both are on it.

    Stamps are whole milliseconds read as seconds, and so are the time options; their float sum is
    not always the float of the summed milliseconds (0.119 + 3.0 is just below 3.119), which would
    put a move stamped exactly at a deadline a hair after it, or a hair before a turn's opening
    (protocol.md §12.1: deadlines are inclusive). A sum within rounding of a millisecond is that
    millisecond, as an implementation counting in integer milliseconds has it.
    """
    total = t + seconds
    ms = round(total * 1000)
    return ms / 1000 if abs(total * 1000 - ms) < GRID_EPS else total


def ms_at_or_after(t: float) -> float:
    """The first whole millisecond at or after `t` (one on the grid keeps its own: 2.007 * 1000 is a hair above 2007)."""
    return math.ceil(t * 1000 - GRID_EPS) / 1000


def ms_after(t: float) -> float:
    """The first whole millisecond strictly after `t` (a `t` on the grid is not after itself: 1.001 * 1000 is a
    hair below 1001)."""
    return (math.floor(t * 1000 + GRID_EPS) + 1) / 1000


Handle = int  # a card's identity for one round; its face may be unknown to this engine
# How one seat's round score came about, in the rules' words: (what, points) parts that add up to it.
ScoreParts = tuple[tuple[str, int], ...]
F = TypeVar("F")  # a face: str for Crisp, int | str for Crescendo

CRISP_SLOTS = ("left", "middle", "right")


@dataclass(frozen=True, slots=True)
class Needs:
    """What must happen before a move can be applied alike on every peer (data, never an exception).

    `faces`: the cards the move turns face up, whose faces a table reveals to all first;
    `reshuffle`: Crescendo's empty Reserve must be reshuffled first. A move the rules refuse
    needs nothing: applying it raises IllegalMove with the reason.
    """

    faces: tuple[Handle, ...] = ()
    reshuffle: bool = False


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
    """Something that happened: `kind`, who did it, and a few public details (a card's face as this engine knew it
    then; `cards` names the card, so that a viewer's view can name it once they know it: `event_for`)."""

    kind: str
    player: str | None = None
    detail: tuple[object, ...] = ()
    cards: tuple[Handle | None, ...] = field(default=(), compare=False)  # the card each detail names (None: none)

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
        """The face of `handle`; LocalError when it has not been revealed (the caller skipped `needs`)."""
        try:
            return self.known[handle]
        except KeyError:
            raise LocalError(f"card #{handle} has not been revealed to this engine") from None


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
    """An out-of-turn window: who it belongs to (or who just ended a turn), when it opened and closes.

    `after` counts the turns of the round that had ended when it opened (the turn that opened it included);
    `claimed`: Crescendo's NUMBER window has had its one claim and stays only as the wait before the next turn.
    """

    seat: int
    opened: float
    deadline: float
    after: int = 0
    claimed: bool = False

    @property
    def zero(self) -> bool:
        """A 0 s window: it closes at the next wait or when the next player begins."""
        return self.deadline == self.opened


@dataclass(frozen=True, slots=True)
class RoundInput:
    """One input a round's engine received: a move, simultaneous claims, or the clock moving on."""

    kind: str  # "move", "tie", "tick" or "reshuffle"
    time: float
    move: Move | None = None
    claims: tuple[tuple[str, int], ...] = ()
    wait: bool = False
    backs: tuple[Any, ...] = ()


class EngineBase(Generic[F]):
    """What both engines share: seats, faces and knowledge, and the record of a round's inputs."""

    players: tuple[str, ...]
    n: int
    over: bool
    clock: float
    faces: Faces[F]
    know: Knowledge

    def _init_base(self, players: tuple[str, ...], dealer: int) -> None:
        self.players = players
        self.n = len(players)
        self.first_dealer = dealer
        self.totals = [0] * self.n
        self.over = False
        self.winners: list[int] = []
        self.round_no = 0
        self.clock = 0.0
        self.faces = Faces()
        self.know = Knowledge(self.n)
        self.events: list[Event] = []
        self.inputs: list[RoundInput] = []  # this round's, for the audit's replay
        self.round_start = 0.0
        self.round_events = 0  # the index in `events` of the round in play's first event
        self.awaiting: list[Handle] = []  # faces the ended round needs before it can be scored
        self.queued: list[Mapping[Handle, F]] = []  # decks of rounds to come (a referee's)
        self._ended_at = 0.0

    @property
    def needs_deal(self) -> bool:
        """True when the next round waits for its deck (the last one ended and was scored)."""
        r = getattr(self, "r", None)
        return not self.over and (r is None or (r.ended and not self.awaiting))

    @property
    def rounds_done(self) -> int:
        """The rounds dealt and scored, counting those played before this engine (`round_no` carries them)."""
        return self.round_no - (0 if getattr(self, "r", None) is None or self.needs_deal or self.over else 1)

    def deal(self, faces: Mapping[Handle, F], now: float) -> list[Event]:
        """Deal the next round from `faces` (handle = position in the deck, top first) at `now`."""
        raise NotImplementedError

    def _parse_deck(self, deck: Sequence[Any]) -> dict[Handle, F]:
        """The faces of a whole deck listed top first; InputError unless it is exactly this game's deck."""
        raise NotImplementedError

    def queue_deck(self, deck: Sequence[Any]) -> None:
        """Give a future round's deck (referee): it is dealt the moment its round is due."""
        self.queued.append(self._parse_deck(deck))
        if self.needs_deal:
            self.events.extend(self.deal(self.queued.pop(0), self.clock))

    def _game_over_or_next(self, when: float, winners: list[int] | None) -> list[Event]:
        """After a scored round: end the game when `winners` are known, else deal a queued deck if any."""
        if winners is not None:
            self.over = True
            self.winners = winners
            return [Event("game_over", None, tuple(self.players[i] for i in winners))]
        if self.queued:
            return self.deal(self.queued.pop(0), when)
        return []

    def _round_handles(self) -> list[Handle]:
        """Every card in the players' hands or rows (revealed when the round ends)."""
        raise NotImplementedError

    def _settle(self, when: float) -> list[Event]:
        """Score the ended round once every face in it is known."""
        raise NotImplementedError

    def _end_round(self, when: float) -> list[Event]:
        """The round is over: no turn, no window; reveal every card and score when the faces are in."""
        r: Any = getattr(self, "r")
        r.ended = True
        self._close_all_windows()
        return self._reveal_and_settle(when)

    def _close_all_windows(self) -> None:
        """Close every out-of-turn window of the round (each engine keeps its own)."""
        raise NotImplementedError

    def _reveal_and_settle(self, when: float) -> list[Event]:
        """Turn every card face up; score now if every face is known, else wait for `finish_round`."""
        handles = self._round_handles()
        for h in handles:
            self.know.show_all(h)
        self.awaiting = [h for h in handles if self.faces.get(h) is None]
        if self.awaiting:
            self._ended_at = when
            return [Event("reveal_all", None, (len(self.awaiting),))]
        return self._settle(when)

    def finish_round(self) -> list[Event]:
        """Score the ended round once the table has revealed its cards; [] while some are still hidden."""
        if not self.awaiting or any(self.faces.get(h) is None for h in self.awaiting):
            return []
        self.awaiting = []
        events = self._settle(self._ended_at)
        self.events.extend(events)
        return events

    def needs(self, move: Move) -> Needs:
        """What must happen before `move` is applied alike on every peer (nothing when the rules refuse it)."""
        raise NotImplementedError

    def public_before(self, move: Move) -> list[Handle]:
        """The cards `move` turns face up, whose faces a table reveals before applying it (none if refused)."""
        return list(self.needs(move).faces)

    def seat(self, player: str) -> int:
        """The seat index of `player`; IllegalMove when they are not at this table."""
        try:
            return self.players.index(player)
        except ValueError:
            raise illegal(f"{player} is not at this table") from None

    def dealer_of(self, round_no: int) -> int:
        """The dealer's seat in round `round_no` (1-based): one seat further each round."""
        return (self.first_dealer + round_no - 1) % self.n

    def learn(self, handle: Handle, face: F) -> None:
        """This engine is shown the face of `handle` (by a reveal of the table protocol)."""
        self.faces.known[handle] = face

    def face_for(self, seat: int, handle: Handle) -> F | None:
        """The face of `handle` as `seat` knows it, or None."""
        return self.faces.get(handle) if self.know.knows(seat, handle) else None

    def event_for(self, seat: int, index: int) -> Event:
        """Event `index` of `events` as `seat` sees it now: each card an event of the round in play names, by its
        face when `seat` knows that card, else `?`; an event of an earlier round as it was made (handles are a
        round's own: the same numbers name other cards now)."""
        event = self.events[index]
        if not event.cards or index < self.round_events:
            return event
        faces = (None if h is None else self.face_for(seat, h) for h in event.cards)
        return replace(event, detail=tuple(d if h is None else "?" if f is None else str(f)
                                           for d, h, f in zip(event.detail, event.cards, faces)))

    def faces_owed(self, seat: int, index: int) -> list[Handle]:
        """The cards event `index` names that `seat` knows (they went face up, or it saw them) whose faces this
        engine has not been shown yet: at a table, their reveal is on its way."""
        if index < self.round_events:
            return []
        return [h for h in self.events[index].cards
                if h is not None and self.know.knows(seat, h) and self.faces.get(h) is None]

    def faces_for(self, seat: int, handles: Iterable[Handle]) -> tuple[F | None, ...]:
        """`face_for` over many handles at once (views build whole rows)."""
        seen, public, get = self.know.seen[seat], self.know.public, self.faces.known.get
        return tuple(get(h) if h in public or h in seen else None for h in handles)

    def _face_text(self, handle: Handle) -> str:
        face = self.faces.get(handle)
        return "?" if face is None else str(face)

    def _start_inputs(self, now: float) -> None:
        self.round_events = len(self.events)  # called as a round is dealt, before its deal's events are logged
        self.inputs = []
        self.round_start = now
