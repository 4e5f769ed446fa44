"""A seat gone for good is voted out: its round is void and the others go on without it."""

from __future__ import annotations

import random
from collections.abc import Callable

import pytest

from p2pcards.bots.base import RandomBot
from p2pcards.crypto.envelope import parse
from p2pcards.sim.memnet import MemNet
from p2pcards.sim.table_game import make_table
from p2pcards.table.round import Stage

from test_lost_frames import finished_alike

LONGER = {"limit": 50}  # a game of a few rounds


def vote_gone(net: MemNet, out: int) -> None:
    """Every live seat's network layer finds seat `out` gone (its gone_after ran out)."""
    for i, peer in enumerate(net.peers):
        if i != out:
            net.send_as(i, peer.gone(out, net.now, f"{peer.names[out]} was missing for 10 s"))


def new_table(players: int, seed: int, **peer_args: bool) -> MemNet:
    """A seeded table of random bots, every seat ready to start."""
    rng = random.Random(seed)
    peers = make_table("crisp", players, LONGER, random.Random(rng.random()), **peer_args)
    return MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(players)], rng)


@pytest.mark.slow  # three whole rounds; going on without a seat is in the default run (the tests below)
def test_three_seats_go_on_as_two_and_finish_alike() -> None:
    net = new_table(3, 11)
    net.start()
    net.run(until=300.0, stop=lambda n: n.peers[2].round == 2 and n.peers[2].rs is not None
            and n.peers[2].rs.stage is Stage.PLAYING)
    before = tuple(net.peers[0].game.totals)  # round 1's totals: round 2 will be void
    assert any(before)
    net.dead.add(2)
    net.call_at(net.now + 10.0, lambda n: vote_gone(n, 2))
    net.run(until=net.now + 60.0)
    left = net.peers[:2]
    assert all(p.finished and p.stopped is None and not p.faults for p in left), [p.notes[-4:] for p in left]
    # Each voter hears of its own vote once, with its reason, and of the other's as a vote.
    votes = [n.detail for n in left[0].notes if n.kind == "missing"]
    assert votes[:2] == ["p2 was missing for 10 s: we vote it gone", "p1 votes p2 gone"] and "p0 votes p2 gone" not in votes
    assert left[0].successor == left[1].successor and left[0].successor is not None
    assert left[0].successor.names == ("p0", "p1")
    nxt = [p.next_peer() for p in left]
    assert all(p is not None for p in nxt)
    assert [p.game.totals for p in nxt if p] == [list(before[:2])] * 2  # round 2's scores do not count
    assert [p.game.rounds_done for p in left + [q for q in nxt if q]] == [1] * 4  # nor is round 2 played
    net2 = MemNet([p for p in nxt if p], [RandomBot(random.Random(i), 0.05) for i in range(2)], net.rng)
    net2.start()
    net2.run(until=net2.now + 600.0)
    for p in net2.peers:
        assert p.finished and not p.faults, p.notes[-4:]
        assert p.round >= 2  # the game went on from the void round, not from round 1
        assert p.game.rounds_done == p.round
    assert net2.peers[0].log_hash == net2.peers[1].log_hash
    assert net2.peers[0].game.totals == net2.peers[1].game.totals
    assert max(net2.peers[0].game.totals) >= LONGER["limit"]


def test_two_seats_without_one_end_the_game() -> None:
    net = new_table(2, 12)
    net.start()
    net.run(until=300.0, stop=lambda n: n.peers[1].rs is not None and n.peers[1].rs.stage is Stage.PLAYING)
    net.dead.add(1)
    net.call_at(net.now + 10.0, lambda n: vote_gone(n, 1))
    net.run(until=net.now + 60.0)
    peer = net.peers[0]
    assert peer.finished and peer.successor is None and not peer.faults
    assert any(n.kind == "over" and "too few seats" in n.detail for n in peer.notes)
    assert peer.round == 1 and peer.game.rounds_done == 0  # the void round was never played out


def pause(net: MemNet, seat: int, down: float) -> None:
    """Seat `seat` drops off the network now (frames to it are lost) and is back, as it was, `down` s later."""
    peer = net.peers[seat]
    net.crash(seat, down, lambda n: peer)


def playing(seat: int, rnd: int) -> Callable[[MemNet], bool]:
    def stop(net: MemNet) -> bool:
        rs = net.peers[seat].rs
        return net.peers[seat].round == rnd and rs is not None and rs.stage is Stage.PLAYING
    return stop


@pytest.mark.slow
def test_one_vote_alone_changes_nothing_and_the_voter_plays_on() -> None:
    net = new_table(3, 13)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    net.send_as(0, net.peers[0].gone(2, net.now, "p2 was missing"))  # seat 2 is still here, for seat 1
    net.run(until=net.now + 600.0)
    finished_alike(net)
    assert all(p.successor is None and p.round > 1 for p in net.peers)
    assert max(net.peers[0].game.totals) >= LONGER["limit"]


