"""The known answers of protocol.md §5, rebuilt from the document's words alone.

Nothing here imports p2pcards: the encoding (§1's table), the transcript hash, the round keys
(§4.3), the Schnorr proof (§4.4), the initial deck and its digest (§4.5), the pass and its
randomness (§4.6), the proof of shuffle (§4.12: both the prover and the verifier), the
Chaum–Pedersen proofs of shares (§4.8), and a signed frame and a fingerprint (§2, §3) are
written here again from the text with only hashlib and PyNaCl, and must give back vectors.json
byte for byte. A peer built from the document by someone else would have to do exactly this.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from nacl import bindings as na
from nacl.signing import SigningKey

V = json.loads(Path(__file__).with_name("vectors.json").read_text(encoding="utf-8"))
L = 2**252 + 27742317777372353535851937790883648493
G = bytes.fromhex("5866666666666666666666666666666666666666666666666666666666666666")
TABLE = bytes.fromhex(V["table_hex"])
ROUND = V["round"]
PLAYERS = V["players"]


# ---------------------------------------------------------------- §1: canonical msgpack and H


def enc(v: Any) -> bytes:
    """§1's table: the smallest format that fits (the subset the transcripts use)."""
    if v is None:
        return b"\xc0"
    if v is True or v is False:
        return b"\xc3" if v else b"\xc2"
    if isinstance(v, int):
        if 0 <= v < 0x80:
            return bytes([v])
        if v >= 0:
            for tag, size in ((0xCC, 1), (0xCD, 2), (0xCE, 4), (0xCF, 8)):
                if v < 1 << (8 * size):
                    return bytes([tag]) + v.to_bytes(size, "big")
        if v >= -32:
            return (v & 0xFF).to_bytes(1, "big")
        for tag, size in ((0xD0, 1), (0xD1, 2), (0xD2, 4), (0xD3, 8)):
            if -(1 << (8 * size - 1)) <= v:
                return bytes([tag]) + v.to_bytes(size, "big", signed=True)
    if isinstance(v, str):
        b = v.encode()
        head = bytes([0xA0 | len(b)]) if len(b) < 32 else _sized(len(b), 0xD9, 0xDA, 0xDB)
        return head + b
    if isinstance(v, bytes):
        return _sized(len(v), 0xC4, 0xC5, 0xC6) + v
    if isinstance(v, list):
        head = bytes([0x90 | len(v)]) if len(v) < 16 else _sized(len(v), None, 0xDC, 0xDD)
        return head + b"".join(enc(x) for x in v)
    raise TypeError(v)


def _sized(n: int, t8: int | None, t16: int, t32: int) -> bytes:
    if t8 is not None and n < 256:
        return bytes([t8, n])
    return bytes([t16]) + n.to_bytes(2, "big") if n < 65536 else bytes([t32]) + n.to_bytes(4, "big")


def H(person: str, fields: list[Any], n: int = 64) -> bytes:
    """BLAKE2b, n bytes, personalisation `person`, over the canonical encoding of the array `fields`."""
    return hashlib.blake2b(enc(fields), digest_size=n, person=person.encode()).digest()


def reduce64(h: bytes) -> int:
    return int.from_bytes(h, "little") % L


def nonzero64(h: bytes) -> int:
    return 1 + int.from_bytes(h, "little") % (L - 1)


def sc(x: int) -> bytes:
    return (x % L).to_bytes(32, "little")


def mul(x: int, p: bytes) -> bytes:
    return bytes(na.crypto_scalarmult_ed25519_noclamp(sc(x), p))


def base(x: int) -> bytes:
    return bytes(na.crypto_scalarmult_ed25519_base_noclamp(sc(x)))


def add(p: bytes, q: bytes) -> bytes:
    return bytes(na.crypto_core_ed25519_add(p, q))


def sub(p: bytes, q: bytes) -> bytes:
    return bytes(na.crypto_core_ed25519_sub(p, q))


def total(points: list[bytes]) -> bytes:
    out = points[0]
    for p in points[1:]:
        out = add(out, p)
    return out


def lincomb(scalars: list[int], points: list[bytes]) -> bytes:
    return total([mul(s, p) for s, p in zip(scalars, points)])


