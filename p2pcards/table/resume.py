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

At the start of each round after the table's first, a peer that journals records a `check`
(a checkpoint: what the rounds before left behind and where its chain is, `Check`). A resume
replays from the last checkpoint only: the frames before it go to the signature chains (each
signature checked again, nothing else done), the round's state is the checkpoint's, and the
round it began is replayed as above. So a resume costs one round's deck work, not the game's.

So a journal need not grow with the game: `compact` makes the journal a peer begins anew at its last
checkpoint (store.py writes it whole in place of the old one), which resumes exactly as the old one did.
Of the frames before the checkpoint it keeps only those a peer holds whole in that round (protocol.md
§7.2: the round before and this one, and our own of round 0); of the other seats' older places, a `hashes`
record with each place's message hash and round, which the chains are given back (`chain_hashes`).
"""

from __future__ import annotations

import dataclasses
import struct
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from ..crypto.encoding import Value, decode, encode
from ..crypto.envelope import GENESIS, HASH_BYTES, Outbox, Signed, parse
from ..crypto.identity import Identity
from ..errors import LocalError
from ..games.crescendo import CrescendoGame, CrescendoRoundResult
from ..games.crisp import CrispRoundResult
from .config import Game

# ("seed", round, seed) | ("frame", time, frame) | ("again", time, frame) | ("outbox", next seq, head)
# | ("carry", rounds, totals) | ("check", round, Check) | ("absent", seat, [time, missing(, closed)])
# | ("silent", seat, [since, until]) | ("clock", time, b"") | ("hashes", 0, [[sender, [[hash, round], ...]], ...]); "again" is a frame taken that came sent again
# (§18.5); "clock" is our clock when we took the frame after it, when later than that frame came (its record's
# time); "absent" and "silent" are what our network layer found of a seat's link, which judges the stamps of
# frames taken after
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


def _bits(now: float) -> int:
    return int(BITS.unpack(TIME.pack(now))[0])


FRAMES: Final = ("frame", "again")  # the kinds of record that hold a frame


def frame_record(now: float, frame: bytes, live: bool = True) -> Record:
    """The record of a frame taken or signed at time `now` (the time's exact bits: a replay stamps alike);
    not `live`: a frame taken that came sent again (§18.5), which a replay must not judge by its time either."""
    return ("frame" if live else "again", _bits(now), frame)


def clock_record(now: float) -> Record:
    """The record of our clock when we take the frame whose record follows, when that is later than it came
    (a frame held ahead of its chain, or overtaken by a later one of its chain): a replay takes it at that
    clock, so what the step stamps (an orderer's deal, say) is stamped alike."""
    return ("clock", _bits(now), b"")


ABSENCES: Final = ("absent", "silent")  # the kinds of record that hold what our network layer found of a link


def absent_record(seat: int, missing: bool, now: float, closed: bool = False) -> Record:
    """The record of a seat's link found missing (or back) at `now` (`closed`: closed by the other end): a replay
    judges the frames after, and whether we are cut off, alike."""
    return ("absent", seat, encode([_bits(now), missing, True] if closed and missing else [_bits(now), missing]))


def silent_record(seat: int, since: float, until: float) -> Record:
    """The record of a seat's link found silent from `since` to `until`."""
    return ("silent", seat, encode([_bits(since), _bits(until)]))


def absence(record: Record) -> tuple[int, bool, float] | tuple[int, float, float]:
    """What an "absent" record says, (seat, missing, time), or a "silent" one, (seat, since, until);
    LocalError when it says nothing of the kind."""
    kind, seat, data = record
    v = decode(data)
    if kind == "absent" and isinstance(v, list) and len(v) == 3 and v[2] is True:
        v = v[:2]  # closed by the other end: `closed_absence` says so
    if not (isinstance(v, list) and len(v) == 2 and type(v[0]) is int and -(1 << 63) <= v[0] < 1 << 63):
        raise LocalError(f"a journal's {kind} record is not [time, {'missing' if kind == 'absent' else 'until'}]")
    if kind == "absent" and isinstance(v[1], bool):
        return seat, v[1], record_time(v[0])
    if kind == "silent" and type(v[1]) is int and -(1 << 63) <= v[1] < 1 << 63:
        return seat, record_time(v[0]), record_time(v[1])
    raise LocalError(f"a journal's {kind} record is not [time, {'missing' if kind == 'absent' else 'until'}]")


def closed_absence(record: Record) -> bool:
    """Whether an "absent" record says the other end closed the link (its end of stream or reset reached us)."""
    v = decode(record[2]) if record[0] == "absent" else None
    return isinstance(v, list) and len(v) == 3 and v[2] is True


def record_time(number: int) -> float:
    """The time of a frame record."""
    return float(TIME.unpack(BITS.pack(number))[0])


@dataclass(frozen=True)
class Check:
    """What the rounds before round `round` left a peer when it began it at time `now`: where its chain stood
    (`seq`, `head`), the totals it began with and those the round before began with, the seats whose
    memory aid was on, every vote (seat voted gone, voter, round) held, the engine's results of the
    rounds played (`results`), and every `out` held (seat, the seats it put out). One record: a crash
    leaves the whole checkpoint or none."""

    round: int
    now: float
    seq: int
    head: bytes
    totals: tuple[int, ...]
    before: tuple[int, ...]
    aided: tuple[int, ...]
    votes: tuple[tuple[int, int, int], ...]
    results: Value
    outs: tuple[tuple[int, tuple[int, ...]], ...] = ()
    clock: float = 0.0  # the game's: the time of the last entry of the rounds before
    cut_off: bool = False  # we were cut off from every other seat at once: never our own witness (§14.9)

    def record(self) -> Record:
        """The checkpoint as a journal record."""
        fields: list[Value] = [_bits(self.now), self.seq, self.head, list(self.totals), list(self.before),
                               list(self.aided), [list(v) for v in self.votes], self.results,
                               [[seat, list(out)] for seat, out in self.outs], _bits(self.clock)]
        return ("check", self.round, encode(fields + [True] if self.cut_off else fields))

    @classmethod
    def parse(cls, record: Record) -> Check:
        """The checkpoint a `check` record holds; LocalError when it is not one."""
        v = decode(record[2])

        def ints(x: Value) -> tuple[int, ...]:
            if not isinstance(x, list) or not all(type(i) is int for i in x):
                raise LocalError("a journal's checkpoint is not lists of integers")
            return tuple(i for i in x if isinstance(i, int))

        if not isinstance(v, list) or len(v) not in (8, 9, 10, 11) or len(v) == 11 and v[10] is not True:
            raise LocalError("a journal's checkpoint is not "
                             "[time, seq, head, totals, before, aided, votes, results, outs, clock, (cut off)]")
        now, seq, head, clock = v[0], v[1], v[2], v[9] if len(v) >= 10 else 0
        if not (isinstance(now, int) and isinstance(seq, int) and isinstance(clock, int) and isinstance(head, bytes)
                and isinstance(v[6], list) and all(-(1 << 63) <= x < 1 << 63 for x in (now, seq, clock))):
            raise LocalError("a journal's checkpoint is not "
                             "[time, seq, head, totals, before, aided, votes, results, outs, clock]")
        outs = v[8] if len(v) >= 9 else []
        if not isinstance(outs, list) or not all(isinstance(x, list) and len(x) == 2 and type(x[0]) is int
                                                  for x in outs):
            raise LocalError("a journal's checkpoint holds an out that is not [seat, seats]")
        votes = tuple(ints(x) for x in v[6])
        if any(len(x) != 3 for x in votes):
            raise LocalError("a journal's checkpoint holds a vote that is not [seat, voter, round]")
        return cls(record[1], record_time(now), seq, head, ints(v[3]), ints(v[4]), ints(v[5]),
                   tuple((a, b, c) for a, b, c in votes), v[7],
                   tuple((x[0], ints(x[1])) for x in outs if isinstance(x, list) and isinstance(x[0], int)),
                   record_time(clock), len(v) == 11)


def _listed(v: object) -> Value:
    return [_listed(x) for x in v] if isinstance(v, tuple) else v  # type: ignore[return-value]


def _tupled(v: Value) -> object:
    return tuple(_tupled(x) for x in v) if isinstance(v, list) else v


def results_to_wire(game: Game) -> Value:
    """The engine's results of the rounds played (the scores, and what a game's tie-break counts), as lists."""
    return [_listed(dataclasses.astuple(result)) for result in game.results]


def restore_results(game: Game, wire: Value) -> None:
    """Give a fresh engine back the results of the rounds played; LocalError when they are not its results."""
    kind = CrescendoRoundResult if isinstance(game, CrescendoGame) else CrispRoundResult
    try:
        results = [kind(*_tupled(r)) for r in wire] if isinstance(wire, list) else None  # type: ignore[misc]
    except TypeError:
        results = None
    if results is None:
        raise LocalError("a journal's checkpoint holds no results of this game")
    game.results = results  # type: ignore[assignment]


Hashes = dict[bytes, list[tuple[bytes, int]]]  # sender -> the message hash and round of each place from its first


def _hashes(data: bytes) -> Hashes:
    """What a `hashes` record holds; LocalError when it is not that."""
    v = decode(data)
    hashes: Hashes = {}
    for item in v if isinstance(v, list) else [None]:
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], bytes) and isinstance(item[1], list)
                and all(isinstance(e, list) and len(e) == 2 and isinstance(e[0], bytes) and type(e[1]) is int
                        for e in item[1])):
            raise LocalError("a journal's hashes record is not [[sender, [[hash, round], ...]], ...]")
        places = [(e[0], e[1]) for e in item[1] if isinstance(e, list) and isinstance(e[0], bytes) and isinstance(e[1], int)]
        # What no compaction writes (it names each sender once); the rounds of a chain may go down (a seat may sign
        # an older round's message later, ChainTracker.rounds), so their order is no sign of damage.
        if item[0] in hashes or any(len(h) != HASH_BYTES or r < 0 for h, r in places):
            raise LocalError("a journal's hashes record is damaged: a sender named twice, or a place that is not "
                             "[hash, round]")
        hashes[item[0]] = places
    return hashes


