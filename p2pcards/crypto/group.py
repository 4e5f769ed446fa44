"""The prime-order group of edwards25519 through libsodium: thin wrappers, no arithmetic in Python."""

from __future__ import annotations

from typing import Final

import nacl.exceptions
from nacl import bindings as _b

from ..errors import InvalidPoint

# Calls go through the `_b` module attribute so the benchmark can count them by patching nacl.bindings.

POINT_BYTES: Final = 32
SCALAR_BYTES: Final = 32
ORDER: Final = 2**252 + 27742317777372353535851937790883648493  # L, the prime order of the subgroup


def is_valid(point: object) -> bool:
    """True for a canonical encoding of a point of the prime-order subgroup other than the identity."""
    return isinstance(point, bytes) and len(point) == POINT_BYTES and bool(_b.crypto_core_ed25519_is_valid_point(point))


def is_scalar(scalar: object) -> bool:
    """True for a canonical 32-byte little-endian scalar below L."""
    return isinstance(scalar, bytes) and len(scalar) == SCALAR_BYTES and int.from_bytes(scalar, "little") < ORDER


def mul(scalar: bytes, point: bytes) -> bytes:
    """scalar·point; libsodium itself rejects a point outside the subgroup, so this also validates it."""
    try:
        result: bytes = _b.crypto_scalarmult_ed25519_noclamp(scalar, point)
    except (nacl.exceptions.RuntimeError, nacl.exceptions.TypeError, nacl.exceptions.ValueError):
        raise InvalidPoint("not a valid point of the subgroup (or a zero product)") from None
    return result


def mul_base(scalar: bytes) -> bytes:
    """scalar·G with libsodium's precomputed tables; InvalidPoint for a zero scalar."""
    try:
        result: bytes = _b.crypto_scalarmult_ed25519_base_noclamp(scalar)
    except (nacl.exceptions.RuntimeError, nacl.exceptions.TypeError, nacl.exceptions.ValueError):
        raise InvalidPoint("zero scalar times the base point") from None
    return result


def add(p: bytes, q: bytes) -> bytes:
    """p + q (no subgroup check: both must already be validated)."""
    try:
        result: bytes = _b.crypto_core_ed25519_add(p, q)
    except (nacl.exceptions.RuntimeError, nacl.exceptions.TypeError, nacl.exceptions.ValueError):
        raise InvalidPoint("point addition on a non-point") from None
    return result


def sub(p: bytes, q: bytes) -> bytes:
    """p - q (no subgroup check: both must already be validated)."""
    try:
        result: bytes = _b.crypto_core_ed25519_sub(p, q)
    except (nacl.exceptions.RuntimeError, nacl.exceptions.TypeError, nacl.exceptions.ValueError):
        raise InvalidPoint("point subtraction on a non-point") from None
    return result


def from_uniform(h: bytes) -> bytes:
    """libsodium's Elligator 2 map of 32 uniform bytes to a point of the subgroup (cofactor cleared)."""
    result: bytes = _b.crypto_core_ed25519_from_uniform(h)
    return result


def scalar_reduce(h: bytes) -> bytes:
    """A 64-byte hash reduced modulo L to a canonical scalar."""
    result: bytes = _b.crypto_core_ed25519_scalar_reduce(h)
    return result


def scalar_add(a: bytes, b: bytes) -> bytes:
    """a + b mod L."""
    result: bytes = _b.crypto_core_ed25519_scalar_add(a, b)
    return result


def scalar_sub(a: bytes, b: bytes) -> bytes:
    """a - b mod L."""
    result: bytes = _b.crypto_core_ed25519_scalar_sub(a, b)
    return result


def scalar_mul(a: bytes, b: bytes) -> bytes:
    """a · b mod L."""
    result: bytes = _b.crypto_core_ed25519_scalar_mul(a, b)
    return result


def scalar_of_int(n: int) -> bytes:
    """The canonical encoding of n mod L."""
    return (n % ORDER).to_bytes(SCALAR_BYTES, "little")


ONE: Final = scalar_of_int(1)
BASE: Final = mul_base(ONE)  # the standard generator G
