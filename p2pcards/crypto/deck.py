"""The mental-poker deck, pure and sans-IO: round keys, masked decks, shuffle passes, shares, audit.

Seats are numbered 0..S-1 and shuffle in that order. Every function is deterministic in its
arguments; the only randomness is each seat's 32-byte round seed, drawn at the edge
(`draw_seed`) and handed in. A seat's round key, and the permutation, re-masking scalars and
proof-of-shuffle randomness of every pass it makes this round, are all derived from that seed, so
one commitment to the seed commits the seat to all of them before it sees any deck. Every pass
carries a Terelius–Wikström proof of shuffle (`shuffle.py`), checked on receipt by `verify_pass`.
"""

from __future__ import annotations

import hashlib
import secrets
from collections import Counter
from collections.abc import Iterable, Mapping, MutableMapping, Sequence
from dataclasses import dataclass, replace
from typing import Final, TypeAlias

from ..errors import BadCard, BadOpening, BadPass, BadProof, DeckFault, InvalidPoint, LocalError, MalformedMessage
from . import group, proofs, shuffle
from .encoding import Value, encode, transcript_hash
from .proofs import Proof

Card: TypeAlias = str | int

SEED_BYTES: Final = 32
CARD_PERSON: Final = b"p2pc/card/v1"
RKEY_PERSON: Final = b"p2pc/rkey/v1"
COMMIT_PERSON: Final = b"p2pc/commit/v1"
SHUFFLE_PERSON: Final = b"p2pc/shuffle/v1"
DECK_PERSON: Final = b"p2pc/deck/v1"
MIN_SEATS: Final = 2
MAX_SEATS: Final = 16
MAX_CARDS: Final = 1024
MAX_TAG: Final = 64


def draw_seed() -> bytes:
    """A fresh 32-byte round seed from `secrets` (the one place this module draws randomness)."""
    return secrets.token_bytes(SEED_BYTES)


def _is_card(card: object) -> bool:
    """True for a card label: a str or a non-bool int."""
    return isinstance(card, str) or (isinstance(card, int) and not isinstance(card, bool))


@dataclass(frozen=True, slots=True)
class RoundContext:
    """What every deck operation of one round is bound to; `players` names each seat for blame."""

    table: bytes
    round: int
    players: tuple[str, ...]

    def __post_init__(self) -> None:
        if not (isinstance(self.table, bytes) and 1 <= len(self.table) <= 64):
            raise ValueError("table id must be 1 to 64 bytes")
        if not (type(self.round) is int and 0 <= self.round < 1 << 32):
            raise ValueError("round must be an integer in [0, 2^32)")
        if not MIN_SEATS <= len(self.players) <= MAX_SEATS:
            raise ValueError(f"{MIN_SEATS} to {MAX_SEATS} seats")

    @property
    def seats(self) -> int:
        """Number of seats."""
        return len(self.players)

    def blame(self, seat: int | None) -> str | None:
        """The blame label of a seat (None for None)."""
        return None if seat is None else self.players[seat]


# ---------------------------------------------------------------- cards


def card_point(table: bytes, round: int, card: Card) -> bytes:
    """The point of `card` this round: from_uniform(h0) + from_uniform(h1), h_i = H_card(table, round, card, i)."""
    if not _is_card(card):
        raise TypeError(f"a card is a str or an int: {card!r}")
    return _card_point(encode([table, round, 0, 0])[:-2], card)


def _card_point(head: bytes, card: Card) -> bytes:
    """card_point with the transcript's head (array header, table, round) already encoded."""
    tail = encode(card)
    h0 = hashlib.blake2b(head + tail + b"\x00", digest_size=32, person=CARD_PERSON).digest()
    h1 = hashlib.blake2b(head + tail + b"\x01", digest_size=32, person=CARD_PERSON).digest()
    return group.add(group.from_uniform(h0), group.from_uniform(h1))


@dataclass(frozen=True, slots=True)
class CardBook:
    """The points of every card of a round, both ways."""

    points: Mapping[Card, bytes]
    cards: Mapping[bytes, Card]


def card_book(ctx: RoundContext, cards: Iterable[Card]) -> CardBook:
    """The card book of this round for a set of distinct cards."""
    points: dict[Card, bytes] = {}
    head = encode([ctx.table, ctx.round, 0, 0])[:-2]  # the two trailing fixints are the card's slots
    for card in cards:
        if card in points:
            raise ValueError(f"card {card!r} twice")
        if not _is_card(card):
            raise TypeError(f"a card is a str or an int: {card!r}")
        points[card] = _card_point(head, card)
    by_point = {p: c for c, p in points.items()}
    if len(by_point) != len(points):  # pragma: no cover - a hash collision
        raise ValueError("two cards hash to one point")
    return CardBook(points, by_point)


