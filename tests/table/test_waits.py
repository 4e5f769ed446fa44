"""What a peer waits on: who owes, the time-out that spares a seat we voted gone, and what to ask for again."""

from __future__ import annotations

from p2pcards.table.recovery import MAX_ASK
from p2pcards.table.waits import PROBE_S, WATCH_S, Waits


def test_before_the_first_round_the_seats_not_ready_are_owed() -> None:
    owed, mark = Waits(3, 0, 15.0).owed(0, None, {0, 2}, 0.0, 1.0)
    assert owed == {1} and mark == (0, 0, 2)


def test_a_stall_is_blamed_after_the_time_out_unless_we_voted_the_seat_gone() -> None:
    for voted, blamed in ((set(), [1]), ({1}, []), ({2}, [1])):
        waits = Waits(3, 0, 15.0)
        assert waits.late(0.0, frozenset({1}), (1, 2, 0), voted, set()) == []
        assert waits.late(16.0, frozenset({1}), (1, 2, 0), voted, set()) == blamed


def test_no_one_is_blamed_while_any_link_is_missing_and_the_count_starts_afresh_after() -> None:
    # Seat 1 owes an order, but it may be waiting on seat 2's share, and seat 2's link is missing
    # here: the vote on seat 2 settles it, not the time-out on seat 1.
    waits = Waits(3, 0, 15.0)
    assert waits.late(0.0, frozenset({1}), (5, 3), set(), {2}) == []
    assert waits.late(16.0, frozenset({1}), (5, 3), set(), {2}) == []
    assert waits.late(20.0, frozenset({1}), (5, 3), set(), set()) == []  # back: a new count from 20 s
    assert waits.late(34.0, frozenset({1}), (5, 3), set(), set()) == []
    assert waits.late(35.5, frozenset({1}), (5, 3), set(), set()) == [1]


def test_gaps_below_held_frames_and_named_moves_then_the_tails_of_a_quiet_table() -> None:
    waits = Waits(3, 0, 15.0)
    waits.heard((0, 4, 2), 10.0)
    heads = {0: 0, 1: 4, 2: 2}
    assert waits.gaps(10.5, [(1, 6), (0, 3)], [(2, 3)], heads.__getitem__) == [(1, 4, 5), (2, 2, 3)]
    quiet = 10.0 + PROBE_S
    assert waits.gaps(quiet, [], [], heads.__getitem__) == [(1, 4, 3 + MAX_ASK), (2, 2, 1 + MAX_ASK)]
    waits.heard((0, 5, 2), quiet)  # a chain grew: the table is not quiet any more
    assert waits.gaps(quiet, [], [], heads.__getitem__) == []


def test_frames_wake_the_watchdog_at_most_every_watch_s() -> None:
    waits = Waits(3, 0, 15.0)
    assert waits.due(0.0)
    waits.heard((0, 0, 0), 1.0)
    assert not waits.due(1.0 + WATCH_S / 2) and waits.due(1.0 + WATCH_S)
