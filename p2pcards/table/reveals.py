"""One round's reveals: what the rules grant each seat, the decryption shares we send and take, what we learn.

Each card's reveal is a small machine of its own: granted (to one seat, or to all), shares sent
by every other seat, then combined by whoever it was granted to. Shares that arrive before
their deck is fully shuffled, or before our log grants what they reveal, wait in `early` (at
most `MAX_EARLY` positions per prover: beyond that they are dropped, counted and noted once);
shares we already hold are dropped unverified, so no proof is checked for what is not due.
Cards granted to us wait in `learning` until every other seat's share of them is in.

Shares sealed to us of a look granted in play (a card we drew, say; not the deal's looks, which
nobody waits on one by one) are shown before they are checked: they are combined as they come,
unproved, and their proofs checked once what they show is shown (`prove`, when the shell goes on),
and always before we send a move or settle the round. A wrong share then shows no card, or for a
moment a wrong one, and its prover is blamed all the same; a right one shows the card a few proof
checks sooner.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TypeAlias

from ..crypto import deck as dk
from ..crypto.encoding import Value, encode
from ..crypto.proofs import Commitment
from ..crypto.sealing import seal_to
from ..errors import DeckFault, InvalidKey, MalformedMessage
from .config import Game
from .decks import Decks
from .outputs import Port

MAX_EARLY = 1024  # positions of reveals held per prover, not yet due (a few KiB each at most)

Held: TypeAlias = tuple[int, dk.Reveal, bytes | None]  # (prover, reveal, the signed frame of its box if sealed to us)


class Reveals:
    """The reveals of one round at seat `me`: grants, shares in and out, faces learned into `game`."""

    def __init__(self, decks: Decks, game: Game, keys: tuple[bytes, ...], port: Port) -> None:
        self.decks = decks
        self.game = game
        self.keys = keys  # every seat's identity key: private shares are sealed to it
        self.me = decks.me
        self.seats = decks.seats
        self.port = port
        self.granted_public: dict[int, None] = {}  # the cards turned face up for everyone, in the order our log did it
        # (deck, position) -> seat -> the final deck its public share came on (it counts if that is ours)
        self.public_seen: dict[tuple[int, int], dict[int, bytes]] = {}
        self.granted_private: dict[int, set[int]] = {}
        self.learning: set[int] = set()  # granted to us (or public), face not yet combined
        self.hurried: set[int] = set()  # granted to us in play: shown before the proofs of their shares are checked
        self.shares: dict[tuple[int, int], dict[int, bytes]] = {}  # (deck, position) -> seat -> share (see `unproved`)
        self.reveals: list[dk.Reveal] = []  # every verified reveal, for the audit
        self.early: list[Held] = []  # reveals whose deck is not final or not granted yet
        self.unproved: list[Held] = []  # reveals sealed to us whose shares are in `shares`, their proofs not checked
        self.dropped: dict[int, int] = {}  # prover -> reveals dropped over the cap of `early`
        self.boxes_due: dict[tuple[int, int], int] = {}  # (prover, recipient) -> private boxes owed
        self.boxes_seen: dict[tuple[int, int], int] = {}
        self.faces: dict[int, dict[int, dk.Card]] = {}  # deck -> position -> the face we learned there
        # deck -> position -> our share and a one-time proof commitment, made while idle (`prepare`)
        self.ahead: dict[int, dict[int, tuple[bytes, Commitment]]] = {}

    # ------------------------------------------------------------ granting (our shares out)

    def after_change(self, hurry: bool = True) -> None:
        """After the engine moved on: grant every reveal its knowledge now entitles, and learn what we can (`hurry`:
        a look granted to us is shown before its proofs are checked)."""
        know = self.game.know
        self.grant_public([h for h in know.public if h not in self.granted_public])
        for seat in range(self.seats):
            granted = self.granted_private.setdefault(seat, set())
            new = [h for h in know.seen[seat] if h not in granted and h not in know.public]
            if not new:
                continue
            if seat != self.me:
                self.send_shares(new, seat)
                if self.port.stopped:
                    return  # nothing was sealed and sent: the grant is not recorded as made
            else:
                self.learning.update(new)
                if hurry:
                    self.hurried.update(new)
            granted.update(new)
            for prover in range(self.seats):
                if prover != seat:
                    self.boxes_due[(prover, seat)] = self.boxes_due.get((prover, seat), 0) + 1
        self.take_early()  # shares that came before our grant are due now

    def grant_public(self, handles: Iterable[int]) -> None:
        """Turn `handles` face up for everyone: send our shares of them, and learn what we can."""
        new = [h for h in handles if h not in self.granted_public]
        if not new:
            return
        self.granted_public.update(dict.fromkeys(new))
        self.learning.update(new)
        self.send_shares(new, None)
        self.take_early()

    def send_shares(self, handles: list[int], recipient: int | None) -> None:
        """Send our shares of `handles` to `recipient` (sealed to it), or to everyone (None)."""
        reveals: list[Value] = [rv.to_wire() for rv in self.make_reveals(handles, recipient)]
        if recipient is None:
            self.port.send("shares", {"reveals": reveals})
        else:
            # Sealed: a share is the same value for every recipient (see crypto/sealing.py).
            try:
                box = seal_to(self.keys[recipient], encode({"reveals": reveals}))
            except InvalidKey as exc:  # a seat whose key cannot be sealed to can see nothing: the table stops
                self.port.fault(f"cannot seal a private look to seat {recipient}: {exc}", recipient)
                return
            self.port.send("private", {"to": recipient, "box": box})

    def make_reveals(self, handles: list[int], recipient: int | None) -> list[dk.Reveal]:
        """Our shares of `handles` for `recipient` (None: everyone), one reveal per deck."""
        decks = self.decks
        assert decks.keys is not None
        by_deck: dict[int, list[int]] = {}
        for h in sorted(handles):
            d, pos = decks.loc[h]
            by_deck.setdefault(d, []).append(pos)
        return [dk.make_reveal(decks.ctx, decks.keys, decks.secret, decks.chains[d][-1], positions, recipient,
                               self.ahead.get(d)) for d, positions in by_deck.items()]

    def prepare(self, handles: Iterable[int]) -> bool:
        """Make ahead, for each of `handles` (cards likely revealed next), our share and a proof commitment,
        so that the share we owe when it is revealed costs no multiplication then; True when one was made."""
        decks, made = self.decks, False
        for h in handles:
            if h not in decks.loc or h in self.granted_public:
                continue
            d, pos = decks.loc[h]
            final = decks.final(d)
            if final is not None and pos not in self.ahead.get(d, {}):
                self.ahead.setdefault(d, {})[pos] = dk.prepare_share(decks.ctx, decks.secret, final, pos)
                made = True
        return made

    # ------------------------------------------------------------ taking (their shares in)

    def box_seen(self, prover: int, recipient: int) -> None:
        """A private box went by: who owes whom a private look is public knowledge."""
        self.boxes_seen[(prover, recipient)] = self.boxes_seen.get((prover, recipient), 0) + 1

    def take(self, prover: int, recipient: int | None, reveals: Iterable[dk.Reveal], frame: bytes | None = None) -> None:
        """Reveals that `prover` sent for `recipient` (sealed to us: in the signed `frame` of their box), kept until
        their deck is final and due (`take_early` takes them)."""
        held = sum(len(r.positions) for s, r, _ in self.early if s == prover)  # counted once a frame, not once a reveal
        for rv in reveals:
            if rv.prover != prover or rv.recipient != recipient:
                raise MalformedMessage("shares proved for another seat, or for another recipient")
            if held + len(rv.positions) > MAX_EARLY:
                self.dropped[prover] = self.dropped.get(prover, 0) + 1
                if self.dropped[prover] == 1:
                    self.port.note("rejected", f"shares of {self.decks.ctx.players[prover]} that are not due "
                                   f"dropped (over {MAX_EARLY} positions held)", prover)
                continue
            self.early.append((prover, rv, frame))
            held += len(rv.positions)
            if recipient is None:
                for pos in rv.positions:
                    seen = self.public_seen.setdefault((rv.deck, pos), {})
                    # A share on our final deck stays counted; one that came before our deck was final is kept
                    # too (it had read as a share already held, and the prover as owing it for ever).
                    if prover not in seen or seen[prover] != self.decks.final_digest(rv.deck):
                        seen[prover] = rv.final

    def take_early(self) -> None:
        """Take every held reveal whose deck is final: verified (a bad proof: its prover's fault), or, sealed to us,
        kept to prove once shown (`unproved`); then learn.

        A reveal naming another final deck than ours is no proof against its prover (the last shuffler may have
        split its pass): it is dropped, still owed, and our last pass shown to every seat (`Decks.dispute_final`)."""
        decks = self.decks
        if decks.keys is None:
            return
        waiting: list[Held] = []
        for seat, rv, frame in self.early:
            final = decks.final(rv.deck)
            if final is not None and rv.final != decks.final_digest(rv.deck):
                decks.dispute_final(rv.deck, seat)
                continue
            if final is None or not self.due(rv, len(final)):
                waiting.append((seat, rv, frame))
                continue
            if all(seat in self.shares.get((rv.deck, pos), {}) for pos in rv.positions):
                continue  # every share of it is in hand (a private look's card turned face up since)
            if frame is not None and all(self.decks.handle_at(rv.deck, pos) in self.hurried for pos in rv.positions):
                self.unproved.append((seat, rv, frame))
            elif not self.verify(seat, rv, ()):
                return
            for pos, d in zip(rv.positions, rv.shares):
                self.shares.setdefault((rv.deck, pos), {})[seat] = d
        self.early = waiting
        self.learn()

    def verify(self, prover: int, rv: dk.Reveal, evidence: tuple[bytes, ...]) -> bool:
        """Check `rv`'s proof against our final deck and keep it for the audit; False (the table stopped, blaming
        its prover, the report carrying `evidence`, else the frame in hand) when it fails."""
        decks = self.decks
        assert decks.keys is not None
        final = decks.final(rv.deck)
        assert final is not None
        try:
            dk.verify_reveal(decks.ctx, decks.keys, final, rv, prover=prover, recipient=rv.recipient,
                             positions=rv.positions)
        except DeckFault as exc:
            self.port.deck_fault(exc, prover, evidence)
            return False
        self.reveals.append(rv)
        return True

    def prove(self) -> None:
        """Check the proofs of the shares we combined unproved (a bad one: the table stops, blaming its prover)."""
        while self.unproved and not self.port.stopped:
            seat, rv, frame = self.unproved.pop(0)
            assert frame is not None
            self.verify(seat, rv, (frame,))

    def proving_due(self) -> bool:
        """True when shares wait unproved and no card granted to us waits for more: what they show is shown."""
        return bool(self.unproved) and not self.shares_owed()

    def taken(self) -> int:
        """How many reveals we have taken, proved or not (a count that grows only when shares come)."""
        return len(self.reveals) + len(self.unproved)

    def due(self, rv: dk.Reveal, size: int) -> bool:
        """True once our log has granted every card `rv` reveals to its recipient (a position out of the deck: its proof fails)."""
        granted = self.granted_public if rv.recipient is None else self.granted_private.get(rv.recipient, set())
        for pos in rv.positions:
            if pos >= size:
                return True  # verify_reveal refuses it, blaming the prover
            h = self.decks.handle_at(rv.deck, pos)
            if h is None or h not in granted:
                return False
        return True

    def learn(self) -> None:
        """Decrypt every card we are entitled to and hold every other seat's share of; score a round that waited."""
        decks, game = self.decks, self.game
        if decks.book is None:
            return
        learned = False
        for h in list(self.learning):
            if game.faces.get(h) is not None:
                self.learning.discard(h)
                continue
            d, pos = decks.loc[h]
            got = self.shares.get((d, pos), {})
            if len(got) + (self.me not in got) < self.seats:
                continue
            final = decks.chains[d][-1]
            ahead = self.ahead.get(d, {}).get(pos)
            own = dk.own_share(decks.secret, final, pos) if ahead is None else ahead[0]
            shares = [got[s] if s != self.me else own for s in range(self.seats)]
            seen = self.faces.setdefault(d, {})
            try:  # a face seen at another position of this deck is a fault of the deck, not a card
                face = dk.combine(decks.ctx, decks.book, final, pos, shares, seen=seen)
            except DeckFault as exc:
                self.prove()  # a share that was never proved is the likelier cause, and its prover to blame
                if not self.port.stopped:
                    self.port.fault(f"{exc} (the audit will name the seat)", None)
                return
            seen[pos] = face
            game.learn(h, face)  # type: ignore[arg-type]
            self.learning.discard(h)
            learned = True
        if learned and game.awaiting and all(game.faces.get(h) is not None for h in game.awaiting):
            for event in game.finish_round():
                self.port.note("event", str(event))

    # ------------------------------------------------------------ what is owed

    def public_owed(self) -> set[int]:
        """The other seats whose share of the first card turned face up and not yet shared by all has not come
        (whether or not we need it: a seat that has not seen the card does, and so may a grant that its face
        decides, such as a Jack's peek)."""
        for h in self.granted_public:
            deck, pos = self.decks.loc[h]
            ours = self.decks.final_digest(deck)
            came = self.public_seen.get((deck, pos), {})
            missing = {s for s in range(self.seats) if s != self.me and came.get(s) != ours}
            if missing:
                return missing
        return set()

    def publics_delivered(self) -> int:
        """How many shares of the cards turned face up have come (shares of others count for nothing)."""
        decks = self.decks
        return sum(sum(f == decks.final_digest(decks.loc[h][0]) for f in self.public_seen.get(decks.loc[h], {}).values())
                   for h in self.granted_public)

    def boxes_owed(self) -> set[int]:
        """The other seats that owe a private look (to anyone: it stalls its recipient, and so everyone)."""
        return {prover for (prover, to), due in self.boxes_due.items()
                if self.boxes_seen.get((prover, to), 0) < due and prover != self.me}

    def boxes_delivered(self) -> int:
        """How many of the private boxes due have gone by (extra boxes count for nothing)."""
        return sum(min(self.boxes_seen.get(k, 0), due) for k, due in self.boxes_due.items())

    def shares_owed(self) -> set[int]:
        """The seats whose shares of a card we are learning have not come."""
        missing: set[int] = set()
        for h in self.learning:
            got = self.shares.get(self.decks.loc[h], {})
            missing |= {s for s in range(self.seats) if s not in got}
        return missing