# ---------------------------------------------------------------- round keys and commitments


@dataclass(frozen=True, slots=True, repr=False)
class RoundSecret:
    """One seat's secrets for one round, all derived from its seed: persist `seed` to survive a crash."""

    seat: int
    seed: bytes
    key: bytes
    public: bytes
    commitment: bytes

    def __repr__(self) -> str:
        return f"RoundSecret(seat={self.seat}, public={self.public.hex()})"


def _derive_key(ctx: RoundContext, seat: int, seed: bytes) -> bytes:
    """x = H_rkey(table, round, seat, seed) mod L."""
    return group.scalar_reduce(transcript_hash(RKEY_PERSON, [ctx.table, ctx.round, seat, seed]))


def _commit(ctx: RoundContext, seat: int, public: bytes, seed: bytes) -> bytes:
    """The commitment to a seed: H_commit(table, round, seat, public, seed), 32 bytes."""
    return transcript_hash(COMMIT_PERSON, [ctx.table, ctx.round, seat, public, seed], 32)


def round_secret(ctx: RoundContext, seat: int, seed: bytes) -> RoundSecret:
    """The round secret of `seat` from its 32-byte seed (from `draw_seed`, or reloaded after a crash)."""
    if not 0 <= seat < ctx.seats:
        raise ValueError("no such seat")
    if not (isinstance(seed, bytes) and len(seed) == SEED_BYTES):
        raise ValueError("a seed is 32 bytes")
    key = _derive_key(ctx, seat, seed)
    public = group.mul_base(key)  # a zero key (probability 2^-252) raises here
    return RoundSecret(seat, seed, key, public, _commit(ctx, seat, public, seed))


@dataclass(frozen=True, slots=True)
class KeyAnnouncement:
    """A seat's round public key, its proof of knowledge, and its commitment to its seed."""

    seat: int
    public: bytes
    proof: Proof
    commitment: bytes

    def to_wire(self) -> dict[str, Value]:
        """The msgpack map of this announcement."""
        return {"seat": self.seat, "public": self.public, "proof": self.proof.to_bytes(), "commitment": self.commitment}

    @classmethod
    def from_wire(cls, v: Value) -> KeyAnnouncement:
        """Parse the map; MalformedMessage on a bad shape (points are checked by `round_keys`)."""
        m = _fields(v, {"seat", "public", "proof", "commitment"})
        return cls(_seat(m["seat"]), _bin(m["public"], 32), _proof(m["proof"]), _bin(m["commitment"], 32))


def announce(ctx: RoundContext, secret: RoundSecret) -> KeyAnnouncement:
    """The announcement a seat sends before any shuffling."""
    proof = proofs.prove_key(secret.key, secret.public, ctx.table, ctx.round, secret.seat)
    return KeyAnnouncement(secret.seat, secret.public, proof, secret.commitment)


@dataclass(frozen=True, slots=True)
class RoundKeys:
    """Every seat's verified round public key, their sum (the joint key), and the seed commitments."""

    publics: tuple[bytes, ...]
    joint: bytes
    commitments: tuple[bytes, ...]


def verify_announcement(ctx: RoundContext, ann: KeyAnnouncement) -> None:
    """Check one announcement: a valid point and a proof of knowledge bound to (table, round, seat)."""
    if not 0 <= ann.seat < ctx.seats:
        raise BadProof("announcement for no seat")
    if not group.is_valid(ann.public):
        raise InvalidPoint("round key is not a valid point", ctx.blame(ann.seat), ann.seat)
    if not proofs.verify_key(ann.public, ann.proof, ctx.table, ctx.round, ann.seat):
        raise BadProof("round key proof of knowledge does not verify", ctx.blame(ann.seat), ann.seat)


def round_keys(ctx: RoundContext, announcements: Sequence[KeyAnnouncement], own: int | None = None) -> RoundKeys:
    """Verify one announcement per seat (in seat order; our `own` one is trusted) and combine them into the joint key."""
    if [a.seat for a in announcements] != list(range(ctx.seats)):
        raise ValueError("need exactly one announcement per seat, in seat order")
    for ann in announcements:
        if ann.seat != own:
            verify_announcement(ctx, ann)
    joint = announcements[0].public
    for ann in announcements[1:]:
        joint = group.add(joint, ann.public)
    if not group.is_valid(joint):  # pragma: no cover - needs keys summing to zero, impossible with the proofs
        raise BadProof("joint key is not a valid point", ctx.blame(announcements[-1].seat), announcements[-1].seat)
    return RoundKeys(
        tuple(a.public for a in announcements), joint, tuple(a.commitment for a in announcements)
    )


