"""Private payloads for one seat: libsodium sealed boxes to the X25519 twin of its Ed25519 key.

Decryption shares are the same value whoever they are meant for, so a share sent in the clear
for one player's private look would, added to another private look at the same card, let a
third seat decrypt it. Private shares therefore travel sealed to their recipient.
"""

from __future__ import annotations

import functools

from nacl.exceptions import CryptoError
from nacl.public import PrivateKey, PublicKey, SealedBox
from nacl.signing import SigningKey, VerifyKey

from ..errors import InvalidKey, MalformedMessage
from .identity import Identity


@functools.lru_cache(maxsize=64)
def _twin(recipient: bytes) -> PublicKey:
    """The X25519 twin of an Ed25519 key (a table seals to the same few keys all game: derived once)."""
    try:
        return VerifyKey(recipient).to_curve25519_public_key()
    except CryptoError:  # libsodium refuses small-order and malformed keys: there is no one to seal to
        raise InvalidKey(f"no X25519 twin for the key {recipient.hex()}") from None


def seal_to(recipient: bytes, plaintext: bytes) -> bytes:
    """`plaintext` sealed so that only the holder of Ed25519 key `recipient` can open it; InvalidKey if none can."""
    return bytes(SealedBox(_twin(recipient)).encrypt(plaintext))


class Opener:
    """Opens the boxes sealed to one identity (its X25519 key is derived once)."""

    def __init__(self, identity: Identity) -> None:
        seed = identity.key.private_bytes_raw()
        self._private: PrivateKey = SigningKey(seed).to_curve25519_private_key()

    def open(self, box: bytes) -> bytes:
        """The plaintext; MalformedMessage when the box was not sealed to us or was altered."""
        try:
            return bytes(SealedBox(self._private).decrypt(box))
        except CryptoError:
            raise MalformedMessage("a sealed box that does not open") from None
