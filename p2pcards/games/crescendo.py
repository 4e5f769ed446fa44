"""The Crescendo rules engine: pure, clock-free, and able to run with some faces unknown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, NoReturn

from ..cards import CRESCENDO_DECK, Back, CrescendoCard, crescendo_back, is_joker
from ..errors import IllegalMove, InputError, LocalError
from .base import (MAX_SECONDS, EngineBase, Event, Faces, Handle, Knowledge, Move, Needs, RoundInput, ScoreParts,
                   Window, illegal, is_duration, later, tie_order)

NUMBER_TAKEN = "only one NUMBER claim between one turn and the next"  # a claim after the first was ordered
NUMBER_SHUT = "NUMBER can be called only between one turn and the next"  # no window open: e.g. a claim ordered late
ROUNDS = 3
SPECIAL_ACTIONS = {"peek": "peek", "exchange": "swap", "lock": "lock"}  # move -> action on the back

# Rules as data: the state of the turn decides which of its player's moves are open (listed in this order).
TURN_MOVES: Mapping[str, tuple[str, ...]] = {
    "setup": ("setup_pass", "setup_look", "setup_swap"),
    "turn": ("draw", "crescendo", "lock", "peek", "exchange"),
    "final": ("draw", "pass"),
    "drawn": ("discard", "replace"),
}
BEGINS_TURN = frozenset({"draw", "peek", "exchange", "lock", "crescendo", "pass"})
OUT_OF_TURN = frozenset({"number", "number_tie"})
ALL_MOVES = frozenset().union(*TURN_MOVES.values(), OUT_OF_TURN)


def cards_per_player(players: int) -> int:
    """8 cards each, 7 with five or six players."""
    return 7 if players >= 5 else 8


def out_of_order(row: Sequence[int]) -> list[int]:
    """The positions of the cards lower than the card just before them (Jokers already removed)."""
    return [i for i in range(1, len(row)) if row[i] < row[i - 1]]


def incorrect_count(row: Sequence[int]) -> int:
    """How many cards are lower than the card just before them (Jokers already removed)."""
    return len(out_of_order(row))


def near(a: CrescendoCard, b: CrescendoCard) -> bool:
    """A NUMBER claim is right: two numbers (no Joker) that differ by 2 or less."""
    return isinstance(a, int) and isinstance(b, int) and abs(a - b) <= 2


@dataclass(frozen=True, slots=True)
class CrescendoOptions:
    """Table options: how long a NUMBER window stays open and how close claims tie."""

    number_window_s: float = 2.0
    number_tie_ms: float = 100.0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CrescendoOptions:
        """Options from a scenario/table dict; InputError on an unknown key or a bad value."""
        known = {"number_window_s", "number_tie_ms"}
        unknown = set(data) - known
        if unknown:
            raise InputError(f"unknown Crescendo option(s): {', '.join(sorted(unknown))}")
        opts = cls(**{k: data[k] for k in known if k in data})
        opts.validate()
        return opts

    def validate(self) -> None:
        """InputError unless both options are times from 0 to a day."""
        for name, most in (("number_window_s", MAX_SECONDS), ("number_tie_ms", MAX_SECONDS * 1000)):
            value = getattr(self, name)
            if not is_duration(value, most=most):
                raise InputError(f"{name} must be a number from 0 to {most:g}, not {value!r}")

    def to_dict(self) -> dict[str, Any]:
        """The options as a plain dict."""
        return {"number_window_s": self.number_window_s, "number_tie_ms": self.number_tie_ms}


@dataclass(frozen=True, slots=True)
class CrescendoRoundResult:
    """A finished round: scores, the caller, incorrect cards, own-pile sizes and calling points."""

    scores: tuple[int, ...]
    caller: int | None
    incorrect: tuple[int, ...]
    piles: tuple[int, ...]
    call_points: tuple[int, ...]
    rows: tuple[tuple[CrescendoCard, ...], ...]
    parts: tuple[ScoreParts, ...] = ()  # per seat, how its score came about
    revealed: tuple[tuple[CrescendoCard, ...], ...] = ()  # the rows as revealed, Jokers still in them


@dataclass(frozen=True, slots=True)
class CrescendoView:
    """What one player sees and knows: never a face that player has not seen."""

    me: int
    players: tuple[str, ...]
    round: int
    clock: float
    phase: str | None
    turn: int | None
    turn_number: int
    drawn: CrescendoCard | None
    drawn_from: str | None
    known: tuple[tuple[CrescendoCard | None, ...], ...]
    backs: tuple[tuple[Back, ...], ...]
    locked: tuple[tuple[bool, ...], ...]
    piles: tuple[int, ...]
    reserve: int
    reserve_top: Back | None
    discard: tuple[CrescendoCard | None, ...]  # top first; None only while a table's reveal is on its way
    window_open: bool
    caller: int | None
    totals: tuple[int, ...]
    rounds_played: int
    over: bool
    legal: tuple[Move, ...]
    options: CrescendoOptions
    window_until: float | None = None  # while a NUMBER window is open: its end (the next player may begin then)
    number_shut: str | None = None  # why no NUMBER claim is open now, in `check`'s words (None while one is)
    setup: bool = False  # setup choices are still open this round, whoever's (`phase` shows ours only)
    scored: tuple[ScoreParts, ...] = ()  # per seat, how its score of the last round played came about
    revealed: tuple[tuple[CrescendoCard, ...], ...] = ()  # the last round played's rows as revealed, Jokers in them
    final_turns_left: int = 0  # once CRESCENDO is called: the others' final turns still to end, the current one included
    # Once the game is over: each seat's (total, CRESCENDO call points, last round's score), what the winners are
    # picked by, in that order (the rulebook's tie-breaks).
    tie_keys: tuple[tuple[int, int, int], ...] = ()


@dataclass
class _Round:
    rows: list[list[Handle]]
    locked: list[list[bool]]
    reserve: list[Handle]  # top at the end
    discard: list[Handle]  # top at the end
    piles: list[list[Handle]]
    first: int
    setup_left: int
    turn: int
    turn_number: int = 0
    drawn: Handle | None = None
    drawn_from: str | None = None
    window: Window | None = None
    caller: int | None = None
    finals_left: int = 0
    turn_is_final: bool = False
    passed: set[int] = field(default_factory=set)
    ended: bool = False
    next_handle: int = 104


class CrescendoGame(EngineBase[CrescendoCard]):
    """A whole game of Crescendo (three rounds) for 2 to 6 seats, driven by moves and the time."""

    name = "crescendo"
    deck_size = 104

    def __init__(self, players: Sequence[str], options: CrescendoOptions | None = None, dealer: int = 0,
                 auto_reshuffle: bool = True) -> None:
        if not 2 <= len(players) <= 6:
            raise InputError(f"Crescendo needs 2 to 6 players, not {len(players)}")
        if len(set(players)) != len(players):
            raise InputError("player names must be different")
        self._init_base(tuple(players), dealer)
        self.options = options or CrescendoOptions()
        self.options.validate()
        self.results: list[CrescendoRoundResult] = []
        self.backs: dict[Handle, Back] = {}
        self.r: _Round | None = None
        # True: turn the discard pile over as scenarios do. False: `needs` asks for a reshuffle and the
        # engine waits for `reshuffle()`, as a table does while its peers shuffle the cards afresh.
        self.auto_reshuffle = auto_reshuffle

    # ------------------------------------------------------------ dealing

    def _parse_deck(self, deck: Sequence[Any]) -> dict[Handle, CrescendoCard]:
        return deck_faces(deck)

    def deal(self, faces: Mapping[Handle, CrescendoCard], now: float,
             backs: Mapping[Handle, Back] | None = None) -> list[Event]:
        """Deal a round from handles 0..103 (top first); backs default to those of `faces`."""
        if not self.needs_deal:
            raise illegal("a round is still being played" if not self.over else "the game is over")
        self.clock = max(self.clock, now)
        self.round_no += 1
        dealer = self.dealer_of(self.round_no)
        first = (dealer + 1) % self.n
        per = cards_per_player(self.n)
        rows: list[list[Handle]] = [[] for _ in range(self.n)]
        for k in range(per * self.n):
            rows[(first + k) % self.n].append(k)
        self.faces = Faces(dict(faces))
        self.backs = dict(backs) if backs is not None else {h: crescendo_back(f) for h, f in faces.items()}
        self.know = Knowledge(self.n)
        start = per * self.n
        self.know.show_all(start)
        self.r = _Round(
            rows=rows,
            locked=[[False] * per for _ in range(self.n)],
            reserve=list(range(self.deck_size - 1, start, -1)),
            discard=[start],
            piles=[[] for _ in range(self.n)],
            first=first,
            setup_left=self.n,
            turn=first,
        )
        self._start_inputs(self.clock)
        return [Event("deal", self.players[dealer], (self.round_no,))]

    # ------------------------------------------------------------ time

    def wake_time(self) -> float | None:
        """The next time something changes with no move: the NUMBER window closing."""
        r = self.r
        if r is None or r.ended or r.window is None:
            return None
        return r.window.deadline

    def next_deadline(self) -> float | None:
        """The next time at which the clock alone changes the state: the NUMBER window closing."""
        return self.wake_time()

    def tick(self, now: float, wait: bool = False) -> list[Event]:
        """Advance the clock to `now`, closing a NUMBER window it passed (a wait also closes 0 s windows)."""
        if now < self.clock:
            raise illegal("time cannot go backwards")
        events: list[Event] = []
        r = self.r
        if r is not None and not r.ended:
            self.inputs.append(RoundInput("tick", now, wait=wait))
        if r is not None and not r.ended and r.window is not None:
            w = r.window
            if w.deadline < now or (wait and w.zero and w.deadline <= now):
                self.clock = max(self.clock, w.deadline)
                events.extend(self._close_window(w.deadline))
        self.clock = max(self.clock, now)
        self.events.extend(events)
        return events

    def _close_window(self, when: float) -> list[Event]:
        r = self.r
        assert r is not None
        r.window = None
        if r.caller is not None and r.finals_left == 0:
            return self._end_round(when)
        return [Event("window_closed")]

    # ------------------------------------------------------------ moves

    def phase(self) -> str | None:
        """The state of the current turn (a key of TURN_MOVES), or None between rounds."""
        r = self.r
        if r is None or r.ended:
            return None
        if r.setup_left:
            return "setup"
        if r.caller is not None and r.finals_left == 0:
            return None  # the last window of the round is running out
        if r.drawn is not None:
            return "drawn"
        return "final" if r.turn_is_final else "turn"

    def apply(self, move: Move, now: float | None = None) -> list[Event]:
        """Apply `move` at `now` (default: the current clock); IllegalMove leaves everything unchanged.

        A table asks `needs` first: applying a move before its reshuffle or its faces is a LocalError.
        """
        if now is not None and now != self.clock:
            self.tick(now)
        if self._judge(move):
            self._reshuffle_first()
        at = self.clock
        events = self._do(move)
        self.inputs.append(RoundInput("move", at, move))
        self.events.extend(events)
        return events

    def check(self, move: Move) -> None:
        """Raise IllegalMove when `move` is not allowed now (one waiting for a reshuffle is not refused: see `needs`)."""
        self._judge(move)

    def needs(self, move: Move) -> Needs:
        """What must happen before `move` is applied: the empty Reserve reshuffled, or its cards revealed."""
        try:
            if self._judge(move):
                return Needs(reshuffle=True)
        except IllegalMove:
            return Needs()  # refused whatever happens: applying it says why
        return Needs(tuple(self._turned_up(move)), self._claim_reshuffles(move))

    def _judge(self, move: Move) -> bool:
        """IllegalMove when `move` is refused; True when the Reserve must be reshuffled before it can be judged further."""
        if self.over:
            raise illegal("the game is over")
        r = self.r
        if r is None or r.ended:
            raise illegal("no round is being played")
        a = move.action
        if a not in ALL_MOVES:
            raise illegal(f"{a!r} is not a Crescendo move")
        if a == "number_tie":
            raise illegal("simultaneous claims go through number_tie()")
        me = self.seat(move.player)
        if a == "number":
            reason = self._claim_refusal(me, move.pos)
        else:
            reason = self._turn_refusal(me, a) or self._params_refusal(me, move)
            # Last, as it needs the Reserve's next card: only a move sound in every other way waits for a reshuffle.
            if reason is None and (a in SPECIAL_ACTIONS or a == "draw" and (move.source or "reserve") == "reserve"):
                if self._reshuffle_due():
                    return True
                if a in SPECIAL_ACTIONS:
                    reason = self._top_refusal(a)
        if reason is not None:
            raise illegal(reason)
        return False

    # One predicate per part of the rules, each giving the reason a person reads or None; `check`
    # asks them of one move, `legal_moves` of every well-formed move the turn's state leaves open
    # (and of each card a special action may name: see `_specials`).

    def _claim_refusal(self, me: int, pos: int | None) -> str | None:
        """Why `me` may not claim NUMBER with the card at `pos` now."""
        r = self.r
        assert r is not None
        return self._window_refusal() or (None if _is_pos(pos, len(r.rows[me])) else f"no such position: {pos!r}")

    def _window_refusal(self) -> str | None:
        """Why no NUMBER claim is open now."""
        r = self.r
        assert r is not None
        w = r.window
        if w is None or self.clock > w.deadline:
            return NUMBER_SHUT
        if w.claimed:
            return NUMBER_TAKEN
        return None

    def _turn_refusal(self, me: int, action: str) -> str | None:
        """Why the turn's state closes `action` to `me`: whose turn it is, its phase, the NUMBER window."""
        r = self.r
        assert r is not None
        phase = self.phase()
        if phase is None:
            return "the round is ending"
        player = self.players[me]
        if r.turn != me:
            what = "setup choice" if phase == "setup" else "turn"
            return f"it is {self.players[r.turn]}'s {what}, not {player}'s"
        if action not in TURN_MOVES[phase]:
            return _why_not(action, phase, player)
        w = r.window
        if action in BEGINS_TURN and w is not None and self.clock < w.deadline:
            return f"{player} cannot begin before the NUMBER window's time is up ({w.deadline:g} s)"
        return None

    def _params_refusal(self, me: int, move: Move) -> str | None:
        """Why the fields of `move` are refused: positions, the pile it draws from, whose card, locks."""
        r = self.r
        assert r is not None
        a = move.action
        size = len(r.rows[me])
        if a in ("setup_look", "lock", "replace"):
            if not _is_pos(move.pos, size):
                return f"no such position: {move.pos!r}"
            if a == "lock":
                return self._lock_refusal(me, move.pos)  # type: ignore[arg-type]
        elif a == "setup_swap":
            for p in (move.pos, move.pos2):
                if not _is_pos(p, size):
                    return f"no such position: {p!r}"
            if move.pos == move.pos2:
                return "setup swap needs two different positions"
        elif a == "draw":
            source = move.source or "reserve"
            if source not in ("reserve", "discard"):
                return f"cannot draw from {source!r}"
            if source == "discard" and not r.discard:
                return "the common discard pile is empty"
            if source == "reserve" and not r.reserve and len(r.discard) < 2:
                return "the Reserve is empty and there is nothing to reshuffle"
        elif a == "crescendo":
            earliest = 3 * self.n + 1
            if r.turn_number + 1 < earliest:
                return f"CRESCENDO is open from turn {earliest} of the round (this would be turn {r.turn_number + 1})"
        elif a in ("peek", "exchange"):
            return self._target_refusal(me, move)
        return None

    def _target_refusal(self, me: int, move: Move) -> str | None:
        """Why the cards a Peek or a Swap names are refused: whose, where, locked."""
        r = self.r
        assert r is not None
        if move.target is None:
            return "this action needs a target player"
        if move.target not in self.players:
            return f"{move.target} is not at this table"
        other = self.players.index(move.target)
        if move.action == "peek":
            if not _is_pos(move.pos, len(r.rows[other])):
                return f"no such position: {move.pos!r}"
            return self._peek_refusal(other, move.pos)  # type: ignore[arg-type]
        refusal = self._partner_refusal(me, other)
        if refusal is not None:
            return refusal
        for p, size in ((move.pos, len(r.rows[me])), (move.target_pos, len(r.rows[other]))):
            if not _is_pos(p, size):
                return f"no such position: {p!r}"
        return self._give_refusal(me, move.pos) or self._take_refusal(other, move.target_pos)  # type: ignore[arg-type]

    # The rules of the cards a special action names, by seat and position (in range): `legal_moves`
    # asks them of each card, `check` of the cards one move names.

    def _lock_refusal(self, me: int, pos: int) -> str | None:
        assert self.r is not None
        return "that card is already locked" if self.r.locked[me][pos] else None

    def _peek_refusal(self, other: int, pos: int) -> str | None:
        assert self.r is not None
        return "a locked card is face up: there is nothing to peek at" if self.r.locked[other][pos] else None

    def _partner_refusal(self, me: int, other: int) -> str | None:
        return "Swap exchanges with another player's card, not one of your own" if other == me else None

    def _give_refusal(self, me: int, pos: int) -> str | None:
        assert self.r is not None
        return "a locked card cannot be given away with Swap" if self.r.locked[me][pos] else None

    def _take_refusal(self, other: int, pos: int) -> str | None:
        assert self.r is not None
        return f"{self.players[other]}'s card is locked and protected from Swap" if self.r.locked[other][pos] else None

    def _top_refusal(self, action: str) -> str | None:
        """Why the Reserve's top card closes the special action `action`."""
        top = self.reserve_top_back()
        if top is None:
            return "the Reserve is empty: no special action is open"
        if top.action != SPECIAL_ACTIONS[action]:
            return f"the Reserve's top card shows {top.action}, not {SPECIAL_ACTIONS[action]}"
        return None

    def _reshuffle_due(self) -> bool:
        """True when the next card needed from the empty Reserve waits for a table's reshuffle."""
        r = self.r
        assert r is not None
        return not self.auto_reshuffle and not r.reserve and len(r.discard) >= 2

    def _claim_reshuffles(self, move: Move) -> bool:
        """True when the allowed NUMBER claim `move` is wrong and its penalty card waits for a reshuffle."""
        r = self.r
        assert r is not None
        if move.action != "number" or not self._reshuffle_due():
            return False
        assert move.pos is not None
        face = self.faces.get(r.rows[self.seat(move.player)][move.pos])
        top = self.faces.get(r.discard[-1])
        return face is not None and top is not None and not near(face, top)

    @staticmethod
    def _reshuffle_first() -> NoReturn:
        raise LocalError("the Reserve is empty: the discard pile must be reshuffled first (ask needs())")

    def reserve_top_back(self) -> Back | None:
        """The back on top of the Reserve as the next card needed will find it; None if there is none,
        or while a table's reshuffle must make it first."""
        r = self.r
        assert r is not None
        if r.reserve:
            return self.backs[r.reserve[-1]]
        if len(r.discard) >= 2 and not self._reshuffle_due():
            return self.backs[self._reshuffle_order()[-1]]
        return None

    def reshuffle_cards(self) -> list[Handle]:
        """The cards a reshuffle takes: the common discard pile but its top, bottom card first."""
        assert self.r is not None
        return self.r.discard[:-1]

    def reshuffle(self, backs: Sequence[Back], faces: Mapping[int, CrescendoCard] | None = None) -> list[Handle]:
        """Form a new Reserve (top first) of fresh cards with these backs from the discard pile but its top."""
        r = self.r
        assert r is not None
        if r.reserve or len(r.discard) < 2 or len(backs) != len(r.discard) - 1:
            raise illegal("no reshuffle is due, or the wrong number of cards")
        self.inputs.append(RoundInput("reshuffle", self.clock, backs=tuple(backs)))
        r.discard = r.discard[-1:]
        fresh = list(range(r.next_handle, r.next_handle + len(backs)))
        r.next_handle += len(backs)
        for i, (h, back) in enumerate(zip(fresh, backs)):
            self.backs[h] = back
            if faces is not None and i in faces:
                self.faces.known[h] = faces[i]
        r.reserve = fresh[::-1]
        self.events.append(Event("reshuffle", None, (len(fresh),)))
        return fresh

    def number_tie(self, claims: Sequence[tuple[str, int]], now: float | None = None) -> list[Event]:
        """Claims that arrived together: the first valid one in tie order is resolved, the other valid ones
        withdrawn, the invalid ones dropped; IllegalMove when none is valid."""
        if now is not None and now != self.clock:
            self.tick(now)
        if self.over:
            raise illegal("the game is over")
        r = self.r
        if r is None or r.ended:
            raise illegal("no round is being played")
        move, valid = self._tie(claims)
        at = self.clock
        events = [Event("withdrawn" if p in valid else "dropped", p) for p, _ in claims if p != move.player]
        events.extend(self._do(move))
        self.inputs.append(RoundInput("tie", at, claims=tuple(claims)))
        self.events.extend(events)
        return events

    def tie_winner(self, claims: Sequence[tuple[str, int]]) -> Move:
        """The claim that simultaneous claims resolve: the first valid one in tie order from the active player."""
        return self._tie(claims)[0]

    def _tie(self, claims: Sequence[tuple[str, int]]) -> tuple[Move, set[str]]:
        """The winning claim of a tie and the players whose claims are valid; IllegalMove when none is."""
        r = self.r
        if r is None or r.ended:
            raise illegal("no round is being played")
        refusal = self._window_refusal()
        if refusal is not None:
            raise illegal(refusal)
        assert r.window is not None
        if len({p for p, _ in claims}) != len(claims):
            raise illegal("one claim per player")
        valid = []
        for player, pos in claims:
            if player in self.players and self._claim_refusal(self.seat(player), pos) is None:
                valid.append((player, pos))  # a claim that could not stand alone cannot win a tie either
        if not valid:
            raise illegal("no valid claim")
        order = tie_order(r.window.seat, self.n)
        player, pos = min(valid, key=lambda c: order.index(self.seat(c[0])))
        return Move(player, "number", pos=pos), {p for p, _ in valid}

    def _turned_up(self, move: Move) -> list[Handle]:
        """The cards the allowed move `move` turns face up."""
        r = self.r
        assert r is not None
        me = self.seat(move.player)
        row = r.rows[me]
        a = move.action
        if a == "number":
            assert move.pos is not None
            return [row[move.pos], r.discard[-1]]
        if a == "replace":
            assert move.pos is not None and r.drawn is not None
            return [row[move.pos]] + ([r.drawn] if r.drawn_from == "discard" else [])
        if a == "discard":
            assert r.drawn is not None
            return [r.drawn]
        top = [r.reserve[-1]] if r.reserve else []
        if a == "lock":
            assert move.pos is not None
            return [row[move.pos]] + top
        return top if a in SPECIAL_ACTIONS else []

    def _do(self, move: Move) -> list[Event]:
        r = self.r
        assert r is not None
        me = self.seat(move.player)
        a = move.action
        row = r.rows[me]
        if a == "number":
            assert move.pos is not None
            return self._claim(me, move.pos)
        if a.startswith("setup"):
            if a == "setup_look":
                assert move.pos is not None
                self.know.show(me, row[move.pos])
            elif a == "setup_swap":
                assert move.pos is not None and move.pos2 is not None
                i, j = move.pos, move.pos2
                row[i], row[j] = row[j], row[i]
            r.setup_left -= 1
            r.turn = (me + 1) % self.n
            return [Event(a, move.player, tuple(x for x in (move.pos, move.pos2) if x is not None))]
        if a in BEGINS_TURN:
            r.window = None  # the NUMBER window closes when the next player begins
            r.turn_number += 1
        if a == "draw":
            source = move.source or "reserve"
            if source == "discard":
                h = r.discard.pop()
            else:
                taken = self._take_reserve()
                assert taken is not None
                h = taken
                self.know.show(me, h)
            r.drawn, r.drawn_from = h, source
            return [Event("draw", move.player, (source,))]
        if a == "replace":
            assert move.pos is not None and r.drawn is not None
            old = row[move.pos]
            row[move.pos] = r.drawn
            r.locked[me][move.pos] = False
            r.drawn = None
            self._to_discard(old)
            return [Event("replace", move.player, (move.pos, self._face_text(old)))] + self._end_turn(me)
        if a == "discard":
            assert r.drawn is not None
            h = r.drawn
            r.drawn = None
            self._to_discard(h)
            return [Event("discard", move.player, (self._face_text(h),))] + self._end_turn(me)
        if a == "crescendo":
            r.caller = me
            r.finals_left = self.n - 1
            return [Event("crescendo", move.player)] + self._end_turn(me, opens_window=False)
        if a == "pass":
            r.passed.add(me)
            return [Event("pass", move.player)] + self._end_turn(me, opens_window=False)
        # Special actions: the Reserve's top card goes to the discard pile afterwards.
        events: list[Event]
        if a == "peek":
            assert move.target is not None and move.pos is not None
            other = self.seat(move.target)
            self.know.show(me, r.rows[other][move.pos])
            events = [Event("peek", move.player, (move.target, move.pos))]
        elif a == "exchange":
            assert move.target is not None and move.pos is not None and move.target_pos is not None
            other = self.seat(move.target)
            mine, theirs = row[move.pos], r.rows[other][move.target_pos]
            row[move.pos], r.rows[other][move.target_pos] = theirs, mine
            self.know.show(other, mine)
            events = [Event("exchange", move.player, (move.pos, move.target, move.target_pos))]
        else:
            assert move.pos is not None
            r.locked[me][move.pos] = True
            self.know.show_all(row[move.pos])
            events = [Event("lock", move.player, (move.pos, self._face_text(row[move.pos])))]
        top = self._take_reserve()
        assert top is not None
        self._to_discard(top)
        return events + self._end_turn(me)

    def _claim(self, me: int, pos: int) -> list[Event]:
        r = self.r
        assert r is not None
        row = r.rows[me]
        h = row[pos]
        face = self.faces.need(h)
        top = self.faces.need(r.discard[-1])
        if not near(face, top) and self._reshuffle_due():
            self._reshuffle_first()
        self.know.show_all(h)
        name = self.players[me]
        events: list[Event]
        if near(face, top):
            del row[pos]
            del r.locked[me][pos]
            r.piles[me].append(h)
            events = [Event("number_right", name, (face, top))]
        else:
            events = [Event("number_wrong", name, (face, top))]
            penalty = self._take_reserve()
            if penalty is not None:
                row.insert(pos + 1, penalty)
                r.locked[me].insert(pos + 1, False)
        # The claim uses up the window, but the next player still waits out its time (docs/rules.md: no
        # earlier than number_window_s), and a round's last window still ends the round at its end.
        assert r.window is not None
        r.window = replace(r.window, claimed=True)
        return events

    def _reshuffle_order(self) -> list[Handle]:
        """The cards a reshuffle would make the Reserve of, top at the end like `reserve`."""
        r = self.r
        assert r is not None
        # Scenarios turn the cards over as they lie: the discard's bottom card becomes the Reserve's top.
        return list(reversed(r.discard[:-1]))

    def _take_reserve(self) -> Handle | None:
        """Pop the Reserve's top card, reshuffling the discard pile (all but its top) first if needed."""
        r = self.r
        assert r is not None
        if not r.reserve:
            if len(r.discard) < 2:
                return None
            order = self._reshuffle_order()
            r.discard = r.discard[-1:]
            new_reserve: list[Handle] = []
            for h in order:
                fresh = r.next_handle
                r.next_handle += 1
                face = self.faces.get(h)
                if face is not None:
                    self.faces.known[fresh] = face
                self.backs[fresh] = self.backs[h]
                new_reserve.append(fresh)
            r.reserve = new_reserve  # fresh handles: nobody knows a reshuffled card
            self.events.append(Event("reshuffle", None, (len(new_reserve),)))
        return r.reserve.pop()

    def _to_discard(self, h: Handle) -> None:
        r = self.r
        assert r is not None
        r.discard.append(h)
        self.know.show_all(h)

    def _end_turn(self, me: int, opens_window: bool = True) -> list[Event]:
        r = self.r
        assert r is not None
        if r.turn_is_final:
            r.finals_left -= 1
        nxt = (me + 1) % self.n
        r.turn = nxt
        r.turn_is_final = r.caller is not None
        if opens_window:
            r.window = Window(me, self.clock, later(self.clock, self.options.number_window_s))
            return [Event("window_open", self.players[me])]
        if r.caller is not None and r.finals_left == 0:
            return self._end_round(self.clock)
        return [Event("turn", self.players[nxt])]

    def _close_all_windows(self) -> None:
        assert self.r is not None
        self.r.window = None

    def _round_handles(self) -> list[Handle]:
        assert self.r is not None
        return [h for row in self.r.rows for h in row]

    def _settle(self, when: float) -> list[Event]:
        r = self.r
        assert r is not None
        start = r.caller if r.caller is not None else r.first
        revealed = tuple(tuple(self.faces.need(h) for h in row) for row in r.rows)
        for k in range(self.n):
            seat = (start + k) % self.n
            row = r.rows[seat]
            keep = []
            keep_locked = []
            for h, lk in zip(row, r.locked[seat]):
                if is_joker(self.faces.need(h)):
                    r.discard.append(h)
                else:
                    keep.append(h)
                    keep_locked.append(lk)
            r.rows[seat] = keep
            r.locked[seat] = keep_locked
        scores, incorrect, call_points, parts = [], [], [], []
        for seat in range(self.n):
            numbers = [self.faces.need(h) for h in r.rows[seat]]
            k = incorrect_count([x for x in numbers if isinstance(x, int)])
            incorrect.append(k)
            wrong = (f"{k} out of order", -k)
            if seat == r.caller:
                base = 6 if k == 0 else -3 - k
                call_points.append(base)
                mine: ScoreParts = (("called, in order", 6),) if k == 0 else (("called", -3), wrong)
            else:
                base = 3 if k == 0 else -k
                call_points.append(0)
                mine = (("in order", 3),) if k == 0 else (wrong,)
            mine += (("pile", len(r.piles[seat])),) * bool(r.piles[seat]) + (("passed", 1),) * (seat in r.passed)
            score = sum(points for _, points in mine)
            scores.append(score)
            parts.append(mine)
            self.totals[seat] += score
        self.results.append(CrescendoRoundResult(
            tuple(scores), r.caller, tuple(incorrect), tuple(len(p) for p in r.piles), tuple(call_points),
            tuple(tuple(self.faces.need(h) for h in row) for row in r.rows), tuple(parts), revealed,
        ))
        events = [Event("round_end", None, tuple(scores))]
        return events + self._game_over_or_next(when, self._winners() if self.round_no >= ROUNDS else None)

    def _tie_keys(self) -> tuple[tuple[int, int, int], ...]:
        """Each seat's total, CRESCENDO call points and last round's score: the most wins, in that order."""
        return tuple((self.totals[s], sum(res.call_points[s] for res in self.results), self.results[-1].scores[s])
                     for s in range(self.n))

    def _winners(self) -> list[int]:
        keys = self._tie_keys()
        return [s for s in range(self.n) if keys[s] == max(keys)]

    # ------------------------------------------------------------ views

    def legal_moves(self, player: str) -> list[Move]:
        """Every move `player` may make at the current clock: the well-formed moves `check` accepts (a setup
        swap listed once, lower position first; no special action while the next card waits for a reshuffle)."""
        r = self.r
        if self.over or r is None or r.ended:
            return []
        me = self.seat(player)
        out = self._well_formed(me, "number") if self._window_refusal() is None else []
        phase = self.phase()
        if phase is None or r.turn != me:
            return out
        for a in TURN_MOVES[phase]:
            if self._turn_refusal(me, a) is not None:
                continue
            if a not in SPECIAL_ACTIONS:
                out += [m for m in self._well_formed(me, a) if self._params_refusal(me, m) is None]
            elif self._top_refusal(a) is None:  # (None while the next card waits for a reshuffle: unknown until then)
                out += self._specials(me, a)
        return out

    def _specials(self, me: int, action: str) -> list[Move]:
        """Every special `action` the rules of its cards leave open to seat `me` (asked card by card, not move by move)."""
        r = self.r
        assert r is not None
        player, sizes = self.players[me], [len(row) for row in r.rows]
        if action == "lock":
            return [Move(player, action, pos=i) for i in range(sizes[me]) if self._lock_refusal(me, i) is None]
        if action == "peek":
            return [Move(player, action, target=self.players[o], pos=i)
                    for o in range(self.n) for i in range(sizes[o]) if self._peek_refusal(o, i) is None]
        mine = [i for i in range(sizes[me]) if self._give_refusal(me, i) is None]
        theirs = [(self.players[o], j) for o in range(self.n) if self._partner_refusal(me, o) is None
                  for j in range(sizes[o]) if self._take_refusal(o, j) is None]
        return [Move(player, action, pos=i, target=name, target_pos=j) for i in mine for name, j in theirs]

    def _well_formed(self, me: int, action: str) -> list[Move]:
        """Every `action` of seat `me` with well-formed fields (positions in range, either pile): not a special action."""
        r = self.r
        assert r is not None
        player, size = self.players[me], len(r.rows[me])
        if action in ("number", "setup_look", "replace"):
            return [Move(player, action, pos=i) for i in range(size)]
        if action == "setup_swap":
            return [Move(player, action, pos=i, pos2=j) for i in range(size) for j in range(i + 1, size)]
        if action == "draw":
            return [Move(player, action, source="reserve"), Move(player, action, source="discard")]
        return [Move(player, action)]

    def next_revealed(self) -> list[Handle]:
        """The cards likely revealed next: the top of the Reserve (a draw shows it to its drawer) and
        the card drawn (a discard turns it face up); none between rounds."""
        r = self.r
        if r is None or r.ended:
            return []
        return r.reserve[-1:] + ([] if r.drawn is None else [r.drawn])

    def view(self, player: str) -> CrescendoView:
        """What `player` sees and knows now."""
        me = self.seat(player)
        r = self.r
        legal = tuple(self.legal_moves(player))
        if r is None:
            return CrescendoView(me, self.players, 0, self.clock, None, None, 0, None, None, (), (), (), (), 0,
                                 None, (), False, None, tuple(self.totals), 0, self.over, legal, self.options)
        drawn = self.face_for(me, r.drawn) if r.drawn is not None and r.turn == me else None
        live = not r.ended
        return CrescendoView(
            me=me,
            players=self.players,
            round=self.round_no,
            clock=self.clock,
            phase=self.phase() if live and r.turn == me else None,
            turn=r.turn if live else None,
            turn_number=r.turn_number,
            drawn=drawn,
            drawn_from=r.drawn_from if r.drawn is not None else None,
            known=tuple(self.faces_for(me, row) for row in r.rows),
            backs=tuple(tuple(self.backs[h] for h in row) for row in r.rows),
            locked=tuple(tuple(lk) for lk in r.locked),
            piles=tuple(len(p) for p in r.piles),
            reserve=len(r.reserve),
            reserve_top=self.backs[r.reserve[-1]] if r.reserve else None,
            discard=tuple(self.faces.get(h) for h in reversed(r.discard)),
            window_open=r.window is not None,
            caller=r.caller,
            totals=tuple(self.totals),
            rounds_played=len(self.results),
            scored=self.results[-1].parts if self.results else (),
            revealed=self.results[-1].revealed if self.results else (),
            tie_keys=self._tie_keys() if self.over and self.results else (),
            over=self.over,
            legal=legal,
            options=self.options,
            window_until=r.window.deadline if r.window is not None else None,
            number_shut=self._window_refusal(),
            setup=live and r.setup_left > 0,
            final_turns_left=r.finals_left,
        )


def _is_pos(pos: int | None, size: int) -> bool:
    return isinstance(pos, int) and not isinstance(pos, bool) and 0 <= pos < size


def _why_not(action: str, phase: str, player: str) -> str:
    """Why the turn's phase closes `action`."""
    if phase == "setup":
        return f"{player} must make a setup choice first"
    if phase == "drawn":
        return f"{player} must replace or discard the drawn card"
    if phase == "final":
        return f"on a final turn {player} may only draw or pass"
    if action == "pass":
        return "passing is allowed only on a final turn"
    if action.startswith("setup"):
        return "setup is over"
    return f"{player} must draw first"


def deck_faces(deck: Sequence[CrescendoCard]) -> dict[Handle, CrescendoCard]:
    """Handles 0..103 for a full deck listed top first; InputError unless it is exactly the 104 cards."""
    key = lambda c: (isinstance(c, str), str(c))  # noqa: E731
    if len(deck) != 104 or sorted(deck, key=key) != sorted(CRESCENDO_DECK, key=key) or any(isinstance(c, bool) for c in deck):
        raise InputError("a Crescendo deck must hold each of the 104 cards exactly once")
    return dict(enumerate(deck))
