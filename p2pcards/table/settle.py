"""Settling one round: every seat opens its round secret, every peer audits, and all sign one result.

The audit replays the round's crypto from every opening (every pass, every share) and then its
rules with every face known (moves made on hidden faces are only checkable then). A round is
settled when every seat has signed the same result and that result says the audit verified it.
"""

from __future__ import annotations

from ..crypto import deck as dk
from ..errors import MalformedMessage
from ..games.audit import check_round
from .bodies import RoundResult
from .config import Game
from .decks import Decks
from .outputs import Port
from .reveals import Reveals


class Settlement:
    """The openings and results of one round, and our audit of it."""

    def __init__(self, decks: Decks, reveals: Reveals, game: Game, port: Port) -> None:
        self.decks = decks
        self.reveals = reveals
        self.game = game
        self.port = port
        self.seats = decks.seats
        self.number = decks.ctx.round
        self.openings: dict[int, dk.Opening] = {}
        self.result: RoundResult | None = None  # ours, once every opening is in
        self.signed: dict[int, tuple[RoundResult, bytes]] = {}  # every seat's result (ours too) and its signed frame

    def open(self) -> None:
        """The round is over on our side: publish our round secret."""
        self.port.send("open", dk.open_commitment(self.decks.secret).to_wire())

    def take_opening(self, seat: int, opening: dk.Opening) -> None:
        """A seat's opening (checked by the audit)."""
        if opening.seat != seat or seat in self.openings:
            raise MalformedMessage("an opening for another seat, or a second one")
        self.openings[seat] = opening

    @property
    def results(self) -> dict[int, RoundResult]:
        """Every seat's signed result so far, by seat."""
        return {seat: result for seat, (result, _) in self.signed.items()}

    def take_result(self, seat: int, result: RoundResult, frame: bytes) -> None:
        """A seat's signed result, as `frame` (compared with ours once both are in)."""
        if seat in self.signed:
            raise MalformedMessage("a second result for one round")
        self.signed[seat] = (result, frame)

    def advance(self, log_hash: bytes) -> bool:
        """Audit once every opening is in; True once every seat signed our result and it is verified."""
        if self.result is None and len(self.openings) == self.seats:
            self.result = self.audit(log_hash)
            self.port.send("result", self.result.to_wire())
        if self.result is None or len(self.signed) < self.seats or self.port.stopped:
            return False
        names = self.decks.ctx.players
        for seat, (res, frame) in self.signed.items():
            if res != self.result:
                self.port.fault(f"{names[seat]} signed another result for round {self.number}", seat, [frame])
                return False
        if self.result.audit != "verified":
            self.port.fault(f"round {self.number} audit found a {self.result.audit} fault", self.result.blame)
            return False
        return True

    def audit(self, log_hash: bytes) -> RoundResult:
        """Replay the round's crypto from every opening, then its rules with every face known."""
        decks, game = self.decks, self.game
        assert decks.book is not None
        report = dk.audit(decks.ctx, [decks.anns[s] for s in range(self.seats)],
                          [self.openings[s] for s in range(self.seats)], decks.book, decks.records(),
                          self.reveals.reveals)
        blame: int | None = None
        verdict, at = "verified", None
        if report.fault is None:
            faces = {h: report.faces[d][pos] for h, (d, pos) in decks.loc.items() if d in report.faces}
            fault = check_round(game, faces)
            if fault is not None:
                blame, verdict, at = game.players.index(fault.player), "rules", fault.index
                self.port.note("audit", f"round {self.number}: illegal move {fault}", blame)
        else:
            blame, verdict = report.fault.seat, report.fault.kind
            self.port.note("audit", f"round {self.number}: {report}", blame)
        scores = tuple(game.results[-1].scores) if game.results else ()
        return RoundResult(self.number, scores, tuple(game.totals), game.over, log_hash, verdict, at, blame)

    def owed(self, opened: bool) -> set[int]:
        """The seats whose opening (once we opened) or result (once we audited) has not come."""
        if opened and len(self.openings) < self.seats:
            return {s for s in range(self.seats) if s not in self.openings}
        if self.result is not None and len(self.signed) < self.seats:
            return {s for s in range(self.seats) if s not in self.signed}
        return set()
