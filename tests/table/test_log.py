"""The log on its own: the orderer stamps, every peer checks each order against its clock and the moves it saw."""

from __future__ import annotations

import pytest

from p2pcards.errors import MalformedMessage
from p2pcards.games.base import Move
from p2pcards.table.bodies import Order
from p2pcards.table.log import Log

CLAIM = Move("p1", "number", pos=0)


def ties(move: Move) -> bool:
    return move.action == "number"


def log_with(*moves: tuple[int, int, Move, float], ordering: bool = True) -> Log:
    log = Log(3, tolerance=1.0, tie_window=0.1, ties=ties)
    for seat, seq, move, at in moves:
        log.add_move((seat, seq), move, f"frame {seat}/{seq}".encode(), at, mine=seat == 0, ordering=ordering)
    return log


def test_what_the_orderer_stamps_every_peer_takes_and_both_hash_alike() -> None:
    orderer = log_with((1, 3, Move("p1", "draw"), 5.0))
    follower = log_with((1, 3, Move("p1", "draw"), 5.02), ordering=False)
    deal = orderer.stamp("deal", (), 4.0)
    follower.take(deal, b"h0", now=4.1)
    kind, refs, t0 = orderer.next_order(now=5.0) or ("", [], 0.0)
    assert (kind, refs, t0) == ("move", [(1, 3)], 5.0) and not orderer.inbox
    order = orderer.stamp(kind, refs, t0)  # type: ignore[arg-type]
    assert order.index == 1 and order.time == 5.0 and order.frames == (b"frame 1/3",)
    entry = follower.take(order, b"h1", now=5.05)
    assert entry.refs == ((1, 3),) and follower.head_moves() == []  # the deal, first, names no move
    assert [e.index for e in follower.entries] == [0, 1]
    assert follower.log_hash != bytes(32) and not follower.unordered()
    again = log_with((1, 3, Move("p1", "draw"), 5.0), ordering=False)
    again.take(deal, b"h0", now=4.1)
    again.take(order, b"h1", now=5.0)
    assert again.log_hash == follower.log_hash


def test_an_order_out_of_place_or_out_of_time_is_the_orderers_fault() -> None:
    log = log_with((1, 3, Move("p1", "draw"), 3.9), ordering=False)  # it reached us before the deal did
    with pytest.raises(MalformedMessage, match="due"):
        log.take(Order(1, 4000, "deal", (), ()), b"h", now=4.0)
    with pytest.raises(MalformedMessage, match="deal comes first"):
        log.take(Order(0, 4000, "tick", (), ()), b"h", now=4.0)
    with pytest.raises(MalformedMessage, match="our clock reads"):
        log.take(Order(0, 9000, "deal", (), ()), b"h", now=4.0)
    log.take(Order(0, 4000, "deal", (), ()), b"h", now=4.0)
    with pytest.raises(MalformedMessage, match="reached us"):
        log.take(Order(1, 7000, "move", ((1, 3),), (b"f",)), b"h", now=7.0)
    with pytest.raises(MalformedMessage, match="before the one it follows"):
        log.take(Order(1, 3000, "move", ((1, 3),), (b"f",)), b"h", now=5.0)
    log.take(Order(1, 5000, "move", ((1, 3),), (b"f",)), b"h", now=5.0)
    with pytest.raises(MalformedMessage, match="already ordered"):
        log.take(Order(2, 5000, "move", ((1, 3),), (b"f",)), b"h", now=5.0)
    with pytest.raises(MalformedMessage, match="out of the order"):
        log.take(Order(2, 5000, "move", ((1, 2),), (b"f",)), b"h", now=5.0)
    assert log.next_index == 2 and len(log.entries) == 2


