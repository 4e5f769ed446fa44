"""A good Crisp bot: plays from its own view only, estimating unseen cards from the cards not yet seen."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from ..cards import CRISP_DECK, crisp_rank, crisp_value
from ..games.base import Move
from ..games.crisp import CrispView
from .base import View

FACES = frozenset({"J", "Q", "K"})
MIDDLE = 1
# A caller's hand totals about 11 at the reveal in good play (its cards average well below an unseen card's).
CALLER_TOTAL = 11.0


@dataclass(frozen=True, slots=True)
class Pool:
    """The cards this player has not seen anywhere: their hand values' mean and variance."""

    mean: float
    var: float
    size: int


def visible_faces(view: CrispView) -> list[str]:
    """Every face the view shows: known hand cards, the discard pile, known draw-pile cards, the drawn card."""
    faces = [f for hand in view.known for f in hand if f is not None]
    faces += [f for f in view.discard if f is not None]
    faces += [f for f in view.draw_pile if f is not None]
    if view.drawn is not None:
        faces.append(view.drawn)
    return faces


def unseen_pool(view: CrispView) -> Pool:
    """Mean and variance of a hand card's value over the 52-card deck minus every face visible in the view."""
    seen = set(visible_faces(view))
    values = [crisp_value(c) for c in CRISP_DECK if c not in seen]
    if not values:
        return Pool(6.5, 10.0, 0)
    mean = sum(values) / len(values)
    var = sum((v - mean) ** 2 for v in values) / len(values)
    return Pool(mean, var, len(values))


def caller_slot(hand: Sequence[str | None]) -> float:
    """A caller's unseen card: what its hand would need for the total a caller typically has."""
    unknown = sum(1 for f in hand if f is None)
    known = sum(crisp_value(f) for f in hand if f is not None)
    return max(1.0, (CALLER_TOTAL - known) / unknown) if unknown else 0.0


def last_turn(view: CrispView) -> bool:
    """True on my final turn after another player's call: only the total counts now, knowing a card is worth nothing."""
    return view.caller is not None and view.caller != view.me and view.turn == view.me


def _phi(x: float) -> float:
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


