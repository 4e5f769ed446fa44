"""Honest paths of the mental-poker deck: 2 to 8 seats, both decks, private and public reveals, audit."""

from __future__ import annotations

import pytest
from crypto_helpers import crescendo_tags, deck_cards, play, setup, shuffle_all

from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK
from p2pcards.crypto import deck as D
from p2pcards.crypto import group
from p2pcards.errors import LocalError


@pytest.mark.parametrize("kind", ["crisp", "crescendo"])
@pytest.mark.parametrize("seats", [*range(2, 4), *(pytest.param(s, marks=pytest.mark.slow) for s in range(4, 9))])
def test_full_round_honest(seats: int, kind: str) -> None:
    """Deal each seat 4 cards privately, reveal the rest publicly, audit: every card exactly once."""
    rnd, final = play(seats, kind)
    cards, tags = deck_cards(kind)
    ctx, keys, book = rnd.ctx, rnd.keys, rnd.book
    n = len(cards)
    assert len(final) == n and final.stage == seats
    faces: dict[int, D.Card] = {}
    reveals: list[D.Reveal] = []
    for r in range(seats):
        hand = [4 * r + k for k in range(4)]
        shares = [D.make_reveal(ctx, keys, s, final, hand, r) for s in rnd.secrets if s.seat != r]
        for rv in shares:
            D.verify_reveal(ctx, keys, final, rv, prover=rv.prover, recipient=r, positions=hand)
        opened = D.open_cards(ctx, book, final, shares, rnd.secrets[r])
        assert sorted(opened) == hand
        faces.update(opened)
        reveals.extend(shares)
    rest = list(range(4 * seats, n))
    public = [D.make_reveal(ctx, keys, s, final, rest, None) for s in rnd.secrets]
    for rv in public:
        D.verify_reveal(ctx, keys, final, rv, prover=rv.prover, recipient=None, positions=rest)
    faces.update(D.open_cards(ctx, book, final, public))
    reveals.extend(public)
    assert sorted(map(str, faces.values())) == sorted(map(str, cards))
    if tags is not None:
        assert final.tags == crescendo_tags(tuple(faces[i] for i in range(n)))
    report = D.audit(ctx, rnd.anns, rnd.openings(), book, rnd.records, reveals)
    assert report.verified, str(report)
    assert str(report) == "verified"
    assert report.faces[0] == tuple(faces[i] for i in range(n))


def test_private_reveal_needs_the_recipients_share() -> None:
    """The shares everyone else sends do not decrypt a private card: the recipient's own is missing."""
    rnd, final = play(3, "crisp", 8)
    others = [D.make_reveal(rnd.ctx, rnd.keys, s, final, [0], 0) for s in rnd.secrets[1:]]
    with pytest.raises(LocalError):
        D.open_cards(rnd.ctx, rnd.book, final, others)  # no share from seat 0
    # Pretending the missing share is the identity-free guess G does not give a card either.
    with pytest.raises(D.BadCard):
        D.combine(rnd.ctx, rnd.book, final, 0, [group.BASE] + [o.shares[0] for o in others])
    card = D.open_cards(rnd.ctx, rnd.book, final, others, rnd.secrets[0])[0]
    assert card in CRISP_DECK[:8]
    with pytest.raises(LocalError):
        D.make_reveal(rnd.ctx, rnd.keys, rnd.secrets[0], final, [0], 0)


def test_shuffle_moves_cards() -> None:
    """A full shuffle is not the identity (probability 1/52! of a false failure)."""
    rnd, final = play(2, "crisp")
    pub = [D.make_reveal(rnd.ctx, rnd.keys, s, final, list(range(52)), None) for s in rnd.secrets]
    faces = D.open_cards(rnd.ctx, rnd.book, final, pub)
    assert tuple(faces[i] for i in range(52)) != CRISP_DECK


def test_fresh_shuffle_of_known_cards() -> None:
    """Crescendo's empty Reserve: known cards re-masked and reshuffled as deck 1, audited with deck 0."""
    cards, tags = deck_cards("crescendo", 30)
    rnd = setup(4, cards)
    final0 = shuffle_all(rnd, cards, tags, deck=0)
    discards = tuple(cards[5:17])
    final1 = shuffle_all(rnd, discards, crescendo_tags(discards), deck=1)
    assert len(final1) == 12 and set(final1.c1).isdisjoint(final0.c1)
    pos = list(range(12))
    pub = [D.make_reveal(rnd.ctx, rnd.keys, s, final1, pos, None) for s in rnd.secrets]
    for rv in pub:
        D.verify_reveal(rnd.ctx, rnd.keys, final1, rv, prover=rv.prover, recipient=None, positions=pos)
    faces = D.open_cards(rnd.ctx, rnd.book, final1, pub)
    assert sorted(map(str, faces.values())) == sorted(map(str, discards))
    report = D.audit(rnd.ctx, rnd.anns, rnd.openings(), rnd.book, rnd.records, pub)
    assert report.verified and set(report.faces) == {0, 1}
    assert report.faces[1] == tuple(faces[i] for i in pos)


