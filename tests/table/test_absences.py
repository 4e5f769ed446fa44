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