@pytest.mark.slow
def test_a_seat_back_before_every_vote_is_in_plays_on_and_the_standing_vote_counts_later() -> None:
    net = new_table(3, 16)
    net.start()
    net.run(until=300.0, stop=playing(2, 1))
    pause(net, 2, 12.0)  # seat 2 drops off; seat 0 votes it gone at 10 s, seat 1 has not yet when it is back
    net.call_at(net.now + 10.0, lambda n: n.send_as(0, n.peers[0].gone(2, n.now, "p2 was missing for 10 s")))
    net.run(until=net.now + 300.0, stop=playing(1, 3))
    assert not any(p.finished or p.stopped or p.faults for p in net.peers)  # round 1 went on, then round 2
    before = tuple(net.peers[1].game.totals)  # round 3 will be void
    net.dead.add(2)  # now seat 2 is gone for good: seat 1's vote joins seat 0's, cast two rounds before
    net.call_at(net.now + 10.0, lambda n: n.send_as(1, n.peers[1].gone(2, n.now, "p2 was missing for 10 s")))
    net.run(until=net.now + 60.0)
    left = net.peers[:2]
    assert all(p.finished and not p.faults for p in left), [p.notes[-4:] for p in left]
    nxt = [p.next_peer() for p in left]
    assert left[0].successor == left[1].successor is not None
    assert [p.carry for p in nxt if p] == [(before[:2], 2)] * 2


@pytest.mark.slow
def test_a_voter_already_past_the_void_round_decides_alike_and_the_seat_voted_out_knows_it() -> None:
    net = new_table(3, 17)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    net.send_as(0, net.peers[0].gone(2, net.now, "p2 was missing"))  # a vote that stands, cast in round 1
    net.run(until=net.now + 600.0, stop=playing(1, 2))
    before = tuple(net.peers[1].game.totals)  # round 2 will be void
    # Seat 1 lacks seat 2's result of round 3 a while: it is still in round 2 when it votes, the others are in 3.
    net.tap = lambda s, r, f: None if (s, r) == (2, 1) and parse(f).envelope.type == "result" else f
    net.run(until=net.now + 600.0, stop=lambda n: n.peers[0].round == 3)
    net.tap = None
    assert net.peers[1].round == 2
    net.send_as(1, net.peers[1].gone(2, net.now, "p2 was missing for 10 s"))
    net.run(until=net.now + 60.0)
    p0, p1, p2 = net.peers
    assert all(p.finished and not p.faults for p in net.peers), [p.notes[-4:] for p in net.peers]
    assert p0.round == 3 and p1.round == 2  # seat 0 played on into round 3 and voids round 2 all the same
    assert p0.successor == p1.successor is not None and p2.successor is None
    assert [p.carry for p in (p0.next_peer(), p1.next_peer()) if p] == [(before[:2], 1)] * 2
    assert any("voted us gone" in n.detail for n in p2.notes)


def test_a_seat_gone_before_the_first_round_is_voted_out_and_the_game_starts_without_it() -> None:
    net = new_table(3, 14)
    net.dead.add(2)  # never says ready
    net.start()
    net.call_at(10.0, lambda n: vote_gone(n, 2))
    net.run(until=30.0)
    nxt = [p.next_peer() for p in net.peers[:2]]
    assert all(p is not None and p.carry == ((0, 0), 0) for p in nxt)
    assert nxt[0] is not None and nxt[0].cfg == net.peers[1].successor


@pytest.mark.slow
def test_a_peer_of_the_table_that_went_on_resumes_from_its_own_journal() -> None:
    net = new_table(3, 15, journal=True)
    net.start()
    net.run(until=300.0, stop=lambda n: n.peers[2].round == 2)
    net.dead.add(2)
    net.call_at(net.now + 10.0, lambda n: vote_gone(n, 2))
    net.run(until=net.now + 60.0)
    nxt = [p.next_peer() for p in net.peers[:2]]
    net2 = MemNet([p for p in nxt if p], [RandomBot(random.Random(i), 0.05) for i in range(2)], net.rng)
    net2.start()
    net2.run(until=net2.now + 300.0, stop=lambda n: n.peers[1].rs is not None and n.peers[1].rs.applied >= 4)
    old = net2.peers[1]
    records = list(old.journal or [])
    back = net.peers[1].next_peer(records)  # the first table's peer, resumed as well, names the same successor
    assert back is not None and back.carry == old.carry and back.round == old.round
    net2.crash(1, 2.0, lambda n: back)
    net2.run(until=net2.now + 600.0)
    for p in net2.peers:
        assert p.finished and not p.faults, p.notes[-4:]
    assert net2.peers[0].log_hash == net2.peers[1].log_hash
    assert net2.peers[0].game.totals == net2.peers[1].game.totals


