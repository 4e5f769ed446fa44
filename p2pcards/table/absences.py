"""When our network layer missed each seat's link: what it says is missing, back, or was silent a while.

A stamp is judged against when a frame reached us (protocol.md §9.2); a frame that crossed a
link we missed came late through no one's fault (§14.10, §18.5). One span per seat is enough:
the last one, widened by a silence that overlaps it. Whether the other end closed the link as
the span began (its end of stream or reset reached us: our own network works) tells a seat cut
off from one whose every other seat died at once (§14.9).
"""

from __future__ import annotations

import math


class Absences:
    """One span (from, until) per seat: the last time its link was missing (until is inf while it is)."""

    def __init__(self) -> None:
        self.spans: dict[int, tuple[float, float]] = {}
        self.closed: set[int] = set()  # the seats whose last span began with the other end closing the link

    def missing(self, seat: int, now: float, closed: bool = False) -> None:
        """The link of `seat` is missing from `now` on (lost or quiet; `closed`: closed by the other end); said again
        while it is missing (as when we come back from our journal), a link closed by the other end stays so."""
        closed = closed or seat in self.closed and self.now(seat)
        self.spans[seat] = (now, math.inf)
        (self.closed.add if closed else self.closed.discard)(seat)

    def back(self, seat: int, now: float) -> None:
        """The link of `seat` is back at `now`."""
        if seat in self.spans:
            self.spans[seat] = (self.spans[seat][0], now)

    def silent(self, seat: int, since: float, until: float) -> None:
        """Nothing at all came on the link of `seat` from `since` to `until`."""
        start, end = self.spans.get(seat, (since, until))
        if end < since or seat not in self.spans:
            self.closed.discard(seat)  # a span of its own: a silence
        self.spans[seat] = (since if end < since else min(start, since), max(end, until))

    def now(self, seat: int) -> bool:
        """Whether the link of `seat` is missing now."""
        return self.spans.get(seat, (0.0, 0.0))[1] == math.inf

    def since(self, seat: int, t: float) -> bool:
        """Whether the link of `seat` was missing at some time from `t` on."""
        return self.spans.get(seat, (0.0, -math.inf))[1] >= t