def from_uniform(r: bytes) -> bytes:
    return bytes(na.crypto_core_ed25519_from_uniform(r))


def points(blob: bytes) -> list[bytes]:
    return [blob[i : i + 32] for i in range(0, len(blob), 32)]


def hexbin(j: dict[str, str]) -> bytes:
    return bytes.fromhex(j["bin"])


# ---------------------------------------------------------------- §4.3, §4.4: keys and Schnorr


SEEDS = [bytes.fromhex(s) for s in V["round_keys"]["seeds_hex"]]
XS = [reduce64(H("p2pc/rkey/v1", [TABLE, ROUND, seat, seed])) for seat, seed in enumerate(SEEDS)]
PKS = [base(x) for x in XS]
JOINT = add(PKS[0], PKS[1])


def test_round_keys_and_commitments() -> None:
    """x, PK_seat and the commitment of §4.3, and the joint key, for both seeds (and §5's spot values)."""
    rk = V["round_keys"]
    assert [sc(x).hex() for x in XS] == rk["keys_hex"]
    assert [p.hex() for p in PKS] == rk["publics_hex"]
    commits = [H("p2pc/commit/v1", [TABLE, ROUND, s, PKS[s], SEEDS[s]], 32).hex() for s in range(2)]
    assert commits == rk["commitments_hex"]
    assert JOINT.hex() == rk["joint_hex"] == "8420de8d92dc7b6dd0f0b462443a634eeff1b19be03443d5a3855f4cdf980c8d"
    assert PKS[0].hex() == "b6a5b34a9adce30b427a2ea07d81ba7e9f29877d5888059f31404ca1218d1053"


def test_schnorr_proofs_of_the_round_keys() -> None:
    """§4.4 proved (deterministic nonce) gives the stored proof, and the stored proof verifies as §4.4 says."""
    for seat, (x, pk) in enumerate(zip(XS, PKS)):
        stmt = [TABLE, ROUND, seat, G, pk]
        k = reduce64(H("p2pc/nonce/v1", [sc(x), "pok", *stmt]))
        e = reduce64(H("p2pc/pok/v1", [*stmt, base(k)]))
        proof = sc(e) + sc(k + e * x)
        assert proof.hex() == V["round_keys"]["pok_hex"][seat]
        e_, s_ = int.from_bytes(proof[:32], "little"), int.from_bytes(proof[32:], "little")
        assert e_ < L and s_ < L
        t = sub(base(s_), mul(e_, pk))
        assert reduce64(H("p2pc/pok/v1", [*stmt, t])) == e_
        other = [TABLE, ROUND, 1 - seat, G, pk]  # bound to its seat
        assert reduce64(H("p2pc/pok/v1", [*other, t])) != e_


# ---------------------------------------------------------------- §4.2, §4.5, §4.6: the deck and a pass


CARDS = V["deck"]["cards"]
TAGS = V["deck"]["tags"]
N = len(CARDS)


def card(c: str | int) -> bytes:
    """P(card) = from_uniform(h0) + from_uniform(h1) (§4.2)."""
    return add(from_uniform(H("p2pc/card/v1", [TABLE, ROUND, c, 0], 32)),
               from_uniform(H("p2pc/card/v1", [TABLE, ROUND, c, 1], 32)))


def digest(deck: int, stage: int, cts: bytes, tags: list[str] | None) -> bytes:
    return H("p2pc/deck/v1", [TABLE, ROUND, deck, stage, cts, tags], 32)


def randomness(seat: int, deck: int, n: int) -> tuple[list[int], list[int]]:
    """§4.6: the r_j and the Fisher–Yates permutation from 64-bit words, block after block."""
    b = [TABLE, ROUND, seat, deck, n, SEEDS[seat]]
    rs = [reduce64(H("p2pc/shuffle/v1", [*b, "r", j])) for j in range(n)]
    perm, words, block = list(range(n)), list[int](), 0
    for i in range(n - 1, 0, -1):
        bound = i + 1
        limit = 2**64 - (2**64 % bound)
        while True:
            if not words:
                h = H("p2pc/shuffle/v1", [*b, "p", block])
                block += 1
                words = [int.from_bytes(h[8 * k : 8 * k + 8], "little") for k in range(8)]
            w = words.pop(0)
            if w < limit:
                break
        j = w % bound
        perm[i], perm[j] = perm[j], perm[i]
    return perm, rs


