"""Keys that are what they claim: identity keys are validated where they enter, and one strict verification rule."""

from __future__ import annotations

import hashlib

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

from p2pcards.crypto import group, identity
from p2pcards.crypto.envelope import ChainTracker, Envelope, GENESIS, seal
from p2pcards.crypto.identity import PublicKey, is_valid_public, verify
from p2pcards.errors import BadSignature, InputError, InvalidKey, MalformedMessage
from p2pcards.table.config import TableConfig

L = group.ORDER
IDENTITY = (1).to_bytes(32, "little")  # (0, 1)
ORDER2 = bytes([0xEC] + [0xFF] * 30 + [0x7F])  # (0, -1)
ORDER4 = bytes(32)  # (sqrt(-1), 0), y = 0
ORDER8 = bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")
NON_CANONICAL = bytes([0xED] + [0xFF] * 30 + [0x7F])  # y = p
TABLE = bytes(range(16))


def forged_for_identity_key(message: bytes) -> bytes:
    """A signature 'by' the identity point on any message: R = s·B, S = s satisfies [S]B = R + [k]·0."""
    s = 12345
    return group.mul_base(group.scalar_of_int(s)) + s.to_bytes(32, "little")


def with_torsion(public: bytes) -> bytes:
    """A real key plus an order-2 point: a key with a small-order component."""
    return group.add(public, ORDER2)


@pytest.mark.parametrize("bad", [IDENTITY, ORDER2, ORDER4, ORDER8, NON_CANONICAL, b"\x01" * 31, b""],
                         ids=["identity", "order2", "order4", "order8", "non-canonical", "short", "empty"])
def test_small_order_identity_and_malformed_keys_refused(bad: bytes) -> None:
    """The identity, every small-order point, non-canonical and wrong-length encodings are not keys."""
    assert not is_valid_public(bad)
    with pytest.raises(InvalidKey):
        PublicKey.from_bytes(bad)


def test_key_with_small_order_component_refused() -> None:
    """A real key plus a torsion point is refused (libsodium's main-subgroup check)."""
    real = identity.generate("a").public
    assert is_valid_public(real)
    assert not is_valid_public(with_torsion(real))


def test_identity_key_forgery_refused() -> None:
    """With the identity point as a key anyone could sign anything; the plain RFC 8032 check would accept it."""
    msg = b"a frame from the victim's seat"
    sig = forged_for_identity_key(msg)
    Ed25519PublicKey.from_public_bytes(IDENTITY).verify(sig, msg)  # accepted without key validation
    assert not verify(IDENTITY, msg, sig)


def test_strict_signature_rule() -> None:
    """Honest signatures verify; S + L, the identity as R and a changed byte do not."""
    ident = identity.generate("a")
    msg = b"hello"
    sig = ident.sign(msg)
    key = PublicKey.from_bytes(ident.public)
    assert key.verify(msg, sig) and verify(ident.public, msg, sig)
    s = int.from_bytes(sig[32:], "little")
    assert not key.verify(msg, sig[:32] + (s + L).to_bytes(32, "little"))  # non-canonical S
    assert not key.verify(msg, IDENTITY + sig[32:])
    assert not key.verify(msg, sig[:31] + bytes([sig[31] ^ 1]) + sig[32:])
    assert not key.verify(msg + b"!", sig)
    assert not key.verify(msg, sig[:63])


def test_small_order_r_refused() -> None:
    """A signature whose R is a small-order point is refused (it cannot equal [S]B - [k]A for a valid A)."""
    ident = identity.generate("a")
    key = PublicKey.from_bytes(ident.public)
    for r in (IDENTITY, ORDER2, ORDER4, ORDER8):
        k = int.from_bytes(hashlib.sha512(r + ident.public + b"m").digest(), "little") % L
        assert not key.verify(b"m", r + k.to_bytes(32, "little"))


@pytest.mark.parametrize("bad", [IDENTITY, ORDER2, ORDER8], ids=["identity", "order2", "order8"])
def test_chain_tracker_refuses_bad_keys(bad: bytes) -> None:
    """The tracker refuses to seat a bad key (a remote error, never a crash), and frames under it never pass."""
    with pytest.raises(InvalidKey) as exc:
        ChainTracker(TABLE, [bad], {"hello"})
    assert isinstance(exc.value, MalformedMessage)
    real = identity.generate("b")
    t = ChainTracker(TABLE, [real.public], {"hello"})
    with pytest.raises(InvalidKey):
        t.add_sender(with_torsion(real.public))


def test_tracker_uses_the_strict_rule() -> None:
    """A frame whose signature has S + L is a bad signature at the tracker."""
    ident = identity.generate("a")
    signed = seal(ident, Envelope(TABLE, 0, ident.public, 0, GENESIS, "hello", {}))
    t = ChainTracker(TABLE, [ident.public], {"hello"})
    s = int.from_bytes(signed.signature[32:], "little")
    bad = signed.signature[:32] + (s + L).to_bytes(32, "little") + signed.message
    with pytest.raises(BadSignature):
        t.accept(bad)
    assert t.accept(signed.frame).envelope.type == "hello"


def test_config_refuses_bad_seat_keys() -> None:
    """A table config naming a small-order or identity key is refused, locally and from the wire."""
    good = identity.generate("a").public
    for bad in (IDENTITY, ORDER2, with_torsion(good)):
        with pytest.raises(InputError, match="not a valid Ed25519 identity key"):
            TableConfig(TABLE, "crisp", {}, (good, bad), ("a", "b"))
        wire = {"table": TABLE, "game": "crisp", "options": {}, "keys": [good, bad], "names": ["a", "b"], "dealer": 0}
        with pytest.raises(MalformedMessage):
            TableConfig.from_wire(wire)
