"""The Crescendo rules engine: pure, clock-free, and able to run with some faces unknown."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cards import CRESCENDO_DECK, Back, CrescendoCard, crescendo_back, is_joker
from ..errors import IllegalMove, InputError
from .base import EngineBase, Event, Faces, Handle, Knowledge, Move, NeedReshuffle, RoundInput, Window, illegal, tie_order

ROUNDS = 3
SPECIAL_ACTIONS = {"peek": "peek", "exchange": "swap", "lock": "lock"}  # move -> action on the back

# Rules as data: the state of the turn decides which of its player's moves are open.
TURN_MOVES: Mapping[str, frozenset[str]] = {
    "setup": frozenset({"setup_look", "setup_swap", "setup_pass"}),
    "turn": frozenset({"draw", "peek", "exchange", "lock", "crescendo"}),
    "final": frozenset({"draw", "pass"}),
    "drawn": frozenset({"replace", "discard"}),
}
BEGINS_TURN = frozenset({"draw", "peek", "exchange", "lock", "crescendo", "pass"})
OUT_OF_TURN = frozenset({"number", "number_tie"})
ALL_MOVES = frozenset().union(*TURN_MOVES.values(), OUT_OF_TURN)


def cards_per_player(players: int) -> int:
    """8 cards each, 7 with five or six players."""
    return 7 if players >= 5 else 8


def incorrect_count(row: Sequence[int]) -> int:
    """Cards lower than the card just before them (Jokers already removed)."""
    return sum(1 for a, b in zip(row, row[1:]) if b < a)


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
        """InputError unless both options are numbers >= 0."""
        for name in ("number_window_s", "number_tie_ms"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or value < 0:
                raise InputError(f"{name} must be a number >= 0, not {value!r}")

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
        # True: turn the discard pile over as scenarios do. False: raise NeedReshuffle and wait for
        # `reshuffle()`, as a table does while its peers shuffle the cards afresh.
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
        """Apply `move` at `now` (default: the current clock); IllegalMove leaves everything unchanged."""
        if now is not None and now != self.clock:
            self.tick(now)
        self.check(move)
        at = self.clock
        events = self._do(move)
        self.inputs.append(RoundInput("move", at, move))
        self.events.extend(events)
        return events

    def check(self, move: Move) -> None:
        """Raise IllegalMove when `move` is not allowed now."""
        if self.over:
            raise illegal("the game is over")
        r = self.r
        if r is None or r.ended:
            raise illegal("no round is being played")
        if move.action not in ALL_MOVES:
            raise illegal(f"{move.action!r} is not a Crescendo move")
        if move.action == "number_tie":
            raise illegal("simultaneous claims go through number_tie()")
        me = self.seat(move.player)
        if move.action == "number":
            self._check_claim(me, move.pos)
            return
        phase = self.phase()
        if phase is None:
            raise illegal("the round is ending")
        due = r.turn
        if due != me:
            what = "setup choice" if phase == "setup" else "turn"
            raise illegal(f"it is {self.players[due]}'s {what}, not {move.player}'s")
        if move.action not in TURN_MOVES[phase]:
            raise illegal(self._why_not(move, phase))
        w = r.window
        if move.action in BEGINS_TURN and w is not None and self.clock < w.deadline:
            raise illegal(f"{move.player} cannot begin before the NUMBER window's time is up ({w.deadline:g} s)")
        row = r.rows[me]
        a = move.action
        if a in ("setup_look", "lock", "replace"):
            _pos(move.pos, len(row))
        elif a == "setup_swap":
            p1, p2 = _pos(move.pos, len(row)), _pos(move.pos2, len(row))
            if p1 == p2:
                raise illegal("setup swap needs two different positions")
        elif a == "draw":
            source = move.source or "reserve"
            if source not in ("reserve", "discard"):
                raise illegal(f"cannot draw from {source!r}")
            if source == "discard" and not r.discard:
                raise illegal("the common discard pile is empty")
            if source == "reserve" and not r.reserve:
                if len(r.discard) < 2:
                    raise illegal("the Reserve is empty and there is nothing to reshuffle")
                self._need_reshuffle()
        elif a == "crescendo":
            earliest = 3 * self.n + 1
            if r.turn_number + 1 < earliest:
                raise illegal(f"CRESCENDO is open from turn {earliest} of the round (this would be turn {r.turn_number + 1})")
        if a in SPECIAL_ACTIONS:
            if a == "lock":
                assert move.pos is not None
                if r.locked[me][move.pos]:
                    raise illegal("that card is already locked")
            elif a == "peek":
                other = self._target(move.target)
                pos = _pos(move.pos, len(r.rows[other]))
                if r.locked[other][pos]:
                    raise illegal("a locked card is face up: there is nothing to peek at")
            else:
                other = self._target(move.target)
                if other == me:
                    raise illegal("Swap exchanges with another player's card, not one of your own")
                pos = _pos(move.pos, len(row))
                tpos = _pos(move.target_pos, len(r.rows[other]))
                if r.locked[me][pos]:
                    raise illegal("a locked card cannot be given away with Swap")
                if r.locked[other][tpos]:
                    raise illegal(f"{move.target}'s card is locked and protected from Swap")
            # Last, as it may need the Reserve reshuffled: only a move sound in every other way may ask for that.
            top = self.reserve_top_back()
            if top is None:
                raise illegal("the Reserve is empty: no special action is open")
            if top.action != SPECIAL_ACTIONS[a]:
                raise illegal(f"the Reserve's top card shows {top.action}, not {SPECIAL_ACTIONS[a]}")

    def _target(self, name: str | None) -> int:
        if name is None:
            raise illegal("this action needs a target player")
        return self.seat(name)

    def _why_not(self, move: Move, phase: str) -> str:
        if phase == "setup":
            return f"{move.player} must make a setup choice first"
        if phase == "drawn":
            return f"{move.player} must replace or discard the drawn card"
        if phase == "final":
            return f"on a final turn {move.player} may only draw or pass"
        if move.action == "pass":
            return "passing is allowed only on a final turn"
        if move.action.startswith("setup"):
            return "setup is over"
        return f"{move.player} must draw first"

    def _check_claim(self, me: int, pos: int | None) -> None:
        r = self.r
        assert r is not None
        w = r.window
        if w is None or self.clock > w.deadline:
            raise illegal("NUMBER can be called only between one turn and the next")
        _pos(pos, len(r.rows[me]))

    def reserve_top_back(self) -> Back | None:
        """The back on top of the Reserve as the next card needed will find it, or None if there is none."""
        r = self.r
        assert r is not None
        if r.reserve:
            return self.backs[r.reserve[-1]]
        if len(r.discard) >= 2:
            self._need_reshuffle()
            return self.backs[self._reshuffle_order()[-1]]
        return None

    def _need_reshuffle(self) -> None:
        """A card is needed from the empty Reserve: a table must reshuffle before going on."""
        if not self.auto_reshuffle:
            raise NeedReshuffle("the Reserve is empty: the discard pile must be reshuffled first")

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
        if r is None or r.ended or r.window is None or self.clock > r.window.deadline:
            raise illegal("NUMBER can be called only between one turn and the next")
        if len({p for p, _ in claims}) != len(claims):
            raise illegal("one claim per player")
        valid = []
        for player, pos in claims:
            try:
                self._check_claim(self.seat(player), pos)
            except IllegalMove:
                continue  # a claim that could not stand alone cannot win a tie either
            valid.append((player, pos))
        if not valid:
            raise illegal("no valid claim")
        order = tie_order(r.window.seat, self.n)
        player, pos = min(valid, key=lambda c: order.index(self.seat(c[0])))
        return Move(player, "number", pos=pos), {p for p, _ in valid}

    def public_before(self, move: Move) -> list[Handle]:
        """The cards `move` turns face up, whose faces a table reveals before applying it (none if it is refused)."""
        r = self.r
        if r is None or r.ended:
            return []
        try:
            self.check(move)
        except IllegalMove:
            return []
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
        if not near(face, top) and not r.reserve and len(r.discard) >= 2:
            self._need_reshuffle()
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
        assert r.window is not None
        events.extend(self._close_window(self.clock))
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
            r.window = Window(me, self.clock, self.clock + self.options.number_window_s)
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
        scores, incorrect, call_points = [], [], []
        for seat in range(self.n):
            numbers = [self.faces.need(h) for h in r.rows[seat]]
            k = incorrect_count([x for x in numbers if isinstance(x, int)])
            incorrect.append(k)
            if seat == r.caller:
                base = 6 if k == 0 else -3 - k
                call_points.append(base)
            else:
                base = 3 if k == 0 else -k
                call_points.append(0)
            score = base + (1 if seat in r.passed else 0) + len(r.piles[seat])
            scores.append(score)
            self.totals[seat] += score
        self.results.append(CrescendoRoundResult(
            tuple(scores), r.caller, tuple(incorrect), tuple(len(p) for p in r.piles), tuple(call_points),
            tuple(tuple(self.faces.need(h) for h in row) for row in r.rows),
        ))
        events = [Event("round_end", None, tuple(scores))]
        return events + self._game_over_or_next(when, self._winners() if self.round_no >= ROUNDS else None)

    def _winners(self) -> list[int]:
        def key(seat: int) -> tuple[int, int, int]:
            calls = sum(res.call_points[seat] for res in self.results)
            return (self.totals[seat], calls, self.results[-1].scores[seat])

        best = max(key(s) for s in range(self.n))
        return [s for s in range(self.n) if key(s) == best]

    # ------------------------------------------------------------ views

    def legal_moves(self, player: str) -> list[Move]:
        """Every move `player` may make at the current clock (NUMBER claims once per own position)."""
        r = self.r
        if self.over or r is None or r.ended:
            return []
        me = self.seat(player)
        row_n = len(r.rows[me])
        out: list[Move] = []
        w = r.window
        if w is not None and self.clock <= w.deadline:
            out += [Move(player, "number", pos=i) for i in range(row_n)]
        phase = self.phase()
        if phase is None or r.turn != me:
            return out
        if phase == "setup":
            out.append(Move(player, "setup_pass"))
            out += [Move(player, "setup_look", pos=i) for i in range(row_n)]
            out += [Move(player, "setup_swap", pos=i, pos2=j) for i in range(row_n) for j in range(i + 1, row_n)]
            return out
        if phase == "drawn":
            out.append(Move(player, "discard"))
            out += [Move(player, "replace", pos=i) for i in range(row_n)]
            return out
        if w is not None and self.clock < w.deadline:
            return out  # the next player begins no earlier than the NUMBER window's end
        if r.reserve or len(r.discard) >= 2:
            out.append(Move(player, "draw", source="reserve"))
        if r.discard:
            out.append(Move(player, "draw", source="discard"))
        if phase == "final":
            out.append(Move(player, "pass"))
            return out
        if r.turn_number + 1 >= 3 * self.n + 1:
            out.append(Move(player, "crescendo"))
        try:
            top = self.reserve_top_back()
        except NeedReshuffle:
            return out  # which action the next card shows is unknown until the table reshuffles
        if top is None:
            return out
        locked = r.locked
        mine = [i for i in range(row_n) if not locked[me][i]]
        if top.action == "lock":
            out += [Move(player, "lock", pos=i) for i in mine]
        elif top.action == "peek":
            out += [Move(player, "peek", target=self.players[o], pos=i)
                    for o in range(self.n) for i in range(len(r.rows[o])) if not locked[o][i]]
        else:
            out += [Move(player, "exchange", pos=i, target=self.players[o], target_pos=j)
                    for i in mine for o in range(self.n) if o != me
                    for j in range(len(r.rows[o])) if not locked[o][j]]
        return out

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
            over=self.over,
            legal=legal,
            options=self.options,
            window_until=r.window.deadline if r.window is not None else None,
        )


def _pos(pos: int | None, size: int) -> int:
    if pos is None or isinstance(pos, bool) or not isinstance(pos, int) or not 0 <= pos < size:
        raise illegal(f"no such position: {pos!r}")
    return pos


def deck_faces(deck: Sequence[CrescendoCard]) -> dict[Handle, CrescendoCard]:
    """Handles 0..103 for a full deck listed top first; InputError unless it is exactly the 104 cards."""
    key = lambda c: (isinstance(c, str), str(c))  # noqa: E731
    if len(deck) != 104 or sorted(deck, key=key) != sorted(CRESCENDO_DECK, key=key) or any(isinstance(c, bool) for c in deck):
        raise InputError("a Crescendo deck must hold each of the 104 cards exactly once")
    return dict(enumerate(deck))
