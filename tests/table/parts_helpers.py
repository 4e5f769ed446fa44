"""Helpers for the unit tests of the table's parts: a port that records, and a round's decks shuffled by every seat."""

from __future__ import annotations

import random
from collections.abc import Sequence
from dataclasses import dataclass, field

from p2pcards.cards import CRISP_DECK
from p2pcards.crypto import deck as dk
from p2pcards.crypto.encoding import Value
from p2pcards.errors import DeckFault
from p2pcards.games.crisp import CrispGame
from p2pcards.table.decks import Decks
from p2pcards.table.outputs import NoteKind
from p2pcards.table.reveals import Reveals

TABLE = bytes(range(16))


@dataclass
class RecordingPort:
    """A `Port` that keeps what a part sends, notes and blames; the first fault stops it."""

    sent: list[tuple[str, dict[str, Value]]] = field(default_factory=list)
    notes: list[tuple[NoteKind, str, int | None]] = field(default_factory=list)
    faults: list[tuple[str, int | None]] = field(default_factory=list)
    evidence: list[list[bytes]] = field(default_factory=list)  # each fault's evidence
    relayed: list[bytes] = field(default_factory=list)  # other seats' frames sent on

    @property
    def stopped(self) -> bool:
        return bool(self.faults)

    def send(self, mtype: str, body: dict[str, Value]) -> None:
        self.sent.append((mtype, body))

    def note(self, kind: NoteKind, detail: str, blame: int | None = None) -> None:
        self.notes.append((kind, detail, blame))

    def relay(self, frame: bytes) -> None:
        self.relayed.append(frame)

    def fault(self, detail: str, blame: int | None, evidence: Sequence[bytes] = ()) -> None:
        self.faults.append((detail, blame))
        self.evidence.append(list(evidence))

    def deck_fault(self, exc: DeckFault, fallback: int | None, evidence: Sequence[bytes] = ()) -> None:
        self.fault(str(exc), exc.seat if exc.seat is not None else fallback, evidence)

    def of_type(self, mtype: str) -> list[dict[str, Value]]:
        return [body for t, body in self.sent if t == mtype]


def make_decks(seats: int, cards: tuple[str | int, ...], tags: tuple[str, ...] | None = None,
               seed: int = 1) -> tuple[list[Decks], list[RecordingPort], list[list[int]]]:
    """One `Decks` per seat of a round (not yet keyed), their ports, and each seat's finished decks."""
    rng = random.Random(seed)
    ctx = dk.RoundContext(TABLE, 1, tuple(f"p{i}" for i in range(seats)))
    ports = [RecordingPort() for _ in range(seats)]
    finished: list[list[int]] = [[] for _ in range(seats)]
    decks = [Decks(ctx, dk.round_secret(ctx, s, rng.randbytes(32)), s, ports[s], cards, tags, finished[s].append)
             for s in range(seats)]
    return decks, ports, finished


def exchange(decks: list[Decks], ports: list[RecordingPort]) -> None:
    """Every seat announces its key, then passes go round until no seat has one left to send."""
    for d in decks:
        ann = d.announcement()
        for other in decks:
            other.take_key(d.me, ann)
    for d in decks:
        d.advance()
    delivered = [0] * len(decks)
    progress = True
    while progress:
        progress = False
        for s, port in enumerate(ports):
            passes = port.of_type("pass")
            for body in passes[delivered[s]:]:
                for other in decks:  # the sender too: a peer applies its own messages like any other
                    other.take_pass(s, dk.EncryptedDeck.from_wire(body))
                    other.advance()
                progress = True
            delivered[s] = len(passes)


def dealt_crisp_seats(keys: tuple[bytes, ...]) -> tuple[list[Reveals], list[RecordingPort], list[CrispGame]]:
    """Two seats of a Crisp round whose deck is final and placed in order and dealt, each with its Reveals (whose
    private shares are sealed to `keys`) and a port with nothing sent yet."""
    decks, ports, _ = make_decks(2, CRISP_DECK)
    exchange(decks, ports)
    games, reveals = [], []
    for d, port in zip(decks, ports):
        d.place(list(range(len(CRISP_DECK))), 0)
        game = CrispGame(("p0", "p1"))
        game.deal({}, 0.0)
        games.append(game)
        reveals.append(Reveals(d, game, keys, port))
    for port in ports:
        port.sent.clear()
    return reveals, ports, games
