"""Crescendo's fresh shuffle of the discard pile when the Reserve is empty (protocol.md §11.2), reached on purpose
by Drainer bots (reshuffle_harness.py): alone, with a seat crashing at each of its steps, with a seat gone for
good, with a cheating seat, and twice in one round."""

from __future__ import annotations

import random

import pytest
from reshuffle_harness import (POINTS, Drainer, RoundWatch, assert_reshuffled_exactly, assert_round_alike, at_point,
                               crash_at, drain_table, watched)
from test_lost_frames import finished_alike

from p2pcards.crypto import deck as dk
from p2pcards.crypto.envelope import parse
from p2pcards.sim.cheaters import reseal
from p2pcards.sim.memnet import MemNet
from p2pcards.table.peer import TablePeer
from p2pcards.table.round import Stage


def finish_round(net: MemNet, watch: RoundWatch, until: float = 900.0) -> None:
    """Run until every seat has settled the watched round; nobody stopped or blamed."""
    net.run(until=until, stop=watch.round_done)
    watch(net)
    for i, p in enumerate(net.peers):
        assert not p.faults and p.stopped is None, (i, [n for n in p.notes if n.kind != "event"][-5:])
    assert watch.round_done(net)


@pytest.mark.parametrize("trigger", ["draw", pytest.param("special", marks=pytest.mark.slow),
                                     pytest.param("claim", marks=pytest.mark.slow)])
def test_drainers_reach_a_fresh_shuffle_and_the_new_reserve_is_the_old_discard_pile(trigger: str) -> None:
    net = drain_table(2, seed=1, trigger=trigger)
    watch, knowledge = watched(net)
    net.start()
    finish_round(net, watch)
    assert assert_reshuffled_exactly(watch, 2) == [1]
    assert_round_alike(watch, 2)
    assert not knowledge.leaks, knowledge.report()
    assert knowledge.frames > 0


# ---------------------------------------------------------------- a seat crashes at each step of the shuffle

# Two seats cover each step at either seat; three seats add a seat between others (waiting on a later pass
# while an earlier one is in). All slow: resuming mid-round is in test_resume.py's default run.
CRASHES = [pytest.param(2, seat, point, id=f"2seats-seat{seat}-{point}", marks=pytest.mark.slow)
           for seat in (0, 1) for point in POINTS]
CRASHES += [pytest.param(3, seat, point, id=f"3seats-seat{seat}-{point}", marks=pytest.mark.slow)
            for seat in (0, 1, 2) for point in POINTS]


@pytest.mark.parametrize("players, seat, point", CRASHES)
def test_a_seat_crashed_at_a_step_of_the_fresh_shuffle_comes_back_and_the_round_ends_alike(
        players: int, seat: int, point: str) -> None:
    net = drain_table(players, seed=2)
    watch, knowledge = watched(net)
    net.start()
    crash = crash_at(net, seat, point)
    finish_round(net, watch)
    assert len(crash.back) == 1 and net.peers[seat] is crash.back[0]  # it came back, from its journal
    assert assert_reshuffled_exactly(watch, players) == [1]
    assert_round_alike(watch, players)
    assert not knowledge.leaks, knowledge.report()


@pytest.mark.slow
@pytest.mark.parametrize("trigger, point", [("special", "pass_unsent"), ("claim", "pass_unsent"),
                                            ("special", "first_draw"), ("claim", "final")])
def test_a_crash_in_a_fresh_shuffle_any_move_started_comes_back_alike(trigger: str, point: str) -> None:
    net = drain_table(2, seed=2, trigger=trigger)
    watch, knowledge = watched(net)
    net.start()
    crash_at(net, 1, point)
    finish_round(net, watch)
    assert assert_reshuffled_exactly(watch, 2) == [1]
    assert_round_alike(watch, 2)
    assert not knowledge.leaks, knowledge.report()


