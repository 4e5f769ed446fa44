"""Signed envelopes: every way a frame can be wrong raises its own typed error and changes nothing."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pcards.crypto import identity
from p2pcards.crypto.encoding import encode
from p2pcards.crypto.envelope import GENESIS, ChainTracker, Envelope, Outbox, parse, seal
from p2pcards.errors import (
    BadSignature,
    BrokenChain,
    Equivocation,
    EquivocationEvidence,
    Gap,
    MalformedMessage,
    RemoteProtocolError,
    Replay,
    UnknownSender,
    WrongContext,
)

TABLE = b"table-0001"
TYPES = {"hello", "move"}
ALICE = identity.generate("alice")
BOB = identity.generate("bob")
MALLORY = identity.generate("mallory")


def tracker() -> ChainTracker:
    """A tracker for Alice and Bob at TABLE, round 1."""
    return ChainTracker(TABLE, [ALICE.public, BOB.public], TYPES, rounds={1})


def test_round_trip_and_chain() -> None:
    """Messages sealed by an Outbox are accepted in order, each naming its predecessor."""
    out, t = Outbox(ALICE, TABLE), tracker()
    frames = [out.seal(1, "move", {"n": i}).frame for i in range(3)]
    for i, f in enumerate(frames):
        s = t.accept(f)
        assert s.envelope.seq == i and s.envelope.body == {"n": i} and s.frame == f
    assert t.head(ALICE.public) == (3, out.head)
    assert parse(frames[1]).envelope.prev == parse(frames[0]).hash
    assert parse(frames[0]).envelope.prev == GENESIS


def test_signature_covers_exactly_the_bytes_sent() -> None:
    """Flipping any one bit of the message or the signature is caught."""
    f = Outbox(ALICE, TABLE).seal(1, "move", {"card": b"\x01" * 4}).frame
    for i in range(0, len(f), 7):
        bad = f[:i] + bytes([f[i] ^ 1]) + f[i + 1 :]
        with pytest.raises(RemoteProtocolError) as exc:
            tracker().accept(bad)
        assert exc.value.blame is None  # an unsigned change cannot be pinned on the claimed sender


def test_forged_signature() -> None:
    """Mallory signing a message that claims Alice as sender: BadSignature, no blame, no state change."""
    env = Envelope(TABLE, 1, ALICE.public, 0, GENESIS, "move", {})
    msg = env.encode()
    t = tracker()
    with pytest.raises(BadSignature) as exc:
        t.accept(MALLORY.sign(msg) + msg)
    assert exc.value.blame is None
    assert t.head(ALICE.public) == (0, GENESIS)
    with pytest.raises(ValueError):
        seal(MALLORY, env)


def test_unknown_sender() -> None:
    """A well-signed message from a key not seated here."""
    with pytest.raises(UnknownSender):
        tracker().accept(Outbox(MALLORY, TABLE).seal(1, "move", {}).frame)


def test_wrong_table_or_round() -> None:
    """Messages for another table are refused, blaming no one (a key may sit at several tables); for another round, blamed."""
    t = tracker()
    with pytest.raises(WrongContext) as exc:
        t.accept(Outbox(ALICE, b"other-table").seal(1, "move", {}).frame)
    assert exc.value.blame is None
    with pytest.raises(WrongContext) as exc:
        t.accept(Outbox(ALICE, TABLE).seal(2, "move", {}).frame)
    assert exc.value.blame == ALICE.public.hex()
    assert t.head(ALICE.public)[0] == 0
    t.rounds = {1, 2}
    t.accept(Outbox(ALICE, TABLE).seal(2, "move", {}).frame)


def test_unknown_type_and_bad_body() -> None:
    """Unknown message types and bodies the caller's check refuses are MalformedMessage, blamed."""
    t = tracker()
    with pytest.raises(MalformedMessage) as exc:
        t.accept(Outbox(ALICE, TABLE).seal(1, "launch", {}).frame)
    assert exc.value.blame == ALICE.public.hex()

    def check(kind: str, body: object) -> None:
        if kind == "move" and body != {"ok": True}:
            raise MalformedMessage("bad move body")

    t = ChainTracker(TABLE, [ALICE.public], TYPES, {1}, check)
    with pytest.raises(MalformedMessage) as exc:
        t.accept(Outbox(ALICE, TABLE).seal(1, "move", {"ok": False}).frame)
    assert exc.value.blame == ALICE.public.hex()
    t.accept(Outbox(ALICE, TABLE).seal(1, "move", {"ok": True}).frame)


def test_replay() -> None:
    """The same frame twice: Replay, not blamed (anyone can resend a frame)."""
    t = tracker()
    f = Outbox(ALICE, TABLE).seal(1, "move", {}).frame
    t.accept(f)
    with pytest.raises(Replay) as exc:
        t.accept(f)
    assert exc.value.blame is None


