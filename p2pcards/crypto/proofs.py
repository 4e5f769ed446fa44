"""Fiat–Shamir proofs over edwards25519: Schnorr proof of knowledge and Chaum–Pedersen DLEQ.

Nonces are derived deterministically from the secret and the whole statement and context
(as in EdDSA), so proving needs no randomness and one statement always gets one proof. The one
exception is a DLEQ commitment made ahead (`commit_share`), before the proof's recipient is known:
its nonce is hedged with fresh randomness (the secret, the card and 32 bytes from `secrets`), and
it is used for one proof only, so no nonce ever answers two challenges.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass, field
from typing import Final

from ..errors import BadProof, InvalidPoint, LocalError
from . import group
from .encoding import Value, transcript_hash

POK_PERSON: Final = b"p2pc/pok/v1"
DLEQ_PERSON: Final = b"p2pc/dleq/v1"
NONCE_PERSON: Final = b"p2pc/nonce/v1"
PROOF_BYTES: Final = 64


@dataclass(frozen=True, slots=True)
class Proof:
    """A Fiat–Shamir proof (challenge e, response s), both canonical scalars."""

    challenge: bytes
    response: bytes

    def to_bytes(self) -> bytes:
        """e || s, 64 bytes."""
        return self.challenge + self.response

    @classmethod
    def from_bytes(cls, data: bytes) -> Proof:
        """Parse e || s; BadProof unless both are canonical scalars."""
        if len(data) != PROOF_BYTES:
            raise BadProof("a proof is 64 bytes")
        e, s = data[:32], data[32:]
        if not (group.is_scalar(e) and group.is_scalar(s)):
            raise BadProof("proof scalars are not canonical")
        return cls(e, s)


def _nonce(secret: bytes, label: str, statement: list[Value]) -> bytes:
    """k = H_nonce(secret, label, statement) mod L."""
    return group.scalar_reduce(transcript_hash(NONCE_PERSON, [secret, label, *statement]))


def _respond(k: bytes, e: bytes, secret: bytes) -> bytes:
    """s = k + e·x mod L."""
    return group.scalar_add(k, group.scalar_mul(e, secret))


def pok_context(table: bytes, round: int, seat: int) -> list[Value]:
    """The context a proof of knowledge of a round key is bound to."""
    return [table, round, seat]


def prove_key(secret: bytes, public: bytes, table: bytes, round: int, seat: int) -> Proof:
    """Schnorr proof that the prover knows x with public = x·G, bound to (table, round, seat)."""
    statement: list[Value] = [*pok_context(table, round, seat), group.BASE, public]
    k = _nonce(secret, "pok", statement)
    t = group.mul_base(k)
    e = group.scalar_reduce(transcript_hash(POK_PERSON, [*statement, t]))
    return Proof(e, _respond(k, e, secret))


def verify_key(public: bytes, proof: Proof, table: bytes, round: int, seat: int) -> bool:
    """True when `proof` proves knowledge of log_G(public) in this context; `public` must be valid."""
    statement: list[Value] = [*pok_context(table, round, seat), group.BASE, public]
    try:
        t = group.sub(group.mul_base(proof.response), group.mul(proof.challenge, public))
    except InvalidPoint:
        return False
    return group.scalar_reduce(transcript_hash(POK_PERSON, [*statement, t])) == proof.challenge


def dleq_context(
    table: bytes, round: int, deck: int, position: int, recipient: int | None, prover: int
) -> list[Value]:
    """The context a decryption-share proof is bound to (recipient None for a public reveal)."""
    return [table, round, deck, position, recipient, prover]


@dataclass(frozen=True, slots=True)
class Commitment:
    """The first move of a Chaum–Pedersen proof on base `c1`, made ahead: nonce k, k·G and k·c1. Use once."""

    c1: bytes
    k: bytes = field(repr=False)  # the secret nonce: with the proof it answers, it gives the round key away
    t1: bytes
    t2: bytes


def commit_share(secret: bytes, c1: bytes, label: list[Value]) -> Commitment:
    """A fresh commitment for one later `prove_share` on `c1` (the costly multiplications, done while idle)."""
    k = _nonce(secret, "dleq-ahead", [*label, c1, secrets.token_bytes(32)])
    return Commitment(c1, k, group.mul_base(k), group.mul(k, c1))


def prove_share(
    secret: bytes, public: bytes, c1: bytes, share: bytes, context: list[Value], ahead: Commitment | None = None
) -> Proof:
    """Chaum–Pedersen proof that log_G(public) = log_c1(share), bound to `context` (from a commitment made
    `ahead` on the same c1, which the caller then discards)."""
    statement: list[Value] = [*context, group.BASE, public, c1, share]
    if ahead is None:
        k = _nonce(secret, "dleq", statement)
        t1, t2 = group.mul_base(k), group.mul(k, c1)
    elif ahead.c1 != c1:
        raise LocalError("a commitment made for another card")
    else:
        k, t1, t2 = ahead.k, ahead.t1, ahead.t2
    e = group.scalar_reduce(transcript_hash(DLEQ_PERSON, [*statement, t1, t2]))
    return Proof(e, _respond(k, e, secret))


def verify_share(public: bytes, c1: bytes, share: bytes, proof: Proof, context: list[Value]) -> bool:
    """True when `proof` shows log_G(public) = log_c1(share) in `context`; InvalidPoint if `share` is not a point.

    `public` and `c1` must already be validated; `share` is validated by the multiplication.
    """
    e, s = proof.challenge, proof.response
    if not any(e):  # e·D would fail whatever D is: the proof fails, the share is not thereby invalid
        return False
    es = group.mul(e, share)  # raises InvalidPoint for a bad share point
    try:
        t1 = group.sub(group.mul_base(s), group.mul(e, public))
        t2 = group.sub(group.mul(s, c1), es)
    except InvalidPoint:
        return False
    statement: list[Value] = [*context, group.BASE, public, c1, share]
    return group.scalar_reduce(transcript_hash(DLEQ_PERSON, [*statement, t1, t2])) == e
