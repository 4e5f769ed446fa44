"""Known-answer tests: the code still produces the vectors protocol.md publishes (tests/crypto/vectors.json)."""

from __future__ import annotations

import hashlib
import json

import pytest
from vectors_gen import PATH, compute, from_json

from p2pcards.crypto import deck as D
from p2pcards.crypto import group
from p2pcards.crypto.encoding import decode, encode
from p2pcards.crypto.envelope import ChainTracker
from p2pcards.crypto.identity import verify

STORED = json.loads(PATH.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def fresh() -> dict[str, object]:
    """Every vector recomputed now."""
    return compute()


@pytest.mark.parametrize("section", sorted(STORED))
def test_vectors_unchanged(section: str, fresh: dict[str, object]) -> None:
    """Each section of vectors.json is exactly what the code computes."""
    assert fresh[section] == STORED[section]


def test_encoding_vectors_decode() -> None:
    """Every encoding vector decodes back to its value, and re-encodes to the same bytes."""
    for case in STORED["encoding"]:
        data = bytes.fromhex(case["hex"])
        value = from_json(case["value"])
        assert decode(data) == value
        assert encode(value) == data


def test_hash_vector_is_plain_blake2b() -> None:
    """A transcript hash is BLAKE2b with the personalisation over the msgpack array, nothing more."""
    case = STORED["hash"][0]
    data = encode(from_json(case["fields"]))
    h = hashlib.blake2b(data, digest_size=case["size"], person=case["person"].encode()).hexdigest()
    assert h == case["hex"]


def test_card_vectors_from_their_hashes() -> None:
    """A card point is the sum of the two Elligator maps of its hashes."""
    for case in STORED["cards"]:
        p = group.add(group.from_uniform(bytes.fromhex(case["h0_hex"])), group.from_uniform(bytes.fromhex(case["h1_hex"])))
        assert p.hex() == case["point_hex"]
        assert group.is_valid(p)


def test_envelope_vector_verifies() -> None:
    """The frame is signature || message, and the signature verifies over exactly the message."""
    env = STORED["envelope"]
    frame, message = bytes.fromhex(env["frame_hex"]), bytes.fromhex(env["message_hex"])
    public = bytes.fromhex(env["public_hex"])
    assert frame[64:] == message and verify(public, message, frame[:64])
    t = ChainTracker(bytes.fromhex(STORED["table_hex"]), [public], {"hello"}, {STORED["round"]})
    assert t.accept(frame).envelope.body == {"name": "vector", "n": 1}


def test_deck_vector_audits() -> None:
    """The stored two-seat round audits as verified from its seeds, and opens to the stored card."""
    ctx = D.RoundContext(bytes.fromhex(STORED["table_hex"]), STORED["round"], tuple(STORED["players"]))
    r = STORED["round_keys"]
    secrets = [D.round_secret(ctx, i, bytes.fromhex(s)) for i, s in enumerate(r["seeds_hex"])]
    anns = [D.announce(ctx, s) for s in secrets]
    cards = from_json(STORED["deck"]["cards"])
    assert isinstance(cards, list)
    book = D.card_book(ctx, cards)  # type: ignore[arg-type]
    first = from_json(STORED["deck"]["stages"][0])
    assert isinstance(first, dict) and first["input"] is None and first["proof"] is None
    stages = [D.initial_deck(ctx, D.round_keys(ctx, anns), book, cards, STORED["deck"]["tags"])]  # type: ignore[arg-type]
    stages += [D.EncryptedDeck.from_wire(from_json(s)) for s in STORED["deck"]["stages"][1:]]
    assert stages[0].to_wire() == first
    rec = D.DeckRecord(0, tuple(cards), tuple(STORED["deck"]["tags"]), tuple(stages[1:]))  # type: ignore[arg-type]
    keys = D.round_keys(ctx, anns)
    for prev, new, case in zip(stages, stages[1:], STORED["shuffle"]["passes"]):
        D.verify_pass(ctx, keys, prev, new)  # the stored proofs verify, whoever made them
        assert new.input is not None and new.input.hex() == case["input_hex"]
    rv = D.Reveal.from_wire(from_json(STORED["reveal"]["wire"]))
    report = D.audit(ctx, anns, [D.open_commitment(s) for s in secrets], book, [rec], [rv])
    assert report.verified
    assert report.faces[0][1] == from_json(STORED["public_reveal"]["card"])


def test_generator_vectors_from_their_hashes() -> None:
    """A proof-of-shuffle generator is the sum of the two Elligator maps of its hashes."""
    for case in STORED["shuffle"]["generators"]:
        p = group.add(group.from_uniform(bytes.fromhex(case["h0_hex"])), group.from_uniform(bytes.fromhex(case["h1_hex"])))
        assert p.hex() == case["point_hex"] and group.is_valid(p)


def test_config_vector_is_the_context() -> None:
    """A table's context is BLAKE2b-256, personalised p2pc/config/v1, over the canonical encoding of its config map."""
    case = STORED["config"]
    data = encode(from_json(case["wire"]))
    assert data.hex() == case["encoding_hex"]
    assert hashlib.blake2b(data, digest_size=32, person=b"p2pc/config/v1").hexdigest() == case["context_hex"]