@pytest.mark.slow  # about 3 s each
@pytest.mark.parametrize("seat", [pytest.param(1, id="orderer"), pytest.param(0, id="other")])
def test_a_seat_crashed_in_a_fresh_shuffle_of_a_later_round_comes_back_from_its_checkpoint(seat: int) -> None:
    """Round 2 is ordered by seat 1; each seat resumes from the checkpoint it wrote as round 2 began. The orderer
    took the other seat's key and pass of deck 0 late (the pass overtook the key, and both are journaled at
    when the pass came): replayed at that time, it stamped its deal 4 ms earlier than it had, and could
    never come back ("resuming went another way"). The journal now keeps the clock it took them at."""
    net = drain_table(2, seed=7, drain_round=2)
    watch, knowledge = watched(net, 2)
    net.start()
    crash = crash_at(net, seat, "pass_unsent", round_no=2)
    assert any(r[0] == "check" for r in crash.records)
    finish_round(net, watch)
    assert len(crash.back) == 1
    assert assert_reshuffled_exactly(watch, 2) == [1]
    assert_round_alike(watch, 2)
    assert not knowledge.leaks, knowledge.report()


# ---------------------------------------------------------------- twice in one round


@pytest.mark.slow  # about 3 s
def test_the_reserve_runs_out_twice_in_a_round_and_is_shuffled_afresh_twice() -> None:
    net = drain_table(2, seed=6, reshuffles=2)
    watch, knowledge = watched(net)
    net.start()
    finish_round(net, watch)
    assert assert_reshuffled_exactly(watch, 2) == [1, 2]
    assert_round_alike(watch, 2)
    assert not knowledge.leaks, knowledge.report()


@pytest.mark.slow
@pytest.mark.parametrize("seat, point", [(0, "before_pass"), (1, "pass_unsent"), (0, "first_draw")])
def test_a_seat_crashed_in_the_second_fresh_shuffle_of_a_round_comes_back_alike(seat: int, point: str) -> None:
    net = drain_table(2, seed=6, reshuffles=2)
    watch, knowledge = watched(net)
    net.start()
    crash_at(net, seat, point, deck=2)
    finish_round(net, watch)
    assert assert_reshuffled_exactly(watch, 2) == [1, 2]
    assert_round_alike(watch, 2)
    assert not knowledge.leaks, knowledge.report()


# ---------------------------------------------------------------- a seat gone for good during the shuffle


def vote_gone(net: MemNet, out: int) -> None:
    """Every live seat's network layer found seat `out` missing for gone_after: it votes it gone."""
    for i, peer in enumerate(net.peers):
        if i != out and i not in net.dead:
            net.send_as(i, peer.gone(out, net.now, f"{peer.names[out]} was missing for 10 s"))


@pytest.mark.slow  # about 8 s: the table that goes on plays three rounds, its first drained again
@pytest.mark.parametrize("seat, point", [(2, "before_pass"), (1, "waiting")])
def test_a_seat_gone_for_good_during_the_fresh_shuffle_is_voted_out_and_the_rest_finish_the_game(
        seat: int, point: str) -> None:
    net = drain_table(3, seed=3)
    net.start()
    stop = at_point(seat, point)
    net.run(until=900.0, stop=stop)
    assert stop(net)
    net.dead.add(seat)  # gone for good: frames to it are lost, it sends nothing more
    net._absent(seat, True)  # every other seat's network layer finds its link missing
    net.call_at(net.now + 10.0, lambda n: vote_gone(n, seat))
    net.run(until=net.now + 120.0)
    left = [p for i, p in enumerate(net.peers) if i != seat]
    for p in left:
        assert p.finished and p.stopped is None and not p.faults, [n for n in p.notes if n.kind != "event"][-5:]
        assert p.rs is not None and p.rs.number == 1 and p.rs.stage is Stage.PLAYING  # void in mid-shuffle
    assert left[0].successor == left[1].successor is not None
    nxt = [p.next_peer() for p in left]
    assert all(p is not None and p.carry == ((0, 0), 0) for p in nxt)
    net2 = MemNet([p for p in nxt if p], [Drainer() for _ in nxt], net.rng)
    watch, knowledge = watched(net2)
    net2.start()
    net2.run(until=net2.now + 900.0)
    finished_alike(net2)
    assert assert_reshuffled_exactly(watch, 2) == [1]  # the void round, played again, drained again
    assert not knowledge.leaks, knowledge.report()
    assert all(p.game.over and len(p.game.results) == 3 for p in net2.peers)


