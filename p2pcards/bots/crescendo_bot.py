"""A good Crescendo bot: orders its row from known faces and the public backs, from its own view only."""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from ..cards import JOKERS, Back, CrescendoCard, crescendo_back
from ..games.base import Move
from ..games.crescendo import CrescendoView
from .base import View

NUMBERS = tuple(range(1, 101))
CLEAN_POINTS = 3.0  # a player who did not call scores +3 for a row all in order instead of -1 per wrong card
JOKER_BACKS = {j: crescendo_back(j) for j in JOKERS}
BACK_NUMBERS: dict[Back, tuple[int, ...]] = {}
for _n in NUMBERS:
    BACK_NUMBERS.setdefault(crescendo_back(_n), ())
    BACK_NUMBERS[crescendo_back(_n)] += (_n,)


@dataclass(frozen=True, slots=True)
class Slot:
    """What this player believes about one card: a known face, or the unseen numbers its back allows."""

    face: int | None  # a known number
    joker: float  # probability that it is a Joker (1.0 for a known Joker)
    values: tuple[int, ...]  # sorted unseen numbers its back allows, when the face is unknown
    low: int
    high: int

    @property
    def known(self) -> bool:
        """True when the face is known (a number or a Joker)."""
        return self.face is not None or self.joker >= 1.0

    def below(self, x: int) -> float:
        """Probability that this number is lower than `x` (given it is a number)."""
        if self.face is not None:
            return 1.0 if self.face < x else 0.0
        if not self.values:
            return 1.0 if self.high < x else 0.0 if self.low > x else 0.5
        return bisect_left(self.values, x) / len(self.values)

    def above(self, x: int) -> float:
        """Probability that this number is higher than `x` (given it is a number)."""
        if self.face is not None:
            return 1.0 if self.face > x else 0.0
        if not self.values:
            return 1.0 if self.low > x else 0.0 if self.high < x else 0.5
        return 1.0 - bisect_right(self.values, x) / len(self.values)


JOKER_SLOT = Slot(None, 1.0, (), 0, 0)


def known_slot(face: CrescendoCard) -> Slot:
    """A slot whose face is known."""
    if isinstance(face, str):
        return JOKER_SLOT
    return Slot(face, 0.0, (), face, face)


def descent(a: Slot, b: Slot) -> float:
    """Probability that `b`, right after `a`, is lower than it (a wrong card), Jokers aside."""
    if a.face is not None:
        p = b.below(a.face)
    elif b.face is not None:
        p = a.above(b.face)
    elif a.low > b.high:
        p = 1.0
    elif a.high < b.low:
        p = 0.0
    else:
        p = 0.5
    return p * (1.0 - a.joker) * (1.0 - b.joker)


def row_cost(row: Sequence[Slot]) -> float:
    """Expected number of wrong cards in a row (known Jokers are removed before comparing)."""
    cards = [s for s in row if s.joker < 1.0]
    return sum(descent(a, b) for a, b in zip(cards, cards[1:]))


def p_ascending(row: Sequence[Slot]) -> float:
    """Probability (pairs taken as independent) that the whole row is in ascending order."""
    cards = [s for s in row if s.joker < 1.0]
    p = 1.0
    for a, b in zip(cards, cards[1:]):
        p *= 1.0 - descent(a, b)
    return p


class Beliefs:
    """The unseen cards of one view and the slot beliefs they give, for every row."""

    def __init__(self, view: CrescendoView) -> None:
        seen: set[CrescendoCard] = {f for f in view.discard if f is not None}
        for row in view.known:
            seen.update(f for f in row if f is not None)
        if view.drawn is not None:
            seen.add(view.drawn)
        self.unseen_jokers = [j for j in JOKERS if j not in seen]
        self.by_back: dict[Back, tuple[int, ...]] = {
            back: tuple(n for n in nums if n not in seen) for back, nums in BACK_NUMBERS.items()
        }
        self.rows = [
            [self.slot(face, back) for face, back in zip(faces, backs)]
            for faces, backs in zip(view.known, view.backs)
        ]

    def slot(self, face: CrescendoCard | None, back: Back) -> Slot:
        """The belief about one card from its face when known, else from its back."""
        if face is not None:
            return known_slot(face)
        values = self.by_back.get(back, ())
        jokers = sum(1 for j in self.unseen_jokers if JOKER_BACKS[j] == back)
        total = len(values) + jokers
        p_joker = jokers / total if total else 0.0
        if not values and jokers:
            return JOKER_SLOT
        return Slot(None, p_joker, values, back.low, back.high)


