"""One round's decks: round keys, the card book, and each deck's chain of shuffle passes.

Every shuffle pass of the round goes through `Decks`: ours is made here when the chain
reaches our stage, and every other seat's is verified here (in seat order, as it becomes
checkable) before anything builds on it. Deck 0 is the round's deck; Crescendo's reshuffles
add decks 1, 2, ... while the round runs. Each chain is a machine of its own: passes that
arrive before the one they follow wait in `early`.
"""

from __future__ import annotations

from collections.abc import Callable

from ..crypto import deck as dk
from ..errors import DeckFault, EquivocationEvidence, MalformedMessage
from .outputs import Port

Cards = tuple[str | int, ...]


class Decks:
    """The decks of one round, seen by seat `me` of `seats`: keys, passes, and where each handle lies."""

    def __init__(self, ctx: dk.RoundContext, secret: dk.RoundSecret, me: int, port: Port,
                 cards: Cards, tags: tuple[str, ...] | None, finished: Callable[[int], None]) -> None:
        self.ctx = ctx
        self.secret = secret
        self.me = me
        self.seats = ctx.seats
        self.port = port
        self.finished = finished  # called with each deck id whose last pass is verified
        self.round_cards = (cards, tags)  # deck 0, shuffled once every key is in
        self.anns: dict[int, dk.KeyAnnouncement] = {}
        self.keys: dk.RoundKeys | None = None
        self.book: dk.CardBook | None = None
        self.chains: dict[int, list[dk.EncryptedDeck]] = {}  # deck id -> the initial deck, then each pass
        self.cards: dict[int, tuple[Cards, tuple[str, ...] | None]] = {}  # deck id -> its public cards and tags
        self.early: dict[tuple[int, int], dk.EncryptedDeck] = {}  # (deck, stage) -> a pass not yet checkable
        self.frames: dict[tuple[int, int], bytes] = {}  # (deck, stage) -> the signed frame of its one pass
        # (deck, stage) of a pass naming another input than we hold; (deck, S + 1): shares naming another final deck
        self.disputed: set[tuple[int, int]] = set()
        self.digests: dict[int, bytes] = {}  # deck id -> the digest of its final deck
        self.passed: set[int] = set()  # decks we have made our pass on
        self.loc: dict[int, tuple[int, int]] = {}  # handle -> (deck, position)
        self.at: dict[tuple[int, int], int] = {}  # (deck, position) -> handle
        self.reshuffling: int | None = None  # deck id of a fresh shuffle in progress

    def announcement(self) -> dk.KeyAnnouncement:
        """Our round key, with its proof and our commitment."""
        return dk.announce(self.ctx, self.secret)

    def take_key(self, seat: int, ann: dk.KeyAnnouncement) -> None:
        """A seat's round key (DeckFault on a bad proof); the last one starts deck 0's shuffle."""
        if ann.seat != seat or seat in self.anns:
            raise MalformedMessage("a key for another seat, or a second key")
        dk.verify_announcement(self.ctx, ann)
        self.anns[seat] = ann
        if len(self.anns) == self.seats:
            self.keys = dk.round_keys(self.ctx, [self.anns[s] for s in range(self.seats)])
            cards, tags = self.round_cards
            self.book = dk.card_book(self.ctx, cards)
            self.start(0, cards, tags)

    def take_pass(self, seat: int, new: dk.EncryptedDeck, frame: bytes = b"") -> None:
        """A seat's pass, kept until the pass before it is verified (`advance` checks it).

        One pass per place: a second signed pass for one (deck, stage) is equivocation, whatever
        either holds, with both frames as the evidence (peers keeping different ones would fork).
        """
        if new.stage != seat + 1:
            raise MalformedMessage("a pass for another seat's stage")
        # No seat can be more than one deck ahead of us: the next deck starts only once ours passed the last one.
        if new.deck > (max(self.chains) + 1 if self.chains else 0):
            raise MalformedMessage(f"a pass for deck {new.deck}, which cannot have begun")
        place = (new.deck, new.stage)
        first = self.frames.get(place)
        if first is not None:
            raise EquivocationEvidence(f"two signed passes for deck {new.deck}, stage {new.stage}",
                                       self.ctx.players[seat], (first, frame))
        self.frames[place] = frame
        self.early[place] = new

    def start(self, deck_id: int, cards: Cards, tags: tuple[str, ...] | None) -> None:
        """Begin a deck's chain of passes from its public cards (call `advance` next)."""
        assert self.keys is not None and self.book is not None
        self.cards[deck_id] = (cards, tags)
        self.chains[deck_id] = [dk.initial_deck(self.ctx, self.keys, self.book, cards, tags, deck_id)]

    def start_reshuffle(self, cards: Cards, tags: tuple[str, ...]) -> None:
        """A fresh deck of face-up cards to shuffle while the round waits (once per reshuffle due)."""
        if self.reshuffling is None:
            self.reshuffling = max(self.chains) + 1
            self.start(self.reshuffling, cards, tags)
            self.advance()

    def advance(self) -> None:
        """Verify passes in seat order as they become checkable; make ours at our stage; `finished(deck)` for each chain done.

        A pass that fails is a fault of its seat (the port stops the table).
        """
        progress = True
        while progress and not self.port.stopped:
            progress = False
            for deck_id, chain in self.chains.items():
                stage = len(chain) - 1
                if stage == self.seats:
                    continue
                if stage == self.me and deck_id not in self.passed:
                    self.passed.add(deck_id)
                    self.port.send("pass", self.shuffle(chain[-1]).to_wire())
                new = self.early.pop((deck_id, stage + 1), None)
                if new is None:
                    continue
                assert self.keys is not None
                if self.dispute(deck_id, chain[-1], new):
                    self.early[(deck_id, stage + 1)] = new  # held, unverified, while the table can show the split
                    continue
                try:
                    dk.verify_pass(self.ctx, self.keys, chain[-1], new)
                except DeckFault as exc:
                    # The evidence is the pass and the one it follows, not the frame in hand (which may be the
                    # one before, come late): a peer the report reaches first checks the pass itself (protocol.md §14).
                    self.port.deck_fault(exc, stage, self.evidence(deck_id, stage + 1))
                    return
                chain.append(new)
                progress = True
                if len(chain) - 1 == self.seats:
                    self.finished(deck_id)
                    if self.port.stopped:
                        return

    def dispute(self, deck_id: int, prev: dk.EncryptedDeck, new: dk.EncryptedDeck) -> bool:
        """Whether `new` names another input than the pass `prev` we hold before it (a first time: we show ours).

        That is no proof against `new`'s seat: the seat before may have signed two passes for its place and
        shown each to some of us (protocol.md §4.6). So the verdict waits: the pass we hold goes to every peer,
        and one that holds the other finds the equivocation and reports it with both frames; if no one does,
        the time-out blames the seat whose pass the deck waits on (§14.3). The public deck before the first
        pass has no second version: a pass on another one is its seat's fault at once.
        """
        frame = self.frames.get((deck_id, prev.stage))
        if prev.stage == 0 or not frame or new.input == dk.deck_digest(self.ctx, prev):
            return False
        names = self.ctx.players
        self._show_once((deck_id, new.stage), frame,
                        f"the pass of {names[new.stage - 1]} on deck {deck_id} names another pass of "
                        f"{names[prev.stage - 1]} than ours")
        return True

    def final_digest(self, deck_id: int) -> bytes | None:
        """The digest of a deck once every seat has passed it (what a reveal on it names), else None."""
        digest = self.digests.get(deck_id)
        if digest is None and (final := self.final(deck_id)) is not None:
            digest = self.digests[deck_id] = dk.deck_digest(self.ctx, final)
        return digest

    def dispute_final(self, deck_id: int, prover: int) -> None:
        """`prover`'s shares name another final deck than ours: show our last pass to every seat, once a deck.

        That is no proof against the prover: the last seat may have signed two final passes and shown each to
        some of us, and no pass follows it to show the split (protocol.md §4.7). A peer holding the other finds
        the equivocation and reports it with both frames; if no one does, the time-out blames the prover, whose
        shares are still owed (§14.3).
        """
        frame = self.frames.get((deck_id, self.seats))
        if frame:
            names = self.ctx.players
            self._show_once((deck_id, self.seats + 1), frame,
                            f"the shares of {names[prover]} on deck {deck_id} name another final deck than ours "
                            f"(the pass of {names[self.seats - 1]})")

    def _show_once(self, place: tuple[int, int], frame: bytes, why: str) -> None:
        """Say `why` and send our copy of a pass (`frame`) to every seat, once for `place`: the verdict waits."""
        if place in self.disputed:
            return
        self.disputed.add(place)
        self.port.note("event", f"{why}: ours shown to every seat, the verdict waits")
        if self.me < self.seats:  # a witness (no seat) sends nothing
            self.port.relay(frame)

    def evidence(self, deck_id: int, stage: int) -> list[bytes]:
        """The signed frames a check of the pass at (`deck_id`, `stage`) rests on: the pass before it (none at
        stage 1: it follows the public deck) and that pass, those we hold."""
        return [f for s in (stage - 1, stage) if (f := self.frames.get((deck_id, s)))]

    def shuffle(self, prev: dk.EncryptedDeck) -> dk.EncryptedDeck:
        """Our pass on `prev`."""
        assert self.keys is not None
        return dk.shuffle_pass(self.ctx, self.keys, self.secret, prev)

    def final(self, deck_id: int) -> dk.EncryptedDeck | None:
        """A deck once every seat has passed it, else None."""
        chain = self.chains.get(deck_id)
        return chain[-1] if chain is not None and len(chain) == self.seats + 1 else None

    def place(self, handles: list[int], deck_id: int) -> None:
        """The engine's `handles` are the cards of a finished deck, position by position."""
        for pos, h in enumerate(handles):
            self.loc[h] = (deck_id, pos)
            self.at[(deck_id, pos)] = h
        if deck_id == self.reshuffling:
            self.reshuffling = None

    def handle_at(self, deck_id: int, pos: int) -> int | None:
        """The engine's handle for a position of a placed deck, or None."""
        return self.at.get((deck_id, pos))

    def owed(self) -> set[int]:
        """The seats whose key or pass holds up a deck."""
        if len(self.anns) < self.seats:
            return {s for s in range(self.seats) if s not in self.anns}
        return {len(chain) - 1 for chain in self.chains.values() if len(chain) - 1 < self.seats}

    def progress(self) -> tuple[int, int]:
        """Keys in and passes verified: what the watchdog sees move."""
        return len(self.anns), sum(len(c) for c in self.chains.values())

    def records(self) -> list[dk.DeckRecord]:
        """Every deck of the round, for the audit."""
        return [dk.DeckRecord(d, self.cards[d][0], self.cards[d][1], tuple(chain[1:]))
                for d, chain in sorted(self.chains.items())]
