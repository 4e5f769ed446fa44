"""A cryptographer's attacks on the deck protocol, each built with the project's own encoders and refused.

Where an attack needs a weaker protocol to work (a Fiat–Shamir transcript that leaves out what
the prover chooses), the test first shows the forgery passing the weak check, then that the real
check refuses it: the binding the protocol relies on is what stops it.
"""

from __future__ import annotations

import dataclasses
import secrets
from collections.abc import Callable, Iterator

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from crypto_helpers import Round, deck_cards, setup, shuffle_all
from nacl.bindings import crypto_core_ed25519_scalar_invert

from p2pcards.crypto import deck as D
from p2pcards.crypto import group, proofs, shuffle
from p2pcards.crypto.encoding import decode, encode, transcript_hash
from p2pcards.crypto.identity import Identity
from p2pcards.crypto.sealing import Opener
from p2pcards.errors import BadOpening, BadPass, BadProof, EquivocationEvidence, InvalidPoint, MalformedMessage
from p2pcards.table.decks import Decks

SEATS = 3
L = group.ORDER
ORDER2 = bytes([0xEC] + [0xFF] * 30 + [0x7F])  # (0, -1), of order 2
IDENTITY = (1).to_bytes(32, "little")


def rand() -> bytes:
    """A uniform non-zero scalar."""
    return group.scalar_of_int(1 + secrets.randbelow(L - 1))


def inverse(s: bytes) -> bytes:
    """s⁻¹ mod L (libsodium)."""
    return bytes(crypto_core_ed25519_scalar_invert(s))


@pytest.fixture
def table() -> Iterator[tuple[Round, D.EncryptedDeck]]:
    """Three seats, a Crescendo deck of 12 cards with backs, shuffled by everyone and verified."""
    cards, tags = deck_cards("crescendo", 12)
    rnd = setup(SEATS, cards)
    yield rnd, shuffle_all(rnd, cards, tags)


def verify(rnd: Round, final: D.EncryptedDeck, rv: D.Reveal) -> None:
    """The receiver's check of a reveal against the deck, recipient and positions it names."""
    D.verify_reveal(rnd.ctx, rnd.keys, final, rv, prover=rv.prover, recipient=rv.recipient, positions=rv.positions)


# ---------------------------------------------------------------- round keys (§4.3, §4.4)


def test_weak_fiat_shamir_rogue_key_is_refused(table: tuple[Round, D.EncryptedDeck]) -> None:
    """A key whose log no one knows, with a Schnorr proof that would pass were PK left out of the challenge.

    Pick T, take e = H(context, G, T), any s, and PK = e⁻¹·(s·G - T): (e, s) then "proves" PK, a key
    the forger cannot decrypt with (or one it chose as Y - ΣPK to own the joint key). §4.4 hashes
    PK_seat, so the challenge changes with the key and the forgery fails.
    """
    rnd, _ = table
    ctx, seat = rnd.ctx, 2
    t = group.mul_base(rand())
    e = group.scalar_reduce(transcript_hash(proofs.POK_PERSON, [*proofs.pok_context(ctx.table, ctx.round, seat),
                                                                group.BASE, t]))
    s = rand()
    public = group.mul(inverse(e), group.sub(group.mul_base(s), t))
    weak = group.sub(group.mul_base(s), group.mul(e, public))
    assert weak == t  # the forgery holds against a transcript without the key
    ann = D.KeyAnnouncement(seat, public, proofs.Proof(e, s), rnd.anns[seat].commitment)
    again = D.KeyAnnouncement.from_wire(decode(encode(ann.to_wire())))
    with pytest.raises(BadProof) as exc:
        D.verify_announcement(ctx, again)
    assert exc.value.seat == seat


@pytest.mark.parametrize("e,s", [(0, 0), (0, 1), (1, 0)])
def test_round_key_proof_with_zero_scalars_is_refused(table: tuple[Round, D.EncryptedDeck], e: int, s: int) -> None:
    """A Schnorr proof of zeros (which void one side of s·G = T + e·PK) is refused, never a crash."""
    rnd, _ = table
    ann = dataclasses.replace(rnd.anns[1], proof=proofs.Proof(group.scalar_of_int(e), group.scalar_of_int(s)))
    with pytest.raises(BadProof):
        D.verify_announcement(rnd.ctx, ann)