@dataclass(frozen=True, slots=True)
class Opening:
    """A seat's opening of its commitment after the round: its seed."""

    seat: int
    seed: bytes

    def to_wire(self) -> dict[str, Value]:
        """The msgpack map of this opening."""
        return {"seat": self.seat, "seed": self.seed}

    @classmethod
    def from_wire(cls, v: Value) -> Opening:
        """Parse the map; MalformedMessage on a bad shape."""
        m = _fields(v, {"seat", "seed"})
        return cls(_seat(m["seat"]), _bin(m["seed"], SEED_BYTES))


def check_opening(ctx: RoundContext, keys: RoundKeys, opening: Opening) -> RoundSecret:
    """The seat's round secret rebuilt from its opening; BadOpening unless it matches its commitment and key."""
    seat = opening.seat
    if not 0 <= seat < ctx.seats:
        raise BadOpening("opening for no seat")
    if not (isinstance(opening.seed, bytes) and len(opening.seed) == SEED_BYTES):
        raise BadOpening("an opening is a 32-byte seed", ctx.blame(seat), seat)
    s = round_secret(ctx, seat, opening.seed)
    if s.commitment != keys.commitments[seat] or s.public != keys.publics[seat]:
        raise BadOpening("opening does not match its commitment and round key", ctx.blame(seat), seat)
    return s


def open_commitment(secret: RoundSecret) -> Opening:
    """The opening a seat publishes after the round."""
    return Opening(secret.seat, secret.seed)


# ---------------------------------------------------------------- masked decks and shuffle passes


@dataclass(frozen=True, slots=True)
class EncryptedDeck:
    """A deck of ElGamal ciphertexts (c1[i], c2[i]) with public tags, after `stage` shuffle passes.

    A pass (stage >= 1) also names the digest of the deck it shuffled (`input`) and carries its
    proof of shuffle; the starting deck (stage 0) is built by every peer and has neither.
    """

    deck: int  # 0 for the round's deck, then 1, 2, ... for each fresh shuffle of known cards
    stage: int  # passes applied; seat s makes the pass from stage s to s+1; final at stage == seats
    c1: tuple[bytes, ...]
    c2: tuple[bytes, ...]
    tags: tuple[str, ...] | None
    input: bytes | None = None
    proof: bytes | None = None

    def __len__(self) -> int:
        return len(self.c1)

    def cts(self) -> bytes:
        """The ciphertexts as on the wire: c1 || c2 of each card in order."""
        return b"".join(a + b for a, b in zip(self.c1, self.c2))

    def to_wire(self) -> dict[str, Value]:
        """The msgpack map: ciphertexts as one bin of c1 || c2 per card, the input's digest and the proof."""
        tags: Value = None if self.tags is None else list(self.tags)
        return {
            "deck": self.deck, "stage": self.stage, "cts": self.cts(), "tags": tags,
            "input": self.input, "proof": self.proof,
        }

    @classmethod
    def from_wire(cls, v: Value) -> EncryptedDeck:
        """Parse a pass; MalformedMessage on a bad shape (points and the proof are checked by `verify_pass`)."""
        m = _fields(v, {"deck", "stage", "cts", "tags", "input", "proof"})
        deck, stage, cts, tags = _uint(m["deck"]), _uint(m["stage"]), m["cts"], m["tags"]
        if not isinstance(cts, bytes) or len(cts) % 64 or not 0 < len(cts) // 64 <= MAX_CARDS:
            raise MalformedMessage("cts must be 64 bytes per card")
        n = len(cts) // 64
        c1 = tuple(cts[i : i + 32] for i in range(0, len(cts), 64))
        c2 = tuple(cts[i + 32 : i + 64] for i in range(0, len(cts), 64))
        source = _bin(m["input"], 32)
        proof = m["proof"]
        if not (isinstance(proof, bytes) and len(proof) == shuffle.proof_bytes(n)):
            raise MalformedMessage(f"a pass of {n} cards carries a {shuffle.proof_bytes(n)}-byte proof")
        if tags is not None:
            if not (isinstance(tags, list) and len(tags) == n):
                raise MalformedMessage("tags must be one str per card")
            for t in tags:
                if not (isinstance(t, str) and len(t.encode("utf-8")) <= MAX_TAG):
                    raise MalformedMessage("bad tag")
            return cls(deck, stage, c1, c2, tuple(tags), source, proof)  # type: ignore[arg-type]
        return cls(deck, stage, c1, c2, None, source, proof)


