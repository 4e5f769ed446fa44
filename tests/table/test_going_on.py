"""A seat gone for good is voted out: its round is void and the others go on without it."""

from __future__ import annotations

import random

from p2pcards.bots.base import RandomBot
from p2pcards.sim.memnet import MemNet
from p2pcards.sim.table_game import make_table
from p2pcards.table.round import Stage

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
    assert left[0].successor == left[1].successor and left[0].successor is not None
    assert left[0].successor.names == ("p0", "p1")
    nxt = [p.next_peer() for p in left]
    assert all(p is not None for p in nxt)
    assert [p.game.totals for p in nxt if p] == [list(before[:2])] * 2  # round 2's scores do not count
    net2 = MemNet([p for p in nxt if p], [RandomBot(random.Random(i), 0.05) for i in range(2)], net.rng)
    net2.start()
    net2.run(until=net2.now + 600.0)
    for p in net2.peers:
        assert p.finished and not p.faults, p.notes[-4:]
        assert p.round >= 2  # the game went on from the void round, not from round 1
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


def test_one_vote_alone_changes_nothing() -> None:
    net = new_table(3, 13)
    net.start()
    net.run(until=300.0, stop=lambda n: n.peers[0].rs is not None and n.peers[0].rs.stage is Stage.PLAYING)
    net.send_as(0, net.peers[0].gone(2, net.now, "p2 was missing"))  # seat 2 is still here, for seat 1
    net.run(until=net.now + 30.0)
    assert not any(p.finished for p in net.peers) or all(p.successor is None for p in net.peers)
    assert all(p.successor is None for p in net.peers)


def test_a_seat_gone_before_the_first_round_is_voted_out_and_the_game_starts_without_it() -> None:
    net = new_table(3, 14)
    net.dead.add(2)  # never says ready
    net.start()
    net.call_at(10.0, lambda n: vote_gone(n, 2))
    net.run(until=30.0)
    nxt = [p.next_peer() for p in net.peers[:2]]
    assert all(p is not None and p.carry == ((0, 0), 0) for p in nxt)
    assert nxt[0] is not None and nxt[0].cfg == net.peers[1].successor


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
