"""Every cheat on the deck is caught and blamed on the seat that did it."""

from __future__ import annotations

import dataclasses
import secrets

import pytest
from crypto_helpers import deck_cards, setup

from p2pcards.crypto import deck as D
from p2pcards.crypto import group, proofs
from p2pcards.errors import BadCard, BadOpening, BadPass, BadProof, CheatDetected, DeckFault, InvalidPoint

SEATS = 4
ORDER2 = bytes([0xEC] + [0xFF] * 30 + [0x7F])  # (0, -1), order 2
IDENTITY = (1).to_bytes(32, "little")  # (0, 1)
NOT_ON_CURVE = bytes([2] * 32)
NON_CANONICAL = bytes([0xED] + [0xFF] * 30 + [0x7F])  # y = p, an out-of-range encoding


def rand_scalar() -> bytes:
    """A uniform non-zero scalar."""
    return group.scalar_reduce(secrets.token_bytes(64))


def encrypt(joint: bytes, m: bytes) -> tuple[bytes, bytes]:
    """A fresh ElGamal encryption of point m under the joint key."""
    r = rand_scalar()
    return group.mul_base(r), group.add(m, group.mul(r, joint))


def remask(joint: bytes, c1: bytes, c2: bytes) -> tuple[bytes, bytes]:
    """Re-randomise one ciphertext."""
    r = rand_scalar()
    return group.add(c1, group.mul_base(r)), group.add(c2, group.mul(r, joint))


class Game:
    """A 4-seat round on 12 cards where seat `cheater` may replace its pass before the others see it."""

    def __init__(self, kind: str = "crisp", n: int = 12) -> None:
        self.cards, self.tags = deck_cards(kind, n)
        self.extra = deck_cards(kind, n + 1)[0][-1]  # a card in the book but not in the deck
        self.rnd = setup(SEATS, self.cards + (self.extra,))
        self.ctx, self.keys = self.rnd.ctx, self.rnd.keys

    def shuffle(
        self, cheater: int, tamper: object, verify: bool = True
    ) -> tuple[D.EncryptedDeck, list[D.EncryptedDeck]]:
        """Shuffle with seat `cheater`'s pass passed through `tamper(prev, honest)`; other seats verify unless told not to."""
        cur = D.initial_deck(self.ctx, self.keys, self.rnd.book, self.cards, self.tags)
        passes = []
        for s in self.rnd.secrets:
            nxt = D.shuffle_pass(self.ctx, self.keys, s, cur)
            if s.seat == cheater:
                nxt = tamper(cur, nxt)  # type: ignore[operator]
            if verify or s.seat != cheater:
                D.verify_pass(self.ctx, self.keys, cur, nxt)
            passes.append(nxt)
            cur = nxt
        self.rnd.records = [D.DeckRecord(0, self.cards, self.tags, tuple(passes))]
        return cur, passes

    def audit(self, reveals: list[D.Reveal] | None = None, openings: list[D.Opening] | None = None) -> D.AuditReport:
        """The audit with everyone's honest openings unless told otherwise."""
        return D.audit(
            self.ctx, self.rnd.anns, openings or self.rnd.openings(), self.rnd.book, self.rnd.records, reveals or []
        )

    def reveal_all(self, final: D.EncryptedDeck) -> list[D.Reveal]:
        """Everyone's public shares of every position, verified."""
        pos = list(range(len(final)))
        out = [D.make_reveal(self.ctx, self.keys, s, final, pos, None) for s in self.rnd.secrets]
        for rv in out:
            D.verify_reveal(self.ctx, self.keys, final, rv, prover=rv.prover, recipient=None, positions=pos)
        return out


def with_card(d: D.EncryptedDeck, i: int, c1: bytes, c2: bytes) -> D.EncryptedDeck:
    """`d` with ciphertext i replaced."""
    return dataclasses.replace(
        d, c1=d.c1[:i] + (c1,) + d.c1[i + 1 :], c2=d.c2[:i] + (c2,) + d.c2[i + 1 :]
    )


def assert_blamed(report: D.AuditReport, seat: int, kind: str) -> None:
    """The audit names `seat` for a fault of `kind`."""
    assert not report.verified
    assert report.fault is not None
    assert (report.fault.seat, report.fault.blame, report.fault.kind) == (seat, f"seat{seat}", kind), str(report)