def deck_digest(ctx: RoundContext, d: EncryptedDeck) -> bytes:
    """H_deck(table, round, deck, stage, cts, tags), 32 bytes: what a pass names as its input."""
    tags: Value = None if d.tags is None else list(d.tags)
    return transcript_hash(DECK_PERSON, [ctx.table, ctx.round, d.deck, d.stage, d.cts(), tags], 32)


def initial_deck(
    ctx: RoundContext,
    keys: RoundKeys,
    book: CardBook,
    cards: Sequence[Card],
    tags: Sequence[str] | None = None,
    deck: int = 0,
) -> EncryptedDeck:
    """The public starting deck (G, M + PK) for distinct known `cards`: deck 0, or a fresh shuffle's deck."""
    if len(set(cards)) != len(cards) or not 0 < len(cards) <= MAX_CARDS:
        raise ValueError("cards must be distinct, 1 to MAX_CARDS of them")
    if tags is not None and len(tags) != len(cards):
        raise ValueError("one tag per card")
    joint = keys.joint
    c2 = tuple(group.add(book.points[c], joint) for c in cards)
    return EncryptedDeck(deck, 0, (group.BASE,) * len(cards), c2, None if tags is None else tuple(tags))


def _pass_randomness(ctx: RoundContext, seat: int, seed: bytes, deck: int, n: int) -> tuple[list[int], list[int]]:
    """The permutation and the n re-masking scalars (as integers) of `seat`'s pass on deck `deck` of n cards."""
    base: list[Value] = [ctx.table, ctx.round, seat, deck, n, seed]
    # H(base + ["r", j]) for every j: the encoding up to j is shared, so hash it once and copy the state.
    prefix = hashlib.blake2b(digest_size=64, person=SHUFFLE_PERSON)
    prefix.update(encode([*base, "r", 0])[:-1])
    L = group.ORDER
    scalars = []
    for j in range(n):
        h = prefix.copy()
        h.update(encode(j))
        scalars.append(int.from_bytes(h.digest(), "little") % L)
    perm = list(range(n))
    words: list[int] = []
    counter = 0
    for i in range(n - 1, 0, -1):
        bound = i + 1
        limit = (1 << 64) - (1 << 64) % bound  # rejection sampling: no modulo bias
        while True:
            if not words:
                block = transcript_hash(SHUFFLE_PERSON, [*base, "p", counter])
                counter += 1
                words = [int.from_bytes(block[k : k + 8], "little") for k in range(56, -8, -8)]
            w = words.pop()  # words are consumed in block order: bytes 0-7 first
            if w < limit:
                break
        j = w % bound
        perm[i], perm[j] = perm[j], perm[i]
    return perm, scalars


def _statement(ctx: RoundContext, keys: RoundKeys, prev: EncryptedDeck, new: EncryptedDeck, source: bytes) -> shuffle.Statement:
    """The proof-of-shuffle statement of the pass from `prev` to `new`, bound to the round and the seat."""
    context: tuple[Value, ...] = (ctx.table, ctx.round, list(ctx.players), prev.deck, prev.stage)
    return shuffle.Statement(context, keys.joint, source, prev.c1, prev.c2, prev.tags, new.c1, new.c2, new.tags)


def shuffle_pass(ctx: RoundContext, keys: RoundKeys, secret: RoundSecret, prev: EncryptedDeck) -> EncryptedDeck:
    """This seat's proven pass: out[k] = (c1[π k] + r_k·G, c2[π k] + r_k·PK), tags moved along; `prev` must be verified.

    The proof's randomness, like the pass's, is derived from the seat's committed seed (and the
    digest of `prev`), so a pass and its proof are a function of the seed and the input.
    """
    if prev.stage != secret.seat:
        raise LocalError(f"seat {secret.seat} shuffles at stage {secret.seat}, not {prev.stage}")
    n = len(prev)
    perm, ints = _pass_randomness(ctx, secret.seat, secret.seed, prev.deck, n)
    rs = [r.to_bytes(32, "little") for r in ints]
    add, mul, mul_base, joint = group.add, group.mul, group.mul_base, keys.joint
    pc1, pc2 = prev.c1, prev.c2
    c1 = tuple([add(pc1[i], mul_base(r)) for i, r in zip(perm, rs)])
    c2 = tuple([add(pc2[i], mul(r, joint)) for i, r in zip(perm, rs)])
    tags = None if prev.tags is None else tuple([prev.tags[i] for i in perm])
    source = deck_digest(ctx, prev)
    out = EncryptedDeck(prev.deck, prev.stage + 1, c1, c2, tags, source)
    # Everything the pass and its proof depend on (so one proof, one set of nonces): the seed fixes π and r,
    # the input its digest, and the joint key the output.
    nonce_key: list[Value] = [secret.seed, ctx.table, ctx.round, secret.seat, prev.deck, source, keys.joint]
    proof = shuffle.prove(_statement(ctx, keys, prev, out, source), perm, ints, nonce_key)
    return replace(out, proof=proof.to_bytes())