def replace_delta(row: Sequence[Slot], pos: int, new: Slot) -> float:
    """How much `row_cost` grows when the card at `pos` is replaced by `new` (only its neighbours change)."""
    prev = next((row[i] for i in range(pos - 1, -1, -1) if row[i].joker < 1.0), None)
    nxt = next((row[i] for i in range(pos + 1, len(row)) if row[i].joker < 1.0), None)

    def segment(s: Slot) -> float:
        if s.joker >= 1.0:
            return descent(prev, nxt) if prev is not None and nxt is not None else 0.0
        return (descent(prev, s) if prev is not None else 0.0) + (descent(s, nxt) if nxt is not None else 0.0)

    return segment(new) - segment(row[pos])


def clean_delta(row: Sequence[Slot], pos: int, new: Slot) -> float:
    """How much the chance of an all-ascending row grows when the card at `pos` is replaced by `new`."""
    replaced = list(row)
    replaced[pos] = new
    return p_ascending(replaced) - p_ascending(row)


def removal_gain(row: Sequence[Slot], pos: int) -> float:
    """How much `row_cost` falls when the card at `pos` leaves the row (a right NUMBER claim)."""
    return row_cost(row) - row_cost([s for p, s in enumerate(row) if p != pos])


class CrescendoBot:
    """Fixes inversions with draws and actions, claims NUMBER only when sure, calls CRESCENDO when confident."""

    def __init__(self, call_confidence: float = 0.85, clean_bonus: float = CLEAN_POINTS) -> None:
        self.call_confidence = call_confidence
        self.clean_bonus = clean_bonus

    def choose(self, view: View) -> Move | None:
        """The move to make now from this view alone, or None to let time pass."""
        if not isinstance(view, CrescendoView):
            raise TypeError("CrescendoBot plays Crescendo only")
        if not view.legal:
            return None
        legal = set(view.legal)
        me = view.players[view.me]
        claim = self._claim(view, me)
        if claim is not None and claim in legal:
            return claim
        if view.phase is None or not any(m.action not in ("number", "number_tie") for m in view.legal):
            return None
        beliefs = Beliefs(view)
        row = beliefs.rows[view.me]
        if view.phase == "setup":
            move = self._setup(view, me, row)
        elif view.phase == "drawn":
            move = self._place(view, me, row)
        elif view.phase == "final":
            move = self._final(view, me, beliefs, row)
        else:
            move = self._turn(view, me, beliefs, row)
        if move in legal:
            return move
        return _fallback(view.legal)

    # ---------------------------------------------------------------- NUMBER

    def _claim(self, view: CrescendoView, me: str) -> Move | None:
        """A NUMBER claim only with a known own number within 2 of a numbered top discard: the one most out of order."""
        if not view.window_open or not view.discard:
            return None
        top = view.discard[0]
        if not isinstance(top, int):
            return None
        mine = view.known[view.me]
        sure = [p for p, f in enumerate(mine) if isinstance(f, int) and abs(f - top) <= 2]
        if not sure:
            return None
        if len(sure) == 1:
            return Move(me, "number", pos=sure[0])
        row = Beliefs(view).rows[view.me]
        return Move(me, "number", pos=max(sure, key=lambda p: removal_gain(row, p)))

    def _number_bonus(self, view: CrescendoView, top: CrescendoCard | None, skip: int | None) -> float:
        """Worth of leaving `top` on the discard pile when a known own number is within 2 of it."""
        if not isinstance(top, int):
            return 0.0
        for p, f in enumerate(view.known[view.me]):
            if p != skip and isinstance(f, int) and abs(f - top) <= 2:
                return 0.7
        return 0.0

    # ---------------------------------------------------------------- setup

    def _setup(self, view: CrescendoView, me: str, row: list[Slot]) -> Move:
        base = row_cost(row)
        best: tuple[float, int, int] | None = None
        for i in range(len(row)):
            for j in range(i + 1, len(row)):
                swapped = list(row)
                swapped[i], swapped[j] = row[j], row[i]
                gain = base - row_cost(swapped)
                if best is None or gain > best[0]:
                    best = (gain, i, j)
        if best is not None and best[0] >= 0.5:
            return Move(me, "setup_swap", pos=best[1], pos2=best[2])
        return Move(me, "setup_look", pos=self._most_uncertain(row))

    def _most_uncertain(self, row: Sequence[Slot]) -> int:
        """The own unknown card whose face would settle the most doubt (or the joker-backed one)."""
        best_p, best = 0, -1.0
        for p, s in enumerate(row):
            if s.known:
                continue
            doubt = self._doubt(row, p)
            if doubt > best:
                best_p, best = p, doubt
        return best_p

    # ---------------------------------------------------------------- placing a card

    def _placements(self, view: CrescendoView, row: list[Slot], card: Slot) -> tuple[float, int | None]:
        """The best gain from putting `card` in the row (its position), 0 and None for keeping the row."""
        best_gain, best_pos = 0.0, None
        for p, old in enumerate(row):
            gain = -replace_delta(row, p, card)
            if self.clean_bonus:
                # A whole row in order scores its bonus on top of a point per card: worth aiming for.
                gain += self.clean_bonus * clean_delta(row, p, card)
            if not old.known:
                gain += 0.05  # a known card in place of an unknown one
            if old.joker >= 1.0:
                gain -= 0.3  # a Joker leaves the row for free at the reveal
            if gain > best_gain + 1e-9:
                best_gain, best_pos = gain, p
        return best_gain, best_pos

    def _place(self, view: CrescendoView, me: str, row: list[Slot]) -> Move:
        drawn = view.drawn
        if drawn is None:
            return Move(me, "discard")
        gain, pos = self._placements(view, row, known_slot(drawn))
        discard_worth = self._number_bonus(view, drawn, None)
        if pos is not None:
            old = view.known[view.me][pos]
            gain += self._number_bonus(view, old, pos)
        if pos is not None and gain > discard_worth + 0.1:
            return Move(me, "replace", pos=pos)
        return Move(me, "discard")

    def _reserve_gain(self, view: CrescendoView, beliefs: Beliefs, row: list[Slot]) -> float:
        """Expected gain of drawing the Reserve's top card, from its back."""
        back = view.reserve_top
        if back is None:
            return -1.0
        unknown = beliefs.slot(None, back)
        if unknown.joker >= 1.0:
            return self._placements(view, row, JOKER_SLOT)[0]
        total = 0.0
        values = unknown.values
        for v in values:
            total += self._placements(view, row, known_slot(v))[0]
        gain = total / len(values) if values else 0.0
        if unknown.joker > 0:
            gain = (1 - unknown.joker) * gain + unknown.joker * self._placements(view, row, JOKER_SLOT)[0]
        return gain

    # ---------------------------------------------------------------- turns

    def _turn(self, view: CrescendoView, me: str, beliefs: Beliefs, row: list[Slot]) -> Move:
        legal = set(view.legal)
        call = Move(me, "crescendo")
        if call in legal:
            # Each seat's own turns so far; after many, settle for less so that a table of good bots ends its round.
            rounds_of_turns = view.turn_number // len(view.players)
            needed = max(0.3, self.call_confidence - 0.01 * max(0, rounds_of_turns - 15))
            if rounds_of_turns >= 60 or p_ascending(row) >= needed:
                return call
        options: list[tuple[float, Move]] = [(self._reserve_gain(view, beliefs, row), Move(me, "draw", source="reserve"))]
        top = view.discard[0] if view.discard else None
        if top is not None:
            top_gain, pos = self._placements(view, row, known_slot(top))
            if pos is not None:
                options.append((top_gain, Move(me, "draw", source="discard")))
        action = view.reserve_top.action if view.reserve_top is not None else None
        if action == "peek":
            options.append(self._peek(view, me, row))
        elif action == "lock":
            options.append(self._lock(view, me, row))
        elif action == "swap":
            options.append(self._exchange(view, me, beliefs, row))
        options = [o for o in options if o[1] in legal]
        if not options:
            return _fallback(view.legal)
        return max(options, key=lambda o: o[0])[1]

    def _doubt(self, row: Sequence[Slot], p: int) -> float:
        s = row[p]
        doubt = s.joker
        if p > 0:
            d = descent(row[p - 1], s)
            doubt += min(d, 1.0 - d)
        if p + 1 < len(row):
            d = descent(s, row[p + 1])
            doubt += min(d, 1.0 - d)
        return doubt

    def _peek(self, view: CrescendoView, me: str, row: list[Slot]) -> tuple[float, Move]:
        unknown = [p for p, s in enumerate(row) if not s.known and not view.locked[view.me][p]]
        if not unknown:
            return (-1.0, Move(me, "peek"))
        p = max(unknown, key=lambda q: self._doubt(row, q))
        return (0.45 * self._doubt(row, p), Move(me, "peek", target=me, pos=p))

    def _lock(self, view: CrescendoView, me: str, row: list[Slot]) -> tuple[float, Move]:
        locked = view.locked[view.me]
        best: tuple[float, Move] = (-1.0, Move(me, "lock"))
        for p, s in enumerate(row):
            if locked[p]:
                continue
            if s.joker >= 1.0:
                worth = 0.35  # keep a Joker from being swapped away
            elif not s.known:
                worth = 0.45 * self._doubt(row, p) + 0.05  # locking shows me the card too
            else:
                worth = 0.05 if self._doubt(row, p) == 0 else 0.0
            if worth > best[0]:
                best = (worth, Move(me, "lock", pos=p))
        return best

    def _exchange(self, view: CrescendoView, me: str, beliefs: Beliefs, row: list[Slot]) -> tuple[float, Move]:
        """Swap one of my face-down cards with another player's: fix my row and hurt theirs."""
        best: tuple[float, Move] = (-1.0, Move(me, "exchange"))
        my_locked = view.locked[view.me]
        leader = max(range(len(view.players)), key=lambda s: (view.totals[s], s != view.me))
        for other in range(len(view.players)):
            if other == view.me:
                continue
            theirs = beliefs.rows[other]
            weight = 0.5 if other == leader or other == view.caller else 0.25
            for q, incoming in enumerate(theirs):
                if view.locked[other][q]:
                    continue
                for p, outgoing in enumerate(row):
                    if my_locked[p]:
                        continue
                    gain = -replace_delta(row, p, incoming) + weight * replace_delta(theirs, q, outgoing)
                    if gain > best[0]:
                        best = (gain, Move(me, "exchange", pos=p, target=view.players[other], target_pos=q))
        return best

    def _final(self, view: CrescendoView, me: str, beliefs: Beliefs, row: list[Slot]) -> Move:
        options: list[tuple[float, Move]] = [(1.0, Move(me, "pass"))]
        options.append((self._reserve_gain(view, beliefs, row) - 0.1, Move(me, "draw", source="reserve")))
        top = view.discard[0] if view.discard else None
        if top is not None:
            gain, pos = self._placements(view, row, known_slot(top))
            if pos is not None:
                options.append((gain, Move(me, "draw", source="discard")))
        legal = set(view.legal)
        options = [o for o in options if o[1] in legal]
        if not options:
            return _fallback(view.legal)
        return max(options, key=lambda o: o[0])[1]


def _fallback(legal: Sequence[Move]) -> Move:
    """A harmless legal move: pass, draw from the Reserve, discard, then anything but a NUMBER claim."""
    for action in ("setup_pass", "pass", "discard", "draw"):
        for m in legal:
            if m.action == action:
                return m
    for m in legal:
        if m.action not in ("number", "number_tie"):
            return m
    return legal[0]
