"""Input validation found missing by an adversarial review of the crypto core.

None of these holes is reachable through the wire parsers (`from_wire` builds lists of equal
length), but `shuffle.verify` and `deck.verify_reveal` are the API the table calls, so each
must refuse a statement or a reveal that holds more (or fewer) items than it proves.
"""

from __future__ import annotations

import dataclasses
import secrets

import pytest
from crypto_helpers import deck_cards, setup, shuffle_all

from p2pcards.crypto import deck as D
from p2pcards.crypto import group, proofs, shuffle
from p2pcards.errors import BadProof


def _first_pass(kind: str = "crescendo", n: int = 6) -> tuple[shuffle.Statement, shuffle.ShuffleProof, list[int], list[int]]:
    """Seat 0's honest pass on a fresh deck: its statement, its proof, and its permutation and scalars."""
    cards, tags = deck_cards(kind, n)
    rnd = setup(2, cards)
    init = D.initial_deck(rnd.ctx, rnd.keys, rnd.book, cards, tags)
    new = D.shuffle_pass(rnd.ctx, rnd.keys, rnd.secrets[0], init)
    st = D._statement(rnd.ctx, rnd.keys, init, new, D.deck_digest(rnd.ctx, init))
    assert new.proof is not None
    perm, rs = D._pass_randomness(rnd.ctx, 0, rnd.secrets[0].seed, 0, n)
    return st, shuffle.ShuffleProof.from_bytes(new.proof, n), perm, rs


def test_shuffle_statement_with_an_extra_output_ciphertext_is_refused() -> None:
    """An honest proof does not also prove an output list with a point appended to its c2 half (zip dropped it)."""
    st, proof, _, _ = _first_pass()
    assert shuffle.verify(st, proof)
    extra = group.mul_base(group.scalar_of_int(1 + secrets.randbelow(group.ORDER - 1)))
    assert not shuffle.verify(dataclasses.replace(st, out_c2=st.out_c2 + (extra,)), proof)
    assert not shuffle.verify(dataclasses.replace(st, in_c2=st.in_c2 + (extra,)), proof)


def test_shuffle_statement_with_extra_tags_is_refused() -> None:
    """A prover cannot prove a statement whose tag lists are longer than its decks (the extra tags were never bound)."""
    st, _, perm, rs = _first_pass()
    assert st.in_tags is not None and st.out_tags is not None
    forged = dataclasses.replace(st, in_tags=st.in_tags + ("11-20 peek",), out_tags=st.out_tags + ("91-100 lock",))
    assert not shuffle.verify(forged, shuffle.prove(forged, perm, rs, [secrets.token_bytes(32)]))


def test_shuffle_of_no_cards_is_false_not_a_crash() -> None:
    """An empty statement is refused with False (no IndexError from B_{n-1})."""
    st, _, _, _ = _first_pass()
    empty = dataclasses.replace(st, in_c1=(), in_c2=(), out_c1=(), out_c2=(), in_tags=None, out_tags=None)
    assert not shuffle.verify(empty, shuffle.ShuffleProof((), (), 1, 1, 1, 1, 1, (), ()))


def _final() -> tuple[D.RoundContext, D.RoundKeys, list[D.RoundSecret], D.EncryptedDeck]:
    cards, tags = deck_cards("crisp", 5)
    rnd = setup(3, cards)
    return rnd.ctx, rnd.keys, rnd.secrets, shuffle_all(rnd, cards, tags)


def test_reveal_to_a_seat_that_does_not_exist_is_refused() -> None:
    """A share proved for recipient 9 at a 3-seat table answers no request: blamed on its prover."""
    ctx, keys, secrets_, final = _final()
    s = secrets_[0]
    share = D.own_share(s, final, 1)
    fields = proofs.dleq_context(ctx.table, ctx.round, final.deck, 1, 9, 0)
    rv = D.Reveal(final.deck, 0, 9, (1,), (share,), (proofs.prove_share(s.key, s.public, final.c1[1], share, fields),),
                 D.deck_digest(ctx, final))
    with pytest.raises(BadProof) as exc:
        D.verify_reveal(ctx, keys, final, rv, prover=0, recipient=9, positions=[1])
    assert exc.value.seat == 0


def test_reveal_missing_a_share_is_refused() -> None:
    """A reveal that names two positions but carries one share and proof is refused (zip left position 2 unchecked)."""
    ctx, keys, secrets_, final = _final()
    rv = D.make_reveal(ctx, keys, secrets_[0], final, [1, 2], None)
    D.verify_reveal(ctx, keys, final, rv, prover=0, recipient=None, positions=[1, 2])
    short = dataclasses.replace(rv, shares=rv.shares[:1], proofs=rv.proofs[:1])
    with pytest.raises(BadProof) as exc:
        D.verify_reveal(ctx, keys, final, short, prover=0, recipient=None, positions=[1, 2])
    assert exc.value.seat == 0


def test_commitment_made_ahead_keeps_its_nonce_out_of_repr() -> None:
    """The nonce k of a commitment made ahead gives the round key away with the proof it answers: never in a repr or log."""
    ctx, keys, secrets_, final = _final()
    s = secrets_[1]
    share, made = D.prepare_share(ctx, s, final, 0)
    assert repr(made.k) not in repr(made) and made.k.hex() not in repr(made)
    # Why it matters: k and the proof it answers give x = (s - k) / e.
    fields = proofs.dleq_context(ctx.table, ctx.round, final.deck, 0, None, 1)
    p = proofs.prove_share(s.key, s.public, final.c1[0], share, fields, made)
    L = group.ORDER
    e, r, k = (int.from_bytes(b, "little") for b in (p.challenge, p.response, made.k))
    assert (r - k) * pow(e, -1, L) % L == int.from_bytes(s.key, "little")
