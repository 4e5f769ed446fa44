"""The votes that put a seat out: a function of the votes held, whatever order they came in."""

from __future__ import annotations

import itertools
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pcards.crypto.identity import generate
from p2pcards.table.config import TableConfig
from p2pcards.table.votes import Departure, Votes, going_on

IDS = [generate(f"p{i}") for i in range(4)]
CFG = TableConfig(bytes(16), "crisp", {}, tuple(i.public for i in IDS), tuple(i.name for i in IDS))


def test_a_seat_is_out_once_every_other_seat_voted_and_the_void_round_is_the_last_named() -> None:
    for order in itertools.permutations([(0, 3, 2), (1, 3, 3), (2, 3, 2)]):
        votes = Votes(4, 1, 0)
        decided = []
        for voter, seat, rnd in order:
            assert votes.take(voter, seat, rnd)
            decided.append(votes.decided())
        assert decided[:2] == [None, None] and decided[2] == Departure((3,), 3)
    assert not votes.take(0, 3, 5)  # a second vote is ignored: the first one stands
    assert votes.decided() == Departure((3,), 3) and votes.by(0) == {3} and votes.by(3) == set()


def test_votes_before_the_first_round_void_the_tables_first_round() -> None:
    votes = Votes(3, 4, 0)  # a table that went on: its first round is 4
    votes.take(0, 2, 0)
    votes.take(1, 2, 0)
    assert votes.decided() == Departure((2,), 4)


def test_a_peer_decides_in_the_void_round_or_once_the_round_before_is_done() -> None:
    votes = Votes(3, 1, 0)
    votes.began(2, (5, 0, 1))
    votes.take(0, 2, 2)
    votes.take(1, 2, 2)
    assert votes.due(1, False, (5, 0, 1)) is None  # round 1 still being finished here
    assert votes.due(1, True, (5, 0, 1)) == (Departure((2,), 2), (5, 0, 1))
    assert votes.due(2, False, (9, 9, 9)) == (Departure((2,), 2), (5, 0, 1))  # the totals round 2 began with


def test_the_table_that_goes_on_carries_the_others_totals_and_the_rounds_before_the_void_one() -> None:
    nxt = going_on(CFG, Departure((1,), 3), (4, 7, 2, 9), dealer=1)
    assert nxt is not None
    cfg, carry = nxt
    assert cfg.names == ("p0", "p2", "p3") and carry == ((4, 2, 9), 2)
    assert cfg == CFG.without((1,), 3, 1)
    two = TableConfig(bytes(16), "crisp", {}, CFG.keys[:2], CFG.names[:2])
    assert going_on(two, Departure((1,), 1), (0, 0), dealer=0) is None  # too few seats remain


def test_two_seats_gone_at_once_are_put_out_together_by_the_seats_that_remain() -> None:
    # Seats 2 and 3 vanished together: neither voted the other gone, so neither set of one qualifies.
    votes = Votes(5, 1, 0)
    for voter, seat, rnd in [(0, 2, 3), (1, 2, 3), (4, 2, 3), (0, 3, 3), (1, 3, 4)]:
        votes.take(voter, seat, rnd)
        assert votes.decided() is None
    votes.take(4, 3, 3)
    assert votes.decided() == Departure((2, 3), 4)  # the last round named by the votes on either
    nxt = going_on(TableConfig(bytes(16), "crisp", {}, tuple(generate(f"q{i}").public for i in range(5)),
                               tuple(f"q{i}" for i in range(5))), Departure((2, 3), 4), (1, 2, 3, 4, 5), dealer=2)
    assert nxt is not None
    cfg, carry = nxt
    assert cfg.names == ("q0", "q1", "q4") and carry == ((1, 2, 5), 3)
    assert cfg.first_dealer == (2 - 4 + 1) % 3  # round 4 dealt by q4, the first after q2 that remains


def test_a_seat_that_voted_before_it_vanished_leaves_the_others_one_decision() -> None:
    # Seats 2 and 3 are gone; 3 voted 2 gone first, and only seat 0 got that vote.
    a, b = Votes(4, 1, 0), Votes(4, 1, 1)
    a.take(3, 2, 1)
    for v in (a, b):
        v.take(0, 2, 1)
        v.take(1, 2, 1)
    assert a.decided() == Departure((2,), 1)  # 0 voted only 2 gone: it decides {2}, and says so
    b.take(1, 3, 1)  # meanwhile 1 voted 3 gone too: {2} alone is not for it to decide
    assert b.decided() is None
    b.take_out(0, (2,))
    assert b.decided() is None  # the vote of 3 that {2} needs is not here yet
    b.take(3, 2, 1)  # asked for and given by 0
    assert b.decided() == Departure((2,), 1)  # the same decision: 3 is voted out at the table that goes on