# ---------------------------------------------------------------- a cheating seat during the shuffle

CHEATER = 1  # never seat 0: a blame that falls on the lowest seat by default must not pass by luck


def fresh_pass(frame: bytes) -> bool:
    """The frame is a pass of a fresh shuffle (deck 1 or later)."""
    env = parse(frame).envelope
    return env.type == "pass" and isinstance(env.body, dict) and env.body.get("deck", 0) >= 1


def blamed(peer: TablePeer) -> set[str]:
    return {n.blame for n in peer.notes if n.blame is not None and n.kind in ("rejected", "fault")}


def assert_stopped_blaming(net: MemNet, cheater: int) -> None:
    """Every honest seat stopped the table (the round void), its faults blaming the cheater and no one else."""
    name = net.peers[cheater].names[cheater]
    for i, p in enumerate(net.peers):
        if i == cheater:
            continue
        assert p.stopped is not None and p.faults, (i, [n for n in p.notes if n.kind != "event"][-5:])
        assert p.faults[0].blame == name, (i, p.faults)
        assert blamed(p) == {name}, (i, blamed(p))
        assert any(n.kind == "void" for n in p.notes)


@pytest.mark.slow  # about 2.5 s: three seats
def test_a_fresh_shuffle_pass_that_fails_its_proof_is_blamed_on_its_seat() -> None:
    net = drain_table(3, seed=4)
    cheater = net.peers[CHEATER]

    def bad(sender: int, frame: bytes) -> list[bytes]:
        # Two cards of the pass swapped after it was proven: a shuffle its proof does not show.
        if sender != CHEATER or not fresh_pass(frame):
            return [frame]
        body = dict(parse(frame).envelope.body)
        cts = body["cts"]
        assert isinstance(cts, bytes)
        body["cts"] = cts[64:128] + cts[:64] + cts[128:]
        return [reseal(cheater.identity, frame, body=body)]

    net.rewrite = bad
    net.start()
    net.run(until=900.0)
    assert_stopped_blaming(net, CHEATER)
    assert all("BadPass" in p.faults[0].detail for i, p in enumerate(net.peers) if i != CHEATER)


@pytest.mark.slow  # about 2.5 s: three seats
def test_a_fresh_shuffle_pass_withheld_is_blamed_on_its_seat_by_the_time_out() -> None:
    net = drain_table(3, seed=4)
    net.tap = lambda s, r, f: None if s == CHEATER and fresh_pass(f) else f  # never reaches anyone, asked or not
    net.start()
    net.run(until=900.0)
    assert_stopped_blaming(net, CHEATER)


@pytest.mark.slow  # about 3 s each: three seats
@pytest.mark.parametrize("cheater", [1, 2])
def test_a_fresh_shuffle_pass_proven_but_not_the_committed_one_is_blamed_by_the_audit(cheater: int) -> None:
    """A modified client shuffles deck 1 with other randomness than its seed commits to: a real shuffle, with a
    proof that verifies, so every receiver takes it; the audit replays the pass from the opened seed and names it."""
    net = drain_table(3, seed=5)
    peer = net.peers[cheater]
    fake = random.Random(99).randbytes(32)

    def modified(net: MemNet) -> bool:
        rs = peer.rs
        if rs is not None and rs.number == 1 and "shuffle" not in vars(rs.decks):
            decks = rs.decks
            other = dk.round_secret(decks.ctx, decks.me, fake)
            honest = decks.shuffle

            def shuffle(prev: dk.EncryptedDeck) -> dk.EncryptedDeck:
                assert decks.keys is not None
                return honest(prev) if prev.deck == 0 else dk.shuffle_pass(decks.ctx, decks.keys, other, prev)

            decks.shuffle = shuffle  # type: ignore[method-assign]
        return False

    net.start()
    net.run(until=900.0, stop=modified)
    name = peer.names[cheater]
    for i, p in enumerate(net.peers):
        assert p.stopped is not None and p.faults, (i, [n for n in p.notes if n.kind != "event"][-5:])
        if i != cheater:
            assert blamed(p) == {name}, (i, p.faults)