def _check_shape(ctx: RoundContext, prev: EncryptedDeck, new: EncryptedDeck) -> None:
    """The cheap checks of a pass: deck id, stage, count and tags (as a multiset)."""
    seat = prev.stage
    blame = ctx.blame(seat)
    if new.deck != prev.deck or new.stage != prev.stage + 1 or new.stage > ctx.seats:
        raise BadPass(f"pass for deck {new.deck} stage {new.stage}, expected {prev.deck}/{prev.stage + 1}", blame, seat)
    if len(new.c1) != len(prev.c1) or len(new.c2) != len(prev.c2):
        raise BadPass(f"pass has {len(new.c1)} cards, expected {len(prev.c1)}", blame, seat)
    if (new.tags is None) != (prev.tags is None) or (
        new.tags is not None and prev.tags is not None and Counter(new.tags) != Counter(prev.tags)
    ):
        raise BadPass("pass changed the public tags", blame, seat)


def verify_pass(ctx: RoundContext, keys: RoundKeys, prev: EncryptedDeck, new: EncryptedDeck) -> None:
    """Check the pass of seat `prev.stage` on the verified deck `prev`: shape, named input, proof of shuffle.

    BadPass (or InvalidPoint for a point that is not valid) names the seat; on success `new` is a
    permutation and re-encryption of `prev` under the joint key, with every tag kept on its card.
    """
    _check_shape(ctx, prev, new)
    seat = prev.stage
    blame = ctx.blame(seat)
    source = deck_digest(ctx, prev)
    if new.input != source:
        raise BadPass(f"pass names another input than deck {prev.deck} at stage {prev.stage}", blame, seat)
    points = set(new.c1)
    points.update(new.c2)
    if len(points) != 2 * len(new.c1):
        raise BadPass("pass repeats a point", blame, seat)
    if not points.isdisjoint(prev.c1) or not points.isdisjoint(prev.c2):
        raise BadPass("pass did not re-mask every card", blame, seat)
    try:
        proof = shuffle.ShuffleProof.from_bytes(new.proof if new.proof is not None else b"", len(new))
    except MalformedMessage as exc:
        raise BadPass(f"pass carries no well-formed proof of shuffle: {exc}", blame, seat) from None
    try:
        ok = shuffle.verify(_statement(ctx, keys, prev, new, source), proof)
    except InvalidPoint:
        raise InvalidPoint("pass or its proof contains an invalid, small-order or identity point", blame, seat) from None
    if not ok:
        raise BadPass("proof of shuffle does not verify", blame, seat)


# ---------------------------------------------------------------- decryption shares and reveals


@dataclass(frozen=True, slots=True)
class Reveal:
    """One prover's decryption shares, with DLEQ proofs, for some positions of a final deck (named by its digest)."""

    deck: int
    prover: int
    recipient: int | None  # None for a public reveal
    positions: tuple[int, ...]
    shares: tuple[bytes, ...]
    proofs: tuple[Proof, ...]
    final: bytes  # deck_digest of the final deck the shares were proved on

    def to_wire(self) -> dict[str, Value]:
        """The msgpack map: shares as one bin of 32 bytes each, proofs as one bin of 64 bytes each."""
        return {
            "deck": self.deck,
            "final": self.final,
            "prover": self.prover,
            "recipient": self.recipient,
            "positions": list(self.positions),
            "shares": b"".join(self.shares),
            "proofs": b"".join(p.to_bytes() for p in self.proofs),
        }

    @classmethod
    def from_wire(cls, v: Value) -> Reveal:
        """Parse the map; MalformedMessage on a bad shape (points and proofs are checked by `verify_reveal`)."""
        m = _fields(v, {"deck", "final", "prover", "recipient", "positions", "shares", "proofs"})
        positions, shares, prfs = m["positions"], m["shares"], m["proofs"]
        if not (isinstance(positions, list) and 0 < len(positions) <= MAX_CARDS):
            raise MalformedMessage("positions must be a non-empty list")
        pos = tuple(_uint(p) for p in positions)
        if len(set(pos)) != len(pos):
            raise MalformedMessage("a position twice")
        n = len(pos)
        if not (isinstance(shares, bytes) and len(shares) == 32 * n):
            raise MalformedMessage("shares must be 32 bytes per position")
        if not (isinstance(prfs, bytes) and len(prfs) == 64 * n):
            raise MalformedMessage("proofs must be 64 bytes per position")
        recipient = None if m["recipient"] is None else _seat(m["recipient"])
        return cls(
            _uint(m["deck"]),
            _seat(m["prover"]),
            recipient,
            pos,
            tuple(shares[32 * i : 32 * i + 32] for i in range(n)),
            tuple(_proof(prfs[64 * i : 64 * i + 64]) for i in range(n)),
            _bin(m["final"], 32),
        )