def test_cards_initial_deck_and_its_digest() -> None:
    """P("AS") of §5, the stage-0 deck (c1 = G, c2 = P + PK) and the digest each pass names as its input."""
    assert card("AS").hex() == "c78e9c7093cc8a91c90fec403fd09328850c38c2bf5ca56821e8ae8e74543377"
    cts = b"".join(G + add(card(c), JOINT) for c in CARDS)
    assert cts == hexbin(V["deck"]["stages"][0]["cts"])
    assert digest(0, 0, cts, TAGS).hex() == V["shuffle"]["passes"][0]["input_hex"]


def test_pass_randomness_and_the_passes() -> None:
    """§5's permutation of 10 cards, and both passes of the deck recomputed from their seeds."""
    pr = V["pass_randomness"]
    perm, rs = randomness(pr["seat"], pr["deck"], pr["n"])
    assert perm == pr["perm"] == [9, 5, 3, 8, 6, 1, 0, 7, 2, 4]
    assert [sc(r).hex() for r in rs] == pr["scalars_hex"]
    stages = V["deck"]["stages"]
    for seat in range(2):
        prev, new = stages[seat], stages[seat + 1]
        pts = points(hexbin(prev["cts"]))
        c1, c2 = pts[0::2], pts[1::2]
        perm, rs = randomness(seat, 0, N)
        out = b"".join(add(c1[p], base(r)) + add(c2[p], mul(r, JOINT)) for p, r in zip(perm, rs))
        assert out == hexbin(new["cts"])
        assert new["tags"] == [prev["tags"][p] for p in perm]
        assert hexbin(new["input"]) == digest(0, seat, hexbin(prev["cts"]), prev["tags"])


# ---------------------------------------------------------------- §4.12: the proof of shuffle


def generators(n: int) -> list[bytes]:
    return [add(from_uniform(H("p2pc/gen/v1", [i, 0], 32)), from_uniform(H("p2pc/gen/v1", [i, 1], 32)))
            for i in range(n)]


def tau(tag: str | None) -> int:
    return 0 if tag is None else reduce64(H("p2pc/tag/v1", [tag]))


def statement(seat: int) -> tuple[list[Any], dict[str, Any], dict[str, Any]]:
    prev, new = V["deck"]["stages"][seat], V["deck"]["stages"][seat + 1]
    stmt = [TABLE, ROUND, PLAYERS, 0, seat, N, JOINT, hexbin(new["input"]),
            hexbin(prev["cts"]), prev["tags"], hexbin(new["cts"]), new["tags"]]
    return stmt, prev, new


def challenge_v(s: bytes, b: list[bytes], a_: bytes, b_: list[bytes], c_: bytes, d_: bytes,
                f1: bytes, f2: bytes, ft: int) -> int:
    return nonzero64(H("p2pc/tw-v/v1", [s, b"".join(b), a_, b"".join(b_), c_, d_, f1, f2, sc(ft)]))


