"""Shared fixtures for the crypto tests: a whole round played honestly, step by step."""

from __future__ import annotations

from dataclasses import dataclass, field

from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK, crescendo_back
from p2pcards.crypto import deck as D

TABLE = bytes(range(16))


def crescendo_tags(cards: tuple[D.Card, ...]) -> tuple[str, ...]:
    """The public back of each Crescendo card, as its tag."""
    return tuple(str(crescendo_back(c)) for c in cards)


def deck_cards(kind: str, n: int | None = None) -> tuple[tuple[D.Card, ...], tuple[str, ...] | None]:
    """The first n cards of the Crisp or Crescendo deck, with tags for Crescendo."""
    if kind == "crisp":
        cards: tuple[D.Card, ...] = CRISP_DECK[:n]
        return cards, None
    cards = CRESCENDO_DECK[:n] if n else CRESCENDO_DECK
    return cards, crescendo_tags(cards)


@dataclass
class Round:
    """Every seat's secrets and the public log of one round."""

    ctx: D.RoundContext
    secrets: list[D.RoundSecret]
    anns: list[D.KeyAnnouncement]
    keys: D.RoundKeys
    book: D.CardBook
    records: list[D.DeckRecord] = field(default_factory=list)

    def final(self, deck: int = 0) -> D.EncryptedDeck:
        """The fully shuffled deck `deck`."""
        rec = next(r for r in self.records if r.deck == deck)
        return rec.passes[-1]

    def openings(self) -> list[D.Opening]:
        """Every seat's opening."""
        return [D.open_commitment(s) for s in self.secrets]


def setup(seats: int, cards: tuple[D.Card, ...], round: int = 1, table: bytes = TABLE) -> Round:
    """Keys announced and verified for `seats` seats."""
    ctx = D.RoundContext(table, round, tuple(f"seat{i}" for i in range(seats)))
    secrets = [D.round_secret(ctx, i, D.draw_seed()) for i in range(seats)]
    anns = [D.announce(ctx, s) for s in secrets]
    return Round(ctx, secrets, anns, D.round_keys(ctx, anns), D.card_book(ctx, cards))


def shuffle_all(rnd: Round, cards: tuple[D.Card, ...], tags: tuple[str, ...] | None, deck: int = 0) -> D.EncryptedDeck:
    """Every seat shuffles in turn, each pass verified; the record is kept for the audit."""
    cur = D.initial_deck(rnd.ctx, rnd.keys, rnd.book, cards, tags, deck)
    passes = []
    for s in rnd.secrets:
        nxt = D.shuffle_pass(rnd.ctx, rnd.keys, s, cur)
        D.verify_pass(rnd.ctx, rnd.keys, cur, nxt)
        passes.append(nxt)
        cur = nxt
    rnd.records.append(D.DeckRecord(deck, cards, tags, tuple(passes)))
    return cur


def play(seats: int, kind: str = "crisp", n: int | None = None) -> tuple[Round, D.EncryptedDeck]:
    """A round with keys and a fully shuffled deck."""
    cards, tags = deck_cards(kind, n)
    rnd = setup(seats, cards)
    return rnd, shuffle_all(rnd, cards, tags)
