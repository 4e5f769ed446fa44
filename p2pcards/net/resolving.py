"""Which announced names a browser resolves, and when, sans-IO: a bounded number at once, the rest waiting in turn.

A name the browser reports (new, or its records changed) is resolved in one of MAX_RESOLVING slots, each held until
its records are known or RESOLVE_S passes. While every slot is taken it waits, with at most MAX_WAITING names in
all: names not tried since they were reported go first, in the order reported, then those whose query went
unanswered once, in order, and so on; a name unanswered k times is not tried again before RETRY_S * 2 ** (k - 1) s
have passed, and after MAX_TRIES unanswered queries it is forgotten until the browser reports it again. With more
than MAX_WAITING names waiting, the one unanswered most often (the oldest of them) is dropped.

So however many names never answer, a name reported with at most MAX_WAITING - 1 untried names waiting ahead of it
is tried within RESOLVE_S * ceil(MAX_WAITING / MAX_RESOLVING) = WAIT_BOUND_S s (each slot takes one untried name
in turn at least every RESOLVE_S), unless MAX_WAITING other names are reported (new, or changed) in the meantime:
a flood of names is resolved at a bounded rate, held in bounded memory, and cannot keep a name reported after it
waiting for good (protocol.md §17, "Resolving under a flood").
"""

from __future__ import annotations

import math
from collections import OrderedDict
from typing import Final

MAX_RESOLVING: Final = 256  # names resolved at once: each is a query of ours on the network
MAX_WAITING: Final = 1024  # names waiting for a slot
RESOLVE_S: Final = 3.0  # how long a slot waits for a name's records
RETRY_S: Final = 5.0  # the wait after a name's first unanswered query, doubled after each next one
MAX_TRIES: Final = 5  # unanswered queries before a name is forgotten
WAIT_BOUND_S: Final = RESOLVE_S * math.ceil(MAX_WAITING / MAX_RESOLVING)


class ResolveQueue:
    """The names being resolved and those waiting for a slot; every method takes the time `now` (monotonic s)."""

    def __init__(self, slots: int = MAX_RESOLVING, room: int = MAX_WAITING) -> None:
        self.slots = slots
        self.room = room
        self._busy: dict[str, int] = {}  # being resolved: unanswered queries before this one
        self._again: set[str] = set()  # busy names reported changed since their query began: resolved once more
        self._gone: set[str] = set()  # busy names said goodbye since: not tried again
        # waiting: one queue per number of unanswered queries, each name -> when it may be tried; a name is appended
        # with that time now + a wait fixed per queue, so each queue's times only grow and its head is due first
        self._waiting: list[OrderedDict[str, float]] = [OrderedDict() for _ in range(MAX_TRIES)]
        self._where: dict[str, int] = {}  # waiting name -> its queue

    @property
    def busy(self) -> int:
        """How many names are being resolved."""
        return len(self._busy)

    @property
    def waiting(self) -> int:
        """How many names wait for a slot."""
        return len(self._where)

    def offer(self, name: str, now: float) -> None:
        """The browser reports `name` new or changed: it is resolved (again) when its turn comes, as untried."""
        if name in self._busy:
            self._again.add(name)
            self._gone.discard(name)
        elif self._where.get(name) != 0:
            self._wait(name, 0, now)

    def forget(self, name: str) -> None:
        """`name` said goodbye or expired: not resolved again until it is reported again."""
        if name in self._busy:
            self._gone.add(name)
            self._again.discard(name)
        elif name in self._where:
            del self._waiting[self._where.pop(name)][name]

    def start(self, now: float) -> str | None:
        """The next name to resolve, now taking a slot: the first due of the fewest unanswered queries; None when
        every slot is taken or no name is due."""
        if len(self._busy) >= self.slots:
            return None
        for tries, queue in enumerate(self._waiting):
            if queue:
                name, due = next(iter(queue.items()))
                if due <= now:
                    del queue[name], self._where[name]
                    self._busy[name] = tries
                    return name
        return None

    def done(self, name: str, answered: bool, now: float) -> None:
        """`name`'s query ended, its records known (`answered`) or not: its slot is free again."""
        tries = self._busy.pop(name, None)
        if tries is None:
            return
        if name in self._again:
            self._again.discard(name)
            self._wait(name, 0, now)
        elif name in self._gone:
            self._gone.discard(name)
        elif not answered and tries + 1 < MAX_TRIES:
            self._wait(name, tries + 1, now + RETRY_S * 2 ** tries)

    def wake_at(self) -> float | None:
        """When a waiting name falls due while a slot is free; None when no slot is free (a `done` frees one) or no
        name waits (an `offer` brings one)."""
        if len(self._busy) >= self.slots:
            return None
        return min((next(iter(q.values())) for q in self._waiting if q), default=None)

    def _wait(self, name: str, tries: int, due: float) -> None:
        """Put `name` at the back of the queue for `tries`, due at `due`; past the room, drop the oldest of the most
        unanswered."""
        if name in self._where:
            del self._waiting[self._where[name]][name]
        self._waiting[tries][name] = due
        self._where[name] = tries
        if len(self._where) > self.room:
            queue = next(q for q in reversed(self._waiting) if q)
            del self._where[queue.popitem(last=False)[0]]
