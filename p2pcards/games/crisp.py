"""The Crisp rules engine: pure, clock-free, and able to run with some faces unknown."""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..cards import CRISP_DECK, crisp_rank, crisp_value
from ..errors import IllegalMove, InputError
from .base import (
    CRISP_SLOTS,
    MAX_SECONDS,
    EngineBase,
    Event,
    Faces,
    Handle,
    Knowledge,
    Move,
    Needs,
    Provisional,
    RoundInput,
    ScoreParts,
    Window,
    illegal,
    is_duration,
    later,
)

LIMIT_CHOICES = (50, 100, 150)
MAX_LIMIT = 1_000_000  # what a scenario or a test may set; a host offers LIMIT_CHOICES
DRAW_SECONDS_CHOICES = (30, 45, 60, None)
FACE_RANKS = frozenset({"J", "Q", "K"})

# Rules as data: the turn's state decides which moves its player may make (listed in this order).
TURN_MOVES: Mapping[str, tuple[str, ...]] = {
    "draw_due": ("draw",),
    "drawn_pile": ("replace", "discard", "jack", "king", "queen"),
    "drawn_discard": ("replace",),
}
TURN_ACTIONS = frozenset(a for moves in TURN_MOVES.values() for a in moves)
# A special move needs a drawn card of this rank, taken from the draw pile.
SPECIAL_RANK = {"jack": "J", "queen": "Q", "king": "K"}
_RANK_NAME = {"J": "Jack", "Q": "Queen", "K": "King"}
CALL_MISSED = "called crisp, not the lowest"  # the score part of a call whose total was not strictly lowest


@dataclass(frozen=True, slots=True)
class FaceRule:
    """What a move made with a card drawn from the pile asks of its face."""

    ok: Callable[[str], bool]  # a test of the drawn card's rank
    reason: str  # what a person reads when it fails ({player}: the mover)
    requirement: str  # what the round audit re-checks when the face was hidden


FACE_RULES: Mapping[str, FaceRule] = {
    "replace": FaceRule(lambda rank: rank not in FACE_RANKS,
                        "{player} cannot swap a drawn Jack, Queen or King into their hand", "not J/Q/K"),
    "discard": FaceRule(lambda rank: rank != "K", "{player} must use a drawn King", "not K"),
    **{action: FaceRule(rank.__eq__, f"{{player}} has not drawn a {_RANK_NAME[rank]}", f"rank {rank}")
       for action, rank in SPECIAL_RANK.items()},
}


@dataclass(frozen=True, slots=True)
class CrispOptions:
    """Table options: game limit, discard-pile draws, time per draw and the two crisp delays."""

    limit: int = 100
    discard_draw: bool = False
    draw_seconds: float | None = None
    crisp_window_s: float = 3.0
    next_start_s: float = 2.0

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CrispOptions:
        """Options from a scenario/table dict; InputError on an unknown key or a bad value."""
        known = {"limit", "discard_draw", "draw_seconds", "crisp_window_s", "next_start_s"}
        unknown = set(data) - known
        if unknown:
            raise InputError(f"unknown Crisp option(s): {', '.join(sorted(unknown))}")
        opts = cls(**{k: data[k] for k in known if k in data})
        opts.validate()
        return opts

    def validate(self) -> None:
        """InputError unless every option has a sensible value."""
        if isinstance(self.limit, bool) or not isinstance(self.limit, int) or not 1 <= self.limit <= MAX_LIMIT:
            raise InputError(f"limit must be a whole number from 1 to {MAX_LIMIT}, not {self.limit!r}")
        if not isinstance(self.discard_draw, bool):
            raise InputError(f"discard_draw must be true or false, not {self.discard_draw!r}")
        if self.draw_seconds is not None and not is_duration(self.draw_seconds, positive=True):
            raise InputError(f"draw_seconds must be a number of seconds above 0 and at most {MAX_SECONDS:g}, "
                             f"or null, not {self.draw_seconds!r}")
        for name in ("crisp_window_s", "next_start_s"):
            value = getattr(self, name)
            if not is_duration(value):
                raise InputError(f"{name} must be a number of seconds from 0 to {MAX_SECONDS:g}, not {value!r}")

    def to_dict(self) -> dict[str, Any]:
        """The options as a plain dict."""
        return {
            "limit": self.limit,
            "discard_draw": self.discard_draw,
            "draw_seconds": self.draw_seconds,
            "crisp_window_s": self.crisp_window_s,
            "next_start_s": self.next_start_s,
        }