def test_proof_of_shuffle_proved_from_the_document() -> None:
    """§4.12's prover, from the seat's seed, gives each stored proof byte for byte (and §5's e_j and v)."""
    h = generators(N)
    for seat in range(2):
        stmt, prev, new = statement(seat)
        perm, rs = randomness(seat, 0, N)
        inv = [0] * N
        for k, j in enumerate(perm):
            inv[j] = k
        key = [SEEDS[seat], TABLE, ROUND, seat, 0, hexbin(new["input"]), JOINT]

        def rho(label: str, i: int) -> int:
            return nonzero64(H("p2pc/tw-nonce/v1", [*key, label, i]))

        c = [rho("c", j) for j in range(N)]
        u = [add(base(c[j]), h[inv[j]]) for j in range(N)]
        s = H("p2pc/tw-e/v1", [*stmt, b"".join(u)])
        e = [nonzero64(H("p2pc/tw-ej/v1", [s, j])) for j in range(N)]
        ep = [e[perm[k]] for k in range(N)]
        bk, beta, eps = ([rho(lab, k) for k in range(N)] for lab in ("b", "beta", "eps"))
        alpha, gamma, delta, phi = (rho("x", i) for i in range(4))
        B, prevB, d = [], h[0], 0
        for k in range(N):
            prevB = add(base(bk[k]), mul(ep[k], prevB))
            B.append(prevB)
            d = (bk[k] + ep[k] * d) % L
        out = points(hexbin(new["cts"]))
        a_ = add(base(alpha), lincomb(eps, h))
        b_ = [add(base(beta[k]), mul(eps[k], ([h[0]] + B)[k])) for k in range(N)]
        f1 = add(base(-phi), lincomb(eps, out[0::2]))
        f2 = add(mul(-phi, JOINT), lincomb(eps, out[1::2]))
        ft = sum(x * tau(t) for x, t in zip(eps, new["tags"])) % L
        v = challenge_v(s, B, a_, b_, base(gamma), base(delta), f1, f2, ft)
        k_a = v * sum(cj * ej for cj, ej in zip(c, e)) + alpha
        k_b = [v * bk[k] + beta[k] for k in range(N)]
        k_c = v * sum(c) + gamma
        k_d = v * d + delta
        k_e = [v * ep[k] + eps[k] for k in range(N)]
        k_f = v * sum(x * r for x, r in zip(ep, rs)) + phi
        proof = b"".join(u) + b"".join(B) + b"".join(sc(x) for x in [v, k_a, k_c, k_d, k_f, *k_b, *k_e])
        assert proof == hexbin(new["proof"]) and len(proof) == (4 * N + 5) * 32
        case = V["shuffle"]["passes"][seat]
        assert (s.hex(), [sc(x).hex() for x in e], sc(v).hex()) == (case["seed_e_hex"], case["e_hex"], case["v_hex"])


def test_proof_of_shuffle_verified_from_the_document() -> None:
    """§4.12's verifier accepts each stored proof, and refuses it for the pass with two outputs swapped."""
    h = generators(N)

    def verify(stmt: list[Any], prev: dict[str, Any], new_cts: bytes, new_tags: list[str], proof: bytes) -> bool:
        u, B = points(proof[: 32 * N]), points(proof[32 * N : 64 * N])
        sc_ = [int.from_bytes(x, "little") for x in points(proof[64 * N :])]
        assert all(0 < x < L for x in sc_)
        v, k_a, k_c, k_d, k_f, k_b, k_e = *sc_[:5], sc_[5 : 5 + N], sc_[5 + N :]
        s = H("p2pc/tw-e/v1", [*stmt, b"".join(u)])
        e = [nonzero64(H("p2pc/tw-ej/v1", [s, j])) for j in range(N)]
        prod = 1
        for x in e:
            prod = prod * x % L
        inp, out = points(hexbin(prev["cts"])), points(new_cts)
        ve = [v * x for x in e]
        a_ = sub(add(base(k_a), lincomb(k_e, h)), lincomb(ve, u))
        b_ = [sub(add(base(k_b[k]), mul(k_e[k], ([h[0]] + B)[k])), mul(v, B[k])) for k in range(N)]
        c_ = sub(base(k_c), mul(v, sub(total(u), total(h))))
        d_ = sub(base(k_d), mul(v, sub(B[-1], mul(prod, h[0]))))
        f1 = sub(add(base(-k_f), lincomb(k_e, out[0::2])), lincomb(ve, inp[0::2]))
        f2 = sub(add(mul(-k_f, JOINT), lincomb(k_e, out[1::2])), lincomb(ve, inp[1::2]))
        ft = (sum(k * tau(t) for k, t in zip(k_e, new_tags)) - sum(x * tau(t) for x, t in zip(ve, prev["tags"]))) % L
        return challenge_v(s, B, a_, b_, c_, d_, f1, f2, ft) == v

    for seat in range(2):
        stmt, prev, new = statement(seat)
        assert verify(stmt, prev, hexbin(new["cts"]), new["tags"], hexbin(new["proof"]))
        cts = points(hexbin(new["cts"]))
        swapped = b"".join(cts[2:4] + cts[0:2] + cts[4:])  # another true shuffle, which this proof is not for
        tags = [new["tags"][1], new["tags"][0], *new["tags"][2:]]
        moved = [*stmt[:10], swapped, tags]
        assert not verify(moved, prev, swapped, tags, hexbin(new["proof"]))