def test_round_key_proof_with_a_non_canonical_scalar_is_malformed(table: tuple[Round, D.EncryptedDeck]) -> None:
    """s + L satisfies the same equation as s; it is refused as malformed before any arithmetic (§4.1)."""
    rnd, _ = table
    wire = rnd.anns[0].to_wire()
    proof = wire["proof"]
    assert isinstance(proof, bytes)
    s = int.from_bytes(proof[32:], "little") + L
    assert s < 2**256
    with pytest.raises(MalformedMessage):
        D.KeyAnnouncement.from_wire({**wire, "proof": proof[:32] + s.to_bytes(32, "little")})


def test_a_copied_commitment_is_blamed_at_the_opening(table: tuple[Round, D.EncryptedDeck]) -> None:
    """A seat that announces its own key with another seat's commitment cannot open it: the audit names it."""
    rnd, _ = table
    anns = list(rnd.anns)
    anns[2] = dataclasses.replace(anns[2], commitment=anns[1].commitment)
    D.verify_announcement(rnd.ctx, anns[2])  # the proof covers the key, not the commitment...
    report = D.audit(rnd.ctx, anns, rnd.openings(), rnd.book, rnd.records)
    assert report.fault is not None and (report.fault.kind, report.fault.seat) == ("opening", 2)  # ...the opening does


def test_opening_another_seats_seed_is_blamed(table: tuple[Round, D.EncryptedDeck]) -> None:
    """Seat 1 opens with seat 2's seed (known after seat 2 opened): its key is derived with its own seat, so it fails."""
    rnd, _ = table
    openings = rnd.openings()
    openings[1] = D.Opening(1, rnd.secrets[2].seed)
    with pytest.raises(BadOpening) as exc:
        D.check_opening(rnd.ctx, rnd.keys, openings[1])
    assert exc.value.seat == 1
    report = D.audit(rnd.ctx, rnd.anns, openings, rnd.book, rnd.records)
    assert report.fault is not None and (report.fault.kind, report.fault.seat) == ("opening", 1)


# ---------------------------------------------------------------- shares (§4.7, §4.8)


def test_weak_fiat_shamir_wrong_share_is_refused(table: tuple[Round, D.EncryptedDeck]) -> None:
    """A prover who knows its key, a false share D ≠ x·c1, and a proof that would pass were D left out of the challenge.

    T1 = k·G, T2 = t·c1, e = H(stmt without D, T1, T2), s = k + e·x, D = e⁻¹·(s·c1 - T2): both
    equations hold and D = e⁻¹(s - t)·c1 is no share. §4.8 hashes D, so the challenge moves with it.
    """
    rnd, final = table
    ctx, prover, pos = rnd.ctx, 1, 4
    x, public, c1 = rnd.secrets[prover].key, rnd.keys.publics[prover], final.c1[pos]
    context = proofs.dleq_context(ctx.table, ctx.round, final.deck, pos, 0, prover)
    k, t = rand(), rand()
    t1, t2 = group.mul_base(k), group.mul(t, c1)
    e = group.scalar_reduce(transcript_hash(proofs.DLEQ_PERSON, [*context, group.BASE, public, c1, t1, t2]))
    s = group.scalar_add(k, group.scalar_mul(e, x))
    d = group.mul(inverse(e), group.sub(group.mul(s, c1), t2))
    assert d != group.mul(x, c1)
    assert group.sub(group.mul(s, c1), group.mul(e, d)) == t2 and group.sub(group.mul_base(s), group.mul(e, public)) == t1
    rv = D.Reveal(final.deck, prover, 0, (pos,), (d,), (proofs.Proof(e, s),), D.deck_digest(ctx, final))
    with pytest.raises(BadProof) as exc:
        verify(rnd, final, D.Reveal.from_wire(decode(encode(rv.to_wire()))))
    assert exc.value.seat == prover


