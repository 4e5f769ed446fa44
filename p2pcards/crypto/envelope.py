"""Signed msgpack envelopes and the per-sender chain tracker that checks them."""

from __future__ import annotations

import functools
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final


from ..errors import (
    BadSignature,
    BrokenChain,
    Equivocation,
    EquivocationEvidence,
    Gap,
    MalformedMessage,
    Replay,
    UnknownSender,
    WrongContext,
)
from .encoding import MAX_FRAME, Value, decode, digest, encode
from .identity import PUBLIC_BYTES, SIGNATURE_BYTES, Identity, PublicKey

MSG_PERSON: Final = b"p2pc/msg/v1"
HASH_BYTES: Final = 32
GENESIS: Final = bytes(HASH_BYTES)  # `prev` of a sender's first message
MAX_TABLE_ID: Final = 64
MAX_TYPE: Final = 64
MAX_ROUND: Final = (1 << 32) - 1
MAX_SEQ: Final = (1 << 63) - 1
FIELDS: Final = frozenset({"table", "round", "sender", "seq", "prev", "type", "body"})

BodyCheck = Callable[[str, Mapping[str, Value]], None]


def message_hash(message: bytes) -> bytes:
    """The hash that names a message: BLAKE2b-256 personalised p2pc/msg/v1 over its signed bytes."""
    return digest(MSG_PERSON, message, HASH_BYTES)


@dataclass(frozen=True, slots=True)
class Envelope:
    """One message: its place in the sender's chain, its context, its type and body."""

    table: bytes
    round: int
    sender: bytes
    seq: int
    prev: bytes
    type: str
    body: Mapping[str, Value]

    def encode(self) -> bytes:
        """The canonical msgpack bytes that the sender signs and sends."""
        return encode(
            {
                "table": self.table,
                "round": self.round,
                "sender": self.sender,
                "seq": self.seq,
                "prev": self.prev,
                "type": self.type,
                "body": dict(self.body),
            }
        )


@dataclass(frozen=True, slots=True)
class Signed:
    """An envelope with the exact bytes it was signed as and their signature."""

    envelope: Envelope
    message: bytes
    signature: bytes

    @property
    def frame(self) -> bytes:
        """The bytes on the wire: the 64-byte signature, then the message."""
        return self.signature + self.message

    @property
    def hash(self) -> bytes:
        """The message hash: what the sender's next message carries as `prev`."""
        return message_hash(self.message)


def seal(identity: Identity, envelope: Envelope) -> Signed:
    """Sign an envelope; the identity must be the envelope's sender."""
    if envelope.sender != identity.public:
        raise ValueError("the envelope's sender is not this identity")
    message = envelope.encode()
    return Signed(envelope, message, identity.sign(message))


def parse(frame: bytes) -> Signed:
    """Split and decode a frame without checking its signature; MalformedMessage on any bad structure."""
    if not isinstance(frame, bytes) or len(frame) > MAX_FRAME:
        raise MalformedMessage("frame missing or over the size cap")
    return _parse(frame)


# A frame is looked at by several layers on its way in (the link, the shell, the chains): decoded once.
@functools.lru_cache(maxsize=16)
def _parse(frame: bytes) -> Signed:
    if len(frame) <= SIGNATURE_BYTES:
        raise MalformedMessage("frame too short")
    signature, message = frame[:SIGNATURE_BYTES], frame[SIGNATURE_BYTES:]
    value = decode(message)
    if not isinstance(value, dict) or set(value) != FIELDS:
        raise MalformedMessage("an envelope is a map of exactly: " + ", ".join(sorted(FIELDS)))
    table, rnd, sender, seq, prev = value["table"], value["round"], value["sender"], value["seq"], value["prev"]
    mtype, body = value["type"], value["body"]
    if not (isinstance(table, bytes) and 1 <= len(table) <= MAX_TABLE_ID):
        raise MalformedMessage("bad table id")
    if not (type(rnd) is int and 0 <= rnd <= MAX_ROUND):
        raise MalformedMessage("bad round")
    if not (isinstance(sender, bytes) and len(sender) == PUBLIC_BYTES):
        raise MalformedMessage("bad sender")
    if not (type(seq) is int and 0 <= seq <= MAX_SEQ):
        raise MalformedMessage("bad seq")
    if not (isinstance(prev, bytes) and len(prev) == HASH_BYTES):
        raise MalformedMessage("bad prev")
    if not (isinstance(mtype, str) and 1 <= len(mtype.encode("utf-8")) <= MAX_TYPE):
        raise MalformedMessage("bad type")
    if not isinstance(body, dict):
        raise MalformedMessage("body is not a map")
    return Signed(Envelope(table, rnd, sender, seq, prev, mtype, body), message, signature)


@dataclass(slots=True)
class _Chain:
    """What we have accepted from one sender: at each sequence number the message hash, and the
    frame and its round until `drop_frames` lets the frame go (from `kept`, the first place that may still hold one)."""

    key: PublicKey
    next_seq: int = 0
    head: bytes = GENESIS
    seen: dict[int, tuple[bytes, bytes | None, int]] = field(default_factory=dict)
    kept: int = 0