def chain_hashes(records: Iterable[Record]) -> Hashes:
    """The older places of the other seats' chains that a compacted journal keeps by their hash only."""
    return next((_hashes(data) for kind, _, data in records if kind == "hashes"), {})


def compact(records: Sequence[Record], ours: bytes) -> list[Record] | None:
    """The journal to begin anew at the last checkpoint of `records` (those of the peer whose key is `ours`), which
    resumes as they do; None when they have no checkpoint (the table's first round). LocalError when the frames
    before it do not follow their chains."""
    start = last_check(records)
    if start is None:
        return None
    whole_from = Check.parse(records[start]).round - 1  # the rounds a peer holds frames of whole (§7.2)
    head: list[Record] = []
    hashes = chain_hashes(records[:start])
    frames: list[Record] = []
    for kind, number, data in records[:start]:
        if kind in ("carry", "outbox"):
            if all(r[0] != kind for r in head):  # only the first counts (carried, ResumeOutbox)
                head.append((kind, number, data))
        elif kind in ABSENCES:  # they judge stamps from the times they hold: a replay takes them all again
            frames.append((kind, number, data))
        elif kind in FRAMES:
            signed = parse(data)
            env = signed.envelope
            if env.sender == ours:
                if env.round == 0 or env.round >= whole_from:
                    frames.append((kind, number, data))
                continue
            chain = hashes.setdefault(env.sender, [])
            if env.seq < len(chain):
                if chain[env.seq][0] != signed.hash:
                    raise LocalError(f"a journal's frame does not follow its chain: a second message {env.seq}")
                continue  # journaled again: a copy came first hand after one sent again
            if env.seq > len(chain):
                raise LocalError(f"a journal's frame does not follow its chain: message {env.seq} after {len(chain)}")
            chain.append((signed.hash, env.round))
            frames.append((kind, number, data))
    # Of each other seat's chain, the places before its first of a round held whole are kept by their hash only.
    cut = {sender: next((i for i, (_, r) in enumerate(chain) if r >= whole_from), len(chain))
           for sender, chain in hashes.items()}
    kept = [(kind, number, data) for kind, number, data in frames
            if kind not in FRAMES or (env := parse(data).envelope).sender == ours or env.seq >= cut[env.sender]]
    for sender, chain in hashes.items():
        del chain[cut[sender]:]
    wire: Value = [[sender, [[h, r] for h, r in chain]] for sender, chain in hashes.items() if chain]
    return head + [("hashes", 0, encode(wire))] + kept + list(records[start:])