@dataclass(frozen=True, slots=True)
class CrispRoundResult:
    """A finished round: each seat's round score, the caller, and the hands as revealed."""

    scores: tuple[int, ...]
    caller: int | None
    hands: tuple[tuple[str, ...], ...]
    parts: tuple[ScoreParts, ...] = ()  # per seat, how its score came about


@dataclass(frozen=True, slots=True)
class CrispView:
    """What one player sees and knows: never a face that player has not seen."""

    me: int
    players: tuple[str, ...]
    round: int
    clock: float
    turn: int | None
    phase: str | None  # the turn's state when it is my turn: draw_due, drawn_pile, drawn_discard
    opens_at: float
    draws_left: int
    drawn: str | None  # my drawn card, when I may see it
    drawn_from: str | None
    known: tuple[tuple[str | None, ...], ...]  # known[seat][slot]
    discard: tuple[str | None, ...]  # top first; None only while a table's reveal is on its way
    draw_pile: tuple[str | None, ...]  # top first; faces everyone knows after a turnover
    caller: int | None
    can_call: bool
    final_turns_left: int
    totals: tuple[int, ...]
    rounds_played: int
    over: bool
    legal: tuple[Move, ...]
    options: CrispOptions
    call_until: float | None = None  # while I may call crisp: the end of my crisp window
    draw_until: float | None = None  # when the table times draws: the time-out of the draw under way
    windows: tuple[Window, ...] = ()  # every crisp window a call may still use at this clock, oldest first
    scored: tuple[ScoreParts, ...] = ()  # per seat, how its score of the last round played came about


@dataclass
class _Round:
    hands: list[list[Handle]]
    draw_pile: list[Handle]  # top at the end
    discard: list[Handle] = field(default_factory=list)  # top at the end
    turn: int | None = None
    opens_at: float = 0.0
    began: bool = False
    drawn: Handle | None = None
    drawn_from: str | None = None
    draws_left: int = 1
    due_at: float = 0.0
    windows: list[Window] = field(default_factory=list)  # open crisp windows, oldest first; they overlap
    turns_ended: int = 0
    caller: int | None = None
    finals_left: int = 0  # final turns still to end, the current one included
    turn_is_final: bool = False
    ended: bool = False


