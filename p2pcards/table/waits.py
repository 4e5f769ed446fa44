"""What a peer waits on, sans-IO: who owes what and since when, and which frames to ask for again.

What a seat owes is public (protocol.md §12.4): the seats that have not said ready before the
first round, then whatever blocks the round first (`Round.owed`). The watchdog blames a stall
that outlasts the time-out; a seat we voted gone, or any seat while its link is missing, is the
vote's to settle, not the time-out's (§14.4, §14.9). A frame that never reached us shows as a
gap, or as a seat we wait on, or as every chain quiet, for PROBE_S: its next places are asked
for (§18.5).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable
from typing import Final

from .recovery import Gap, find_gaps
from .round import Round, Watchdog

PROBE_S: Final = 1.0  # how long we wait on a seat before we ask whether a frame of it was lost
WATCH_S: Final = 0.25  # how often frames wake the watchdog: what is owed costs more to find than a frame to take


class Waits:
    """The seats seat `me` of `seats` waits on, its watchdog, and since when no chain has grown."""

    def __init__(self, seats: int, me: int, timeout: float) -> None:
        self.seats = seats
        self.me = me
        self.dog = Watchdog(timeout)
        self.heads: tuple[int, ...] = ()  # how much of every chain we held when we last looked
        self.quiet_since = 0.0  # since when no chain has grown
        self.watched = -math.inf  # when we last looked

    def due(self, now: float) -> bool:
        """Whether a frame taken at `now` should wake the watchdog (at most every WATCH_S; a tick always does)."""
        return now - self.watched >= WATCH_S

    def heard(self, heads: tuple[int, ...], now: float) -> None:
        """How much of every chain we hold at `now` (we look now): a chain that grew ends the quiet."""
        self.watched = now
        if heads != self.heads:
            self.heads, self.quiet_since = heads, now

    def owed(self, rnd: int, rs: Round | None, ready: set[int], now: float,
             tolerance: float) -> tuple[frozenset[int], tuple[int, ...]]:
        """The other seats that hold up what we are waiting for in round `rnd`, and a mark: the round, what
        is owed (an index of OWED) and how much of it came. A new round is never the old round's stall."""
        owed: set[int]
        mark: tuple[int, ...]
        if rs is None:
            owed, mark = set(range(self.seats)) - ready, (0, len(ready))
        else:
            owed, mark = rs.owed(now, tolerance)
        owed.discard(self.me)
        return frozenset(owed), (rnd, *mark)

    def late(self, now: float, owed: frozenset[int], mark: tuple[int, ...], voted: set[int],
             absent: set[int], ahead: frozenset[int] = frozenset()) -> list[int]:
        """The seats to blame for a stall now: none while things move, while we wait on a seat we `voted`
        gone, or while any seat is `absent` (its link missing): what another seat owes may wait on it.

        Except `ahead`: the seats whose votes put out the seats we voted gone from a round past ours. Each
        says it holds every result of our round, so a stall of ours on a seat voted gone that outlasts the
        time-out is theirs (nothing else would ever end it: the votes wait for our round to be done)."""
        if absent:
            return self.dog.watch(now, frozenset(), mark)
        if owed & voted:
            answerable = bool(ahead) and owed <= voted  # only seats we voted gone hold our round up
            return self.dog.watch(now, owed, mark, ahead) if answerable else self.dog.watch(now, frozenset(), mark)
        return self.dog.watch(now, owed, mark)

    def gaps(self, now: float, held: Iterable[tuple[int, int]], named: Iterable[tuple[int, int]],
             received: Callable[[int], int]) -> list[Gap]:
        """What we miss of the other seats' chains: below each frame `held` ahead of its chain, each move an
        order `named` that we never took, and the next places of a seat we waited on (or of every seat,
        when no chain has grown) for PROBE_S."""
        ahead: dict[int, set[int]] = {}
        for seat, seq in held:
            ahead.setdefault(seat, set()).add(seq)
        for seat, seq in named:
            ahead.setdefault(seat, set()).add(seq + 1)  # as if the frame after it were held
        tails: set[int] = set()
        if self.dog.since is not None and now - self.dog.since >= PROBE_S:
            tails |= self.dog.owed
        if now - self.quiet_since >= PROBE_S:
            tails |= set(range(self.seats))  # nothing new from anyone: a frame only we miss (a move to order) may hold us
        ahead.pop(self.me, None)
        return find_gaps(ahead, received, tails - {self.me})