class CrispBot:
    """Remembers through its view, replaces its worst card, uses Jacks and Queens, calls crisp when likely lowest."""

    def __init__(self, call_confidence: float = 0.62, queen_margin: float = 2.5, patience: float = 0.03,
                 final_gain: float = 1.0, head_to_head_turns: int = 3, overwhelming: float = 0.95) -> None:
        self.call_confidence = call_confidence
        self.queen_margin = queen_margin
        self.patience = patience
        self.final_gain = final_gain
        # Two seats: no call in the windows of its first turns of a round unless the estimate is overwhelming (a
        # call in its very first window ended the round before a person had played much, abruptly).
        self.head_to_head_turns = head_to_head_turns
        self.overwhelming = overwhelming
        # The view does not count turns; the bot remembers its own turns in this round (when each opened).
        self.round = 0
        self.turns: set[float] = set()

    def _count_turn(self, view: CrispView) -> int:
        """How many of my turns this round have begun (a round nobody calls in would never end)."""
        if view.round != self.round:
            self.round = view.round
            self.turns = set()
        if view.turn == view.me and view.phase is not None:
            self.turns.add(view.opens_at)
        return len(self.turns)

    def _too_soon(self, view: CrispView, turns: int) -> bool:
        """True at two seats in the window of one of my first `head_to_head_turns` turns of the round (a window
        still open as my next turn comes due is that of the turn before)."""
        played = turns - (1 if view.turn == view.me and view.phase is not None else 0)
        return len(view.players) == 2 and played < self.head_to_head_turns

    # ---------------------------------------------------------------- estimates

    def slot_values(self, view: CrispView, seat: int, pool: Pool) -> list[float]:
        """Estimated value of each slot of `seat`: the face when known, else the pool's mean (a caller's: lower)."""
        hand = view.known[seat]
        unseen = pool.mean
        if seat == view.caller and seat != view.me:
            unseen = min(unseen, caller_slot(hand))
        return [float(crisp_value(f)) if f is not None else unseen for f in hand]

    def total_estimate(self, view: CrispView, seat: int, pool: Pool) -> tuple[float, float]:
        """Estimated total of `seat`'s hand and its variance."""
        hand = view.known[seat]
        unknown = sum(1 for f in hand if f is None)
        return sum(self.slot_values(view, seat, pool)), unknown * pool.var

    def p_lowest(self, view: CrispView, pool: Pool) -> float:
        """Probability (normal approximation) that this player's total is strictly the lowest at the table."""
        mine, my_var = self.total_estimate(view, view.me, pool)
        p = 1.0
        for seat in range(len(view.players)):
            if seat == view.me:
                continue
            theirs, their_var = self.total_estimate(view, seat, pool)
            theirs -= self.final_gain  # each other player gets one more turn to improve after my call
            sd = math.sqrt(my_var + their_var)
            gap = theirs - mine - 0.5  # strictly lower: a tie loses
            p *= _phi(gap / sd) if sd > 0 else (1.0 if gap > 0 else 0.0)
        return p

    # ---------------------------------------------------------------- choice

    def choose(self, view: View) -> Move | None:
        """The move to make now from this view alone, or None to let time pass."""
        if not isinstance(view, CrispView):
            raise TypeError("CrispBot plays Crisp only")
        legal = view.legal
        if not legal:
            return None
        me = view.players[view.me]
        pool = unseen_pool(view)
        turns = self._count_turn(view)
        if view.can_call and view.phase in (None, "draw_due"):
            # My window outlives the turns after mine (with a short next-start delay even up to my own
            # next turn, not yet begun). Less and less demanding as the round drags on, so that tables
            # of good bots end their rounds.
            needed = max(0.0, self.call_confidence - self.patience * max(0, turns - 4))
            if self._too_soon(view, turns):
                needed = max(needed, self.overwhelming)
            if turns >= 25 or self.p_lowest(view, pool) >= needed:
                return Move(me, "crisp")
            if view.phase is None or all(m.action == "crisp" for m in legal):
                return None  # my turn not yet open: wait (a call is no move to fall back on)
        if view.phase is None:
            return None
        if view.phase == "draw_due":
            return self._draw(view, me, pool, legal)
        if view.phase == "drawn_discard":
            return _pick(legal, self._best_replace(view, me, pool, view.drawn, must=True))
        return self._resolve(view, me, pool, legal)

    def _draw(self, view: CrispView, me: str, pool: Pool, legal: Sequence[Move]) -> Move:
        take = Move(me, "draw", source="discard")
        if take in legal and view.discard and view.discard[0] is not None:
            top = crisp_value(view.discard[0])
            worst = max(self.slot_values(view, view.me, pool))
            if worst - top >= 4 or (top <= 2 and worst - top >= 2.5):
                return take
        return _pick(legal, Move(me, "draw", source="pile"))

    def _best_replace(self, view: CrispView, me: str, pool: Pool, drawn: str | None, must: bool) -> Move | None:
        """Replace the slot whose estimated value is highest with the drawn card, when it is a gain."""
        if drawn is None:
            return None
        value = crisp_value(drawn)
        final = last_turn(view)
        best: tuple[float, int] | None = None
        for slot, est in enumerate(self.slot_values(view, view.me, pool)):
            unknown = view.known[view.me][slot] is None
            gain = est - value + (0.6 if unknown and not final else 0.0)  # knowing a card is worth a little too
            if best is None or gain > best[0]:
                best = (gain, slot)
        assert best is not None
        if must or best[0] > (0.0 if final else 0.5):
            return Move(me, "replace", pos=best[1])
        return None

    def _resolve(self, view: CrispView, me: str, pool: Pool, legal: Sequence[Move]) -> Move:
        drawn = view.drawn
        rank = crisp_rank(drawn) if drawn is not None else None
        if rank == "K":
            return _pick(legal, Move(me, "king"))
        if rank == "J":
            if view.known[view.me][MIDDLE] is None and not last_turn(view):
                return _pick(legal, Move(me, "jack"))
            return _pick(legal, Move(me, "discard"))
        if rank == "Q":
            return _pick(legal, self._queen(view, me, pool) or Move(me, "discard"))
        move = self._best_replace(view, me, pool, drawn, must=False)
        return _pick(legal, move or Move(me, "discard"))

    def _queen(self, view: CrispView, me: str, pool: Pool) -> Move | None:
        """Give away a high card for another player's card likely lower; known low targets first."""
        mine = self.slot_values(view, view.me, pool)
        best: tuple[float, Move] | None = None
        leader = _leader(view)
        final = last_turn(view)
        for seat in range(len(view.players)):
            if seat == view.me:
                continue
            theirs = self.slot_values(view, seat, pool)
            for t, their_value in enumerate(theirs):
                known = view.known[seat][t] is not None
                for s, my_value in enumerate(mine):
                    gain = my_value - their_value
                    if seat == view.caller and final:
                        gain *= 2  # the caller's loss counts too: it may cost them the strictly lowest total
                    elif not known:
                        gain -= 0.75  # an unseen card is a gamble
                    if not final:
                        if view.known[view.me][s] is None and s != MIDDLE:
                            gain -= 0.25
                        if s != MIDDLE:
                            gain += 0.3  # I will see the card I get
                        if t == MIDDLE:
                            gain += 0.2  # they will not see the card they get
                    if seat == view.caller or seat == leader:
                        gain += 0.3
                    if best is None or gain > best[0]:
                        best = (gain, Move(me, "queen", pos=s, target=view.players[seat], target_pos=t))
        if best is not None and best[0] >= (1.0 if final else self.queen_margin):
            return best[1]
        return None


def _leader(view: CrispView) -> int | None:
    """The seat with the lowest running total (the one to stop), other than me."""
    others = [s for s in range(len(view.players)) if s != view.me]
    if not others or not view.totals:
        return None
    return min(others, key=lambda s: view.totals[s])


def _pick(legal: Iterable[Move], want: Move | None) -> Move:
    """`want` when it is legal, otherwise a safe legal fallback (never an illegal move)."""
    options = list(legal)
    if want is not None and want in options:
        return want
    for action in ("discard", "king", "replace", "draw"):
        for m in options:
            if m.action == action:
                return m
    return options[0]