def test_round_secret_is_reproducible_from_seed() -> None:
    """A crashed peer rebuilds the same secret, hence the same passes, from its persisted seed."""
    rnd, final = play(2, "crisp", 6)
    again = D.round_secret(rnd.ctx, 1, rnd.secrets[1].seed)
    assert again.key == rnd.secrets[1].key and again.commitment == rnd.secrets[1].commitment
    prev = rnd.records[0].passes[0]
    assert D.shuffle_pass(rnd.ctx, rnd.keys, again, prev) == final
    assert "seed" not in repr(again) and again.seed.hex() not in repr(again)


def test_wire_round_trip() -> None:
    """Every deck message survives its msgpack form unchanged."""
    from p2pcards.crypto.encoding import decode, encode

    rnd, final = play(2, "crescendo", 12)
    rv = D.make_reveal(rnd.ctx, rnd.keys, rnd.secrets[0], final, [1, 5], 1)
    assert D.Reveal.from_wire(decode(encode(rv.to_wire()))) == rv
    assert D.EncryptedDeck.from_wire(decode(encode(final.to_wire()))) == final
    assert D.KeyAnnouncement.from_wire(decode(encode(rnd.anns[1].to_wire()))) == rnd.anns[1]
    op = rnd.openings()[0]
    assert D.Opening.from_wire(decode(encode(op.to_wire()))) == op


@pytest.mark.slow
def test_full_crescendo_deck_eight_seats_audit() -> None:
    """The largest case in one audit: 104 cards, 8 seats, all faces known."""
    rnd, final = play(8, "crescendo")
    report = D.audit(rnd.ctx, rnd.anns, rnd.openings(), rnd.book, rnd.records)
    assert report.verified
    assert sorted(map(str, report.faces[0])) == sorted(map(str, CRESCENDO_DECK))


def test_a_share_made_ahead_is_the_same_share_with_a_valid_proof_and_serves_one_proof_only() -> None:
    """The costly part of a share made while idle (Chaum–Pedersen's first move, with a hedged one-time nonce)."""
    rnd, final = play(3, "crisp", 8)
    ctx, keys, prover = rnd.ctx, rnd.keys, rnd.secrets[1]
    made = D.prepare_share(ctx, prover, final, 0)
    ahead = {0: made}
    rv = D.make_reveal(ctx, keys, prover, final, [0], 0, ahead)
    assert ahead == {}  # taken out as it is used: its nonce never answers a second challenge
    plain = D.make_reveal(ctx, keys, prover, final, [0], 0)
    assert rv.shares == plain.shares and rv.proofs != plain.proofs
    D.verify_reveal(ctx, keys, final, rv, prover=1, recipient=0, positions=[0])
    public = D.make_reveal(ctx, keys, prover, final, [0], None, ahead)  # none left: made the usual way
    assert public.proofs == D.make_reveal(ctx, keys, prover, final, [0], None).proofs
    again = D.prepare_share(ctx, prover, final, 0)
    assert again[0] == made[0] and again[1].k != made[1].k  # the same share, a fresh nonce
    with pytest.raises(LocalError):  # a commitment made for another card
        D.make_reveal(ctx, keys, prover, final, [0], 0, {0: D.prepare_share(ctx, prover, final, 1)})
    fresh = D.make_reveal(ctx, keys, prover, final, [0], 0, {0: again})
    D.verify_reveal(ctx, keys, final, fresh, prover=1, recipient=0, positions=[0])
    other_share = D.prepare_share(ctx, prover, final, 1)[0]
    wrong = D.make_reveal(ctx, keys, prover, final, [0], 0, {0: (other_share, D.prepare_share(ctx, prover, final, 0)[1])})
    with pytest.raises(D.BadProof):  # but a share of another card made ahead fails its proof
        D.verify_reveal(ctx, keys, final, wrong, prover=1, recipient=0, positions=[0])
