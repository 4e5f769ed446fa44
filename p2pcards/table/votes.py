"""The votes that put seats out of the table, sans-IO (protocol.md §14.9).

Each seat's first `gone` naming a seat is its vote, with the round it was signed in; a later one
is ignored and none is withdrawn. A set of seats G *qualifies* when every seat outside it voted
every seat of it gone. A peer decides G out when G qualifies and some seat R outside G is a
*witness* that no larger set will: R voted no seat outside G gone, for good. That is us (what we
voted is all we will vote here, since we sign nothing more at this table once we decide), or a
seat whose `out` naming G we hold (its last frame at this table; every vote before it is held)
and that we did not vote gone ourselves (unless the `out` names us: we are out, and decide for no one
else). Every peer that decides signs that `out`. So two peers
that both stay at the table decide the same set, whatever order the votes came in: a set G'
that qualified with G's witness R outside it lies within what R voted, which is within G.
A peer cut off from every other seat at once is no witness of its own (`cut_off`): it follows an
`out` only, and one it never hears decides nothing.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .config import SEATS, TableConfig


@dataclass(frozen=True)
class Departure:
    """Seats `out` are out of the table and round `void` is void: the table goes on from it without them."""

    out: tuple[int, ...]
    void: int


class Votes:
    """Who voted which seat gone, and in which round, and who said which seats it put out, at a table of
    `seats` whose first round is `first`, seen from seat `me` (a witness: past the last seat)."""

    def __init__(self, seats: int, first: int, me: int) -> None:
        self.seats = seats
        self.first = first  # a vote before the table's first round voids that round
        self.me = me
        self.cast: dict[int, dict[int, int]] = {}  # seat voted gone -> voter -> the round it voted in
        self.outs: dict[int, tuple[int, ...]] = {}  # seat -> the seats its `out` put out (its last word here)
        self.totals_at: dict[int, tuple[int, ...]] = {}  # round -> the totals it began with, here
        self.cut_off = False  # we are never our own witness: every other seat went missing at once (§14.9)

    def take(self, voter: int, seat: int, rnd: int) -> bool:
        """Count `voter`'s vote that `seat` is gone, signed in round `rnd`; False when it voted so already,
        or said its `out` before (nothing it signs after counts)."""
        votes = self.cast.setdefault(seat, {})
        if voter in votes or voter in self.outs:
            return False
        votes[voter] = rnd
        return True

    def take_out(self, seat: int, out: Iterable[int]) -> bool:
        """Note that `seat` put the seats `out` out of this table; False for a second `out` (ignored)."""
        if seat in self.outs:
            return False
        self.outs[seat] = tuple(sorted(set(out)))
        return True

    def held(self) -> tuple[tuple[int, int, int], ...]:
        """Every vote held: (seat voted gone, voter, round)."""
        return tuple((seat, voter, rnd) for seat, votes in sorted(self.cast.items())
                     for voter, rnd in sorted(votes.items()))

    def by(self, voter: int) -> set[int]:
        """The seats `voter` voted gone."""
        return {seat for seat, votes in self.cast.items() if voter in votes}

    def qualifies(self, out: Sequence[int]) -> bool:
        """Whether every seat outside `out` (not empty, not every seat) voted every seat of it gone."""
        rest = set(range(self.seats)) - set(out)
        return bool(out) and bool(rest) and all(rest <= self.cast.get(g, {}).keys() for g in out)

    def decided(self) -> Departure | None:
        """The seats out, with the void round (the highest round named by the votes of the seats that remain
        on them; none before the table's first), or None while no set qualifies with a witness to it."""
        mine = self.by(self.me)
        sets = [tuple(sorted(mine))] if self.me < self.seats and mine and not self.cut_off else []
        # An `out` naming us is followed even from a seat we voted gone (a cut-off seat voted every seat gone): it
        # moves no one else, since a seat put out signs no `out` and plays on nowhere.
        sets += [out for seat, out in self.outs.items()
                 if seat not in out and (seat not in mine or self.me in out) and self.by(seat) <= set(out)]
        for out in sorted(set(sets), key=lambda s: (len(s), s)):
            if self.qualifies(out):
                rest = set(range(self.seats)) - set(out)
                return Departure(out, max(self.first, *(self.cast[g][s] for g in out for s in rest)))
        return None

    def ahead(self, rnd: int) -> frozenset[int]:
        """The seats that remain by the departure the votes decide whose vote on it was signed in a round after
        `rnd`: each says it holds every seat's result of round `rnd` (it began a later round), so it can
        give them to a peer still in round `rnd`, which waits on them before it may decide (`due`)."""
        dep = self.decided()
        if dep is None:
            return frozenset()
        return frozenset(voter for g in dep.out for voter, r in self.cast[g].items() if voter not in dep.out and r > rnd)

    def began(self, rnd: int, totals: Sequence[int]) -> None:
        """We began round `rnd` with these totals."""
        self.totals_at[rnd] = tuple(totals)

    def due(self, rnd: int, done: bool, totals: Sequence[int]) -> tuple[Departure, tuple[int, ...]] | None:
        """The departure the votes decide and the totals before its void round, once we are in round `rnd`
        (`done`: its result is settled, with `totals`) and may decide it: in the void round or after it
        (a voter goes on playing), or in the round before it once that is done; None until then."""
        dep = self.decided()
        if dep is None:
            return None
        if rnd >= dep.void and dep.void in self.totals_at:
            return dep, self.totals_at[dep.void]
        if rnd == dep.void - 1 and done:
            return dep, tuple(totals)
        return None  # the rounds before the void one are still being finished here


def going_on(cfg: TableConfig, dep: Departure, totals: Sequence[int],
             dealer: int) -> tuple[TableConfig, tuple[tuple[int, ...], int]] | None:
    """The table that goes on without the seats out, from the void round that seat `dealer` was to deal,
    and what it carries: the totals before that round; None when too few seats remain for the game."""
    keep = [s for s in range(cfg.seats) if s not in dep.out]
    if len(keep) < SEATS[cfg.game][0]:
        return None
    return cfg.without(dep.out, dep.void, dealer), (tuple(totals[s] for s in keep), dep.void - 1)