def test_gap_then_fill() -> None:
    """A message ahead of the chain is a Gap and leaves the chain as it was; it is accepted once the gap fills."""
    out, t = Outbox(ALICE, TABLE), tracker()
    f0, f1 = out.seal(1, "move", {"n": 0}).frame, out.seal(1, "move", {"n": 1}).frame
    with pytest.raises(Gap) as exc:
        t.accept(f1)
    assert not isinstance(exc.value, BrokenChain)
    t.accept(f0)
    t.accept(f1)


def test_equivocation() -> None:
    """Two different signed messages for one seq: Equivocation, blamed, with both frames as evidence."""
    t = tracker()
    a = Outbox(ALICE, TABLE).seal(1, "move", {"card": 1}).frame
    b = Outbox(ALICE, TABLE).seal(1, "move", {"card": 2}).frame
    t.accept(a)
    with pytest.raises(Equivocation) as exc:
        t.accept(b)
    assert isinstance(exc.value, EquivocationEvidence)
    assert exc.value.blame == ALICE.public.hex() and exc.value.frames == (a, b)
    assert t.frame_at(ALICE.public, 0) == a


def test_broken_chain() -> None:
    """A message at the right seq whose prev is not the sender's previous message: BrokenChain, blamed."""
    t = tracker()
    first = Outbox(ALICE, TABLE).seal(1, "move", {}).frame
    t.accept(first)
    fork = Outbox(ALICE, TABLE, next_seq=1, head=b"\x07" * 32).seal(1, "move", {}).frame
    with pytest.raises(BrokenChain) as exc:
        t.accept(fork)
    assert exc.value.blame == ALICE.public.hex()
    assert exc.value.frames == (first, fork)  # the frame before, and the one that does not follow it: evidence


def _signed(value: object) -> bytes:
    msg = encode(value)  # type: ignore[arg-type]
    return ALICE.sign(msg) + msg


def test_malformed_envelopes() -> None:
    """Missing or extra fields, wrong field types, non-canonical bytes: MalformedMessage."""
    good = {"table": TABLE, "round": 1, "sender": ALICE.public, "seq": 0, "prev": GENESIS, "type": "move", "body": {}}
    tweaks: list[dict[str, object]] = [
        {"extra": 1},
        {"seq": -1},
        {"seq": True},
        {"round": "1"},
        {"prev": b"short"},
        {"sender": b"x" * 31},
        {"table": b""},
        {"type": ""},
        {"body": [1]},
    ]
    for tw in tweaks:
        with pytest.raises(MalformedMessage):
            tracker().accept(_signed({**good, **tw}))
    with pytest.raises(MalformedMessage):
        tracker().accept(_signed({k: v for k, v in good.items() if k != "body"}))
    msg = encode(good)  # type: ignore[arg-type]
    noncanon = msg.replace(b"\xa5round\x01", b"\xa5round\xcc\x01")
    assert noncanon != msg
    with pytest.raises(MalformedMessage):
        tracker().accept(ALICE.sign(noncanon) + noncanon)
    for junk in [b"", b"\x00" * 64, b"\x00" * 65, b"\xff" * 2_000_000]:
        with pytest.raises(MalformedMessage):
            tracker().accept(junk)
    tracker().accept(ALICE.sign(msg) + msg)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=300))
def test_garbage_never_crashes(data: bytes) -> None:
    """Arbitrary bytes raise a RemoteProtocolError and nothing else."""
    with pytest.raises(RemoteProtocolError):
        tracker().accept(data)


@settings(max_examples=100, deadline=None)
@given(st.integers(0, 300), st.integers(0, 255))
def test_mutated_frames_rejected(pos: int, xor: int) -> None:
    """Any mutation of a valid frame is rejected (never accepted as a different message)."""
    f = Outbox(ALICE, TABLE).seal(1, "move", {"x": [1, 2, 3], "y": "abc"}).frame
    pos %= len(f)
    bad = f[:pos] + bytes([f[pos] ^ (xor or 1)]) + f[pos + 1 :]
    with pytest.raises(RemoteProtocolError):
        tracker().accept(bad)


def test_envelope_is_frozen() -> None:
    """Envelopes are immutable values."""
    env = Envelope(TABLE, 1, ALICE.public, 0, GENESIS, "move", {})
    with pytest.raises(dataclasses.FrozenInstanceError):
        env.seq = 2  # type: ignore[misc]


def test_a_type_is_measured_in_utf8_bytes_and_one_too_long_is_malformed_blaming_no_one() -> None:
    """`type` is 1 to 64 bytes of UTF-8 (check 1: no one blamed), not 64 code points (check 5 would blame)."""
    for mtype, ok in (("é" * 32, True), ("é" * 33, False)):
        frame = seal(ALICE, Envelope(TABLE, 1, ALICE.public, 0, GENESIS, mtype, {})).frame
        if ok:
            assert parse(frame).envelope.type == mtype
            with pytest.raises(MalformedMessage) as unknown:
                tracker().accept(frame)
            assert unknown.value.blame is not None  # an unknown type of a right length: its signer's fault
        else:
            with pytest.raises(MalformedMessage) as exc:
                parse(frame)
            assert exc.value.blame is None