def _final(ctx: RoundContext, deck: EncryptedDeck) -> None:
    """Shares are only ever made on a fully shuffled deck."""
    if deck.stage != ctx.seats:
        raise LocalError("shares are made only on a fully shuffled deck")


def make_reveal(
    ctx: RoundContext,
    keys: RoundKeys,
    secret: RoundSecret,
    deck: EncryptedDeck,
    positions: Sequence[int],
    recipient: int | None,
    ahead: MutableMapping[int, tuple[bytes, proofs.Commitment]] | None = None,
) -> Reveal:
    """This seat's shares of `positions` for `recipient` (None: public); needs no other seat's shares.

    `ahead` holds, by position, our share and a proof commitment made while idle (`prepare_share`):
    a position's entry is taken out as it is used, so a commitment serves one proof only."""
    _final(ctx, deck)
    if recipient == secret.seat:
        raise LocalError("the recipient of a private reveal keeps its own share")
    if recipient is not None and not 0 <= recipient < ctx.seats:
        raise LocalError("no such recipient")
    if len(set(positions)) != len(positions) or not positions:
        raise LocalError("positions must be distinct and non-empty")
    x, pub, seat = secret.key, secret.public, secret.seat
    shares: list[bytes] = []
    prfs: list[Proof] = []
    for pos in positions:
        c1 = deck.c1[pos]
        made = None if ahead is None else ahead.pop(pos, None)
        d, commitment = (group.mul(x, c1), None) if made is None else made
        ctx_fields = proofs.dleq_context(ctx.table, ctx.round, deck.deck, pos, recipient, seat)
        prfs.append(proofs.prove_share(x, pub, c1, d, ctx_fields, commitment))
        shares.append(d)
    return Reveal(deck.deck, seat, recipient, tuple(positions), tuple(shares), tuple(prfs), deck_digest(ctx, deck))


def prepare_share(ctx: RoundContext, secret: RoundSecret, deck: EncryptedDeck,
                  position: int) -> tuple[bytes, proofs.Commitment]:
    """Our share of `position` and a one-time proof commitment for it, for `make_reveal`'s `ahead`."""
    _final(ctx, deck)
    c1 = deck.c1[position]
    label: list[Value] = [ctx.table, ctx.round, deck.deck, position, secret.seat]
    return group.mul(secret.key, c1), proofs.commit_share(secret.key, c1, label)


def verify_reveal(
    ctx: RoundContext,
    keys: RoundKeys,
    deck: EncryptedDeck,
    reveal: Reveal,
    *,
    prover: int,
    recipient: int | None,
    positions: Sequence[int],
) -> None:
    """Check a reveal answers exactly this request (prover, recipient, positions, on `deck`) and every DLEQ proof holds.

    A reveal naming another final deck than `deck` is refused here too; a table, where the last shuffler may have
    shown two final decks, checks `reveal.final` first (protocol.md §4.7)."""
    _final(ctx, deck)
    if not 0 <= prover < ctx.seats:
        raise BadProof("shares from no seat")
    blame = ctx.blame(prover)
    if (reveal.deck, reveal.final, reveal.prover, reveal.recipient, reveal.positions) != (
        deck.deck,
        deck_digest(ctx, deck),
        prover,
        recipient,
        tuple(positions),
    ):
        raise BadProof("reveal does not answer the request it claims to", blame, prover)
    if prover == recipient:
        raise BadProof("the recipient sent its own share", blame, prover)
    if recipient is not None and not 0 <= recipient < ctx.seats:
        raise BadProof("shares for no seat", blame, prover)
    if not len(reveal.shares) == len(reveal.proofs) == len(reveal.positions):
        raise BadProof("not one share and one proof per position", blame, prover)
    public = keys.publics[prover]
    for pos, d, proof in zip(reveal.positions, reveal.shares, reveal.proofs):
        if not 0 <= pos < len(deck):
            raise BadProof("share for no position", blame, prover)
        ctx_fields = proofs.dleq_context(ctx.table, ctx.round, deck.deck, pos, recipient, prover)
        try:
            ok = proofs.verify_share(public, deck.c1[pos], d, proof, ctx_fields)
        except InvalidPoint:
            raise InvalidPoint(f"share for position {pos} is not a valid point", blame, prover) from None
        if not ok:
            raise BadProof(f"share for position {pos} fails its DLEQ proof", blame, prover)