# ---------------------------------------------------------------- shuffle passes


def assert_refused(g: Game, cheater: int, tamper: object) -> None:
    """The pass is refused on receipt with the cheater blamed; and, were it let through, the audit blames it too."""
    with pytest.raises(BadPass) as exc:
        g.shuffle(cheater, tamper)
    assert (exc.value.seat, exc.value.blame) == (cheater, f"seat{cheater}")
    g.shuffle(cheater, tamper, verify=False)
    assert_blamed(g.audit(), cheater, "pass")


@pytest.mark.parametrize("cheater", range(SEATS))
def test_substituted_card(cheater: int) -> None:
    """A fresh encryption of a card of the cheater's choice is refused before anything is built on it."""
    g = Game()
    assert_refused(g, cheater, lambda p, h: with_card(h, 2, *encrypt(g.keys.joint, g.rnd.book.points[g.extra])))


@pytest.mark.parametrize("cheater", [0, SEATS - 1])
def test_substituted_non_card(cheater: int) -> None:
    """A ciphertext of a point that is no card is refused; let through, it decrypts to BadCard."""
    g = Game()

    def tamper(p: D.EncryptedDeck, h: D.EncryptedDeck) -> D.EncryptedDeck:
        return with_card(h, 5, *encrypt(g.keys.joint, group.mul_base(rand_scalar())))

    assert_refused(g, cheater, tamper)
    final, _ = g.shuffle(cheater, tamper, verify=False)
    with pytest.raises(BadCard):
        D.open_cards(g.ctx, g.rnd.book, final, g.reveal_all(final))


@pytest.mark.parametrize("cheater", range(SEATS))
def test_duplicated_card_copy(cheater: int) -> None:
    """An exact copy of another ciphertext is caught at once."""
    g = Game()
    with pytest.raises(BadPass) as exc:
        g.shuffle(cheater, lambda p, h: with_card(h, 3, h.c1[7], h.c2[7]))
    assert exc.value.seat == cheater and exc.value.blame == f"seat{cheater}"


@pytest.mark.parametrize("cheater", range(SEATS))
def test_duplicated_card_remasked(cheater: int) -> None:
    """A re-masked copy of another ciphertext is refused; let through, its face shows twice at reveal."""
    g = Game()

    def tamper(p: D.EncryptedDeck, h: D.EncryptedDeck) -> D.EncryptedDeck:
        return with_card(h, 3, *remask(g.keys.joint, h.c1[7], h.c2[7]))

    assert_refused(g, cheater, tamper)
    final, _ = g.shuffle(cheater, tamper, verify=False)
    with pytest.raises(BadCard, match="already seen"):
        D.open_cards(g.ctx, g.rnd.book, final, g.reveal_all(final))


@pytest.mark.parametrize("bad", [ORDER2, IDENTITY, NOT_ON_CURVE, NON_CANONICAL], ids=["order2", "identity", "off-curve", "non-canonical"])
@pytest.mark.parametrize("which", ["c1", "c2"])
def test_invalid_point_in_pass(bad: bytes, which: str) -> None:
    """Small-order, identity, off-curve and non-canonical points are rejected and blamed."""
    g = Game()

    def tamper(prev: D.EncryptedDeck, h: D.EncryptedDeck) -> D.EncryptedDeck:
        return with_card(h, 4, bad if which == "c1" else h.c1[4], bad if which == "c2" else h.c2[4])

    with pytest.raises(InvalidPoint) as exc:
        g.shuffle(2, tamper)
    assert exc.value.seat == 2


def test_point_with_torsion_component() -> None:
    """A valid card ciphertext plus an order-2 point is outside the prime-order subgroup: rejected."""
    g = Game()
    with pytest.raises(InvalidPoint) as exc:
        g.shuffle(1, lambda p, h: with_card(h, 0, group.add(h.c1[0], ORDER2), h.c2[0]))
    assert exc.value.seat == 1


def test_pass_not_a_permutation_wrong_count() -> None:
    """A pass that drops a card is caught at once."""
    g = Game()
    with pytest.raises(BadPass) as exc:
        g.shuffle(1, lambda p, h: dataclasses.replace(h, c1=h.c1[:-1], c2=h.c2[:-1], tags=None))
    assert exc.value.seat == 1