def test_an_orderer_that_was_away_stamps_a_move_when_it_got_it() -> None:
    # An orderer whose link we found missing after the move reached us (it crashed, or lost its
    # link) gets the move only when it is back, and stamps it then; one we never missed may not.
    for missing_at, late_ok in ((6.0, True), (4.0, False), (None, False)):
        log = log_with((1, 3, Move("p1", "draw"), 5.0), ordering=False)
        log.away = lambda seat, since, at=missing_at: seat == log.orderer and at is not None and at >= since
        log.take(Order(0, 3000, "deal", (), ()), b"h", now=3.0)
        with pytest.raises(MalformedMessage, match="reached us"):
            log.take(Order(1, 3500, "move", ((1, 3),), (b"f",)), b"h", now=9.0)  # long before it reached us
        if late_ok:
            log.take(Order(1, 9000, "move", ((1, 3),), (b"f",)), b"h", now=9.0)
            assert log.next_index == 2
        else:
            with pytest.raises(MalformedMessage, match="reached us"):
                log.take(Order(1, 9000, "move", ((1, 3),), (b"f",)), b"h", now=9.0)


def test_claims_within_the_tie_window_are_ordered_as_one_tie() -> None:
    log = log_with((1, 3, CLAIM, 5.0), (2, 4, Move("p2", "number", pos=1), 5.05), (0, 1, Move("p0", "draw"), 5.3))
    assert log.claims_due() == pytest.approx(5.1)
    assert log.next_order(now=5.06) is None  # still waiting for claims that tie
    assert log.next_order(now=5.2) == ("tie", [(1, 3), (2, 4)], 5.0)
    assert log.next_order(now=5.3) == ("move", [(0, 1)], 5.3)
    assert log.next_order(now=5.4) is None and log.claims_due() is None


def test_a_late_claim_does_not_tie() -> None:
    log = log_with((1, 3, CLAIM, 5.0), (2, 4, Move("p2", "number", pos=1), 5.2))
    assert log.next_order(now=5.2) == ("move", [(1, 3)], 5.0)
    assert log.next_order(now=5.3) == ("move", [(2, 4)], 5.2)


def test_the_orderer_never_stamps_before_its_last_order() -> None:
    log = log_with()
    first = log.stamp("deal", (), 10.0004)
    second = log.stamp("tick", (), 9.0)
    assert first.time_ms == 10001 and second.time_ms == 10001 and log.issued == 2
    assert not log.settled  # issued, never taken


def test_a_time_on_the_millisecond_grid_is_stamped_at_that_millisecond() -> None:
    # 2.007 * 1000 is 2007.0000000000002 in floating point: rounded up, the order (and every order at the
    # same moment after it) came a millisecond late, so a move that reached the orderer exactly at a deadline
    # was stamped after it.
    log = log_with()
    for ms in range(2000, 2100):
        assert [log.stamp("tick", (), ms / 1000).time_ms for _ in range(2)] == [ms, ms]


def test_what_crossed_a_cut_that_healed_is_late_not_backdated() -> None:
    # Seat 1's link (and then the orderer's) was silent from 4.5 s to 12 s: its move, stamped 4.6 s by
    # the orderer, reached us at 12 s, and so did a tick of 6 s. Without the silence both are refused.
    for cut in (False, True):
        log = log_with((1, 3, Move("p1", "draw"), 12.0), ordering=False)
        log.away = lambda seat, since, cut=cut: cut and seat in (0, 1) and since <= 12.0
        log.take(Order(0, 4000, "deal", (), ()), b"h", now=4.0)
        if not cut:
            with pytest.raises(MalformedMessage, match="reached us"):
                log.take(Order(1, 4600, "move", ((1, 3),), (b"f",)), b"h", now=12.0)
            with pytest.raises(MalformedMessage, match="long before our clock"):
                log.take(Order(1, 6000, "tick", (), ()), b"h", now=12.0)
            continue
        log.take(Order(1, 4600, "move", ((1, 3),), (b"f",)), b"h", now=12.0)
        log.take(Order(2, 6000, "tick", (), ()), b"h", now=12.0)
        assert log.next_index == 3


def test_what_the_next_entry_awaits_is_the_moves_it_names_that_have_not_reached_us() -> None:
    orderer = log_with((1, 3, Move("p1", "draw"), 5.0), (2, 0, Move("p2", "draw"), 5.0))
    follower = log_with((1, 3, Move("p1", "draw"), 5.0), ordering=False)
    assert follower.awaited() == []  # no entry yet
    follower.take(orderer.stamp("deal", (), 4.0), b"h0", now=4.0)
    assert follower.awaited() == []
    follower.applied()
    follower.take(orderer.stamp("move", [(2, 0)], 5.0), b"h1", now=5.0)
    assert follower.awaited() == [(2, 0)]