class ChainTracker:
    """Checks incoming frames for one table: sender, signature, type, context and each sender's chain."""

    def __init__(
        self,
        table: bytes,
        senders: Iterable[bytes],
        known_types: Collection[str],
        rounds: Collection[int] = (0,),
        check_body: BodyCheck | None = None,
    ) -> None:
        self.table = table
        self.known_types = known_types
        self.rounds: Collection[int] = rounds
        self.check_body = check_body
        self._chains: dict[bytes, _Chain] = {}
        for s in senders:
            self.add_sender(s)

    def add_sender(self, sender: bytes) -> None:
        """Seat a new sender (its chain starts at seq 0); InvalidKey unless it is a valid identity key."""
        if sender not in self._chains:
            self._chains[sender] = _Chain(PublicKey.from_bytes(sender))

    def forget(self, sender: bytes) -> None:
        """Stop following a sender: its frames are UnknownSender from now on (our own, at a table: we never take them back)."""
        self._chains.pop(sender, None)

    def head(self, sender: bytes) -> tuple[int, bytes]:
        """(next expected seq, hash of the last accepted message) for a seated sender."""
        chain = self._chains[sender]
        return chain.next_seq, chain.head

    def frame_at(self, sender: bytes, seq: int) -> bytes | None:
        """The accepted frame at one place in a sender's chain (evidence for blame), if we still hold it."""
        entry = self._chains[sender].seen.get(seq)
        return None if entry is None else entry[1]

    def drop_frames(self, before_round: int) -> None:
        """Keep only the hash of every accepted message of a round below `before_round` (a chain's rounds never go down)."""
        for chain in self._chains.values():
            while chain.kept < chain.next_seq and chain.seen[chain.kept][2] < before_round:
                h, _, rnd = chain.seen[chain.kept]
                chain.seen[chain.kept] = (h, None, rnd)
                chain.kept += 1

    def restore(self, sender: bytes, places: Sequence[tuple[bytes, int]]) -> None:
        """Give a sender's new chain back its first places, by their message hash and round only (a resume)."""
        chain = self._chains[sender]
        assert chain.next_seq == 0, "a chain is restored before it takes any frame"
        chain.seen = {seq: (h, None, rnd) for seq, (h, rnd) in enumerate(places)}
        chain.next_seq = chain.kept = len(places)
        chain.head = places[-1][0] if places else GENESIS

    def accept(self, frame: bytes) -> Signed:
        """Check one frame and append it to its sender's chain; raises a typed error and changes nothing otherwise."""
        signed = parse(frame)
        env = signed.envelope
        if env.table != self.table:
            # Not ours, whoever signed it: one key may sit at several tables, each with its own chain,
            # so a frame of another table (replayed here by anyone) blames no one and costs no signature check.
            raise WrongContext(f"message for table {env.table.hex()}")
        chain = self._chains.get(env.sender)
        if chain is None:
            raise UnknownSender(f"sender {env.sender.hex()} is not seated at this table")
        if not chain.key.verify(signed.message, signed.signature):
            # Anyone can put any sender in a forged frame, so no one is blamed.
            raise BadSignature(f"bad signature on a message claiming sender {env.sender.hex()}") from None
        blame = env.sender.hex()
        if env.type not in self.known_types:
            raise MalformedMessage(f"unknown message type {env.type!r}", blame)
        h = signed.hash
        if env.seq < chain.next_seq:
            known_hash, known_frame, _ = chain.seen[env.seq]
            if known_hash == h:
                raise Replay(f"message {env.seq} from {blame} already seen")
            if known_frame is None:  # an old place: we kept its hash only, this frame is the evidence
                raise Equivocation(f"a different signed message at old seq {env.seq} from {blame}", blame)
            raise EquivocationEvidence(
                f"two different signed messages at seq {env.seq} from {blame}", blame, (known_frame, frame)
            )
        if env.round not in self.rounds:
            raise WrongContext(f"message for round {env.round}", blame)
        if env.seq > chain.next_seq:
            # Possibly only reordered in transit: the caller may hold it and offer it again later.
            raise Gap(f"message {env.seq} from {blame} while {chain.next_seq} is expected")
        if env.prev != chain.head:
            before = chain.seen[env.seq - 1][1] if env.seq > 0 else None
            raise BrokenChain(f"message {env.seq} from {blame} does not follow its message {env.seq - 1}", blame,
                              None if before is None else (before, frame))
        if self.check_body is not None:
            try:
                self.check_body(env.type, env.body)
            except MalformedMessage as exc:
                raise MalformedMessage(str(exc), blame) from None
        chain.seen[env.seq] = (h, frame, env.round)
        chain.next_seq += 1
        chain.head = h
        return signed


class Outbox:
    """Our own chain: stamps each new message with the next seq and the previous hash, and signs it."""

    def __init__(self, identity: Identity, table: bytes, next_seq: int = 0, head: bytes = GENESIS) -> None:
        self.identity = identity
        self.table = table
        self.next_seq = next_seq
        self.head = head

    def seal(self, round: int, type: str, body: Mapping[str, Value]) -> Signed:
        """Sign the next message of our chain."""
        env = Envelope(self.table, round, self.identity.public, self.next_seq, self.head, type, dict(body))
        signed = seal(self.identity, env)
        self.next_seq += 1
        self.head = signed.hash
        return signed
