"""The votes that put a seat out of the table, sans-IO (protocol.md §14.9).

Each seat's first `gone` naming a seat is its vote, with the round it was signed in; a later
one is ignored and none is withdrawn. What the votes decide is a function of the votes held
alone, so every honest peer that holds the same votes decides the same, whatever their order.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from .config import SEATS, TableConfig


@dataclass(frozen=True)
class Departure:
    """Seat `out` is out of the table and round `void` is void: the table goes on from it without `out`."""

    out: int
    void: int


class Votes:
    """Who voted which seat gone, and in which round, at a table of `seats` whose first round is `first`."""

    def __init__(self, seats: int, first: int) -> None:
        self.seats = seats
        self.first = first  # a vote before the table's first round voids that round
        self.cast: dict[int, dict[int, int]] = {}  # seat voted gone -> voter -> the round it voted in
        self.totals_at: dict[int, tuple[int, ...]] = {}  # round -> the totals it began with, here

    def take(self, voter: int, seat: int, rnd: int) -> bool:
        """Count `voter`'s vote that `seat` is gone, signed in round `rnd`; False when it voted so already."""
        votes = self.cast.setdefault(seat, {})
        if voter in votes:
            return False
        votes[voter] = rnd
        return True

    def held(self) -> tuple[tuple[int, int, int], ...]:
        """Every vote held: (seat voted gone, voter, round)."""
        return tuple((seat, voter, rnd) for seat, votes in sorted(self.cast.items())
                     for voter, rnd in sorted(votes.items()))

    def by(self, voter: int) -> set[int]:
        """The seats `voter` voted gone."""
        return {seat for seat, votes in self.cast.items() if voter in votes}

    def decided(self) -> Departure | None:
        """The lowest seat every other seat voted gone, with the void round: the highest round its votes
        name (none before the table's first), or None while no seat has every other seat's vote."""
        for out, votes in sorted(self.cast.items()):
            if set(votes) == set(range(self.seats)) - {out}:
                return Departure(out, max(self.first, *votes.values()))
        return None

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
    """The table that goes on without the seat out, from the void round that seat `dealer` was to deal,
    and what it carries: the totals before that round; None when too few seats remain for the game."""
    keep = [s for s in range(cfg.seats) if s != dep.out]
    if len(keep) < SEATS[cfg.game][0]:
        return None
    return cfg.without(dep.out, dep.void, dealer), (tuple(totals[s] for s in keep), dep.void - 1)
