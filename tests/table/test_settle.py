"""Settling on its own: openings in, our audit out, and every seat's signed result compared with ours."""

from __future__ import annotations

import dataclasses

import pytest
from parts_helpers import RecordingPort, exchange, make_decks

from p2pcards.cards import CRISP_DECK
from p2pcards.crypto import deck as dk
from p2pcards.errors import MalformedMessage
from p2pcards.games.crisp import CrispGame
from p2pcards.table.bodies import RoundResult
from p2pcards.table.reveals import Reveals
from p2pcards.table.settle import Settlement

OURS = RoundResult(1, (3, -3), (3, -3), False, bytes(32), "verified")


class FixedAudit(Settlement):
    """A settlement whose audit finds `verdict` (the comparison of results is what is tested)."""

    verdict = OURS

    def audit(self, log_hash: bytes) -> RoundResult:
        return dataclasses.replace(self.verdict, log=log_hash)


def settlement(cls: type[Settlement] = FixedAudit) -> tuple[Settlement, RecordingPort, list[dk.Opening]]:
    decks, ports, _ = make_decks(2, CRISP_DECK)
    exchange(decks, ports)
    decks[0].place(list(range(len(CRISP_DECK))), 0)
    game = CrispGame(("p0", "p1"))
    game.deal({}, 0.0)
    port = RecordingPort()
    part = cls(decks[0], Reveals(decks[0], game, (b"", b""), port), game, port)
    return part, port, [dk.open_commitment(d.secret) for d in decks]


def test_a_round_settles_when_every_seat_signed_our_verified_result() -> None:
    part, port, openings = settlement()
    part.open()
    assert port.of_type("open") == [openings[0].to_wire()]
    part.take_opening(0, openings[0])
    assert not part.advance(bytes(32)) and part.result is None and part.owed(opened=True) == {1}
    part.take_opening(1, openings[1])
    part.take_result(0, OURS, b"result of p0")
    assert not part.advance(bytes(32)) and part.result == OURS and part.owed(opened=True) == {1}
    assert port.of_type("result") == [OURS.to_wire()]
    part.take_result(1, OURS, b"result of p1")
    assert part.advance(bytes(32)) and not port.faults


def test_another_result_is_its_signers_fault() -> None:
    part, port, openings = settlement()
    for s in (0, 1):
        part.take_opening(s, openings[s])
    part.take_result(1, dataclasses.replace(OURS, totals=(4, -4)), b"result of p1")
    part.take_result(0, OURS, b"result of p0")
    assert not part.advance(bytes(32)) and port.faults[0][1] == 1
    assert port.evidence == [[b"result of p1"]]  # the frame that differs, not the last one taken (§14)


def test_an_audit_that_found_a_fault_stops_the_table_blaming_its_seat() -> None:
    class Found(FixedAudit):
        verdict = dataclasses.replace(OURS, audit="rules", at=4, blame=1)

    part, port, openings = settlement(Found)
    for s in (0, 1):
        part.take_opening(s, openings[s])
    part.advance(bytes(32))
    part.take_result(0, Found.verdict, b"result of p0")
    part.take_result(1, Found.verdict, b"result of p1")
    assert not part.advance(bytes(32)) and port.faults == [("round 1 audit found a rules fault", 1)]


def test_a_second_opening_or_result_is_malformed() -> None:
    part, _, openings = settlement()
    part.take_opening(0, openings[0])
    with pytest.raises(MalformedMessage):
        part.take_opening(0, openings[0])
    with pytest.raises(MalformedMessage):
        part.take_opening(1, openings[0])
    part.take_result(1, OURS, b"result of p1")
    with pytest.raises(MalformedMessage):
        part.take_result(1, OURS, b"result of p1")


def test_the_real_audit_of_a_round_with_no_move_verifies_its_crypto() -> None:
    part, port, openings = settlement(Settlement)
    for s in (0, 1):
        part.take_opening(s, openings[s])
    result = part.audit(b"L" * 32)
    assert result.audit == "verified" and result.blame is None and result.log == b"L" * 32
