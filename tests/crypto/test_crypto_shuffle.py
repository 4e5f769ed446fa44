"""The proof of shuffle: every false pass is refused on receipt with its shuffler blamed, in both games' decks.

Each cheat is made as strong as the cheater can make it: it builds its false output knowing every
scalar it used, then runs the honest prover on exactly that false statement.
"""

from __future__ import annotations

import dataclasses
import secrets

import pytest
from crypto_helpers import Round, deck_cards, setup

from p2pcards.crypto import deck as D
from p2pcards.crypto import group, shuffle
from p2pcards.crypto.encoding import decode, encode
from p2pcards.errors import BadPass, InvalidPoint, MalformedMessage

SEATS = 3
L = group.ORDER
ORDER2 = bytes([0xEC] + [0xFF] * 30 + [0x7F])
IDENTITY = (1).to_bytes(32, "little")
GAMES = [("crisp", 12), ("crescendo", 20)]


class Table:
    """A SEATS-seat round of one game's deck, shuffled honestly up to a chosen seat."""

    def __init__(self, kind: str, n: int) -> None:
        self.cards, self.tags = deck_cards(kind, n)
        self.extra = deck_cards(kind, n + 1)[0][-1]  # in the book, not in the deck
        self.rnd: Round = setup(SEATS, self.cards + (self.extra,))
        self.ctx, self.keys = self.rnd.ctx, self.rnd.keys

    def deck_before(self, seat: int) -> D.EncryptedDeck:
        """The verified deck seat `seat` shuffles."""
        cur = D.initial_deck(self.ctx, self.keys, self.rnd.book, self.cards, self.tags)
        for s in self.rnd.secrets[:seat]:
            nxt = D.shuffle_pass(self.ctx, self.keys, s, cur)
            D.verify_pass(self.ctx, self.keys, cur, nxt)
            cur = nxt
        return cur

    def honest(self, seat: int, prev: D.EncryptedDeck) -> tuple[list[int], list[int]]:
        """The permutation and scalars of seat's honest pass."""
        return D._pass_randomness(self.ctx, seat, self.rnd.secrets[seat].seed, prev.deck, len(prev))

    def forge(
        self,
        prev: D.EncryptedDeck,
        c1: list[bytes],
        c2: list[bytes],
        tags: tuple[str, ...] | None,
        perm: list[int],
        rs: list[int],
    ) -> D.EncryptedDeck:
        """A pass with this output and a proof made by the honest prover from the cheater's claimed perm and scalars."""
        source = D.deck_digest(self.ctx, prev)
        out = D.EncryptedDeck(prev.deck, prev.stage + 1, tuple(c1), tuple(c2), tags, source)
        st = D._statement(self.ctx, self.keys, prev, out, source)
        proof = shuffle.prove(st, perm, rs, [secrets.token_bytes(32)])
        return dataclasses.replace(out, proof=proof.to_bytes())

    def remask(self, c1: bytes, c2: bytes, r: int, extra: bytes | None = None) -> tuple[bytes, bytes]:
        """(c1 + r·G, c2 + r·PK [+ extra])."""
        s = r.to_bytes(32, "little")
        out2 = group.add(c2, group.mul(s, self.keys.joint))
        return group.add(c1, group.mul_base(s)), out2 if extra is None else group.add(out2, extra)


def rand() -> int:
    """A uniform non-zero scalar."""
    return 1 + secrets.randbelow(L - 1)


def assert_refused(t: Table, prev: D.EncryptedDeck, bad: D.EncryptedDeck, seat: int) -> None:
    """verify_pass refuses `bad` with `seat` blamed, and the forged pass survives the wire unchanged."""
    again = D.EncryptedDeck.from_wire(decode(encode(bad.to_wire())))
    assert again == bad
    with pytest.raises(BadPass, match="proof of shuffle does not verify") as exc:
        D.verify_pass(t.ctx, t.keys, prev, again)
    assert (exc.value.seat, exc.value.blame) == (seat, f"seat{seat}")


