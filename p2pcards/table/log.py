"""One round's log: the moves that arrived, the orders that place them, and the entries still to apply.

The round's orderer stamps each move (or tied claims, a tick, the deal) with its clock and
signs an order; every peer checks each order against its own clock and the moves it saw, and
hashes the orders into the log hash the round's result signs. Moves wait here until ordered;
entries wait until the engine applies them (after the reveals they need).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from ..crypto.encoding import digest
from ..errors import MalformedMessage
from ..games.base import Move, ms_at_or_after
from .bodies import EntryKind, Order, Ref

LOG_PERSON = b"p2pc/log/v1"
# Our move not ordered in time goes out again: one lost on its way to the orderer alone leaves a gap that no one
# sees (protocol.md §18.5). In time is what our moves' orders have taken to come back from this orderer, but no
# less than RESEND_S (a move lost on a fast link is sent again soon) and no more than RESEND_MAX_S (a copy of a
# move lost on its way must still reach the orderer within the slack of the others' checks, §18.6). Copies
# keep that pace while one would still come within the slack; then each waits twice the last, up to RESEND_CAP_S.
# A move sent again times nothing when its order comes (Karn's rule): the next wait longer until one sent once does.
RESEND_S = 0.5
RESEND_MAX_S = 1.0
RESEND_CAP_S = 4.0
MAX_MOVES = 1024  # moves one seat may send in one round: a flood of valid moves costs bounded memory and CPU


class Pace:
    """How long our moves take to come back ordered from each orderer, smoothed as TCP times its round trips
    (RFC 6298), and so how long one may take before it is overdue and sent again."""

    def __init__(self) -> None:
        self._took: dict[int, tuple[float, float]] = {}  # orderer -> (smoothed time, smoothed deviation)
        self._backed_off: dict[int, float] = {}  # orderer -> the least wait, until a move sent once times its link

    def took(self, orderer: int, seconds: float) -> None:
        """One of our moves, sent once, came back ordered by `orderer` `seconds` after we sent it."""
        self._backed_off.pop(orderer, None)
        if orderer not in self._took:
            self._took[orderer] = (seconds, seconds / 2)
            return
        mean, dev = self._took[orderer]
        self._took[orderer] = (0.875 * mean + 0.125 * seconds, 0.75 * dev + 0.25 * abs(mean - seconds))

    def sent_again(self, orderer: int, wait: float) -> None:
        """One of our moves came back ordered by `orderer` after we sent it again, the last copy `wait` after the
        one before: which copy the order answers is unknown, so it times nothing (Karn's rule, RFC 6298 §3), and
        our next moves wait twice that (§5.5) until one sent once comes back."""
        self._backed_off[orderer] = max(self._backed_off.get(orderer, 0.0), 2 * wait)

    def wait(self, orderer: int) -> float:
        """How long a move of ours may wait for `orderer`'s order before a copy goes (RESEND_S until we know)."""
        mean, dev = self._took.get(orderer, (0.0, 0.0))
        return min(max(mean + 4 * dev, RESEND_S, self._backed_off.get(orderer, 0.0)), RESEND_MAX_S)


@dataclass(frozen=True, slots=True)
class Entry:
    """One place in a round's log, as the orderer stamped it."""

    index: int
    time: float
    kind: EntryKind
    refs: tuple[Ref, ...]


class Log:
    """The moves and orders of one round, for `seats` seats, checked against our clock.

    `tolerance` is how far the orderer's clock may be from ours. `slack` is how much later than
    us a frame may reach the orderer, or reach us from it: a slow or lossy link (a frame asked
    for again) delays a move's stamp or an order by up to that much without anyone's fault.
    """

    def __init__(self, seats: int, tolerance: float, tie_window: float = 0.0,
                 ties: Callable[[Move], bool] = lambda move: False, slack: float = 0.0,
                 away: Callable[[int, float], bool] = lambda seat, since: False, orderer: int = 0,
                 start: float = 0.0, pace: Pace | None = None) -> None:
        self.seats = seats
        self.tolerance = tolerance
        self.slack = slack
        self.away = away  # whether a seat's link to us was missing (or cut a while) at some time since the one given
        self.orderer = orderer
        self.tie_window = tie_window
        self.ties = ties  # which moves may tie with others' (the orderer waits `tie_window` for them)
        self.moves: dict[Ref, Move] = {}  # until applied
        self.frames: dict[Ref, bytes] = {}  # each move's signed frame, relayed in its order (until ordered)
        self.arrived: dict[Ref, float] = {}  # until ordered
        self.unseen: set[Ref] = set()  # moves that reached us only sent again: their arrival times nothing
        self.sent_by = [0] * seats  # moves each seat sent this round
        self.inbox: list[Ref] = []  # orderer only: moves not yet ordered
        self.ordered: set[Ref] = set()
        self.last_seq: dict[int, int] = {}  # the last move of each seat that was ordered
        self.own_unordered: set[Ref] = set()
        self.resent: dict[Ref, tuple[float, float]] = {}  # our unordered moves sent again: when last, after what wait
        self.pace = pace or Pace()  # how long our orders take to come back (kept from round to round)
        self.issued = 0  # orderer only: orders sent so far
        self.issued_time = start  # the game's clock: no entry goes before the rounds before
        self.entries: deque[Entry] = deque()  # ordered, not yet applied
        self.next_index = 0
        self.last_time = start
        self.back = 0.0  # when we came back from a crash: what was stamped before, only the others can time
        self.passed_at: float | None = None  # our clock when we made our pass of deck 0 (no deal comes before it)
        self._hash = bytes(32)

    @property
    def log_hash(self) -> bytes:
        """The hash chain of every order taken so far."""
        return self._hash

    @property
    def settled(self) -> bool:
        """Every order issued (by us, if we order) is taken and applied."""
        return not self.entries and self.issued == self.next_index

    def add_move(self, ref: Ref, move: Move, frame: bytes, now: float, mine: bool, ordering: bool,
                 live: bool = True) -> None:
        """A move arrived (ours too, once sent); `ordering`: we are the orderer and will place it; not
        `live`: it came sent again (protocol.md §18.5), so its arrival is no measure of its stamp.

        MalformedMessage (its sender's fault) beyond MAX_MOVES moves of one seat in a round.
        """
        if self.sent_by[ref[0]] >= MAX_MOVES:
            raise MalformedMessage(f"more than {MAX_MOVES} moves in one round")
        self.sent_by[ref[0]] += 1
        self.moves[ref] = move
        self.frames[ref] = frame
        self.arrived[ref] = now
        if not live and not ordering:  # the orderer stamps by its first copy, however it came, and judges no stamp
            self.unseen.add(ref)
        if mine:
            self.own_unordered.add(ref)
        if ordering:
            self.inbox.append(ref)

    def first_hand(self, ref: Ref, now: float) -> bool:
        """A move we took sent again came first hand at `now` (its player's own copy), before its order: its
        stamp is judged by that after all (a peer that relays another's move as sent again, ahead of the
        player's own copy, must not free its orderer from the bound); True when it was so."""
        if ref not in self.unseen:
            return False
        self.unseen.discard(ref)
        self.arrived[ref] = now
        return True

    def unordered_again(self, now: float) -> list[bytes]:
        """The frames of our moves whose order is overdue at `now` (`resend_due`): to send again."""
        due = [ref for ref in sorted(self.own_unordered) if ref in self.frames and now >= self._next_copy(ref)[0]]
        for ref in due:
            self.resent[ref] = (now, self._next_copy(ref)[1])
        return [self.frames[ref] for ref in due]

    def resend_due(self) -> float | None:
        """When the next copy of one of our unordered moves is due (None: none waits)."""
        times = [self._next_copy(ref)[0] for ref in self.own_unordered if ref in self.frames]
        return min(times) if times else None

    def _next_copy(self, ref: Ref) -> tuple[float, float]:
        """When our move `ref` is next sent again, and after what wait since its last copy (or since we sent it)."""
        sent = self.arrived[ref]
        last, wait = self.resent.get(ref, (sent, 0.0))
        pace = self.pace.wait(self.orderer)
        if wait and last + pace - sent > self.slack:  # a copy now would come past the slack anyway: back off
            pace = max(pace, min(2 * wait, RESEND_CAP_S))
        return last + pace, pace

    # ------------------------------------------------------------ the orderer's side

    def stamp(self, kind: EntryKind, refs: Iterable[Ref], time: float) -> Order:
        """The next order to sign: `refs` placed at `time` (never before the last one), in whole milliseconds."""
        t = ms_at_or_after(max(time, self.issued_time))
        refs = tuple(refs)
        # The order carries the moves' own signed frames: every peer holds exactly what was ordered,
        # and a mover who signed two versions of one move is caught by whoever holds the other.
        order = Order(self.issued, int(round(t * 1000)), kind, refs, tuple(self.frames[r] for r in refs))
        self.issued += 1
        self.issued_time = t
        return order

    def claims_due(self) -> float | None:
        """When the orderer's wait for claims that tie with the first one in its inbox ends."""
        claims = [self.arrived[r] for r in self.inbox if self.ties(self.moves[r])]
        return min(claims) + self.tie_window if claims else None

    def next_order(self, now: float) -> tuple[EntryKind, list[Ref], float] | None:
        """The orderer's next entry from its inbox (taken out of it), or None (empty, or waiting for ties)."""
        if not self.inbox:
            return None
        ref = self.inbox[0]
        t0 = self.arrived[ref]
        if self.ties(self.moves[ref]):
            if now < t0 + self.tie_window:
                return None  # wait for claims that tie with this one
            claims = []
            for r in self.inbox:  # the claims at the head of the inbox: never one behind another move
                if not self.ties(self.moves[r]) or self.arrived[r] > t0 + self.tie_window:
                    break
                claims.append(r)
            if len(claims) > 1 and len({self.moves[r].player for r in claims}) == len(claims):
                for r in claims:
                    self.inbox.remove(r)
                return "tie", claims, t0
        self.inbox.pop(0)
        return "move", [ref], t0

    # ------------------------------------------------------------ everyone's side

    def take(self, order: Order, order_hash: bytes, now: float, live: bool = True) -> Entry:
        """Check an order that came at `now` against the log and our clock and queue its entry (not `live`:
        it came sent again, and when says nothing of its stamp); MalformedMessage when it is wrong."""
        i, t, kind, refs = order.index, order.time, order.kind, order.refs
        if i != self.next_index:
            raise MalformedMessage(f"order {i} where {self.next_index} is due")
        if t < self.last_time:
            raise MalformedMessage("an order stamped before the one it follows")
        if t > now + self.tolerance:
            raise MalformedMessage(f"an order stamped {t:.3f} s when our clock reads {now:.3f} s")
        # No deal is made before every seat's pass of deck 0, ours included. Judge a deal from when we made
        # ours, not from its arrival: checking the later passes' proofs on a busy machine can take seconds.
        since = now if kind != "deal" or self.passed_at is None else min(now, self.passed_at)
        blind = t < self.back  # stamped while we were away: when it reached us says nothing of its stamp
        # Nor does it when the orderer's link to us was missing (or cut for a while) since its stamp, or
        # when the order came sent again (an answer to our request: it was lost on its way).
        # A deal is judged by our pass, not by its arrival, so even one that came sent again.
        judged = live or kind == "deal" and self.passed_at is not None
        if (judged and not blind and not self.away(self.orderer, t) and kind not in ("move", "tie")
                and t < since - self.tolerance - self.slack):
            raise MalformedMessage(f"a {kind} stamped {t:.3f} s, long before our clock's {now:.3f} s")
        if (kind == "deal") != (i == 0) or (kind in ("move", "tie")) != bool(refs):
            raise MalformedMessage("the deal comes first and once; moves and ties name their moves")
        last = dict(self.last_seq)
        for seat, seq in refs:
            if (seat, seq) in self.ordered:
                raise MalformedMessage("an order names a move already ordered")
            if seq <= last.get(seat, -1):
                raise MalformedMessage("an order puts a player's moves out of the order they were sent in")
            last[seat] = seq
        early = self.tolerance + self.slack + (self.tie_window if kind == "tie" else 0.0)
        late = self.tolerance + self.slack
        for ref in refs:
            seen = None if ref in self.unseen else self.arrived.get(ref)
            # The orderer stamps a move when it arrived (a tie: when its first claim did), and never
            # before the entry it follows; the same broadcast reached us about then, give or take
            # the two links' difference. An orderer we found missing since the move reached us (a
            # crash, a lost link: protocol.md §14.10) stamps it when it got it, back.
            # A move that reached us long after its stamp came late from its player: fine if we missed
            # its player's link since then (a cut that healed: the move came after it).
            upper = now + late if seen is not None and self.away(self.orderer, seen) else max(seen or 0.0, self.last_time) + late
            lower = -math.inf if seen is not None and self.away(ref[0], t) else (seen or 0.0) - early
            if seen is not None and not blind and not lower <= t <= upper:
                raise MalformedMessage(f"move {ref} stamped {t:.3f} s; it reached us at {seen:.3f} s")
        self.last_seq = last
        self.next_index += 1
        self.last_time = t
        self.ordered.update(refs)
        for ref in sorted(self.own_unordered.intersection(refs)):
            if ref in self.resent:  # which of its copies the order answers, no one knows
                self.pace.sent_again(self.orderer, self.resent[ref][1])
            elif live and not blind:  # an order sent again times nothing
                self.pace.took(self.orderer, now - self.arrived.get(ref, now))
        self.own_unordered.difference_update(refs)
        for ref in refs:
            self.resent.pop(ref, None)
        self._hash = digest(LOG_PERSON, self._hash + order_hash)
        entry = Entry(i, t, kind, refs)
        self.entries.append(entry)
        return entry

    def forget(self, refs: Iterable[Ref]) -> None:
        """Ordered moves: their frames and arrival times are needed no more."""
        for ref in refs:
            self.frames.pop(ref, None)
            self.arrived.pop(ref, None)
            self.unseen.discard(ref)

    def applied(self) -> None:
        """The next entry is applied: its moves are needed no more."""
        for ref in self.entries.popleft().refs:
            self.moves.pop(ref, None)

    def head_moves(self) -> list[Move] | None:
        """The moves the next entry names, or None while one of them has not reached us."""
        e = self.entries[0]
        if any(ref not in self.moves for ref in e.refs):
            return None
        return [self.moves[ref] for ref in e.refs]

    def awaited(self) -> list[Ref]:
        """The moves the next entry names that have not reached us (none when no entry waits)."""
        return [ref for ref in self.entries[0].refs if ref not in self.moves] if self.entries else []

    def unordered(self) -> bool:
        """Some move we hold has not been ordered yet."""
        return any(ref not in self.ordered for ref in self.moves)
