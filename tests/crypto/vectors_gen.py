"""Known-answer vectors for protocol.md: computed here, stored in vectors.json, checked by the tests.

Run `python tests/crypto/vectors_gen.py` to rewrite vectors.json (only when the protocol changes on purpose).
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.crypto import deck as D
from p2pcards.crypto import group, proofs, shuffle
from p2pcards.crypto.encoding import Value, encode, transcript_hash
from p2pcards.crypto.envelope import GENESIS, Envelope, message_hash, seal
from p2pcards.crypto.identity import Identity, fingerprint
from p2pcards.table.config import TableConfig

PATH = Path(__file__).with_name("vectors.json")
TABLE = bytes.fromhex("7032702d7461626c652d766563746f72")  # b"p2p-table-vector"
PLAYERS = ("alice", "bob")  # the seats' names: the `players` of a shuffle statement (§4.12)
ROUND = 7


def to_json(v: Value) -> Any:
    """JSON form of a msgpack value: bytes become {"bin": hex}."""
    if isinstance(v, bytes):
        return {"bin": v.hex()}
    if isinstance(v, (list, tuple)):
        return [to_json(x) for x in v]
    if isinstance(v, dict):
        return {k: to_json(x) for k, x in v.items()}
    return v


def from_json(j: Any) -> Value:
    """Inverse of to_json."""
    if isinstance(j, dict) and set(j) == {"bin"}:
        return bytes.fromhex(j["bin"])
    if isinstance(j, list):
        return [from_json(x) for x in j]
    if isinstance(j, dict):
        return {k: from_json(x) for k, x in j.items()}
    result: Value = j
    return result


ENCODING_CASES: list[Value] = [
    None, True, False, 0, 1, 127, 128, 255, 256, 65535, 65536, 2**32, 2**64 - 1, -1, -32, -33, -128, -129,
    -(2**63), "", "a", "é", "x" * 31, "x" * 32, b"", b"\x00\xff", b"y" * 256, [], [1, [2, [3]]],
    {}, {"b": 1, "a": 2, "": 3, "aa": 4, "é": 5}, {"table": TABLE, "round": ROUND, "list": [None, b"\x01"]},
]


def compute() -> dict[str, Any]:
    """Every vector, recomputed from the code."""
    out: dict[str, Any] = {"table_hex": TABLE.hex(), "round": ROUND, "players": list(PLAYERS)}
    out["encoding"] = [{"value": to_json(v), "hex": encode(v).hex()} for v in ENCODING_CASES]

    out["base_point_hex"] = group.BASE.hex()
    out["hash"] = [
        {"person": p.decode(), "fields": to_json(f), "size": n, "hex": transcript_hash(p, f, n).hex()}
        for p, f, n in [
            (D.CARD_PERSON, [TABLE, ROUND, "AS", 0], 32),
            (proofs.POK_PERSON, [b"abc", 1, 2], 64),
        ]
    ]
    out["cards"] = [
        {
            "card": to_json(c),
            "h0_hex": transcript_hash(D.CARD_PERSON, [TABLE, ROUND, c, 0], 32).hex(),
            "h1_hex": transcript_hash(D.CARD_PERSON, [TABLE, ROUND, c, 1], 32).hex(),
            "point_hex": D.card_point(TABLE, ROUND, c).hex(),
        }
        for c in ["AS", "10H", 1, 100, "J4"]
    ]

    ctx = D.RoundContext(TABLE, ROUND, PLAYERS)
    seeds = [bytes([0x11] * 32), bytes([0x22] * 32)]
    secrets = [D.round_secret(ctx, i, seeds[i]) for i in range(2)]
    anns = [D.announce(ctx, s) for s in secrets]
    keys = D.round_keys(ctx, anns)
    out["round_keys"] = {
        "seats": 2,
        "seeds_hex": [s.hex() for s in seeds],
        "keys_hex": [s.key.hex() for s in secrets],
        "publics_hex": [s.public.hex() for s in secrets],
        "commitments_hex": [s.commitment.hex() for s in secrets],
        "pok_hex": [a.proof.to_bytes().hex() for a in anns],
        "joint_hex": keys.joint.hex(),
    }
    perm, rs = D._pass_randomness(ctx, 0, seeds[0], 0, 10)
    out["pass_randomness"] = {"seat": 0, "deck": 0, "n": 10, "perm": perm, "scalars_hex": [r.to_bytes(32, "little").hex() for r in rs]}

    cards: list[D.Card] = ["AS", "2S", "3S", "KH"]
    tags = ["a", "b", "a", "c"]
    book = D.card_book(ctx, cards)
    deck = D.initial_deck(ctx, keys, book, cards, tags)
    decks = [deck]
    for s in secrets:
        deck = D.shuffle_pass(ctx, keys, s, deck)
        decks.append(deck)
    out["deck"] = {
        "cards": to_json(cards),
        "tags": tags,
        "stages": [to_json(d.to_wire()) for d in decks],
    }
    hs, _ = shuffle.generators(4)
    passes = []
    for prev, new in zip(decks, decks[1:]):
        assert new.input is not None and new.proof is not None
        proof = shuffle.ShuffleProof.from_bytes(new.proof, len(new))
        st = D._statement(ctx, keys, prev, new, new.input)
        seed, es = shuffle._challenges(st, proof.u)
        passes.append({
            "seat": prev.stage,
            "input_hex": D.deck_digest(ctx, prev).hex(),
            "seed_e_hex": seed.hex(),
            "e_hex": [shuffle._sc(e).hex() for e in es],
            "v_hex": shuffle._sc(proof.v).hex(),
        })
    out["shuffle"] = {
        "generators": [
            {
                "i": i,
                "h0_hex": hashlib.blake2b(encode([i, 0]), digest_size=32, person=shuffle.GEN_PERSON).hexdigest(),
                "h1_hex": hashlib.blake2b(encode([i, 1]), digest_size=32, person=shuffle.GEN_PERSON).hexdigest(),
                "point_hex": hs[i].hex(),
            }
            for i in range(4)
        ],
        "tag_scalars_hex": {t: shuffle._sc(shuffle.tag_scalar(t)).hex() for t in ["a", "b", "c"]},
        "passes": passes,
    }
    rv = D.make_reveal(ctx, keys, secrets[1], deck, [0, 3], 0)
    out["reveal"] = {"prover": 1, "recipient": 0, "wire": to_json(rv.to_wire())}
    pub = [D.make_reveal(ctx, keys, s, deck, [1], None) for s in secrets]
    out["public_reveal"] = {"wire": [to_json(p.to_wire()) for p in pub], "card": to_json(D.open_cards(ctx, book, deck, pub)[1])}

    ident = Identity(Ed25519PrivateKey.from_private_bytes(bytes(range(32))), "vector")
    env = Envelope(TABLE, ROUND, ident.public, 0, GENESIS, "hello", {"name": "vector", "n": 1})
    signed = seal(ident, env)
    out["envelope"] = {
        "ed25519_seed_hex": bytes(range(32)).hex(),
        "public_hex": ident.public.hex(),
        "fingerprint": fingerprint(ident.public),
        "message_hex": signed.message.hex(),
        "frame_hex": signed.frame.hex(),
        "message_hash_hex": message_hash(signed.message).hex(),
    }

    # A table's context (protocol.md §6.2): the digest of its config, every seat's lobby nonce included.
    guest = Ed25519PrivateKey.from_private_bytes(bytes(range(1, 33)))
    cfg = TableConfig(TABLE, "crisp", {"limit": 50, "draw_seconds": 30}, (ident.public, Identity(guest, "b").public),
                      ("vector", "é b"), nonces=(bytes([0xAA] * 32), bytes([0xBB] * 32)))
    out["config"] = {"wire": to_json(cfg.to_wire()), "encoding_hex": encode(cfg.to_wire()).hex(),
                     "context_hex": cfg.context.hex()}
    return out


if __name__ == "__main__":
    PATH.write_text(json.dumps(compute(), indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    print(f"wrote {PATH}")
