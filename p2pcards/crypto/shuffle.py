"""Proof of a shuffle: Terelius–Wikström, as specified for the Verificatum mix-net, made non-interactive.

The proof shows that an output list of ElGamal ciphertexts is a permutation and re-encryption of an
input list under the joint key, without revealing the permutation or the re-encryption scalars.

Sources, followed step for step:

- B. Terelius and D. Wikström, "Proofs of Restricted Shuffles", AFRICACRYPT 2010, LNCS 6055,
  pp. 100-113: the protocol (a permutation matrix is one whose columns are committed, that sums
  to the all-ones vector, and that preserves the product of a random vector's entries).
- D. Wikström, "How to Implement a Stand-alone Verifier for the Verificatum Mix-Net" (version
  3.1.0), Algorithm 19, "Proof of a Shuffle": the exact equations below (names kept: u, e, A, B,
  C, D, F, A', B', C', D', F', k_A, k_B, k_C, k_D, k_E, k_F, v).

Notation (additive, G the base point, PK the joint key, h_0..h_{N-1} the independent generators,
phi(s) = (s·G, s·PK) the re-encryption of zero with scalar s). The pass is out_k = in_{pi(k)} + phi(r_k).

Prover (Algorithm 19, prover side, with Fiat–Shamir in place of the verifier):
  1. u_j = c_j·G + h_{pi^-1(j)}                       (permutation commitment, c_j random)
  2. seed = H_e(statement, u); e_j = 1 + H(seed, j) mod (L-1); e'_k = e_{pi(k)}
  3. B_{-1} = h_0; B_k = b_k·G + e'_k·B_{k-1}           (b_k random)
     A' = alpha·G + Σ eps_k·h_k
     B'_k = beta_k·G + eps_k·B_{k-1}
     C' = gamma·G, D' = delta·G
     F' = phi(-phi_) + Σ eps_k·out_k
  4. v = 1 + H_v(seed, B, A', B', C', D', F') mod (L-1)
  5. k_A = v·<c, e> + alpha, k_B,k = v·b_k + beta_k, k_C = v·Σc_j + gamma,
     k_D = v·d + delta (d with B_{N-1} = d·G + (Π e_j)·h_0), k_E,k = v·e'_k + eps_k,
     k_F = v·<r, e'> + phi_

Verifier: A = Σ e_j·u_j, C = Σ u_j - Σ h_j, D = B_{N-1} - (Π e_j)·h_0, F = Σ e_j·in_j, and
  v·A + A' = k_A·G + Σ k_E,k·h_k
  v·B_k + B'_k = k_B,k·G + k_E,k·B_{k-1}
  v·C + C' = k_C·G,  v·D + D' = k_D·G
  v·F + F' = phi(-k_F) + Σ k_E,k·out_k

The proof is sent in the compact (challenge, response) form: u, B, v and the responses; the
verifier recomputes A', B', C', D', F' from the equations above and accepts when hashing them
gives back v. That is the same check as Algorithm 19's, and the verifier never has to validate
commitment points it did not compute.

Public tags (Crescendo's card backs) are bound by extending each ciphertext with a third
component in Z_L, tau = H_tag(tag) (0 for a deck without tags), which re-encryption leaves alone:
the ciphertext space becomes G x G x Z_L and phi(s) = (s·G, s·PK, 0). The proof is unchanged
(Terelius–Wikström holds for any homomorphic re-encryption into a group of prime exponent L), so
it shows that every output tag is the tag of the input card it came from. The tag component costs
only integer arithmetic.

Every challenge (e_j, v) is in [1, L-1]; every response must be non-zero (an honest prover meets a
zero with probability below 2^-240, and then fails locally) so no scalar multiplication in the
verifier is ever by zero. Every point that enters from the proof or the output list is validated
(canonical, in the prime-order subgroup, not the identity) by the libsodium multiplication it
takes part in.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

from ..errors import MalformedMessage
from . import group
from .encoding import Value, encode, transcript_hash

E_PERSON: Final = b"p2pc/tw-e/v1"
EJ_PERSON: Final = b"p2pc/tw-ej/v1"
V_PERSON: Final = b"p2pc/tw-v/v1"
NONCE_PERSON: Final = b"p2pc/tw-nonce/v1"
GEN_PERSON: Final = b"p2pc/gen/v1"
TAG_PERSON: Final = b"p2pc/tag/v1"
L: Final = group.ORDER


def proof_bytes(n: int) -> int:
    """Bytes in the proof of a shuffle of n ciphertexts: u, B (n points each), v, k_A, k_C, k_D, k_F, k_B, k_E."""
    return 32 * (4 * n + 5)


# ---------------------------------------------------------------- generators and tags


def generator(i: int) -> bytes:
    """h_i = from_uniform(H_gen([i, 0], 32)) + from_uniform(H_gen([i, 1], 32))."""
    h0, h1 = (transcript_hash(GEN_PERSON, [i, b], 32) for b in (0, 1))
    return group.add(group.from_uniform(h0), group.from_uniform(h1))


_GENERATORS: list[bytes] = []  # h_0, h_1, ...: the same for every table and deck size, so each is derived once


@lru_cache(maxsize=64)
def generators(n: int) -> tuple[tuple[bytes, ...], bytes]:
    """(h_0..h_{n-1}, Σ h_j)."""
    while len(_GENERATORS) < n:
        _GENERATORS.append(generator(len(_GENERATORS)))
    hs = tuple(_GENERATORS[:n])
    return hs, _sum(hs)


def tag_scalar(tag: str | None) -> int:
    """tau(tag) = reduce64(H_tag([tag])); 0 for a deck without tags."""
    if tag is None:
        return 0
    return int.from_bytes(transcript_hash(TAG_PERSON, [tag]), "little") % L


def _indexed(person: bytes, fields: Sequence[Value], count: int) -> list[int]:
    """[1 + (H(person, fields + [j], 64) mod (L-1)) for j < count], hashing the shared prefix once."""
    prefix = hashlib.blake2b(encode([*fields, 0])[:-1], digest_size=64, person=person)  # drop the trailing fixint 0
    out = []
    for j in range(count):
        h = prefix.copy()
        h.update(encode(j))
        out.append(_nonzero(h.digest()))
    return out


def _nonzero(h: bytes) -> int:
    """A 64-byte hash mapped to [1, L-1]: 1 + (h mod (L-1))."""
    return 1 + int.from_bytes(h, "little") % (L - 1)


def _sc(x: int) -> bytes:
    """The canonical 32-byte encoding of x mod L."""
    return (x % L).to_bytes(32, "little")


# ---------------------------------------------------------------- statement and proof


@dataclass(frozen=True, slots=True)
class Statement:
    """What one pass claims: `out` is a permutation and re-encryption of `inp` under `joint`, in `context`."""

    context: tuple[Value, ...]  # table, round, players, deck, seat: what the proof is bound to
    joint: bytes
    input_digest: bytes
    in_c1: tuple[bytes, ...]
    in_c2: tuple[bytes, ...]
    in_tags: tuple[str, ...] | None
    out_c1: tuple[bytes, ...]
    out_c2: tuple[bytes, ...]
    out_tags: tuple[str, ...] | None

    def fields(self) -> list[Value]:
        """The statement as transcript fields: context, n, PK, input digest, input cts and tags, output cts and tags."""
        inp = b"".join(a + b for a, b in zip(self.in_c1, self.in_c2))
        out = b"".join(a + b for a, b in zip(self.out_c1, self.out_c2))
        tin: Value = None if self.in_tags is None else list(self.in_tags)
        tout: Value = None if self.out_tags is None else list(self.out_tags)
        return [*self.context, len(self.in_c1), self.joint, self.input_digest, inp, tin, out, tout]


@dataclass(frozen=True, slots=True)
class ShuffleProof:
    """A compact Terelius–Wikström proof: commitments u and B, challenge v, and the responses."""

    u: tuple[bytes, ...]
    b: tuple[bytes, ...]
    v: int
    k_a: int
    k_c: int
    k_d: int
    k_f: int
    k_b: tuple[int, ...]
    k_e: tuple[int, ...]

    def to_bytes(self) -> bytes:
        """u || B || v || k_A || k_C || k_D || k_F || k_B || k_E, points and 32-byte little-endian scalars."""
        scalars = [self.v, self.k_a, self.k_c, self.k_d, self.k_f, *self.k_b, *self.k_e]
        return b"".join(self.u) + b"".join(self.b) + b"".join(x.to_bytes(32, "little") for x in scalars)

    @classmethod
    def from_bytes(cls, data: bytes, n: int) -> ShuffleProof:
        """Parse a proof for n ciphertexts; MalformedMessage on a wrong length or a zero or non-canonical scalar."""
        if not isinstance(data, bytes) or len(data) != proof_bytes(n):
            raise MalformedMessage(f"a proof of shuffle of {n} cards is {proof_bytes(n)} bytes")
        pts = [data[32 * i : 32 * i + 32] for i in range(2 * n)]
        scalars = [int.from_bytes(data[32 * i : 32 * i + 32], "little") for i in range(2 * n, 4 * n + 5)]
        if not all(0 < x < L for x in scalars):
            raise MalformedMessage("a proof of shuffle scalar is zero or not below L")
        v, k_a, k_c, k_d, k_f = scalars[:5]
        return cls(tuple(pts[:n]), tuple(pts[n:]), v, k_a, k_c, k_d, k_f, tuple(scalars[5 : 5 + n]), tuple(scalars[5 + n :]))


def _challenges(st: Statement, u: Sequence[bytes]) -> tuple[bytes, list[int]]:
    """seed = H_e(statement + [u], 64) and e_j = 1 + (H_ej([seed, j], 64) mod (L-1))."""
    seed = transcript_hash(E_PERSON, [*st.fields(), b"".join(u)])
    return seed, _indexed(EJ_PERSON, [seed], len(u))


def _challenge_v(seed: bytes, b: Sequence[bytes], a_: bytes, b_: Sequence[bytes], c_: bytes, d_: bytes,
                 f1_: bytes, f2_: bytes, ft_: int) -> int:
    """v = 1 + (H_v(seed, B, A', B', C', D', F'_1, F'_2, F'_tau) mod (L-1))."""
    fields: list[Value] = [seed, b"".join(b), a_, b"".join(b_), c_, d_, f1_, f2_, _sc(ft_)]
    return _nonzero(transcript_hash(V_PERSON, fields))


def _sum(points: Sequence[bytes]) -> bytes:
    """Σ points (at least one)."""
    add = group.add
    total = points[0]
    for p in points[1:]:
        total = add(total, p)
    return total


def _lincomb(scalars: Sequence[int], points: Sequence[bytes]) -> bytes:
    """Σ s_i·P_i with one libsodium multiplication per term (each validates its point)."""
    mul = group.mul
    return _sum([mul(_sc(s), p) for s, p in zip(scalars, points)])


# ---------------------------------------------------------------- prover


def prove(
    st: Statement,
    perm: Sequence[int],
    rs: Sequence[int],
    nonce_key: Sequence[Value],
) -> ShuffleProof:
    """The proof that out_k = in_{perm[k]} + phi(rs[k]); its randomness is 1 + (H_nonce(nonce_key + [label, i]) mod (L-1))."""
    n = len(perm)
    hs, _ = generators(n)
    joint = st.joint
    mul, base, add = group.mul, group.mul_base, group.add

    def nonces(label: str, count: int) -> list[int]:
        return _indexed(NONCE_PERSON, [*nonce_key, label], count)

    inv = [0] * n
    for k, j in enumerate(perm):
        inv[j] = k
    cs = nonces("c", n)
    u = [add(base(_sc(c)), hs[inv[j]]) for j, c in enumerate(cs)]
    seed, es = _challenges(st, u)
    ep = [es[j] for j in perm]

    bs, betas, eps = nonces("b", n), nonces("beta", n), nonces("eps", n)
    alpha, gamma, delta, phi_ = nonces("x", 4)
    chain = [hs[0]]
    x = 0  # log_G of B_k minus its h_0 part: B_k = x·G + (Π e'_j)·h_0
    for k in range(n):
        chain.append(add(base(_sc(bs[k])), mul(_sc(ep[k]), chain[-1])))
        x = (bs[k] + ep[k] * x) % L
    b = chain[1:]
    a_ = add(base(_sc(alpha)), _lincomb(eps, hs))
    b_ = [add(base(_sc(beta)), mul(_sc(e), prev)) for beta, e, prev in zip(betas, eps, chain)]
    c_, d_ = base(_sc(gamma)), base(_sc(delta))
    f1_ = add(base(_sc(-phi_)), _lincomb(eps, st.out_c1))
    f2_ = add(mul(_sc(-phi_), joint), _lincomb(eps, st.out_c2))
    tau_out = [tag_scalar(t) for t in st.out_tags] if st.out_tags is not None else [0] * n
    ft_ = sum(e * t for e, t in zip(eps, tau_out)) % L
    v = _challenge_v(seed, b, a_, b_, c_, d_, f1_, f2_, ft_)

    k_a = (v * sum(c * e for c, e in zip(cs, es)) + alpha) % L
    k_b = tuple((v * bk + beta) % L for bk, beta in zip(bs, betas))
    k_c = (v * sum(cs) + gamma) % L
    k_d = (v * x + delta) % L
    k_e = tuple((v * e + ep_) % L for e, ep_ in zip(ep, eps))
    k_f = (v * sum(e * r for e, r in zip(ep, rs)) + phi_) % L
    if 0 in (k_a, k_c, k_d, k_f) or 0 in k_b or 0 in k_e:  # pragma: no cover - probability below 2^-240
        raise ArithmeticError("a zero response: draw a new seed")
    return ShuffleProof(tuple(u), tuple(b), v, k_a, k_c, k_d, k_f, k_b, k_e)


# ---------------------------------------------------------------- verifier


def verify(st: Statement, proof: ShuffleProof) -> bool:
    """True when `proof` proves `st`; InvalidPoint when a point of the proof or of the output list is not valid.

    The input list must already be verified (it is the previous, verified deck).
    """
    n = len(st.in_c1)
    sizes = [len(st.in_c2), len(st.out_c1), len(st.out_c2), len(proof.u), len(proof.b), len(proof.k_b), len(proof.k_e)]
    sizes += [len(t) for t in (st.in_tags, st.out_tags) if t is not None]
    if n == 0 or any(size != n for size in sizes):  # zip would drop what one list holds beyond another
        return False
    hs, h_total = generators(n)
    u, b, v, k_e = proof.u, proof.b, proof.v, proof.k_e
    mul, base, add, sub = group.mul, group.mul_base, group.add, group.sub
    seed, es = _challenges(st, u)
    ve = [v * e % L for e in es]
    prod = 1
    for e in es:
        prod = prod * e % L

    # v·A, v·F: the challenge folded into the coefficients saves one multiplication per sum.
    # Every u_j and B_k enters a multiplication (which validates it) before any sum: v·B_k first, then B_{n-1} - ...
    va = _lincomb(ve, u)
    vb = [mul(_sc(v), bk) for bk in b]
    c = sub(_sum(u), h_total)
    d = sub(b[-1], mul(_sc(prod), hs[0]))
    a_ = sub(add(base(_sc(proof.k_a)), _lincomb(k_e, hs)), va)
    chain = [hs[0], *b]
    b_ = [
        sub(add(base(_sc(kb)), mul(_sc(ke), prev)), vbk)
        for kb, ke, prev, vbk in zip(proof.k_b, k_e, chain, vb)
    ]
    c_ = sub(base(_sc(proof.k_c)), mul(_sc(v), c))
    d_ = sub(base(_sc(proof.k_d)), mul(_sc(v), d))
    f1_ = sub(add(base(_sc(-proof.k_f)), _lincomb(k_e, st.out_c1)), _lincomb(ve, st.in_c1))
    f2_ = sub(add(mul(_sc(-proof.k_f), st.joint), _lincomb(k_e, st.out_c2)), _lincomb(ve, st.in_c2))
    tau_in = [tag_scalar(t) for t in st.in_tags] if st.in_tags is not None else [0] * n
    tau_out = [tag_scalar(t) for t in st.out_tags] if st.out_tags is not None else [0] * n
    ft_ = (sum(k * t for k, t in zip(k_e, tau_out)) - sum(x * t for x, t in zip(ve, tau_in))) % L
    return _challenge_v(seed, b, a_, b_, c_, d_, f1_, f2_, ft_) == v
