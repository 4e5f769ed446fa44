"""Reveals on their own: a card granted to all (or to one seat) is learned once every other seat's share is in."""

from __future__ import annotations

import dataclasses

import pytest
from parts_helpers import RecordingPort, dealt_crisp_seats

from p2pcards.cards import CRISP_DECK
from p2pcards.crypto.encoding import decode
from p2pcards.crypto.identity import generate
from p2pcards.crypto.sealing import Opener
from p2pcards.games.crisp import CrispGame
from p2pcards.table.bodies import Private, Shares
from p2pcards.crypto import deck as dk
from p2pcards.table import reveals as reveals_module
from p2pcards.table.reveals import MAX_EARLY, Reveals

IDS = [generate(f"p{i}") for i in range(2)]
KEYS = tuple(i.public for i in IDS)
BOX_FRAME = b"the signed frame of the box"  # what a fault over a sealed share carries as evidence


def test_a_public_reveal_is_learned_by_every_seat_alike() -> None:
    reveals, ports, games = dealt_crisp_seats(KEYS)
    handle = 30  # a card still in the pile: nobody has seen it
    for r in reveals:
        r.grant_public([handle])
        assert r.learning == {handle} and 1 - r.me in r.shares_owed()
    for s, r in enumerate(reveals):
        (body,) = ports[1 - s].of_type("shares")
        r.take(1 - s, None, Shares.from_wire(body).reveals)
        r.take_early()
    face = games[0].faces.get(handle)
    assert face is not None and face == games[1].faces.get(handle) and face in CRISP_DECK
    assert not reveals[0].learning and reveals[0].shares_owed() == set()
    assert all(not p.faults for p in ports)


def test_a_private_look_is_sealed_to_its_seat_and_owed_until_it_comes() -> None:
    reveals, ports, games = dealt_crisp_seats(KEYS)
    for r in reveals:
        r.after_change()  # the deal's own looks (each seat's side cards) go out first
    for s, port in enumerate(ports):
        for _ in port.of_type("private"):
            reveals[1 - s].box_seen(s, 1 - s)
        port.sent.clear()
    handle = 31
    for g in games:
        g.know.show(1, handle)  # seat 1 looks at a card
    for r in reveals:
        r.after_change()
    assert handle in reveals[1].learning and not ports[1].sent  # seat 1 sends nothing for its own look
    assert reveals[1].boxes_owed() == {0}
    (body,) = ports[0].of_type("private")
    box = Private.from_wire(body, 2, 0)
    assert box.to == 1
    reveals[1].box_seen(0, 1)
    assert reveals[1].boxes_owed() == set()
    reveals[1].take(0, 1, Shares.from_wire(decode(Opener(IDS[1]).open(box.box))).reveals)
    reveals[1].take_early()
    assert games[1].faces.get(handle) in CRISP_DECK and games[0].faces.get(handle) is None


def test_a_share_that_fails_its_proof_is_its_provers_fault() -> None:
    reveals, ports, _ = dealt_crisp_seats(KEYS)
    reveals[0].grant_public([40])
    (rv,) = Shares.from_wire(ports[0].of_type("shares")[0]).reveals
    other = reveals[1].make_reveals([41], None)[0]
    lie = dataclasses.replace(rv, shares=other.shares)  # a share of another card under this card's proof
    reveals[1].grant_public([40])
    reveals[1].take(0, None, [lie])
    reveals[1].take_early()
    assert ports[1].faults and ports[1].faults[0][1] == 0


def test_a_look_that_cannot_be_sealed_stops_the_table_and_is_not_recorded_as_granted() -> None:
    # Keys are validated where they enter; should one get through, sealing to it never raises.
    reveals, ports, games = dealt_crisp_seats(KEYS)
    small_order = bytes(32)
    r = Reveals(reveals[0].decks, games[0], (KEYS[0], small_order), ports[0])
    games[0].know.show(1, 31)  # seat 1 looks at a card: seat 0 owes it a sealed box
    r.after_change()
    assert not ports[0].of_type("private")
    assert ports[0].faults and ports[0].faults[0][1] == 1, ports[0].faults
    assert 31 not in r.granted_private.get(1, set()) and (0, 1) not in r.boxes_due