class CrispGame(EngineBase[str]):
    """A whole game of Crisp for 2 to 8 seats, driven by moves and the time."""

    name = "crisp"
    deck_size = 52

    def __init__(self, players: Sequence[str], options: CrispOptions | None = None, dealer: int = 0) -> None:
        if not 2 <= len(players) <= 8:
            raise InputError(f"Crisp needs 2 to 8 players, not {len(players)}")
        if len(set(players)) != len(players):
            raise InputError("player names must be different")
        self._init_base(tuple(players), dealer)
        self.options = options or CrispOptions()
        self.options.validate()
        self.results: list[CrispRoundResult] = []
        self.r: _Round | None = None
        self.provisional: list[Provisional] = []

    # ------------------------------------------------------------ dealing

    def _parse_deck(self, deck: Sequence[Any]) -> dict[Handle, str]:
        return deck_faces(deck)

    def deal(self, faces: Mapping[Handle, str], now: float) -> list[Event]:
        """Deal a round from handles 0..51 (the deck, top first); `faces` is what this engine may see."""
        if not self.needs_deal:
            raise illegal("a round is still being played" if not self.over else "the game is over")
        self.clock = max(self.clock, now)
        self.round_no += 1
        dealer = self.dealer_of(self.round_no)
        first = (dealer + 1) % self.n
        hands: list[list[Handle]] = [[0, 0, 0] for _ in range(self.n)]
        for k in range(3 * self.n):
            hands[(first + k) % self.n][k // self.n] = k
        self.faces = Faces(dict(faces))
        self.know = Knowledge(self.n)
        for seat in range(self.n):
            self.know.show(seat, hands[seat][0])
            self.know.show(seat, hands[seat][2])
        self.r = _Round(
            hands=hands,
            draw_pile=list(range(self.deck_size - 1, 3 * self.n - 1, -1)),
            turn=first,
            opens_at=self.clock,
            due_at=self.clock,
        )
        self._start_inputs(self.clock)
        self.provisional = []
        return [Event("deal", self.players[dealer], (self.round_no,))]

    # ------------------------------------------------------------ time

    def _next_deadline(self) -> tuple[float, str] | None:
        r = self.r
        if r is None or r.ended:
            return None
        found: list[tuple[float, str]] = []
        if r.windows:
            found.append((min(w.deadline for w in r.windows), "window"))
        if self.options.draw_seconds is not None and r.turn is not None:
            found.append((later(r.due_at, self.options.draw_seconds), "timeout"))
        if not found:
            return None
        return min(found)

    def wake_time(self) -> float | None:
        """The next time something changes with no move: a turn opening, a window closing, a time-out."""
        r = self.r
        if r is None or r.ended:
            return None
        times = []
        if r.turn is not None and not r.began and r.opens_at > self.clock:
            times.append(r.opens_at)
        nxt = self._next_deadline()
        if nxt is not None:
            times.append(nxt[0])
        return min(times) if times else None

    def next_deadline(self) -> float | None:
        """The next time at which the clock alone changes the state (a window closing, a time-out)."""
        nxt = self._next_deadline()
        return None if nxt is None else nxt[0]

    def tick(self, now: float, wait: bool = False) -> list[Event]:
        """Advance the clock to `now`, applying every deadline passed (a wait also closes 0 s windows)."""
        if now < self.clock:
            raise illegal("time cannot go backwards")
        if self.r is not None and not self.r.ended:
            self.inputs.append(RoundInput("tick", now, wait=wait))
        events: list[Event] = []
        while True:
            nxt = self._next_deadline()
            if nxt is None:
                break
            when, kind = nxt
            r = self.r
            assert r is not None
            closing = [w for w in r.windows if w.deadline == when] if kind == "window" else []
            zero = any(w.zero for w in closing)
            if not (when < now or (wait and zero and when <= now)):
                break
            self.clock = max(self.clock, when)
            if kind == "window":
                r.windows = [w for w in r.windows if w not in closing]
                step = [Event("window_closed", self.players[w.seat]) for w in closing]
            else:
                step = self._forfeit(when)
            self.events.extend(step)  # logged as each deadline passes, in time order
            events.extend(step)
        self.clock = now
        return events

    def _forfeit(self, when: float) -> list[Event]:
        r = self.r
        assert r is not None and r.turn is not None
        seat = r.turn
        events = [Event("timeout", self.players[seat])]
        if not r.began:
            if not r.draw_pile:
                events.append(self._turn_over())
            h = r.draw_pile.pop()
            self._to_discard(h)
            events.append(Event("forfeit_draw", self.players[seat], (self._face_text(h),), (h,)))
        elif r.drawn is not None:
            h = r.drawn
            r.drawn = None
            self._to_discard(h)
            events.append(Event("forfeit_discard", self.players[seat], (self._face_text(h),), (h,)))
        r.draws_left = 0
        events.extend(self._end_turn(when, forfeit=True))
        return events

    # ------------------------------------------------------------ moves

    def apply(self, move: Move, now: float | None = None) -> list[Event]:
        """Apply `move` at `now` (default: the current clock); IllegalMove leaves everything unchanged."""
        if now is not None and now != self.clock:
            self.tick(now)
        self.check(move, record=True)
        at = self.clock
        events = self._do(move)
        self.inputs.append(RoundInput("move", at, move))
        self.events.extend(events)
        return events

    def phase(self) -> str | None:
        """The state of the current turn (a key of TURN_MOVES), or None between rounds."""
        r = self.r
        if r is None or r.ended or r.turn is None:
            return None
        if r.drawn is None:
            return "draw_due"
        return "drawn_pile" if r.drawn_from == "pile" else "drawn_discard"

    def check(self, move: Move, record: bool = False, blind: bool = False) -> None:
        """Raise IllegalMove when `move` is not allowed now; a face it cannot see passes (recorded when `record`).

        `blind`: judge as if no face were known, so every peer reaches the same verdict.
        """
        if self.over:
            raise illegal("the game is over")
        r = self.r
        if r is None or r.ended:
            raise illegal("no round is being played")
        me = self.seat(move.player)
        a = move.action
        if a == "crisp":
            reason = self._call_refusal(me)
        elif a not in TURN_ACTIONS:
            reason = f"{a!r} is not a Crisp move"
        else:
            reason = (self._turn_refusal(me, a) or self._params_refusal(me, move)
                      or self._face_refusal(a, move.player, blind))
        if reason is not None:
            raise illegal(reason)
        if record:
            rule = self._face_rule(a)
            if rule is not None and r.drawn is not None and (blind or self.faces.get(r.drawn) is None):
                self.provisional.append(Provisional(len(self.inputs), move, r.drawn, rule.requirement))

    # One predicate per part of the rules, each giving the reason a person reads or None; `check`
    # asks them of one move, `legal_moves` of every well-formed move the turn's state leaves open.

    def _call_refusal(self, me: int) -> str | None:
        """Why `me` may not call crisp now."""
        r = self.r
        assert r is not None
        name = self.players[me]
        if r.caller is not None:
            return f"{self.players[r.caller]} has already called crisp this round"
        w = self._window_of(me)
        if w is None:
            return f"{name} can call crisp only right at the end of their own turn"
        if self.clock > w.deadline:
            return f"{name}'s crisp window closed at {w.deadline:g} s"
        return None

    def _turn_refusal(self, me: int, action: str) -> str | None:
        """Why the turn's state closes `action` to `me` (whose turn it is, its phase, when it opens)."""
        r = self.r
        assert r is not None
        player = self.players[me]
        if r.turn != me:
            return f"it is not {player}'s turn"
        phase = self.phase()
        assert phase is not None
        if action not in TURN_MOVES[phase]:
            return _why_not(action, phase, player)
        if action == "draw" and not r.began and self.clock < r.opens_at:
            return f"{player} cannot begin before {r.opens_at:g} s"
        return None

    def _params_refusal(self, me: int, move: Move) -> str | None:
        """Why the fields of `move` are refused: where it draws from, which slots, whose card."""
        r = self.r
        assert r is not None
        a = move.action
        if a == "draw":
            source = move.source or "pile"
            if source not in ("pile", "discard"):
                return f"cannot draw from {source!r}"
            if source == "discard":
                if not self.options.discard_draw:
                    return "this table does not allow drawing from the discard pile"
                if not r.discard:
                    return "the discard pile is empty: draw from the draw pile"
            return None
        if a in ("replace", "queen") and not _is_slot(move.pos):
            return f"no such slot: {move.pos!r}"
        if a == "queen":
            if move.target is None or move.target == move.player:
                return "a Queen swaps with another player's card"
            if move.target not in self.players:
                return f"{move.target} is not at this table"
            if not _is_slot(move.target_pos):
                return f"no such slot: {move.target_pos!r}"
        return None

    def _face_rule(self, action: str) -> FaceRule | None:
        """What `action` asks of the drawn card's face now, if anything (see FACE_RULES)."""
        r = self.r
        assert r is not None
        if action == "replace" and r.drawn_from != "pile":
            return None
        return FACE_RULES.get(action)

    def _face_refusal(self, action: str, player: str, blind: bool = False) -> str | None:
        """Why the drawn card's face refuses `action`; None when this engine cannot see the face."""
        r = self.r
        assert r is not None
        rule = self._face_rule(action)
        if rule is None or blind or r.drawn is None:
            return None
        face = self.faces.get(r.drawn)
        if face is None or rule.ok(crisp_rank(face)):
            return None
        return rule.reason.format(player=player)

    def needs(self, move: Move) -> Needs:
        """What must happen before `move` is applied: the cards it turns face up revealed to all first."""
        r = self.r
        if r is None or r.ended or r.drawn is None or move.player not in self.players:
            return Needs()
        try:
            self.check(move, blind=True)
        except IllegalMove:
            return Needs()  # refused whatever the faces: nothing to reveal
        if move.action in ("discard", "jack", "queen", "king"):
            return Needs((r.drawn,))
        if move.action == "replace":
            assert r.turn is not None and move.pos is not None
            return Needs((r.hands[r.turn][move.pos],))
        return Needs()

    def _window_of(self, seat: int) -> Window | None:
        """`seat`'s crisp window, while it has not been closed (its deadline may have passed unticked)."""
        r = self.r
        assert r is not None
        return next((w for w in r.windows if w.seat == seat), None)

    def _open_windows(self) -> tuple[Window, ...]:
        """The crisp windows a call may use at the current clock, oldest first (each seat's one `check` accepts)."""
        r = self.r
        if self.over or r is None or r.ended or r.caller is not None:
            return ()
        return tuple(w for w in r.windows if self.clock <= w.deadline)

    def _do(self, move: Move) -> list[Event]:
        r = self.r
        assert r is not None
        me = self.seat(move.player)
        a = move.action
        if a == "crisp":
            w = self._window_of(me)
            assert w is not None
            r.caller = me
            r.windows = []
            # Every other seat gets one final turn: the turns that ended since the caller's count as
            # the first of them, in order, and the turn now due or under way is the next one.
            r.finals_left = self.n - 1 - (r.turns_ended - w.after)
            r.turn_is_final = True
            if r.finals_left == 0:
                return [Event("crisp", move.player)] + self._end_round(self.clock)
            return [Event("crisp", move.player)]
        if a == "draw":
            return self._draw(me, move.source or "pile")
        h = r.drawn
        assert h is not None
        r.drawn = None
        hand = r.hands[me]
        events: list[Event]
        if a == "replace":
            assert move.pos is not None
            old = hand[move.pos]
            hand[move.pos] = h
            self._to_discard(old)
            events = [Event("replace", move.player, (CRISP_SLOTS[move.pos], self._face_text(old)))]
        elif a == "discard":
            self._to_discard(h)
            events = [Event("discard", move.player, (self._face_text(h),))]
        elif a == "jack":
            self.know.show(me, hand[1])
            self._to_discard(h)
            events = [Event("jack", move.player)]
        elif a == "queen":
            assert move.pos is not None and move.target is not None and move.target_pos is not None
            other = self.seat(move.target)
            mine, theirs = hand[move.pos], r.hands[other][move.target_pos]
            hand[move.pos], r.hands[other][move.target_pos] = theirs, mine
            if move.pos != 1:
                self.know.show(me, theirs)
            if move.target_pos != 1:
                self.know.show(other, mine)
            self._to_discard(h)
            events = [Event("queen", move.player, (CRISP_SLOTS[move.pos], move.target, CRISP_SLOTS[move.target_pos]))]
        else:  # king
            self._to_discard(h)
            r.draws_left += 2
            events = [Event("king", move.player)]
        if r.draws_left == 0:
            events.extend(self._end_turn(self.clock, forfeit=False))
        else:
            r.due_at = self.clock
        return events

    def _draw(self, me: int, source: str) -> list[Event]:
        r = self.r
        assert r is not None
        if not r.began:
            r.began = True
            # A 0 s window closes when the next player begins; my own window when I begin again.
            r.windows = [w for w in r.windows if not w.zero and w.seat != me]
        events: list[Event] = []
        if source == "discard":
            h = r.discard.pop()
        else:
            if not r.draw_pile:
                events.append(self._turn_over())
            h = r.draw_pile.pop()
            self.know.show(me, h)
        r.drawn, r.drawn_from = h, source
        r.draws_left -= 1
        return events + [Event("draw", self.players[me], (source,))]

    def _turn_over(self) -> Event:
        r = self.r
        assert r is not None
        # The discard pile turned over as it lies: its bottom card becomes the top.
        r.draw_pile = r.discard[::-1]  # both lists keep their top at the end
        r.discard = []
        return Event("turnover", None, (len(r.draw_pile),))

    def _to_discard(self, h: Handle) -> None:
        r = self.r
        assert r is not None
        r.discard.append(h)
        self.know.show_all(h)

    def _end_turn(self, when: float, forfeit: bool) -> list[Event]:
        r = self.r
        assert r is not None and r.turn is not None
        ended = r.turn
        r.turns_ended += 1
        # A window outlives the turns after it, but not its own player's next turn (here ended by a forfeit).
        r.windows = [w for w in r.windows if w.seat != ended]
        if r.turn_is_final:
            r.finals_left -= 1
            if r.finals_left == 0:
                return self._end_round(when)
        nxt = (ended + 1) % self.n
        r.turn = nxt
        r.began = False
        r.drawn = None
        r.drawn_from = None
        r.draws_left = 1
        r.opens_at = later(when, self.options.next_start_s)
        r.due_at = r.opens_at
        r.turn_is_final = r.caller is not None
        if r.caller is None and not forfeit:
            r.windows.append(Window(ended, when, later(when, self.options.crisp_window_s), r.turns_ended))
        return [Event("turn", self.players[nxt])]

    def _end_round(self, when: float) -> list[Event]:
        assert self.r is not None
        self.r.turn = None
        return super()._end_round(when)

    def _close_all_windows(self) -> None:
        assert self.r is not None
        self.r.windows = []

    def _round_handles(self) -> list[Handle]:
        assert self.r is not None
        return [h for hand in self.r.hands for h in hand]

    def _settle(self, when: float) -> list[Event]:
        r = self.r
        assert r is not None
        faces = [[self.faces.need(h) for h in hand] for hand in r.hands]
        sums = [sum(crisp_value(f) for f in hand) for hand in faces]
        scores = list(sums)
        parts: list[ScoreParts] = [(("cards", total),) for total in sums]
        if r.caller is not None:
            c = r.caller
            lowest = all(sums[c] < s for i, s in enumerate(sums) if i != c)
            scores[c] += -5 if lowest else 5
            parts[c] += (("called crisp, lowest", -5) if lowest else (CALL_MISSED, 5),)
        for i, s in enumerate(scores):
            self.totals[i] += s
        self.results.append(CrispRoundResult(tuple(scores), r.caller, tuple(tuple(h) for h in faces), tuple(parts)))
        events = [Event("round_end", None, tuple(scores))]
        winners = None
        if max(self.totals) >= self.options.limit:
            best = min(self.totals)
            winners = [i for i, t in enumerate(self.totals) if t == best]
        return events + self._game_over_or_next(when, winners)

    # ------------------------------------------------------------ views

    def legal_moves(self, player: str) -> list[Move]:
        """Every move `player` may make at the current clock: the well-formed moves `check` accepts."""
        r = self.r
        if self.over or r is None or r.ended:
            return []
        me = self.seat(player)
        out: list[Move] = []
        if self._call_refusal(me) is None:
            out.append(Move(player, "crisp"))
        phase = self.phase()
        if r.turn != me or phase is None:
            return out
        for action in TURN_MOVES[phase]:
            if self._turn_refusal(me, action) is None and self._face_refusal(action, player) is None:
                out += [m for m in self._well_formed(player, action) if self._params_refusal(me, m) is None]
        return out

    def _well_formed(self, player: str, action: str) -> list[Move]:
        """Every `action` of `player` with well-formed fields (a draw from either pile, any slots, any player)."""
        if action == "draw":
            return [Move(player, "draw", source="pile"), Move(player, "draw", source="discard")]
        if action == "replace":
            return [Move(player, "replace", pos=s) for s in range(3)]
        if action == "queen":
            return [Move(player, "queen", pos=s, target=o, target_pos=t)
                    for s in range(3) for o in self.players for t in range(3)]
        return [Move(player, action)]

    def next_revealed(self) -> list[Handle]:
        """The cards likely revealed next: the top of the draw pile (a draw shows it to its drawer) and
        the card drawn (a discard turns it face up); none between rounds."""
        r = self.r
        if r is None or r.ended:
            return []
        return r.draw_pile[-1:] + ([] if r.drawn is None else [r.drawn])

    def view(self, player: str) -> CrispView:
        """What `player` sees and knows now."""
        me = self.seat(player)
        r = self.r
        legal = tuple(self.legal_moves(player))
        if r is None:
            return CrispView(me, self.players, self.round_no, self.clock, None, None, 0.0, 0, None, None,
                             (), (), (), None, False, 0, tuple(self.totals), len(self.results), self.over,
                             legal, self.options)
        drawn = None
        if r.drawn is not None and r.turn == me:
            drawn = self.face_for(me, r.drawn)
        window = self._window_of(me) if any(m.action == "crisp" for m in legal) else None
        return CrispView(
            me=me,
            players=self.players,
            round=self.round_no,
            clock=self.clock,
            turn=r.turn,
            phase=self.phase() if r.turn == me else None,
            opens_at=r.opens_at,
            draws_left=r.draws_left,
            drawn=drawn,
            drawn_from=r.drawn_from if r.drawn is not None else None,
            known=tuple(self.faces_for(me, hand) for hand in r.hands),
            discard=tuple(self.faces.get(h) for h in reversed(r.discard)),
            draw_pile=self.faces_for(me, reversed(r.draw_pile)),
            caller=r.caller,
            can_call=window is not None,
            final_turns_left=r.finals_left,
            totals=tuple(self.totals),
            rounds_played=len(self.results),
            over=self.over,
            legal=legal,
            options=self.options,
            call_until=None if window is None else window.deadline,
            draw_until=None if self.options.draw_seconds is None or r.turn is None
            else later(r.due_at, self.options.draw_seconds),
            windows=self._open_windows(),
            scored=self.results[-1].parts if self.results else (),
        )


def _why_not(action: str, phase: str, player: str) -> str:
    if phase == "draw_due":
        return f"{player} must draw first"
    if phase == "drawn_discard":
        return f"{player} must swap a card taken from the discard pile into their hand"
    return f"{player} cannot {action} now"


def _is_slot(pos: int | None) -> bool:
    return isinstance(pos, int) and not isinstance(pos, bool) and 0 <= pos <= 2


def deck_faces(deck: Sequence[str]) -> dict[Handle, str]:
    """Handles 0..51 for a full deck listed top first; InputError unless it is exactly the 52 cards."""
    if sorted(deck) != sorted(CRISP_DECK) or len(deck) != 52:
        raise InputError("a Crisp deck must hold each of the 52 cards exactly once")
    return dict(enumerate(deck))