def test_an_out_from_a_seat_we_voted_gone_or_that_voted_more_is_no_witness() -> None:
    votes = Votes(5, 1, 0)
    for voter in (0, 1, 3, 4):
        votes.take(voter, 2, 1)
    votes.take(0, 3, 1)  # we voted 3 gone too
    votes.take_out(3, (2,))
    assert votes.decided() is None  # 3's word counts for nothing with us: we voted it gone
    votes.take(1, 3, 1)
    votes.take_out(1, (2,))
    assert votes.decided() is None  # 1 voted 3 gone as well: its `out` cannot witness {2}
    assert not votes.take_out(1, (2, 3))  # a second `out` is ignored
    assert not votes.take(1, 0, 1)  # and so is a vote signed after an `out`
    votes.take_out(4, (2,))
    assert votes.decided() == Departure((2,), 1)  # 4 voted 2 gone and no other: it witnesses {2}


@st.composite
def departures(draw: st.DrawFn) -> tuple[int, set[int], list[tuple[int, int, set[int]]], list[list[int]], random.Random]:
    """A table of `seats`, the seats gone, the votes the gone ones signed before they went (each held by
    some of the others), what each seat that remains votes (every gone seat, in some order, and perhaps a
    seat that remains, whose link it lost), and a random source for the order frames arrive in."""
    seats = draw(st.integers(3, 6))
    gone = set(draw(st.sets(st.integers(0, seats - 1), min_size=1, max_size=seats - 1)))
    stay = [s for s in range(seats) if s not in gone]
    early = [(v, s, set(draw(st.sets(st.sampled_from(stay)))))
             for v in sorted(gone) for s in draw(st.permutations(sorted(gone - {v}))) if draw(st.booleans())]
    plans = [draw(st.permutations(sorted(gone))) + draw(st.lists(st.sampled_from(stay), max_size=1)) for _ in stay]
    return seats, gone, early, [[x for x in p if x != me] for p, me in zip(plans, stay)], random.Random(draw(st.integers()))


@settings(max_examples=100, deadline=None)
@given(departures())
def test_no_two_seats_that_remain_decide_differently_in_any_order(case: tuple) -> None:
    no_two_decide_differently(case)


@pytest.mark.slow  # the same, at length
@settings(max_examples=500, deadline=None)
@given(departures())
def test_no_two_seats_that_remain_decide_differently_in_any_order_long_run(case: tuple) -> None:
    no_two_decide_differently(case)


def no_two_decide_differently(case: tuple) -> None:
    """Each seat that remains takes the votes of a departure in its own order: every one decides alike."""
    seats, gone, early, plans, rng = case
    stay = [s for s in range(seats) if s not in gone]
    strays = any(x not in gone for plan in plans for x in plan)  # a seat that remains voted gone
    votes = {me: Votes(seats, 1, me) for me in stay}
    decided: dict[int, Departure] = {}
    frames: dict[int, list[tuple[str, int | tuple[int, ...]]]] = {s: [] for s in range(seats)}  # each chain
    got = {me: dict.fromkeys(range(seats), 0) for me in stay}  # how much of each chain each peer took
    for v, s, holders in early:
        frames[v].append(("gone", s))
    reach = {me: {v: sum(1 for w, _, h in early if w == v and me in h) for v in gone} for me in stay}

    def take(me: int, sender: int) -> None:
        kind, what = frames[sender][got[me][sender]]
        got[me][sender] += 1
        if kind == "gone":
            assert isinstance(what, int)
            votes[me].take(sender, what, 1)
        else:
            assert isinstance(what, tuple)
            votes[me].take_out(sender, what)
        if me not in decided and (dep := votes[me].decided()) is not None:
            decided[me] = dep
            if me not in dep.out:
                sign(me, ("out", dep.out))

    def sign(me: int, frame: tuple[str, int | tuple[int, ...]]) -> None:
        frames[me].append(frame)
        take(me, me)

    def step(relay: bool) -> bool:
        moves = [(me, s) for me in stay for s in range(seats)
                 if got[me][s] < (len(frames[s]) if s in stay or relay else reach[me].get(s, 0))]
        moves += [(me, -1) for me, plan in zip(stay, plans) if plan and me not in decided]
        if not moves:
            return False
        me, sender = rng.choice(moves)
        if sender < 0:
            plan = plans[stay.index(me)]
            sign(me, ("gone", plan.pop(0)))
        else:
            take(me, sender)
        return True

    while step(relay=False):
        pass
    while step(relay=True):  # then every frame any peer that remains holds reaches the others (§18.5)
        pass
    for p, q in itertools.combinations(decided, 2):
        if p not in decided[q].out and q not in decided[p].out:
            assert decided[p] == decided[q], (decided, early)
    if not strays:  # every vote names a seat really gone: every seat that remains decides, and alike
        assert set(decided) == set(stay), (decided, early)
        assert len(set(decided.values())) == 1 and set(decided[stay[0]].out) <= gone