def test_shares_that_are_not_due_are_held_unverified_until_our_log_grants_them() -> None:
    for lying in (False, True):
        reveals, ports, games = dealt_crisp_seats(KEYS)
        rv = reveals[0].make_reveals([41], None)[0]  # seat 0 is ahead: its log turned card 41 face up
        if lying:
            rv = dataclasses.replace(rv, shares=reveals[0].make_reveals([42], None)[0].shares)
        reveals[1].take(0, None, [rv])
        reveals[1].take_early()
        assert not ports[1].faults and not reveals[1].reveals and (0, 41) not in reveals[1].shares
        reveals[1].grant_public([41])  # our log catches up: now it is due, and checked
        if lying:
            assert ports[1].faults and ports[1].faults[0][1] == 0  # its prover's fault
        else:
            assert games[1].faces.get(41) in CRISP_DECK and not ports[1].faults


def test_a_share_we_hold_already_is_dropped_without_checking_its_proof(monkeypatch: pytest.MonkeyPatch) -> None:
    reveals, ports, _ = dealt_crisp_seats(KEYS)
    checked: list[dk.Reveal] = []
    real = dk.verify_reveal

    def counting(*args: object, **kwargs: object) -> None:
        checked.append(args[3])  # type: ignore[arg-type]
        real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(reveals_module.dk, "verify_reveal", counting)
    reveals[1].grant_public([40])
    rv = reveals[0].make_reveals([40], None)
    for _ in range(50):  # the same valid shares again and again
        reveals[1].take(0, None, rv)
        reveals[1].take_early()
    assert len(checked) == 1 and len(reveals[1].reveals) == 1 and not ports[1].faults