def test_pass_not_re_masked() -> None:
    """A pass that only permutes (keeping ciphertexts) is caught at once: it would expose the permutation."""
    g = Game()
    with pytest.raises(BadPass) as exc:
        g.shuffle(2, lambda p, h: dataclasses.replace(h, c1=tuple(reversed(p.c1)), c2=tuple(reversed(p.c2))))
    assert exc.value.seat == 2


def test_pass_wrong_stage_or_deck() -> None:
    """A pass labelled for another stage or deck is caught at once."""
    g = Game()
    with pytest.raises(BadPass):
        g.shuffle(0, lambda p, h: dataclasses.replace(h, stage=2))
    g = Game()
    with pytest.raises(BadPass):
        g.shuffle(0, lambda p, h: dataclasses.replace(h, deck=1))


def test_pass_off_its_commitment() -> None:
    """A seat that shuffles honestly but with other randomness than it committed to is blamed by the audit."""
    g = Game()
    other = D.round_secret(g.ctx, 2, D.draw_seed())
    rogue = dataclasses.replace(g.rnd.secrets[2], seed=other.seed)
    g.shuffle(2, lambda p, h: D.shuffle_pass(g.ctx, g.keys, rogue, p))
    assert_blamed(g.audit(), 2, "pass")


def test_tags_changed_or_moved() -> None:
    """Crescendo backs: a changed back, or a back moved off its card, is refused at once."""
    g = Game("crescendo", 20)
    with pytest.raises(BadPass):
        g.shuffle(1, lambda p, h: dataclasses.replace(h, tags=("1-10 lock",) * len(h)))
    g = Game("crescendo", 20)

    def swap(p: D.EncryptedDeck, h: D.EncryptedDeck) -> D.EncryptedDeck:
        assert h.tags is not None
        i = next(i for i in range(1, len(h)) if h.tags[i] != h.tags[0])
        t = list(h.tags)
        t[0], t[i] = t[i], t[0]
        return dataclasses.replace(h, tags=tuple(t))

    assert_refused(g, 3, swap)


# ---------------------------------------------------------------- keys and openings


def test_round_key_proof_bound_to_seat_round_table() -> None:
    """A proof of knowledge does not carry over to another seat, round or table; a rogue key has none."""
    g = Game()
    a = g.rnd.anns[1]
    moved = dataclasses.replace(a, seat=2)
    with pytest.raises(BadProof) as exc:
        D.verify_announcement(g.ctx, moved)
    assert exc.value.seat == 2
    for ctx in (dataclasses.replace(g.ctx, round=g.ctx.round + 1), dataclasses.replace(g.ctx, table=b"other")):
        with pytest.raises(BadProof):
            D.verify_announcement(ctx, a)
    # Rogue key: PK_3 = Y - (PK_0 + PK_1 + PK_2) so the joint key is Y; the seat cannot prove knowledge of it.
    others = group.add(group.add(g.keys.publics[0], g.keys.publics[1]), g.keys.publics[2])
    rogue = group.sub(group.mul_base(rand_scalar()), others)
    anns = list(g.rnd.anns)
    anns[3] = dataclasses.replace(anns[3], public=rogue)
    with pytest.raises(BadProof) as exc:
        D.round_keys(g.ctx, anns)
    assert exc.value.blame == "seat3"
    anns[3] = dataclasses.replace(g.rnd.anns[3], public=ORDER2)
    with pytest.raises(InvalidPoint):
        D.round_keys(g.ctx, anns)


@pytest.mark.parametrize("seat", range(SEATS))
def test_opening_does_not_match_commitment(seat: int) -> None:
    """An opening other than the committed seed is blamed on the seat that opened it."""
    g = Game()
    g.shuffle(-1, None)
    openings = g.rnd.openings()
    openings[seat] = D.Opening(seat, D.draw_seed())
    assert_blamed(g.audit(openings=openings), seat, "opening")
    with pytest.raises(BadOpening) as exc:
        D.check_opening(g.ctx, g.keys, openings[seat])
    assert exc.value.seat == seat
    missing = [o for o in g.rnd.openings() if o.seat != seat]
    assert_blamed(g.audit(openings=missing), seat, "opening")


# ---------------------------------------------------------------- shares


