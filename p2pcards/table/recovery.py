"""Lost frames, sans-IO: what to ask for and of whom, and how to answer another peer's request.

A peer's missing frames (`TablePeer.missing`) are asked for by sender and sequence number: first
of their sender, then of each other seat in turn, one ask every RETRY_S per gap, the first after
GRACE_S (a frame merely overtaken in transit arrives by then). A request names at most MAX_ASK
frames; it is answered with the very frames asked for that the answerer holds, marked as
sent again (their arrival times no stamp, §18.5), and a peer answers at most BURST requests at once from one asker, BURST more every
second. A gap that no one fills leaves us waiting on its sender, whom the time-out blames
(protocol.md, Part III, "Missing frames").
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Final

from ..crypto.encoding import Value, decode, encode
from ..crypto.envelope import MAX_TABLE_ID
from ..errors import MalformedMessage

GRACE_S: Final = 0.2
RETRY_S: Final = 0.5
MAX_ASK: Final = 64
MAX_REQUEST: Final = 96  # bytes: three ints of up to 9 bytes and a table id of up to 64, with headers
BURST: Final = 20.0  # requests answered at once per asker, refilled at this many per second

Gap = tuple[int, int, int]  # (sender's seat, first seq, last seq)
Ask = tuple[int, int, int, int]  # (seat asked, sender's seat, first seq, count)


def pack_request(table: bytes, sender: int, first: int, count: int) -> bytes:
    """A request on the wire: msgpack [sender's seat, first seq, count, table id]."""
    return encode([sender, first, count, table])


def parse_request(payload: bytes) -> tuple[bytes, int, int, int]:
    """(table id, sender's seat, first seq, count) of a request; MalformedMessage unless it is well formed
    (whether the table has that seat is for the answerer to check: it may be one it sat at before)."""
    v: Value = decode(payload, MAX_REQUEST)
    if not isinstance(v, list) or len(v) != 4 or not all(type(x) is int for x in v[:3]) \
            or not isinstance(v[3], bytes) or not 1 <= len(v[3]) <= MAX_TABLE_ID:
        raise MalformedMessage("a request is [sender, first seq, count, table id]")
    sender, first, count = (x for x in v[:3] if isinstance(x, int))
    if sender < 0 or first < 0 or not 1 <= count <= MAX_ASK:
        raise MalformedMessage("a request names a seat, a seq >= 0 and 1 to 64 frames")
    return v[3], sender, first, count


def find_gaps(held: dict[int, set[int]], received: Callable[[int], int], tails: set[int]) -> list[Gap]:
    """What we miss of each seat's chain: below every frame `held` ahead of it (`received(seat)` is
    the next seq we would take), and the next MAX_ASK places of each seat in `tails` with none held."""
    gaps: list[Gap] = []
    for seat, seqs in sorted(held.items()):
        first = received(seat)
        for seq in sorted(q for q in seqs if q >= first):
            if seq > first:
                gaps.append((seat, first, seq - 1))
            first = seq + 1
    for seat in sorted(tails - held.keys()):
        head = received(seat)
        gaps.append((seat, head, head + MAX_ASK - 1))
    return gaps


class Recovery:
    """One peer's asks for what it misses, and its answers to the others' asks."""

    def __init__(self, seats: int, me: int, missing: Callable[[], Sequence[Gap]],
                 frame: Callable[[int, int], bytes | None]) -> None:
        self.seats = seats
        self.me = me
        self._missing = missing
        self._frame = frame
        self.asked: dict[tuple[int, int], tuple[int, float]] = {}  # (sender, first) -> (asks so far, when next)
        self._buckets: dict[int, tuple[float, float]] = {}  # asker -> (tokens, when counted)
        self.asks = 0
        self.answered = 0

    def requests(self, now: float) -> list[Ask]:
        """The requests to send now: each gap after its grace, then again every RETRY_S, to the next seat."""
        out: list[Ask] = []
        seen = set()
        for sender, first, last in self._missing():
            if sender == self.me or not 0 <= sender < self.seats or last < first:
                continue
            key = (sender, first)
            seen.add(key)
            tries, due = self.asked.setdefault(key, (0, now + GRACE_S))
            if now < due:
                continue
            others = [s for s in range(self.seats) if s not in (sender, self.me)]
            ask = ([sender] + others)[tries % (1 + len(others))]
            out.append((ask, sender, first, min(last - first + 1, MAX_ASK)))
            self.asked[key] = (tries + 1, now + RETRY_S)
        for key in [k for k in self.asked if k not in seen]:
            del self.asked[key]  # filled (or moved on): forget it
        self.asks += len(out)
        return out

    def answer(self, asker: int, sender: int, first: int, count: int, now: float) -> list[bytes]:
        """The frames asked for that we hold, in order; none when `asker` is over its rate."""
        tokens, then = self._buckets.get(asker, (BURST, now))
        tokens = min(BURST, tokens + (now - then) * BURST)
        if tokens < 1:
            self._buckets[asker] = (tokens, now)
            return []
        self._buckets[asker] = (tokens - 1, now)
        frames = [f for seq in range(first, first + min(count, MAX_ASK)) if (f := self._frame(sender, seq)) is not None]
        self.answered += len(frames)
        return frames
