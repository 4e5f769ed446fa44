"""Frames in: every seat's signed chain, frames that came before the ones they follow, messages of later rounds.

A frame is taken when its signature verifies and it is the next link of its sender's chain.
One that skips ahead waits in `held` until its sender's chain reaches it (so no signature is
checked twice in vain); an accepted message of a round not begun yet waits in `later`. A
second signed message for one place in a chain is equivocation: its sender is blamed.

What another peer can make us keep is bounded per sender: `held` to `MAX_HELD` frames and
`MAX_HELD_BYTES` bytes (beyond, a frame is dropped), `later` to `MAX_LATER` messages (an honest
seat sends at most its key and its pass before we begin a round: more is its fault), and what we
accept to `MAX_ROUND_BYTES` a round (more is its fault: we keep it to answer requests). Frames
dropped are counted in `dropped` by (seat or None, reason) and noted once each, so junk costs
neither memory nor notes without bound.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from enum import IntEnum

from ..crypto.envelope import ChainTracker, Envelope, Signed, parse
from ..crypto.identity import verify
from ..errors import (BrokenChain, Equivocation, EquivocationEvidence, Gap, LocalError, MalformedMessage,
                      RemoteProtocolError, Replay, UnknownSender)
from .config import TableConfig
from .log import Log
from .messages import BODIES, check_body
from .outputs import Emitter

MAX_HELD = 256  # frames ahead of its chain held per sender
MAX_HELD_BYTES = 4 << 20  # their bytes, per sender
MAX_LATER = 16  # accepted messages of the next round held per sender
MAX_ROUND_BYTES = 8 << 20  # frames one sender may send in one round (an honest seat sends well under 1 MiB)
ANY_ROUND = ("ready", "fault", "aid", "gone", "out", "leave")  # handled at once, whatever their round


class Precedence(IntEnum):
    """Who waits on us for a frame, and so how soon a shell takes it."""

    NOW = 0  # another seat may (an order, a move we order, a public share...): taken as it comes
    SOON = 1  # we alone do (a private box to us): taken on the next turn of the loop, after what is NOW
    LATER = 2  # nobody does (a box to another seat, a move nobody orders yet): taken a little later


class _Rounds(Collection[int]):
    """The rounds a chain tracker accepts: every round from 0 (`ready`) to the next one."""

    def __init__(self, current: Callable[[], int]) -> None:
        self.current = current

    def __contains__(self, r: object) -> bool:
        return isinstance(r, int) and 0 <= r <= self.current() + 1

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.current() + 2))

    def __len__(self) -> int:
        return self.current() + 2


class Chains:
    """Every seat's chain as one peer takes it, and the frames and messages that wait for their turn."""

    LOBBY_TYPES = frozenset({"table", "join", "seats", "left"})

    def __init__(self, cfg: TableConfig, me: int, emitter: Emitter, handle: Callable[[Signed], None],
                 current: Callable[[], int], tracker: ChainTracker | None = None,
                 first_hand: Callable[[bytes, float], None] = lambda frame, came: None) -> None:
        self.me = me
        self.emitter = emitter
        self.handle = handle  # where every accepted message goes
        self.first_hand = first_hand  # a frame we took sent again, come again first hand at a time
        self.current = current  # the round we are in
        self.keys = cfg.keys
        self.names = cfg.names
        self._seats = {key: i for i, key in enumerate(cfg.keys)}
        self.tracker = tracker or ChainTracker(cfg.context, cfg.keys, BODIES, check_body=check_body)
        # A witness (a transcript's reader, no seat) sends no result, so the seats go on without it: any round
        # may be ahead of it, and it keeps every message of one it has not begun (the file bounds them).
        self.witness = me >= len(cfg.keys)
        self.tracker.rounds = range(2 ** 32) if self.witness else _Rounds(current)
        # Our own chain is our Outbox: a frame of ours that comes back (replayed by anyone) is not news.
        if not self.witness:  # a witness has no chain of its own
            self.tracker.forget(cfg.keys[me])
        self.held: dict[tuple[bytes, int], bytes] = {}  # (sender, seq) -> a frame ahead of its chain
        self.held_at: dict[tuple[bytes, int], float] = {}  # when each held frame came (its first copy)
        self.held_again: set[tuple[bytes, int]] = set()  # held frames that came only sent again
        self.came: float | None = None  # when the message being handled came (None: now)
        self.live = True  # whether it came first hand, not sent again (protocol.md §18.5)
        self.held_bytes: dict[bytes, tuple[int, int]] = {}  # sender -> (frames, bytes) in `held`
        self.later: list[Signed] = []  # accepted messages of a round not begun yet
        self.dropped: dict[tuple[int | None, str], int] = {}  # (seat or None, reason) -> frames dropped
        self.volume: dict[tuple[bytes, int], int] = {}  # (sender, round) -> bytes of its frames we accepted

    def seat(self, key: bytes) -> int | None:
        """The seat of an identity key, or None when it has no seat here."""
        return self._seats.get(key)

    def received(self, seat: int) -> int:
        """How many messages of `seat`'s chain we have taken (ours: how many we sent)."""
        if seat == self.me:
            return self.emitter.outbox.next_seq
        return self.tracker.head(self.keys[seat])[0]

    def frame(self, seat: int, seq: int) -> bytes | None:
        """The frame we accepted (or sent) at place `seq` of `seat`'s chain, if we hold it."""
        if not 0 <= seat < len(self.keys) or seq < 0:
            return None
        if seat == self.me:
            sent = self.emitter.sent.get(seq)
            return None if sent is None else sent[1]
        return self.tracker.frame_at(self.keys[seat], seq)

    def taken(self) -> list[bytes]:
        """Every frame of the other seats' chains we took, seat by seat, in chain order."""
        return [self.frame(seat, seq) or b"" for seat in range(len(self.keys)) if seat != self.me
                for seq in range(self.received(seat))]

    def ahead(self) -> list[tuple[int, int]]:
        """Where the frames held ahead of their chains go: (seat, seq)."""
        return [(seat, seq) for key, seq in self.held if (seat := self.seat(key)) is not None]

    def accept(self, frame: bytes, came: float | None = None, live: bool = True) -> None:
        """Take a frame from the network that came at `came` (not `live`: sent again, §18.5): hand it on, hold
        it, drop it, or blame its sender.

        Its stamps are judged by when it came (protocol.md §7.2): a frame held ahead of its chain by when
        it came, not when its turn did, and one that a later frame of its chain came before (lost or held
        up on the way) by when that later one came (even sent again), since it was on its way by then. A
        frame sent again (an answer to a request, a move its player sent again) is not judged by when it
        came, until a copy comes first hand."""
        try:
            signed = self.tracker.accept(frame)
        except (BrokenChain, Equivocation) as exc:
            self.emitter.fault(self.said(exc), self.blamed(exc), evidence=_evidence(exc))
            return
        except Gap:
            self.hold(frame, came, live)
            return
        except Replay:
            if live and came is not None:
                self.first_hand(frame, came)
            return
        except UnknownSender as exc:
            ours = parse(frame)
            if not self.witness and ours.envelope.sender == self.keys[self.me]:
                if verify(ours.envelope.sender, ours.message, ours.signature):
                    return  # one of ours come back (a copy, a relay): not news, and nobody's fault
                self.drop("BadSignature", "message dropped: a frame in our name that we did not sign")
                return
            self.drop(type(exc).__name__, f"message dropped: {exc}", self.blamed(exc))
            return
        except RemoteProtocolError as exc:
            self.drop(type(exc).__name__, f"message dropped: {exc}", self.blamed(exc))
            return
        env = signed.envelope
        overtaken = [at for (sender, _), at in self.held_at.items() if sender == env.sender]
        if live and came is not None and overtaken:
            came = min(came, *overtaken)
        key = (env.sender, env.round)
        self.volume[key] = self.volume.get(key, 0) + len(frame)
        seat = self.seat(env.sender)
        if self.volume[key] > MAX_ROUND_BYTES and seat is not None:
            # What we accept we keep (to answer requests for it) until two rounds on: bounded per sender.
            self.emitter.fault(f"{self.names[seat]} sent over {MAX_ROUND_BYTES >> 20} MiB in round {env.round}: "
                               "more than any round needs", seat)
            return
        self._handle(signed, came, live)
        self.retry_held()

    def _handle(self, signed: Signed, came: float | None, live: bool) -> None:
        outer = self.came, self.live
        self.came, self.live = came, live
        try:
            self.handle(signed)
        finally:
            self.came, self.live = outer

    def rebuild(self, frames: Iterable[bytes], rnd: int, hashes: Mapping[bytes, Sequence[tuple[bytes, int]]]) -> None:
        """Take the frames a journal holds before its checkpoint of round `rnd` into their chains only (resume),
        after the older places a compacted journal keeps by their hash (`hashes`): the others' are checked and
        followed (those of round `rnd` wait for it), ours of round 0 or from round `rnd` - 1 on are kept to be
        asked for again. LocalError when one does not follow."""
        ours = self.keys[self.me] if self.me < len(self.keys) else None
        for sender, places in hashes.items():
            if sender == ours or sender not in self.keys:
                raise LocalError("a journal's hashes name no other seat of this table")
            if any(r >= rnd - 1 for _, r in places):  # from the first place of a round held whole on, frames are kept
                raise LocalError(f"a journal's hashes keep by hash a place of a round held whole at round {rnd}")
            self.tracker.restore(sender, places)
        for frame in frames:
            env = parse(frame).envelope
            if env.sender == ours:
                if env.round == 0 or env.round >= rnd - 1:
                    self.emitter.sent[env.seq] = (env.round, frame)
                continue
            try:
                signed = self.tracker.accept(frame)
            except Replay:
                continue  # journaled again when a copy came first hand after one sent again
            except RemoteProtocolError as exc:
                raise LocalError(f"a journal's frame does not follow its chain: {exc}") from None
            if env.round >= rnd and env.type not in ANY_ROUND:
                self.later.append(signed)

    def route(self, signed: Signed) -> int | None:
        """The seat of an accepted message to handle now; None when it is dropped (its sender has no seat),
        has no place here (a lobby message), or waits for its round to begin (`defer`)."""
        env = signed.envelope
        seat = self.seat(env.sender)
        if seat is None:
            self.drop("unseated", "message dropped: its sender has no seat at this table")
            return None
        if env.type in self.LOBBY_TYPES:
            return None  # lobby messages signed in the table's context: they have no place here
        if env.round > self.current() and env.type not in ANY_ROUND:
            self.defer(signed, seat)
            return None
        return seat

    def precedence(self, frame: bytes, ordering: bool, awaited: Collection[tuple[int, int]] = ()) -> Precedence:
        """How soon we must take `frame`: LATER for a private box to another seat, or a move unless we are
        `ordering` or an order we hold names it (is `awaited`); SOON for a private box to us; else NOW."""
        try:
            env = parse(frame).envelope
        except RemoteProtocolError:
            return Precedence.NOW  # dropped (and counted) at once
        if env.type == "move":
            return Precedence.NOW if ordering or (self.seat(env.sender), env.seq) in awaited else Precedence.LATER
        to = _recipient(env)
        if to is None:
            return Precedence.NOW
        return Precedence.SOON if to == self.me else Precedence.LATER

    def keep_from(self, rnd: int) -> None:
        """Round `rnd` begins: only its frames and the last one's are kept whole, to be asked for again (ours
        and the others'); older ones by their hash."""
        sent = self.emitter.sent
        for seq in [q for q, (r, _) in sent.items() if 0 < r < rnd - 1]:
            del sent[seq]
        self.tracker.drop_frames(rnd - 1)

    def drop(self, reason: str, detail: str, seat: int | None = None) -> None:
        """Count a frame dropped for `reason`; note only the first of each (seat, reason)."""
        key = (seat, reason)
        self.dropped[key] = self.dropped.get(key, 0) + 1
        if self.dropped[key] == 1:
            self.emitter.note("rejected", f"{detail} (more like it are dropped unnoted)", seat)

    def defer(self, signed: Signed, seat: int) -> None:
        """Keep an accepted message of the next round until it begins; more than `MAX_LATER` from one seat is its fault."""
        if not self.witness and sum(1 for s in self.later if s.envelope.sender == signed.envelope.sender) >= MAX_LATER:
            self.emitter.fault(f"{self.names[seat]} sent more than {MAX_LATER} messages of a round not begun", seat)
            return
        self.later.append(signed)

    def hold(self, frame: bytes, came: float | None = None, live: bool = True) -> None:
        """Keep a frame that skips ahead of its sender's chain (two different ones for one place: equivocation)."""
        env = parse(frame).envelope  # it parsed (and its signature verified) before the tracker found the gap
        place = (env.sender, env.seq)
        other = self.held.get(place)
        seat = self.seat(env.sender)
        if seat is None:
            return  # a key followed without a seat (a tracker handed over): nothing of it is ours to take
        if other is not None and other != frame:
            self.emitter.fault(f"two different signed messages at seq {env.seq} from {self.names[seat]}", seat,
                               evidence=(other, frame))
            return
        if other is not None:
            if live and place in self.held_again:  # held sent again, and now come first hand
                self.held_again.discard(place)
                if came is not None:
                    self.held_at[place] = min(came, self.held_at.get(place, came))
            return
        count, size = self.held_bytes.get(env.sender, (0, 0))
        if count >= MAX_HELD or size + len(frame) > MAX_HELD_BYTES:
            self.drop("held", f"frames of {self.names[seat]} ahead of its chain dropped over the cap", seat)
            return
        self.held[place] = frame
        if not live:
            self.held_again.add(place)
        if came is not None:
            self.held_at[place] = came
        self.held_bytes[env.sender] = (count + 1, size + len(frame))

    def retry_held(self) -> None:
        """Offer again every held frame its sender's chain has reached."""
        progress = True
        while progress and self.held:
            progress = False
            for place in sorted(self.held, key=lambda p: p[1]):
                sender, seq = place
                if seq > self.tracker.head(sender)[0]:
                    continue
                frame = self.held.pop(place)  # its turn, or a place filled meanwhile (a replay or a rival)
                came = self.held_at.pop(place, None)
                live = place not in self.held_again
                self.held_again.discard(place)
                count, size = self.held_bytes[sender]
                self.held_bytes[sender] = (count - 1, size - len(frame))
                try:
                    signed = self.tracker.accept(frame)
                except (BrokenChain, Equivocation) as exc:
                    self.emitter.fault(self.said(exc), self.blamed(exc), evidence=_evidence(exc))
                    return
                except RemoteProtocolError:
                    continue  # a replay of what we took meanwhile
                self._handle(signed, came, live)
                if self.emitter.stopped is not None:
                    return
                progress = True

    def take_relayed(self, log: Log, ref: tuple[int, int], frame: bytes, orderer: int) -> None:
        """A move frame the orderer relayed in an order: it must be the move named, signed by its player."""
        try:
            env = parse(frame).envelope
        except MalformedMessage:
            env = None
        if env is None or env.type != "move" or env.sender != self.keys[ref[0]] or env.seq != ref[1]:
            self.emitter.fault(f"order names {ref} but relays another message", orderer)
            return
        if ref[0] == self.me:
            if log.frames.get(ref) != frame:
                self.emitter.fault("the orderer relayed a move of ours that we never sent", orderer)
            return
        if log.frames.get(ref) == frame:
            return  # the very frame we took directly: its signature was checked then
        try:
            signed = self.tracker.accept(frame)
        except Replay:
            return  # we have it already, byte for byte
        except Equivocation as exc:
            self.emitter.fault(self.said(exc), ref[0], evidence=_evidence(exc))
            return
        except Gap:
            self.hold(frame)
            return
        except RemoteProtocolError as exc:
            self.emitter.fault(f"the orderer relayed a bad frame: {exc}", orderer)
            return
        self.handle(signed)

    def said(self, exc: RemoteProtocolError) -> str:
        """What `exc` says, each seat's key in it (the crypto layer knows keys, not seats) as the seat's name."""
        text = str(exc)
        for key, name in zip(self.keys, self.names):
            text = text.replace(key.hex(), name)
        return text

    def blamed(self, exc: RemoteProtocolError) -> int | None:
        """The seat an error blames (by key in hex, or by name), if it is seated here."""
        if exc.blame is None:
            return None
        try:
            seat = self.seat(bytes.fromhex(exc.blame))
        except ValueError:
            seat = None
        if seat is None and exc.blame in self.names:
            seat = self.names.index(exc.blame)
        return seat


def _evidence(exc: RemoteProtocolError) -> tuple[bytes, ...]:
    """The two signed frames that prove an equivocation, or a broken chain where we still hold the frame before
    (none for any other error: the frame in hand is)."""
    if isinstance(exc, EquivocationEvidence):
        return exc.frames
    return exc.frames or () if isinstance(exc, BrokenChain) else ()


def private_to(frame: bytes) -> int | None:
    """The seat a private box is for (the only one waiting on it), or None for any other frame."""
    try:
        return _recipient(parse(frame).envelope)
    except RemoteProtocolError:
        return None


def _recipient(env: Envelope) -> int | None:
    to = env.body.get("to") if env.type == "private" else None
    return to if isinstance(to, int) and not isinstance(to, bool) else None


def frame_head(frame: bytes) -> tuple[bytes, str] | None:
    """A well-formed frame's sender key and message type, else None."""
    try:
        env = parse(frame).envelope
    except RemoteProtocolError:
        return None
    return env.sender, env.type