@pytest.mark.parametrize("kind,n", GAMES)
@pytest.mark.parametrize("seat", range(SEATS))
def test_honest_pass_verifies(kind: str, n: int, seat: int) -> None:
    """An honest pass verifies, and names the digest of the deck it shuffled."""
    t = Table(kind, n)
    prev = t.deck_before(seat)
    new = D.shuffle_pass(t.ctx, t.keys, t.rnd.secrets[seat], prev)
    D.verify_pass(t.ctx, t.keys, prev, new)
    assert new.input == D.deck_digest(t.ctx, prev)


@pytest.mark.parametrize("kind,n", GAMES)
@pytest.mark.parametrize("seat", range(SEATS))
def test_substituted_card(kind: str, n: int, seat: int) -> None:
    """A card replaced by a fresh encryption of a card the cheater chose is refused."""
    t = Table(kind, n)
    prev = t.deck_before(seat)
    perm, rs = t.honest(seat, prev)
    c1, c2 = [], []
    for k, (i, r) in enumerate(zip(perm, rs)):
        a, b = t.remask(prev.c1[i], prev.c2[i], r)
        if k == 2:
            a = group.mul_base(r.to_bytes(32, "little"))
            b = group.add(t.rnd.book.points[t.extra], group.mul(r.to_bytes(32, "little"), t.keys.joint))
        c1.append(a)
        c2.append(b)
    tags = None if prev.tags is None else tuple(prev.tags[i] for i in perm)
    assert_refused(t, prev, t.forge(prev, c1, c2, tags, perm, rs), seat)


@pytest.mark.parametrize("kind,n", GAMES)
@pytest.mark.parametrize("seat", range(SEATS))
def test_duplicated_card(kind: str, n: int, seat: int) -> None:
    """A card re-masked twice in place of another (a map that is no permutation) is refused."""
    t = Table(kind, n)
    prev = t.deck_before(seat)
    perm, rs = t.honest(seat, prev)
    # The copied card has the same back as the one it replaces, so only the proof can tell.
    same_back = (lambda j: True) if prev.tags is None else (lambda j: prev.tags[perm[j]] == prev.tags[perm[3]])  # type: ignore[index]
    perm[3] = perm[next(j for j in range(len(perm)) if j != 3 and same_back(j))]
    rs[3] = rand()
    c1, c2 = zip(*(t.remask(prev.c1[i], prev.c2[i], r) for i, r in zip(perm, rs)))
    tags = None if prev.tags is None else tuple(prev.tags[i] for i in perm)
    assert_refused(t, prev, t.forge(prev, list(c1), list(c2), tags, perm, rs), seat)


@pytest.mark.parametrize("kind,n", GAMES)
@pytest.mark.parametrize("seat", range(SEATS))
def test_marked_card(kind: str, n: int, seat: int) -> None:
    """A card re-encrypted as a different point (M + Δ: a card the cheater can recognise) is refused."""
    t = Table(kind, n)
    prev = t.deck_before(seat)
    perm, rs = t.honest(seat, prev)
    mark = group.mul_base(rand().to_bytes(32, "little"))
    cts = [t.remask(prev.c1[i], prev.c2[i], r, mark if k == 4 else None) for k, (i, r) in enumerate(zip(perm, rs))]
    tags = None if prev.tags is None else tuple(prev.tags[i] for i in perm)
    assert_refused(t, prev, t.forge(prev, [a for a, _ in cts], [b for _, b in cts], tags, perm, rs), seat)


@pytest.mark.parametrize("kind,n", GAMES)
def test_last_shuffler_fresh_deck_in_chosen_order(kind: str, n: int) -> None:
    """The last shuffler's fresh encryption of the whole deck, in an order it chose, is refused."""
    t = Table(kind, n)
    seat = SEATS - 1
    prev = t.deck_before(seat)
    order = list(reversed(t.cards))  # the deal it wants
    rs = [rand() for _ in order]
    c1 = [group.mul_base(r.to_bytes(32, "little")) for r in rs]
    c2 = [group.add(t.rnd.book.points[c], group.mul(r.to_bytes(32, "little"), t.keys.joint)) for c, r in zip(order, rs)]
    tags = None if t.tags is None else tuple(t.tags[t.cards.index(c)] for c in order)
    assert_refused(t, prev, t.forge(prev, c1, c2, tags, list(range(len(order))), rs), seat)


