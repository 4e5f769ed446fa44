"""What a peer keeps to come back into its round after a crash, sans-IO: its journal and the chain it resumes.

A peer that journals (`TablePeer(journal=True)`) appends one record for each thing it must not
lose, in the order it happened: first the totals its table carries (`carry`) and where its
chain begins (`outbox`), then a `seed` record for each round secret it draws (every key, pass,
share and opening of the round derives from it) and a `frame` record for each signed frame it
takes from another seat or signs itself, with the time it did. The shell writes the
records to disk before it sends anything the step produced (write-ahead), so every frame that
ever left the peer is in its journal. `TablePeer.resume` replays the journal: the same frames
at the same times take the same path, and wherever the peer signs again it gets back the very
frame it signed before (`ResumeOutbox`): a peer that restarts never signs two messages for one
place of its chain, and one that would sign anything else there (a journal that is not its
own, or one cut short of its seeds) stops with a LocalError.
"""

from __future__ import annotations

import struct
from collections.abc import Callable, Iterable, Mapping
from typing import Final

from ..crypto.encoding import Value, decode, encode
from ..crypto.envelope import GENESIS, Outbox, Signed, parse
from ..crypto.identity import Identity
from ..errors import LocalError

# ("seed", round, seed) | ("frame", time, frame) | ("outbox", next seq, head) | ("carry", rounds, totals)
Record = tuple[str, int, bytes]
TIME: Final = struct.Struct(">d")
BITS: Final = struct.Struct(">q")


def carry_record(totals: tuple[int, ...], played: int) -> Record:
    """The record of what a table that went on without a seat carries (protocol.md §14.9)."""
    return ("carry", played, encode(list(totals)))


def carried(records: Iterable[Record]) -> tuple[tuple[int, ...], int] | None:
    """The totals and rounds played that the journal's table carries, if it says."""
    for kind, played, data in records:
        if kind == "carry":
            totals = decode(data)
            if not isinstance(totals, list) or not all(type(t) is int for t in totals):
                raise LocalError("a journal's carried totals are not a list of integers")
            return tuple(t for t in totals if isinstance(t, int)), played
    return None


def frame_record(now: float, frame: bytes) -> Record:
    """The record of a frame taken or signed at time `now` (the time's exact bits: a replay stamps alike)."""
    return ("frame", BITS.unpack(TIME.pack(now))[0], frame)


def record_time(number: int) -> float:
    """The time of a frame record."""
    return float(TIME.unpack(BITS.pack(number))[0])


class ResumeOutbox(Outbox):
    """Our chain on resume: each place we signed before is given its very frame again, never a new one."""

    def __init__(self, identity: Identity, table: bytes, records: Iterable[Record]) -> None:
        start, head = 0, GENESIS
        self.signed: dict[int, bytes] = {}  # seq -> the frame we signed there before the restart
        for kind, num, data in records:
            if kind == "outbox":
                start, head = num, data
            elif kind == "frame":
                env = parse(data).envelope
                if env.sender == identity.public:
                    self.signed[env.seq] = data
        super().__init__(identity, table, start, head)

    def seal(self, round: int, type: str, body: Mapping[str, Value]) -> Signed:
        """The frame we signed at the next place before the restart, or a new one beyond them."""
        frame = self.signed.pop(self.next_seq, None)
        if frame is None:
            return super().seal(round, type, body)
        signed = parse(frame)
        env = signed.envelope
        # Every body but a sealed box (random by design) is a function of the seed and the log.
        if (env.round, env.type) != (round, type) or (
                type != "private" and encode(dict(body)) != encode(dict(env.body))):
            raise LocalError(f"resuming went another way: our message {env.seq} was another {env.type} "
                             f"of round {env.round} than the {type} of round {round} made again")
        self.next_seq += 1
        self.head = signed.hash
        return signed


def replayed_seeds(records: Iterable[Record], fresh: Callable[[], bytes]) -> Callable[[], bytes]:
    """A draw_seed that gives back the journal's round seeds in order, then fresh ones."""
    seeds = [data for kind, _, data in records if kind == "seed"]
    seeds.reverse()
    return lambda: seeds.pop() if seeds else fresh()