def test_shares_not_due_cost_bounded_memory_dropped_and_noted_once() -> None:
    reveals, ports, _ = dealt_crisp_seats(KEYS)
    rv = reveals[0].make_reveals(list(range(40, 52)), None)[0]  # twelve positions, never granted at seat 1
    for _ in range(3 * MAX_EARLY // 12):
        reveals[1].take(0, None, [rv])
    reveals[1].take_early()
    assert sum(len(r.positions) for _, r, _ in reveals[1].early) <= MAX_EARLY
    assert reveals[1].dropped[0] >= MAX_EARLY // 12
    assert [n for n in ports[1].notes if n[0] == "rejected"] == [ports[1].notes[0]] and ports[1].notes[0][2] == 0
    assert not ports[1].faults


def test_a_share_made_ahead_serves_the_next_look_at_that_card_and_is_made_again_for_the_next() -> None:
    reveals, ports, games = dealt_crisp_seats(KEYS)
    handle = 31  # the next card drawn, say
    r0 = reveals[0]
    assert r0.prepare([handle]) and not r0.prepare([handle])  # made once, kept until used
    deck, pos = r0.decks.loc[handle]
    assert pos in r0.ahead[deck]
    for g in games:
        g.know.show(1, handle)  # seat 1 draws it
    r0.after_change()
    assert pos not in r0.ahead[deck]  # its one-time commitment went into the proof seat 1 gets
    (body,) = ports[0].of_type("private")
    box = Private.from_wire(body, 2, 0)
    reveals[1].after_change()
    reveals[1].box_seen(0, 1)
    reveals[1].take(0, 1, Shares.from_wire(decode(Opener(IDS[1]).open(box.box))).reveals)
    reveals[1].take_early()
    assert games[1].faces.get(handle) in CRISP_DECK and not ports[1].faults
    assert r0.prepare([handle])  # the card may be turned face up next: a fresh commitment for it
    r0.grant_public([handle])
    assert pos not in r0.ahead[deck] and not r0.prepare([handle])  # public now: nothing more to make
    assert not r0.prepare([999])  # no such card: nothing made


def test_a_public_share_that_came_before_our_deck_was_final_is_not_owed_again(monkeypatch: pytest.MonkeyPatch) -> None:
    """Its prover read as owing it for ever (it was never counted), and the time-out blamed an honest seat."""
    reveals, ports, games = dealt_crisp_seats(KEYS)
    handle = 30
    reveals[1].grant_public([handle])
    (body,) = ports[1].of_type("shares")
    with monkeypatch.context() as m:
        m.setattr(reveals[0].decks, "final_digest", lambda deck_id: None)  # our deck was not final when it came
        reveals[0].take(1, None, Shares.from_wire(body).reveals)
    reveals[0].grant_public([handle])
    assert reveals[0].public_owed() == set() and reveals[0].publics_delivered() == 1


def _a_look_at(handle: int, hurry: bool = True) -> tuple[list[Reveals], list[RecordingPort], list[CrispGame], dk.Reveal]:
    """Two seats dealt; seat 1 looks at `handle` (in play if `hurry`, else as the deal's look): the reveals, ports,
    games, and seat 0's reveal sealed to seat 1."""
    reveals, ports, games = dealt_crisp_seats(KEYS)
    for g in games:
        g.know.show(1, handle)
    for r in reveals:
        r.after_change(hurry)
    box = Private.from_wire(ports[0].of_type("private")[-1], 2, 0)
    (rv,) = [r for r in Shares.from_wire(decode(Opener(IDS[1]).open(box.box))).reveals if handle in
             [reveals[1].decks.handle_at(r.deck, p) for p in r.positions]]
    return reveals, ports, games, rv


def test_a_look_sealed_to_us_is_shown_before_its_proof_is_checked_and_proved_after() -> None:
    reveals, ports, games, rv = _a_look_at(31)
    reveals[1].take(0, 1, [rv], BOX_FRAME)
    reveals[1].take_early()
    assert games[1].faces.get(31) in CRISP_DECK  # shown at once
    assert [u[1] for u in reveals[1].unproved] == [rv] and rv not in reveals[1].reveals
    assert reveals[1].proving_due()  # what it showed is shown: its proof is due
    reveals[1].prove()
    assert not reveals[1].unproved and rv in reveals[1].reveals and not ports[1].faults
    assert not reveals[1].proving_due()


def _a_lie_taken(field: str, hurry: bool = True) -> tuple[list[Reveals], list[RecordingPort], list[CrispGame]]:
    """Seat 1 looks at card 31 (`hurry`: in play) and takes seat 0's reveal of it in a box, its `field` ("shares" or
    "proofs") taken from a reveal of card 45."""
    reveals, ports, games, rv = _a_look_at(31, hurry)
    other = reveals[0].make_reveals([45], 1)[0]
    reveals[1].take(0, 1, [dataclasses.replace(rv, **{field: getattr(other, field)})], BOX_FRAME)
    reveals[1].take_early()
    return reveals, ports, games


def test_a_right_share_under_a_wrong_proof_is_shown_then_blamed_on_its_prover_with_the_box_as_evidence() -> None:
    reveals, ports, games = _a_lie_taken("proofs")
    assert games[1].faces.get(31) in CRISP_DECK and not ports[1].faults
    reveals[1].prove()
    assert ports[1].faults and ports[1].faults[0][1] == 0 and ports[1].evidence[0] == [BOX_FRAME]


def test_a_wrong_share_sealed_to_us_shows_no_card_and_blames_its_prover_not_the_deck() -> None:
    _, ports, games = _a_lie_taken("shares")
    assert games[1].faces.get(31) is None
    assert ports[1].faults and ports[1].faults[0][1] == 0 and ports[1].evidence[0] == [BOX_FRAME]


def test_the_deals_looks_are_checked_before_they_are_shown() -> None:
    _, ports, games = _a_lie_taken("proofs", hurry=False)
    assert games[1].faces.get(31) is None and ports[1].faults and ports[1].faults[0][1] == 0
    reveals, ports, games, rv = _a_look_at(31, hurry=False)
    reveals[1].take(0, 1, [rv], BOX_FRAME)
    reveals[1].take_early()
    assert games[1].faces.get(31) in CRISP_DECK and rv in reveals[1].reveals and not reveals[1].unproved