def test_tags_moved_off_their_cards() -> None:
    """Crescendo backs: a pass that swaps two backs and leaves the ciphertexts is refused (the proof binds tags)."""
    t = Table("crescendo", 20)
    prev = t.deck_before(1)
    perm, rs = t.honest(1, prev)
    honest = D.shuffle_pass(t.ctx, t.keys, t.rnd.secrets[1], prev)
    assert honest.tags is not None
    i = next(i for i in range(1, len(honest)) if honest.tags[i] != honest.tags[0])
    tags = list(honest.tags)
    tags[0], tags[i] = tags[i], tags[0]
    assert_refused(t, prev, t.forge(prev, list(honest.c1), list(honest.c2), tuple(tags), perm, rs), 1)


def test_pass_bound_to_its_input() -> None:
    """A pass names its input: made on another deck for the same place, it is refused."""
    t = Table("crisp", 12)
    prev = t.deck_before(1)
    other_seat0 = dataclasses.replace(t.rnd.secrets[0], seed=D.draw_seed())
    other = D.shuffle_pass(t.ctx, t.keys, other_seat0, t.deck_before(0))
    new = D.shuffle_pass(t.ctx, t.keys, t.rnd.secrets[1], other)
    with pytest.raises(BadPass, match="names another input") as exc:
        D.verify_pass(t.ctx, t.keys, prev, new)
    assert exc.value.seat == 1
    relabelled = dataclasses.replace(new, input=D.deck_digest(t.ctx, prev))
    with pytest.raises(BadPass, match="does not verify"):
        D.verify_pass(t.ctx, t.keys, prev, relabelled)


def test_proof_bound_to_the_table_context() -> None:
    """A proof does not carry over to another round, table or list of players."""
    t = Table("crisp", 12)
    prev = t.deck_before(0)
    new = D.shuffle_pass(t.ctx, t.keys, t.rnd.secrets[0], prev)
    for ctx in (
        dataclasses.replace(t.ctx, round=t.ctx.round + 1),
        dataclasses.replace(t.ctx, table=b"other"),
        dataclasses.replace(t.ctx, players=("a", "b", "c")),
    ):
        moved = dataclasses.replace(new, input=D.deck_digest(ctx, prev))
        with pytest.raises(BadPass):
            D.verify_pass(ctx, t.keys, prev, moved)


def _tampered(proof: bytes, offset: int, value: bytes) -> bytes:
    return proof[:offset] + value + proof[offset + 32 :]


@pytest.mark.parametrize("field", ["u", "b", "v", "k_a", "k_c", "k_d", "k_f", "k_b", "k_e"])
def test_every_proof_field_is_checked(field: str) -> None:
    """Changing any one field of the proof (to another valid value) makes it fail, blamed on the shuffler."""
    t = Table("crescendo", 20)
    prev = t.deck_before(2)
    new = D.shuffle_pass(t.ctx, t.keys, t.rnd.secrets[2], prev)
    assert new.proof is not None
    n = len(new)
    at = {"u": 3, "b": n + 3, "v": 2 * n, "k_a": 2 * n + 1, "k_c": 2 * n + 2, "k_d": 2 * n + 3, "k_f": 2 * n + 4,
          "k_b": 2 * n + 5 + 3, "k_e": 3 * n + 5 + 3}[field] * 32
    value = group.mul_base(rand().to_bytes(32, "little")) if field in ("u", "b") else rand().to_bytes(32, "little")
    with pytest.raises(BadPass) as exc:
        D.verify_pass(t.ctx, t.keys, prev, dataclasses.replace(new, proof=_tampered(new.proof, at, value)))
    assert exc.value.seat == 2