@pytest.mark.parametrize("e,s", [(0, 0), (0, 1), (1, 0)])
def test_share_proof_with_zero_scalars_fails_as_a_proof(table: tuple[Round, D.EncryptedDeck], e: int, s: int) -> None:
    """A true share with a proof of zeros fails its proof (BadProof, §4.1), not as an invalid point: the point is valid."""
    rnd, final = table
    rv = D.make_reveal(rnd.ctx, rnd.keys, rnd.secrets[2], final, [1], None)
    zeros = proofs.Proof(group.scalar_of_int(e), group.scalar_of_int(s))
    with pytest.raises(BadProof, match="fails its DLEQ proof") as exc:
        verify(rnd, final, dataclasses.replace(rv, proofs=(zeros,)))
    assert exc.value.seat == 2


def test_share_with_a_torsion_component_is_refused(table: tuple[Round, D.EncryptedDeck]) -> None:
    """x·c1 plus a point of order 2: the same card once the cofactor is cleared, but not a point of the group."""
    rnd, final = table
    rv = D.make_reveal(rnd.ctx, rnd.keys, rnd.secrets[0], final, [3], None)
    bent = group.add(rv.shares[0], ORDER2)
    with pytest.raises(InvalidPoint) as exc:
        verify(rnd, final, dataclasses.replace(rv, shares=(bent,)))
    assert exc.value.seat == 0


def test_share_of_the_deck_before_the_last_pass_is_refused(table: tuple[Round, D.EncryptedDeck]) -> None:
    """A true share with a true proof, but on the c1 of the deck one pass before the final: no share of the card."""
    rnd, final = table
    before = rnd.records[0].passes[-2]
    stale = dataclasses.replace(before, stage=SEATS)  # make_reveal insists on a final deck
    rv = D.make_reveal(rnd.ctx, rnd.keys, rnd.secrets[2], stale, [5], 1)
    with pytest.raises(BadProof) as exc:
        verify(rnd, final, rv)
    assert exc.value.seat == 2


def test_reveal_with_a_non_canonical_proof_scalar_is_malformed(table: tuple[Round, D.EncryptedDeck]) -> None:
    """e + L or s + L in a share's proof is refused by the parser (one proof has one encoding)."""
    rnd, final = table
    wire = D.make_reveal(rnd.ctx, rnd.keys, rnd.secrets[1], final, [0], None).to_wire()
    prf = wire["proofs"]
    assert isinstance(prf, bytes)
    for at in (0, 32):
        x = int.from_bytes(prf[at : at + 32], "little") + L
        if x < 2**256:
            with pytest.raises(MalformedMessage):
                D.Reveal.from_wire({**wire, "proofs": prf[:at] + x.to_bytes(32, "little") + prf[at + 32 :]})


def test_reveal_from_a_seat_not_at_the_table_is_refused_not_a_crash(table: tuple[Round, D.EncryptedDeck]) -> None:
    """A reveal whose prover is a seat index the table has not (a valid index on the wire, < 16) is a fault, not an IndexError."""
    rnd, final = table
    rv = D.make_reveal(rnd.ctx, rnd.keys, rnd.secrets[1], final, [0], None)
    with pytest.raises(BadProof):
        verify(rnd, final, dataclasses.replace(rv, prover=SEATS + 2))


def test_no_nonce_answers_two_challenges(table: tuple[Round, D.EncryptedDeck]) -> None:
    """Every proof of one share (to each recipient, in public, made ahead or not) has its own commitment T1 = s·G - e·PK.

    One nonce k behind two challenges e ≠ e' would give the round key away: x = (s - s')/(e - e').
    """
    rnd, final = table
    ctx, keys, secret, pos = rnd.ctx, rnd.keys, rnd.secrets[0], 7
    made = [D.make_reveal(ctx, keys, secret, final, [pos], r) for r in (1, 2, None)]
    ahead = {pos: D.prepare_share(ctx, secret, final, pos)}
    made.append(D.make_reveal(ctx, keys, secret, final, [pos], 1, ahead))
    assert not ahead  # a commitment made ahead serves one proof only
    ahead = {pos: D.prepare_share(ctx, secret, final, pos)}
    made.append(D.make_reveal(ctx, keys, secret, final, [pos], 1, ahead))
    commitments = set()
    for rv in made:
        verify(rnd, final, rv)
        p = rv.proofs[0]
        commitments.add(group.sub(group.mul_base(p.response), group.mul(p.challenge, keys.publics[0])))
    assert len(commitments) == len(made)


