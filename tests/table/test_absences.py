"""What the network layer missed, seat by seat: a stamp that crossed it is late through no one's fault."""

from __future__ import annotations

from p2pcards.table.absences import Absences


def test_a_link_missing_then_back_and_a_silence_that_widens_it() -> None:
    a = Absences()
    assert not a.now(1) and not a.since(1, 0.0)
    a.missing(1, 5.0)
    assert a.now(1) and a.since(1, 100.0)  # missing still: from any time on
    a.back(1, 8.0)
    assert not a.now(1) and a.since(1, 8.0) and not a.since(1, 8.5)
    a.silent(1, 7.0, 12.0)  # overlaps the span: widens it
    assert a.spans[1] == (5.0, 12.0)
    a.silent(1, 20.0, 23.0)  # a later one: the last span is the one kept
    assert a.spans[1] == (20.0, 23.0) and a.since(1, 22.0) and not a.since(2, 0.0)
    a.back(2, 9.0)  # back without a missing: nothing to close
    assert 2 not in a.spans



def test_a_link_missing_again_while_missing_keeps_a_close_and_takes_a_new_one() -> None:
    a = Absences()
    a.missing(1, 5.0, closed=True)
    a.missing(1, 9.0)  # still missing when we came back from our journal: closed by it all the same
    assert a.spans[1] == (9.0, float("inf")) and 1 in a.closed
    a.missing(2, 5.0)
    a.missing(2, 9.0, closed=True)  # no link since we came back, then every address refused our dial
    assert 2 in a.closed
    a.back(1, 12.0)
    a.missing(1, 20.0)  # missing again after it was back: an absence of its own, lost to silence
    assert a.spans[1] == (20.0, float("inf")) and 1 not in a.closed