def _private(g: Game, final: D.EncryptedDeck, prover: int, recipient: int | None, pos: list[int]) -> D.Reveal:
    return D.make_reveal(g.ctx, g.keys, g.rnd.secrets[prover], final, pos, recipient)


def _verify(g: Game, final: D.EncryptedDeck, rv: D.Reveal, prover: int, recipient: int | None, pos: list[int], ctx: D.RoundContext | None = None) -> None:
    D.verify_reveal(ctx or g.ctx, g.keys, final, rv, prover=prover, recipient=recipient, positions=pos)


def test_wrong_share() -> None:
    """A share that is not x·c1 fails its proof, whether the proof is honest or made with another key."""
    g = Game()
    final, _ = g.shuffle(-1, None)
    rv = _private(g, final, 1, 0, [2, 3])
    lying = dataclasses.replace(rv, shares=(group.add(rv.shares[0], group.BASE), rv.shares[1]))
    with pytest.raises(BadProof) as exc:
        _verify(g, final, lying, 1, 0, [2, 3])
    assert exc.value.seat == 1 and exc.value.blame == "seat1"
    x = rand_scalar()
    d = group.mul(x, final.c1[2])
    ctx_fields = proofs.dleq_context(g.ctx.table, g.ctx.round, 0, 2, 0, 1)
    forged = D.Reveal(0, 1, 0, (2,), (d,), (proofs.prove_share(x, group.mul_base(x), final.c1[2], d, ctx_fields),),
                      D.deck_digest(g.ctx, final))
    with pytest.raises(BadProof):
        _verify(g, final, forged, 1, 0, [2])
    # The audit, knowing every key, also names the seat for a wrong share in the log.
    assert_blamed(g.audit([_private(g, final, 0, None, [1]), lying]), 1, "share")


@pytest.mark.parametrize("bad", [ORDER2, IDENTITY, NOT_ON_CURVE, NON_CANONICAL])
def test_invalid_share_point(bad: bytes) -> None:
    """A share that is not a point of the subgroup is rejected and blamed on its prover."""
    g = Game()
    final, _ = g.shuffle(-1, None)
    rv = _private(g, final, 2, None, [0])
    with pytest.raises(CheatDetected) as exc:
        _verify(g, final, dataclasses.replace(rv, shares=(bad,)), 2, None, [0])
    assert isinstance(exc.value, DeckFault) and exc.value.seat == 2


def test_proof_replayed_elsewhere() -> None:
    """A share proof does not verify for another position, recipient, prover, round or table."""
    g = Game()
    final, _ = g.shuffle(-1, None)
    rv = _private(g, final, 1, 0, [4])
    _verify(g, final, rv, 1, 0, [4])
    # Another position: same share and proof presented for position 6.
    with pytest.raises(BadProof):
        _verify(g, final, dataclasses.replace(rv, positions=(6,)), 1, 0, [6])
    # Another recipient: a share made for seat 0, claimed for seat 2 or for everyone.
    with pytest.raises(BadProof):
        _verify(g, final, dataclasses.replace(rv, recipient=2), 1, 2, [4])
    with pytest.raises(BadProof):
        _verify(g, final, dataclasses.replace(rv, recipient=None), 1, None, [4])
    # Another prover: seat 3 relays seat 1's share as its own.
    with pytest.raises(BadProof) as exc:
        _verify(g, final, dataclasses.replace(rv, prover=3), 3, 0, [4])
    assert exc.value.seat == 3
    # Another round or table, with the very same deck and keys.
    for ctx in (dataclasses.replace(g.ctx, round=g.ctx.round + 1), dataclasses.replace(g.ctx, table=b"another table")):
        with pytest.raises(BadProof):
            _verify(g, final, rv, 1, 0, [4], ctx)
    # Same statement, another deck id (a fresh shuffle's deck).
    with pytest.raises(BadProof):
        _verify(g, dataclasses.replace(final, deck=1), dataclasses.replace(rv, deck=1), 1, 0, [4])


def test_reveal_answering_another_request() -> None:
    """A reveal for other positions than those asked is rejected and blamed on the sender."""
    g = Game()
    final, _ = g.shuffle(-1, None)
    rv = _private(g, final, 0, 1, [1, 2])
    with pytest.raises(BadProof) as exc:
        _verify(g, final, rv, 0, 1, [1, 3])
    assert exc.value.seat == 0