# ---------------------------------------------------------------- passes (§4.6, §4.12)


def test_pass_re_encrypted_under_the_shufflers_own_key_is_refused(table: tuple[Round, D.EncryptedDeck]) -> None:
    """Masks added under the shuffler's round key PK_i, not the joint key, with a true proof of that other statement."""
    rnd, _ = table
    ctx, keys, seat = rnd.ctx, rnd.keys, 1
    prev = rnd.records[0].passes[0]
    own = dataclasses.replace(keys, joint=keys.publics[seat])
    bad = D.shuffle_pass(ctx, own, rnd.secrets[seat], prev)  # a correct proof, under PK_1
    with pytest.raises(BadPass, match="does not verify") as exc:
        D.verify_pass(ctx, keys, prev, D.EncryptedDeck.from_wire(decode(encode(bad.to_wire()))))
    assert exc.value.seat == seat


def test_proof_does_not_follow_two_outputs_swapped(table: tuple[Round, D.EncryptedDeck]) -> None:
    """Swapping two cards of an honest pass (backs and all) is another true shuffle, but not the one proven."""
    rnd, _ = table
    prev, new = rnd.records[0].passes[0], rnd.records[0].passes[1]
    assert new.tags is not None
    i = next(i for i in range(1, len(new)) if new.tags[i] != new.tags[0])

    def swap(t: tuple[str, ...] | tuple[bytes, ...]) -> tuple:  # type: ignore[type-arg]
        items = list(t)
        items[0], items[i] = items[i], items[0]
        return tuple(items)

    moved = dataclasses.replace(new, c1=swap(new.c1), c2=swap(new.c2), tags=swap(new.tags))
    with pytest.raises(BadPass, match="does not verify") as exc:
        D.verify_pass(rnd.ctx, rnd.keys, prev, moved)
    assert exc.value.seat == 1


def test_pass_of_one_deck_relabelled_for_another_is_refused() -> None:
    """A fresh deck of the very cards of deck 0 in the same order has the same stage-0 ciphertexts: a pass made on deck 0,
    named for deck 1 with deck 1's digest as its input, is refused (the proof binds the deck id)."""
    cards, tags = deck_cards("crescendo", 8)
    rnd = setup(SEATS, cards)
    d0 = D.initial_deck(rnd.ctx, rnd.keys, rnd.book, cards, tags, 0)
    d1 = D.initial_deck(rnd.ctx, rnd.keys, rnd.book, cards, tags, 1)
    assert d0.cts() == d1.cts()
    made = D.shuffle_pass(rnd.ctx, rnd.keys, rnd.secrets[0], d0)
    moved = dataclasses.replace(made, deck=1, input=D.deck_digest(rnd.ctx, d1))
    with pytest.raises(BadPass, match="does not verify"):
        D.verify_pass(rnd.ctx, rnd.keys, d1, moved)