# ---------------------------------------------------------------- §4.7, §4.8: shares and DLEQ proofs


def dleq(x: int, c1: bytes, position: int, recipient: int | None, prover: int) -> tuple[bytes, bytes]:
    """The share D = x·c1 and its proof e || s, deterministic nonce (§4.8)."""
    d = mul(x, c1)
    stmt = [TABLE, ROUND, 0, position, recipient, prover, G, base(x), c1, d]
    k = reduce64(H("p2pc/nonce/v1", [sc(x), "dleq", *stmt]))
    e = reduce64(H("p2pc/dleq/v1", [*stmt, base(k), mul(k, c1)]))
    return d, sc(e) + sc(k + e * x)


def test_dleq_proofs_of_shares() -> None:
    """Seat 1's private shares for seat 0 and both public shares are §4.8's, name the final deck (§4.7), and open to
    the stored card."""
    last = V["deck"]["stages"][-1]
    final = points(hexbin(last["cts"]))
    c1, c2 = final[0::2], final[1::2]
    named = digest(0, 2, hexbin(last["cts"]), last["tags"])  # every reveal names the final deck it was proved on
    rv = V["reveal"]["wire"]
    assert hexbin(rv["final"]) == named and all(hexbin(w["final"]) == named for w in V["public_reveal"]["wire"])
    made = [dleq(XS[1], c1[p], p, 0, 1) for p in rv["positions"]]
    assert b"".join(d for d, _ in made) == hexbin(rv["shares"])
    assert b"".join(p for _, p in made) == hexbin(rv["proofs"])
    for p, (d, proof) in zip(rv["positions"], made):  # verified as §4.8 says
        e, s = int.from_bytes(proof[:32], "little"), int.from_bytes(proof[32:], "little")
        t1, t2 = sub(base(s), mul(e, PKS[1])), sub(mul(s, c1[p]), mul(e, d))
        assert reduce64(H("p2pc/dleq/v1", [TABLE, ROUND, 0, p, 0, 1, G, PKS[1], c1[p], d, t1, t2])) == e
        assert reduce64(H("p2pc/dleq/v1", [TABLE, ROUND, 0, p, None, 1, G, PKS[1], c1[p], d, t1, t2])) != e
    public = V["public_reveal"]["wire"]
    shares = []
    for prover, wire in enumerate(public):
        d, proof = dleq(XS[prover], c1[1], 1, None, prover)
        assert (hexbin(wire["shares"]), hexbin(wire["proofs"])) == (d, proof)
        shares.append(d)
    assert sub(sub(c2[1], shares[0]), shares[1]) == card(V["public_reveal"]["card"])


# ---------------------------------------------------------------- §2, §3: a frame and a fingerprint


def test_envelope_frame_and_fingerprint() -> None:
    """§2's message (seven keys in canonical order), its Ed25519 frame and hash, and §3's fingerprint."""
    env = V["envelope"]
    key = SigningKey(bytes.fromhex(env["ed25519_seed_hex"]))
    public = bytes(key.verify_key)
    assert public.hex() == env["public_hex"]
    body = b"\x82" + enc("n") + enc(1) + enc("name") + enc("vector")  # {"n": 1, "name": "vector"}, keys sorted
    message = (b"\x87" + enc("body") + body + enc("prev") + enc(bytes(32)) + enc("round") + enc(ROUND)
               + enc("sender") + enc(public) + enc("seq") + enc(0) + enc("table") + enc(TABLE)
               + enc("type") + enc("hello"))
    assert message.hex() == env["message_hex"]
    assert (bytes(key.sign(message).signature) + message).hex() == env["frame_hex"]
    assert hashlib.blake2b(message, digest_size=32, person=b"p2pc/msg/v1").hexdigest() == env["message_hash_hex"]
    h = hashlib.blake2b(public, digest_size=25, person=b"p2pc/fpr/v1").digest()
    fpr = " ".join(f"{int.from_bytes(h[5 * i : 5 * i + 5], 'big') % 100_000:05d}" for i in range(5))
    assert fpr == env["fingerprint"] == "09192 51733 14376 41248 05405"
