"""Our moves not ordered in time are sent again at the pace their orders have come back at (protocol.md §18.5):
every RESEND_S over a link whose orders take seconds sent each move about three times over (traffic, not time)."""

from __future__ import annotations

import pytest

from p2pcards.games.base import Move
from p2pcards.sim.batch import play_batch
from p2pcards.sim.faults import FaultSpec
from p2pcards.table.bodies import Order
from p2pcards.table.log import RESEND_CAP_S, RESEND_MAX_S, RESEND_S, Log

DRAW = Move("p1", "draw", source="pile")


def ordered_after(seconds: float, moves: int = 4) -> Log:
    """Seat 1's log (seat 0 orders) once `moves` of its moves each came back ordered `seconds` after it sent them."""
    log = Log(3, tolerance=1.0, slack=1.5, orderer=0)
    log.take(Order(0, 0, "deal", (), ()), b"deal", 0.0)
    for k in range(moves):
        sent = 1.0 + 5.0 * k
        log.add_move((1, k), DRAW, b"move %d" % k, sent, mine=True, ordering=False)
        log.take(Order(k + 1, round((sent + seconds / 2) * 1000), "move", ((1, k),), (b"move %d" % k,)),
                 b"h%d" % k, sent + seconds)
    return log


def copies(log: Log, sent: float, until: float) -> list[float]:
    """When a move of ours sent at `sent` and never ordered goes out again, asking every 10 ms until `until`."""
    log.add_move((1, 99), DRAW, b"ours", sent, mine=True, ordering=False)
    times = []
    for ms in range(int(sent * 100), int(until * 100) + 1):
        due = log.resend_due()
        if log.unordered_again(ms / 100):
            assert due is not None and abs(due - ms / 100) < 0.011  # `resend_due` said when (a shell wakes then)
            times.append(round(ms / 100 - sent, 2))
    return times


def test_a_move_whose_orders_come_back_slowly_is_sent_again_once_overdue_and_less_often_after() -> None:
    # Orders 2 s on their way: the first copy waits RESEND_MAX_S (it sent one every RESEND_S, each move 4 times).
    assert copies(ordered_after(2.0), 30.0, 45.0) == [RESEND_MAX_S, 3.0, 7.0, 7.0 + RESEND_CAP_S, 7.0 + 2 * RESEND_CAP_S]
    # A fast link, or one we know nothing of yet: a lost move goes out again soon, every RESEND_S while a copy
    # would still be stamped within the slack of the others' checks, then backing off.
    fast = [RESEND_S, 2 * RESEND_S, 3 * RESEND_S, 2.5, 4.5, 8.5]
    assert copies(ordered_after(0.05), 30.0, 40.0) == fast
    assert copies(ordered_after(0.05, moves=0), 1.0, 11.0) == fast
    # What an order took that came sent again (it was lost: when it came says nothing of the link) is not counted.
    log = ordered_after(0.05)
    log.add_move((1, 4), DRAW, b"late", 30.0, mine=True, ordering=False)
    log.take(Order(5, 30_000, "move", ((1, 4),), (b"late",)), b"h4", 60.0, live=False)
    assert copies(log, 61.0, 62.0) == [RESEND_S, 2 * RESEND_S]



def test_a_move_sent_again_times_nothing_and_the_next_wait_longer_until_one_sent_once_comes_back() -> None:
    # Karn's rule (RFC 6298 §3): the order of a move sent again may answer any of its copies. Timed from the first,
    # this one (a copy 0.5 s on, ordered 50 ms after it) took 0.55 s over a link whose orders take 50 ms.
    log = ordered_after(0.05)
    log.add_move((1, 4), DRAW, b"lost", 30.0, mine=True, ordering=False)
    assert log.unordered_again(30.5) == [b"lost"]
    log.take(Order(5, 30_520, "move", ((1, 4),), (b"lost",)), b"h4", 30.55)
    # No sample: the next move's first copy waits twice the last copy's wait (RFC 6298 §5.5), up to RESEND_MAX_S...
    log.add_move((1, 5), DRAW, b"next", 40.0, mine=True, ordering=False)
    assert log.resend_due() == 40.0 + min(2 * RESEND_S, RESEND_MAX_S)
    # ... and so does the one after an order that came sent again (it times nothing either) ...
    log.take(Order(6, 40_020, "move", ((1, 5),), (b"next",)), b"h5", 40.05, live=False)
    log.add_move((1, 6), DRAW, b"then", 45.0, mine=True, ordering=False)
    assert log.resend_due() == 45.0 + min(2 * RESEND_S, RESEND_MAX_S)
    # ... until a move sent once comes back: the pace is the link's again, untouched by the move sent again.
    log.take(Order(7, 45_020, "move", ((1, 6),), (b"then",)), b"h6", 45.05)
    assert copies(log, 50.0, 52.0) == [RESEND_S, 2 * RESEND_S, 3 * RESEND_S]


@pytest.mark.slow  # a whole Crescendo game over slow links
def test_a_slow_game_sends_fewer_copies_than_moves() -> None:
    """`sim crescendo --faults delay=400,jitter=1000` sent 706 copies for its 313 moves; now fewer than one each."""
    [report] = play_batch("crescendo", 3, {}, 1, 1, faults=FaultSpec.parse("delay=400,jitter=1000"))
    assert report.ok and 0 < report.resent < report.moves, (report.resent, report.moves)