@pytest.mark.parametrize("bad", ["torsion", "order2", "identity", "off-curve"])
def test_proof_points_are_validated_before_they_are_added(
    table: tuple[Round, D.EncryptedDeck], bad: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§4.1: a received point is validated before it is added to anything, B_{n-1} (which D sums first) included."""
    rnd, _ = table
    prev, new = rnd.records[0].passes[0], rnd.records[0].passes[1]
    assert new.proof is not None
    n = len(new)
    at = (2 * n - 1) * 32  # B_{n-1}
    point = {"torsion": group.add(new.proof[at : at + 32], ORDER2), "order2": ORDER2, "identity": IDENTITY,
             "off-curve": bytes([2] * 32)}[bad]
    proof = new.proof[:at] + point + new.proof[at + 32 :]
    added: list[bytes] = []
    real_add, real_sub = group.add, group.sub

    def watch(op: Callable[[bytes, bytes], bytes]) -> Callable[[bytes, bytes], bytes]:
        def checked(p: bytes, q: bytes) -> bytes:
            added.extend(x for x in (p, q) if not group.is_valid(x))
            return op(p, q)
        return checked

    monkeypatch.setattr(group, "add", watch(real_add))
    monkeypatch.setattr(group, "sub", watch(real_sub))
    with pytest.raises(InvalidPoint) as exc:
        D.verify_pass(rnd.ctx, rnd.keys, prev, dataclasses.replace(new, proof=proof))
    assert exc.value.seat == 1
    assert added == []


# ---------------------------------------------------------------- secrets stay where they are


def test_secrets_stay_out_of_repr(table: tuple[Round, D.EncryptedDeck]) -> None:
    """A round secret, a commitment made ahead and an opener never print a seed, a key or a nonce (logs, tracebacks)."""
    rnd, final = table
    secret = rnd.secrets[0]
    _, commitment = D.prepare_share(rnd.ctx, secret, final, 0)
    key = Ed25519PrivateKey.generate()
    ident = Identity(key, "alice")
    shown = " ".join(repr(o) + str(o) for o in (secret, commitment, Opener(ident), ident))
    for hidden in (secret.seed, secret.key, commitment.k, key.private_bytes_raw()):
        assert hidden.hex() not in shown and repr(hidden) not in shown


# ---------------------------------------------------------------- one seed, two inputs


@dataclasses.dataclass
class _Port:
    """A port that keeps what a seat's decks send and the faults they find."""

    sent: list[tuple[str, dict[str, object]]] = dataclasses.field(default_factory=list)
    faults: list[str] = dataclasses.field(default_factory=list)
    stopped: bool = False

    def send(self, mtype: str, body: dict[str, object]) -> None:
        self.sent.append((mtype, body))

    def deck_fault(self, exc: Exception, fallback: int | None, evidence: object = ()) -> None:
        self.faults.append(str(exc))
        self.stopped = True


def test_an_equivocating_predecessor_gets_one_pass_only() -> None:
    """A seat's permutation and masks depend on its seed and the deck id, not on its input (§4.6). Were an honest seat
    made to pass two inputs for one place, seat i-1 could send it A and A' = A re-masked by known δ_j, and read π off
    the difference of the two outputs. It never passes twice: a second signed pass for one place is equivocation."""
    cards, _ = deck_cards("crisp", 8)
    rnd = setup(SEATS, cards)
    ctx, keys = rnd.ctx, rnd.keys
    init = D.initial_deck(ctx, keys, rnd.book, cards)
    a = D.shuffle_pass(ctx, keys, rnd.secrets[0], init)
    deltas = [rand() for _ in cards]
    c1 = tuple(group.add(p, group.mul_base(dl)) for p, dl in zip(a.c1, deltas))
    c2 = tuple(group.add(p, group.mul(dl, keys.joint)) for p, dl in zip(a.c2, deltas))
    a2 = dataclasses.replace(a, c1=c1, c2=c2)  # seat 0 can prove this one too: it knows every mask of it

    # The leak, were both passed: out'_k - out_k = δ_π(k)·G.
    o, o2 = (D.shuffle_pass(ctx, keys, rnd.secrets[1], x) for x in (a, a2))
    marks = {group.mul_base(dl): j for j, dl in enumerate(deltas)}
    perm, _ = D._pass_randomness(ctx, 1, rnd.secrets[1].seed, 0, len(cards))
    assert [marks[group.sub(q, p)] for p, q in zip(o.c1, o2.c1)] == perm

    # What the table does: seat 1 passes the first input it verified, and a second one for that place is equivocation.
    port = _Port()
    seat1 = Decks(ctx, rnd.secrets[1], 1, port, cards, None, lambda deck: None)  # type: ignore[arg-type]
    for ann in rnd.anns:
        seat1.take_key(ann.seat, ann)
    seat1.take_pass(0, a, b"frame of A")
    seat1.advance()
    with pytest.raises(EquivocationEvidence):
        seat1.take_pass(0, a2, b"frame of A'")
    seat1.advance()
    assert [t for t, _ in port.sent] == ["pass"] and not port.faults
