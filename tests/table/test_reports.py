"""A fault report weighed against what we hold: our wait, what is owed, our links, or the reporter's word."""

from __future__ import annotations

from p2pcards.table.bodies import Fault
from p2pcards.table.outputs import Claim
from p2pcards.table.reports import View, weigh

NAMES = ("p0", "p1", "p2", "p3")


def never(seat: int) -> bool:
    return False


def test_a_wait_of_our_own_that_lasted_names_whom_we_waited_on() -> None:
    detail, blame, claim = weigh(NAMES, 0, Fault(2, "bad box"), View([3], [3], never, " (a key)"))
    assert blame == 3 and claim is None and detail == "p0 stopped the table (bad box); we were waiting on p3 (a key)"


def test_a_time_out_our_view_does_not_bear_out_from_the_seat_we_wait_on_blames_that_seat() -> None:
    detail, blame, claim = weigh(NAMES, 3, Fault(2, "slow", stall=True), View([], [1, 3], never))
    assert blame == 3 and claim is None and detail == "p3 stopped the table (slow); we were waiting on p3"


def test_a_time_out_nobody_bears_out_blames_no_seat_whose_frames_are_only_in_flight() -> None:
    # Seats 1 and 3 owe us something this very moment (traffic in flight): not evidence against them.
    for blame in (2, None):
        detail, who, claim = weigh(NAMES, 0, Fault(blame, "slow", stall=True), View([], [1, 3], never))
        assert who is None and "waiting" not in detail, detail
        assert claim == (None if blame is None else Claim("p0", "p2"))  # its time-out of p2: p0's word only


def test_what_our_view_bears_out_keeps_the_reporters_blame() -> None:
    assert weigh(NAMES, 0, Fault(2, "slow", stall=True), View([], [2], never)) == ("p0 stopped the table: slow", 2, None)
    assert weigh(NAMES, 0, Fault(None, "left"), View([], [], never)) == ("p0 stopped the table: left", None, None)
    assert weigh(NAMES, 0, Fault(2, "gone"), View([], [], lambda s: s == 2))[1] == 2  # we miss it too


def test_a_claim_nothing_bears_out_blames_no_one_and_says_whose_word_it_is() -> None:
    detail, blame, claim = weigh(NAMES, 1, Fault(2, "bad box"), View([], [], never))
    assert blame is None and detail == "p1 stopped the table, blaming p2 on its word only: bad box"
    assert claim == Claim("p1", "p2")  # not only in the words: a script reads it (sim, verify and peer --json)
