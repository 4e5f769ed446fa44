"""The votes that put a seat out: a function of the votes held, whatever order they came in."""

from __future__ import annotations

import itertools

from p2pcards.crypto.identity import generate
from p2pcards.table.config import TableConfig
from p2pcards.table.votes import Departure, Votes, going_on

IDS = [generate(f"p{i}") for i in range(4)]
CFG = TableConfig(bytes(16), "crisp", {}, tuple(i.public for i in IDS), tuple(i.name for i in IDS))


def test_a_seat_is_out_once_every_other_seat_voted_and_the_void_round_is_the_last_named() -> None:
    for order in itertools.permutations([(0, 3, 2), (1, 3, 3), (2, 3, 2)]):
        votes = Votes(4, 1)
        decided = []
        for voter, seat, rnd in order:
            assert votes.take(voter, seat, rnd)
            decided.append(votes.decided())
        assert decided[:2] == [None, None] and decided[2] == Departure(3, 3)
    assert not votes.take(0, 3, 5)  # a second vote is ignored: the first one stands
    assert votes.decided() == Departure(3, 3) and votes.by(0) == {3} and votes.by(3) == set()


def test_votes_before_the_first_round_void_the_tables_first_round() -> None:
    votes = Votes(3, 4)  # a table that went on: its first round is 4
    votes.take(0, 2, 0)
    votes.take(1, 2, 0)
    assert votes.decided() == Departure(2, 4)


def test_a_peer_decides_in_the_void_round_or_once_the_round_before_is_done() -> None:
    votes = Votes(3, 1)
    votes.began(2, (5, 0, 1))
    votes.take(0, 2, 2)
    votes.take(1, 2, 2)
    assert votes.due(1, False, (5, 0, 1)) is None  # round 1 still being finished here
    assert votes.due(1, True, (5, 0, 1)) == (Departure(2, 2), (5, 0, 1))
    assert votes.due(2, False, (9, 9, 9)) == (Departure(2, 2), (5, 0, 1))  # the totals round 2 began with


def test_the_table_that_goes_on_carries_the_others_totals_and_the_rounds_before_the_void_one() -> None:
    nxt = going_on(CFG, Departure(1, 3), (4, 7, 2, 9), dealer=1)
    assert nxt is not None
    cfg, carry = nxt
    assert cfg.names == ("p0", "p2", "p3") and carry == ((4, 2, 9), 2)
    assert cfg == CFG.without(1, 3, 1)
    two = TableConfig(bytes(16), "crisp", {}, CFG.keys[:2], CFG.names[:2])
    assert going_on(two, Departure(1, 1), (0, 0), dealer=0) is None  # too few seats remain