@pytest.mark.parametrize("bad", [ORDER2, IDENTITY, bytes([2] * 32)], ids=["order2", "identity", "off-curve"])
@pytest.mark.parametrize("where", ["u", "b"])
def test_invalid_point_in_proof(bad: bytes, where: str) -> None:
    """A small-order, identity or off-curve point in the proof is InvalidPoint, blamed on the shuffler."""
    t = Table("crisp", 12)
    prev = t.deck_before(1)
    new = D.shuffle_pass(t.ctx, t.keys, t.rnd.secrets[1], prev)
    assert new.proof is not None
    at = (5 if where == "u" else len(new) + 5) * 32
    with pytest.raises(InvalidPoint) as exc:
        D.verify_pass(t.ctx, t.keys, prev, dataclasses.replace(new, proof=_tampered(new.proof, at, bad)))
    assert exc.value.seat == 1


@pytest.mark.parametrize("scalar", [0, L, 2**256 - 1], ids=["zero", "L", "max"])
def test_zero_or_non_canonical_scalar_refused(scalar: int) -> None:
    """A zero or non-canonical scalar anywhere in the proof is refused before any group operation."""
    t = Table("crisp", 12)
    prev = t.deck_before(0)
    new = D.shuffle_pass(t.ctx, t.keys, t.rnd.secrets[0], prev)
    assert new.proof is not None
    bad = _tampered(new.proof, (2 * len(new) + 6) * 32, scalar.to_bytes(32, "little"))
    with pytest.raises(MalformedMessage):
        shuffle.ShuffleProof.from_bytes(bad, len(new))
    with pytest.raises(BadPass, match="well-formed"):
        D.verify_pass(t.ctx, t.keys, prev, dataclasses.replace(new, proof=bad))


def test_pass_wire_form() -> None:
    """A pass on the wire has exactly deck, stage, cts, tags, input and proof; a proof of the wrong size is malformed."""
    t = Table("crescendo", 20)
    prev = t.deck_before(0)
    new = D.shuffle_pass(t.ctx, t.keys, t.rnd.secrets[0], prev)
    wire = new.to_wire()
    assert set(wire) == {"deck", "stage", "cts", "tags", "input", "proof"}
    assert isinstance(wire["proof"], bytes) and len(wire["proof"]) == shuffle.proof_bytes(20) == 32 * (4 * 20 + 5)
    for key, value in (("proof", b"\x01" * 32), ("input", b"\x00" * 31), ("proof", None)):
        with pytest.raises(MalformedMessage):
            D.EncryptedDeck.from_wire({**wire, key: value})


@pytest.mark.parametrize("n", [1, 2, 5])
def test_small_decks(n: int) -> None:
    """Proofs work down to a single card."""
    t = Table("crisp", n)
    cur = t.deck_before(0)
    for s in t.rnd.secrets:
        nxt = D.shuffle_pass(t.ctx, t.keys, s, cur)
        D.verify_pass(t.ctx, t.keys, cur, nxt)
        cur = nxt


def test_proof_is_deterministic_in_the_seed() -> None:
    """The pass and its proof are a function of the seat's seed and its input (replayable after a crash)."""
    t = Table("crisp", 12)
    prev = t.deck_before(1)
    assert D.shuffle_pass(t.ctx, t.keys, t.rnd.secrets[1], prev) == D.shuffle_pass(t.ctx, t.keys, t.rnd.secrets[1], prev)


def test_proof_nonces_follow_the_joint_key() -> None:
    """Two proofs of one seed's pass over one input under two joint keys never share their randomness.

    Were the nonces the same for both, the two responses k_E,k = v·e'_k + ε_k would give the
    permutation away (two challenges, one ε_k): that is why ρ hashes the joint key too (§4.12).
    """
    t = Table("crisp", 12)
    prev = t.deck_before(0)
    other = dataclasses.replace(t.keys, joint=group.mul_base(rand().to_bytes(32, "little")))
    proofs = [shuffle.ShuffleProof.from_bytes(D.shuffle_pass(t.ctx, keys, t.rnd.secrets[0], prev).proof or b"", len(prev))
              for keys in (t.keys, other)]
    assert not set(proofs[0].u) & set(proofs[1].u)  # u_j = c_j·G + h_π⁻¹(j), π the same for both: c_j differ