def own_share(secret: RoundSecret, deck: EncryptedDeck, position: int) -> bytes:
    """A seat's own share of a position (what a private recipient keeps to itself)."""
    return group.mul(secret.key, deck.c1[position])


def combine(
    ctx: RoundContext,
    book: CardBook,
    deck: EncryptedDeck,
    position: int,
    shares: Sequence[bytes],
    seen: Mapping[int, Card] | None = None,
) -> Card:
    """The card at `position` from one verified share per seat: M = c2 - Σ shares.

    BadCard if M is no card, or if it is a card already `seen` at another position of this deck
    (a deck holds each card once: a repeated face is a fault of the deck, which the audit pins on a seat).
    """
    if len(shares) != ctx.seats:
        raise LocalError(f"need {ctx.seats} shares, got {len(shares)}")
    m = deck.c2[position]
    for d in shares:
        m = group.sub(m, d)
    card = book.cards.get(m)
    if card is None:
        # Every share was proven, so some pass corrupted this card: the audit names the seat.
        raise BadCard(f"position {position} of deck {deck.deck} decrypts to no card")
    if seen:
        where = next((p for p, c in seen.items() if c == card and p != position), None)
        if where is not None:
            raise BadCard(f"card {card!r} at position {position} of deck {deck.deck} was already seen at position {where}")
    return card


def open_cards(
    ctx: RoundContext,
    book: CardBook,
    deck: EncryptedDeck,
    reveals: Sequence[Reveal],
    secret: RoundSecret | None = None,
    seen: Mapping[int, Card] | None = None,
) -> dict[int, Card]:
    """The cards of every position covered by verified `reveals` from all seats (plus our own share if `secret`).

    BadCard if a position decrypts to no card, or if a card shows twice in this deck (counting the
    faces already `seen` at other positions of it).
    """
    by_pos: dict[int, dict[int, bytes]] = {}
    for r in reveals:
        for pos, d in zip(r.positions, r.shares):
            by_pos.setdefault(pos, {})[r.prover] = d
    out: dict[int, Card] = dict(seen or {})
    for pos, got in sorted(by_pos.items()):
        if secret is not None and secret.seat not in got:
            got[secret.seat] = own_share(secret, deck, pos)
        if len(got) != ctx.seats:
            raise LocalError(f"position {pos}: shares from {sorted(got)} only")
        out[pos] = combine(ctx, book, deck, pos, list(got.values()), out)
    return {pos: out[pos] for pos in sorted(by_pos)}


# ---------------------------------------------------------------- the audit


@dataclass(frozen=True, slots=True)
class DeckRecord:
    """What the log holds for one deck: its known starting cards and tags, and each seat's pass in order."""

    deck: int
    cards: tuple[Card, ...]
    tags: tuple[str, ...] | None
    passes: tuple[EncryptedDeck, ...]


@dataclass(frozen=True, slots=True)
class Fault:
    """The first fault the audit found: which seat, what kind (key, opening, pass, share), and where."""

    seat: int | None
    blame: str | None
    kind: str
    detail: str


@dataclass(frozen=True, slots=True)
class AuditReport:
    """The audit's verdict, and the face at every position of every fully shuffled deck."""

    fault: Fault | None
    faces: Mapping[int, tuple[Card, ...]]

    @property
    def verified(self) -> bool:
        """True when the audit found no fault."""
        return self.fault is None

    def __str__(self) -> str:
        if self.fault is None:
            return "verified"
        return f"fault: {self.fault.kind} by {self.fault.blame}: {self.fault.detail}"


def _fault(ctx: RoundContext, seat: int | None, kind: str, detail: str) -> AuditReport:
    """A report naming one fault."""
    return AuditReport(Fault(seat, ctx.blame(seat), kind, detail), {})