def test_a_seat_whose_link_is_missing_is_left_to_the_vote_not_to_the_time_out() -> None:
    net = new_table(3, 11)
    net.start()
    net.run(until=300.0, stop=lambda n: n.peers[2].round == 2 and n.peers[2].rs is not None
            and n.peers[2].rs.stage is Stage.PLAYING)
    net.dead.add(2)
    start = net.now
    for i in (0, 1):  # their network layer sees seat 2's link end
        net.peers[i].absent(2, True, start)
    for t in range(1, 21):  # past TIMEOUT_S (15 s) of waiting on seat 2: a crash has its gone_after to come back
        for i in (0, 1):
            net.send_as(i, net.peers[i].tick(start + t))
            assert net.peers[i].stopped is None and not net.peers[i].faults, net.peers[i].notes[-2:]
    net.now = start + 25.0
    vote_gone(net, 2)
    net.run(until=net.now + 60.0)
    left = net.peers[:2]
    assert all(p.finished and p.stopped is None and not p.faults for p in left), [p.notes[-4:] for p in left]
    assert left[0].successor is not None and left[0].successor == left[1].successor


def votes_from_the_living(net: MemNet, *gone: int) -> None:
    """Every live seat's network layer finds each seat of `gone` gone, in turn."""
    for out in gone:
        for i, peer in enumerate(net.peers):
            if i != out and i not in net.dead:
                net.send_as(i, peer.gone(out, net.now, f"{peer.names[out]} was missing for 10 s"))


def go_on(net: MemNet, names: tuple[str, ...]) -> MemNet:
    """The table that goes on, which every seat that remains names alike, ready to start."""
    left = [p for i, p in enumerate(net.peers) if i not in net.dead]
    assert all(p.finished and p.stopped is None and not p.faults for p in left), [p.notes[-4:] for p in left]
    assert all(p.successor is not None and p.successor == left[0].successor for p in left)
    nxt = [p.next_peer() for p in left]
    assert all(p is not None and p.cfg.names == names for p in nxt)
    return MemNet([p for p in nxt if p], [RandomBot(random.Random(i), 0.05) for i in range(len(nxt))], net.rng)


@pytest.mark.slow
def test_two_seats_gone_at_once_are_put_out_together_and_the_rest_finish() -> None:
    net = new_table(4, 21)
    net.start()
    net.run(until=300.0, stop=playing(0, 2))
    before = tuple(net.peers[0].game.totals)  # round 2 will be void
    net.dead |= {1, 3}  # neither can vote the other gone
    net.call_at(net.now + 10.0, lambda n: votes_from_the_living(n, 1, 3))
    net.run(until=net.now + 60.0)
    assert all(any(n.detail == "p1, p3 are out: round 2 is void" for n in net.peers[i].notes) for i in (0, 2))
    net2 = go_on(net, ("p0", "p2"))
    assert [p.carry for p in net2.peers] == [((before[0], before[2]), 1)] * 2
    net2.start()
    net2.run(until=net2.now + 600.0)
    finished_alike(net2)
    assert max(net2.peers[0].game.totals) >= LONGER["limit"]


@pytest.mark.slow
def test_a_vote_one_seat_got_from_a_seat_then_gone_leads_every_seat_to_one_table() -> None:
    net = new_table(4, 22)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    # Seat 3 votes 2 gone; only seat 0 gets it before 3 is gone too. Seat 0 decides {2} alone; seat 1,
    # which voted 3 gone as well, follows seat 0's `out` once it has asked for 3's vote.
    net.cut = lambda s, r: (s, r) == (3, 1)
    net.send_as(3, net.peers[3].gone(2, net.now, "p2 was missing"))
    net.run(until=net.now + 0.05)
    net.dead |= {2, 3}
    net.send_as(1, net.peers[1].gone(3, net.now, "p3 was missing"))  # before 3's vote on 2 came its way
    net.call_at(net.now + 10.0, lambda n: votes_from_the_living(n, 2))
    net.run(until=net.now + 60.0)
    assert any(n.detail == "p0 says p2 is out" for n in net.peers[1].notes)
    net2 = go_on(net, ("p0", "p1", "p3"))
    net2.dead.add(2)  # p3, gone: the two others vote it out of this table in turn
    net2.start()
    net2.call_at(net2.now + 10.0, lambda n: votes_from_the_living(n, 2))
    net2.run(until=net2.now + 60.0)
    net3 = go_on(net2, ("p0", "p1"))
    net3.start()
    net3.run(until=net3.now + 600.0)
    finished_alike(net3)
