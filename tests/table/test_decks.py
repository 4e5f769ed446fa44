"""The decks on their own: keys, then each seat's pass in turn, each verified before anything builds on it."""

from __future__ import annotations

import dataclasses

import pytest
from parts_helpers import RecordingPort, exchange, make_decks

from p2pcards.cards import CRISP_DECK
from p2pcards.crypto import deck as dk
from p2pcards.errors import MalformedMessage
from p2pcards.table.decks import Decks


def test_every_seat_passes_in_turn_and_all_hold_one_final_deck() -> None:
    decks, ports, finished = make_decks(3, CRISP_DECK)
    assert decks[0].owed() == {0, 1, 2}
    exchange(decks, ports)
    assert finished == [[0], [0], [0]]
    finals = [d.final(0) for d in decks]
    assert finals[0] is not None and all(f == finals[0] for f in finals)
    assert [len(p.of_type("pass")) for p in ports] == [1, 1, 1] and not any(p.faults for p in ports)
    assert decks[1].owed() == set() and decks[1].progress() == (3, 4)
    assert [r.deck for r in decks[2].records()] == [0]


def a_seat_with_keys_only() -> tuple[list[Decks], list[RecordingPort], list[dk.EncryptedDeck]]:
    """Three seats' decks that hold every key and no pass yet, and the passes the first deck went through elsewhere."""
    decks, ports, _ = make_decks(3, CRISP_DECK)
    exchange(decks, ports)
    late, late_ports, _ = make_decks(3, CRISP_DECK)
    for d in decks:
        late[2].take_key(d.me, d.announcement())
    return late, late_ports, decks[0].chains[0]


def test_a_pass_that_comes_early_waits_for_the_one_it_follows() -> None:
    late, _, chain = a_seat_with_keys_only()
    late[2].take_pass(1, chain[2])  # seat 1's pass before seat 0's
    late[2].advance()
    assert len(late[2].chains[0]) == 1 and late[2].owed() == {0}
    late[2].take_pass(0, chain[1])
    late[2].advance()
    assert len(late[2].chains[0]) == 3 and late[2].owed() == {2}  # its own pass is on its way


def test_a_bad_pass_is_its_passers_fault() -> None:
    decks, ports, _ = make_decks(2, CRISP_DECK)
    for d in decks:
        for other in decks:
            other.take_key(d.me, d.announcement())
    decks[0].advance()
    mine = dk.EncryptedDeck.from_wire(ports[0].of_type("pass")[0])
    forged = dataclasses.replace(mine, c1=mine.c1[:1] * 2 + mine.c1[2:])  # a card duplicated over another
    decks[1].take_pass(0, forged)
    decks[1].advance()
    assert ports[1].faults and ports[1].faults[0][1] == 0
    with pytest.raises(MalformedMessage):
        decks[1].take_pass(1, mine)  # seat 1 claims seat 0's stage


def test_a_bad_pass_checked_once_the_one_it_follows_comes_carries_both_passes_as_evidence() -> None:
    # The fault is found while taking seat 0's pass, come late: the report carried that frame (the one in hand),
    # so a peer it reached with seat 1's bad pass not yet in blamed no one, on the reporter's word only.
    late, late_ports, chain = a_seat_with_keys_only()
    forged = dataclasses.replace(chain[2], c1=chain[2].c1[:1] * 2 + chain[2].c1[2:])
    late[2].take_pass(1, forged, b"bad pass of seat 1")
    late[2].advance()
    assert not late_ports[2].faults
    late[2].take_pass(0, chain[1], b"pass of seat 0")
    late[2].advance()
    assert late_ports[2].faults[0][1] == 1
    assert late_ports[2].evidence == [[b"pass of seat 0", b"bad pass of seat 1"]]


def test_a_second_key_or_a_key_for_another_seat_is_malformed() -> None:
    decks, _, _ = make_decks(2, CRISP_DECK)
    ann = decks[0].announcement()
    decks[1].take_key(0, ann)
    with pytest.raises(MalformedMessage):
        decks[1].take_key(0, ann)
    with pytest.raises(MalformedMessage):
        decks[1].take_key(1, ann)