def audit(
    ctx: RoundContext,
    announcements: Sequence[KeyAnnouncement],
    openings: Sequence[Opening],
    book: CardBook,
    records: Sequence[DeckRecord],
    reveals: Sequence[Reveal] = (),
) -> AuditReport:
    """Replay the round from every seat's opening: keys, openings, every pass of every deck, every share.

    Returns "verified" with every face, or the first fault in that order with the seat to blame.
    """
    try:
        keys = round_keys(ctx, announcements)
    except DeckFault as exc:
        return _fault(ctx, exc.seat, "key", str(exc))
    by_seat = {o.seat: o for o in openings}
    secrets_: list[RoundSecret] = []
    for seat in range(ctx.seats):
        o = by_seat.get(seat)
        if o is None:
            return _fault(ctx, seat, "opening", "no opening of its commitment")
        try:
            secrets_.append(check_opening(ctx, keys, o))
        except BadOpening as exc:
            return _fault(ctx, seat, "opening", str(exc))
    # Everything is public now, so scalar arithmetic can use Python integers (much cheaper than a libsodium call).
    L = group.ORDER
    xs = [int.from_bytes(s.key, "little") for s in secrets_]
    x = sum(xs) % L

    if len({r.deck for r in records}) != len(records):
        raise ValueError("deck ids must be distinct")
    faces: dict[int, tuple[Card, ...]] = {}
    masks: dict[int, list[int]] = {}  # deck -> total re-masking scalar R at each final position
    finals: dict[int, bytes] = {}  # deck -> the digest of its final deck
    mul_base, add = group.mul_base, group.add
    for rec in records:
        prev = initial_deck(ctx, keys, book, rec.cards, rec.tags, rec.deck)
        cards = list(rec.cards)
        tag_of = None if rec.tags is None else dict(zip(rec.cards, rec.tags))
        mask = [1] * len(cards)  # c1 = R·G and c2 = M + (R·x)·G at every stage
        for seat, new in enumerate(rec.passes):
            if seat >= ctx.seats:
                raise ValueError("more passes than seats")
            try:
                _check_shape(ctx, prev, new)
            except BadPass as exc:
                return _fault(ctx, seat, "pass", str(exc))
            perm, rs = _pass_randomness(ctx, seat, secrets_[seat].seed, rec.deck, len(cards))
            cards = [cards[i] for i in perm]
            mask = [(mask[i] + r) % L for i, r in zip(perm, rs)]
            points = book.points
            # Expected values are computed with base multiplications only, knowing x: much cheaper than re-masking.
            # In batches of one operation each: the base-point tables stay in cache.
            c1 = [mul_base(m.to_bytes(32, "little")) for m in mask]
            rx = [mul_base((m * x % L).to_bytes(32, "little")) for m in mask]
            c2 = [add(points[c], p) for c, p in zip(cards, rx)]
            if c1 != list(new.c1) or c2 != list(new.c2):
                k = next(k for k in range(len(cards)) if (c1[k], c2[k]) != (new.c1[k], new.c2[k]))
                return _fault(
                    ctx, seat, "pass", f"deck {rec.deck} pass of seat {seat} is not its committed shuffle at position {k}"
                )
            if tag_of is not None and new.tags != tuple(tag_of[c] for c in cards):
                return _fault(ctx, seat, "pass", f"deck {rec.deck} pass of seat {seat} moved a tag off its card")
            prev = new
        if len(rec.passes) == ctx.seats:
            faces[rec.deck] = tuple(cards)
            masks[rec.deck] = mask
            finals[rec.deck] = deck_digest(ctx, prev)

    for rv in reveals:
        mask_of = masks.get(rv.deck)
        if mask_of is None or not 0 <= rv.prover < ctx.seats or rv.final != finals[rv.deck]:
            return _fault(ctx, rv.prover if 0 <= rv.prover < ctx.seats else None, "share", "share for no shuffled deck")
        xk = xs[rv.prover]
        for pos, d in zip(rv.positions, rv.shares):
            if not 0 <= pos < len(mask_of) or d != mul_base((mask_of[pos] * xk % L).to_bytes(32, "little")):
                return _fault(ctx, rv.prover, "share", f"wrong share for deck {rv.deck} position {pos}")
    return AuditReport(None, faces)


# ---------------------------------------------------------------- wire helpers


def _fields(v: Value, names: set[str]) -> dict[str, Value]:
    """`v` as a map with exactly `names` as keys."""
    if not isinstance(v, dict) or set(v) != names:
        raise MalformedMessage("expected a map of exactly: " + ", ".join(sorted(names)))
    return v


def _uint(v: Value) -> int:
    """A non-negative int below 2^32."""
    if type(v) is not int or not 0 <= v < 1 << 32:
        raise MalformedMessage("expected a small non-negative integer")
    return v


def _seat(v: Value) -> int:
    """A seat index."""
    if type(v) is not int or not 0 <= v < MAX_SEATS:
        raise MalformedMessage("expected a seat index")
    return v


def _bin(v: Value, size: int) -> bytes:
    """A bin of exactly `size` bytes."""
    if not isinstance(v, bytes) or len(v) != size:
        raise MalformedMessage(f"expected {size} bytes")
    return v


def _proof(v: Value) -> Proof:
    """A 64-byte proof with canonical scalars."""
    data = _bin(v, proofs.PROOF_BYTES)
    try:
        return Proof.from_bytes(data)
    except BadProof:
        raise MalformedMessage("proof scalars are not canonical") from None