def whole_journal(records: Sequence[Record]) -> list[Record]:
    """The journal without its checkpoints: a resume replays it whole."""
    return [r for r in records if r[0] != "check"]


def last_check(records: Sequence[Record]) -> int | None:
    """The index of the journal's last checkpoint, if it has one."""
    return next((i for i in range(len(records) - 1, -1, -1) if records[i][0] == "check"), None)


class ResumeOutbox(Outbox):
    """Our chain on resume: each place we signed before is given its very frame again, never a new one."""

    def __init__(self, identity: Identity, table: bytes, records: Iterable[Record]) -> None:
        start, head = 0, GENESIS
        self.signed: dict[int, bytes] = {}  # seq -> the frame we signed there before the restart
        self.fresh: set[bytes] = set()  # the frames signed anew, beyond the journal
        for kind, num, data in records:
            if kind == "outbox":
                start, head = num, data
            elif kind == "check":
                check = Check.parse((kind, num, data))
                start, head = check.seq, check.head
            elif kind in FRAMES:
                env = parse(data).envelope
                if env.sender == identity.public:
                    self.signed[env.seq] = data
        # Those before a checkpoint's place are not signed again: the replay starts after them.
        self.signed = {seq: frame for seq, frame in self.signed.items() if seq >= start}
        super().__init__(identity, table, start, head)

    def seal(self, round: int, type: str, body: Mapping[str, Value]) -> Signed:
        """The frame we signed at the next place before the restart, or a new one beyond them."""
        frame = self.signed.pop(self.next_seq, None)
        if frame is None:
            made = super().seal(round, type, body)
            self.fresh.add(made.frame)
            return made
        signed = parse(frame)
        env = signed.envelope
        # Every body but a sealed box (random by design) is a function of the seed and the log, and so
        # are public shares but for their proofs: one made from a commitment made ahead has a random nonce.
        if (env.round, env.type) != (round, type) or (
                type != "private" and encode(_unproven(type, body)) != encode(_unproven(type, env.body))):
            raise LocalError(f"resuming went another way: our message {env.seq} was another {env.type} "
                             f"of round {env.round} than the {type} of round {round} made again")
        self.next_seq += 1
        self.head = signed.hash
        return signed


def _unproven(type: str, body: Mapping[str, Value]) -> dict[str, Value]:
    """`body` as a resume compares it: a `shares` body without its reveals' proofs."""
    reveals = body.get("reveals")
    if type != "shares" or not isinstance(reveals, list):
        return dict(body)
    return {**body, "reveals": [{k: v for k, v in rv.items() if k != "proofs"} if isinstance(rv, dict) else rv
                                for rv in reveals]}


def replayed_seeds(records: Sequence[Record], fresh: Callable[[], bytes]) -> Callable[[], bytes]:
    """A draw_seed that gives back the round seeds the journal replays (from its last checkpoint) in order,
    then fresh ones."""
    seeds = [data for kind, _, data in records[last_check(records) or 0:] if kind == "seed"]
    seeds.reverse()
    return lambda: seeds.pop() if seeds else fresh()
