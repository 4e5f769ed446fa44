"""A seat cut off from every other seat at once (its own Wi-Fi lost) is no witness of its own (protocol.md §14.9):
it votes them gone but decides nothing, says its own network looks lost, and never ends the game as if it were
over; the seats that still reach each other vote it out and go on."""

from __future__ import annotations

from test_going_on import finished_alike, new_table, playing

from p2pcards.crypto.envelope import parse
from p2pcards.sim.memnet import MemNet
from p2pcards.table.outputs import CUT_OFF, Cut, Send


def cut(net: MemNet, seat: int) -> None:
    """Seat `seat` loses its network now: every frame to or from it is lost, and every network layer finds it so."""
    net.cut = lambda s, r: seat in (s, r)
    for i, peer in enumerate(net.peers):
        for j in range(len(net.peers)):
            if j != i and seat in (i, j):
                peer.absent(j, True, net.now + 0.1 * j)  # each link goes quiet at its own moment, within a second


def vote(net: MemNet, voter: int, seats: list[int]) -> list[bytes]:
    """Seat `voter`'s network layer finds `seats` missing for gone_after: the frames it signs."""
    peer = net.peers[voter]
    sent: list[bytes] = []
    for seat in seats:
        out = peer.gone(seat, net.now, f"{peer.names[seat]} was missing for 10 s (no heartbeat)")
        sent += [o.frame for o in out if isinstance(o, Send)]
        net.send_as(voter, out)
    return sent


def types(frames: list[bytes]) -> list[str]:
    return [parse(f).envelope.type for f in frames]


def test_a_seat_cut_off_decides_nothing_and_gives_up_unfinished_while_the_others_go_on() -> None:
    net = new_table(3, 21)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    cut(net, 0)
    net.run(until=net.now + 10.0)
    signed = vote(net, 0, [1, 2])
    lone = net.peers[0]
    assert types(signed) == ["gone", "gone"]  # no `out`: before the fix it decided {p1, p2} and ended the game
    assert not lone.finished and lone.stopped is None and lone.successor is None
    assert lone.cut_off is not None and "our own network was lost" in lone.cut_off
    said = [n.detail for n in lone.notes if n.kind == "missing"][-1]
    assert said.startswith("every other seat went missing at once (p1, p2): it looks like our own network was lost")
    assert not any(n.kind == "over" for n in lone.notes)
    for voter in (1, 2):
        vote(net, voter, [0])
    net.run(until=net.now + 5.0)
    for peer in net.peers[1:]:  # they reach each other: they put p0 out and go on
        assert peer.finished and peer.successor is not None and peer.successor.names == ("p1", "p2"), peer.notes[-3:]
    out = lone.give_up(net.now + 30.0)
    assert types([o.frame for o in out if isinstance(o, Send)]) == ["leave"]
    assert lone.stopped is not None and lone.stopped.startswith(CUT_OFF) and not lone.finished
    assert not any(n.kind == "over" or n.detail.startswith("winners") for n in lone.notes)


def test_a_seat_cut_off_that_comes_back_before_the_others_vote_plays_on_with_them() -> None:
    # Its votes stand, but it is not their witness: before the fix its `out` reached the others after the cut
    # healed and ended the game for all three ("p0 voted us and p2 gone: too few seats remain").
    net = new_table(3, 22)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    cut(net, 0)
    net.run(until=net.now + 10.0)
    assert types(vote(net, 0, [1, 2])) == ["gone", "gone"]
    net.cut = None
    for i, peer in enumerate(net.peers):
        for j in range(3):
            if j != i and 0 in (i, j):
                peer.absent(j, False, net.now)
    net.run(until=net.now + 900.0)
    finished_alike(net)
    assert all(p.successor is None and p.stopped is None for p in net.peers)
    assert net.peers[0].cut_off is not None  # said once; it stays no witness of its own votes


def test_seats_lost_one_by_one_or_that_left_are_no_cut_off() -> None:
    # Seats that went missing far apart, or that said `leave`: we are alone at the table, not cut off from it.
    net = new_table(3, 23)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    net.dead.update({1, 2})
    net.peers[0].absent(1, True, net.now)
    net.peers[0].absent(2, True, net.now + 20.0)
    net.run(until=net.now + 40.0)
    assert types(vote(net, 0, [1, 2])) == ["gone", "gone", "out"]
    lone = net.peers[0]
    assert lone.finished and lone.cut_off is None
    assert any(n.kind == "over" and "too few seats remain" in n.detail for n in lone.notes)
    net = new_table(3, 24)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    for seat in (1, 2):
        net.send_as(seat, net.peers[seat].leave(net.now, "bye"))
        net.dead.add(seat)
        net.peers[0].absent(seat, True, net.now)
    net.run(until=net.now + 5.0)
    assert net.peers[0].finished and net.peers[0].cut_off is None


def test_every_other_seat_whose_link_its_other_end_closed_at_once_is_no_cut_off_too_few_seats_remain() -> None:
    # Their processes killed at once: their kernels closed the links, which shows our own network working (§14.9).
    net = new_table(3, 25)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    net.dead.update({1, 2})
    net.peers[0].absent(1, True, net.now, closed=True)
    net.peers[0].absent(2, True, net.now + 0.1)  # one silent, one closed: still one that shows our network works
    net.run(until=net.now + 10.0)
    assert types(vote(net, 0, [1, 2])) == ["gone", "gone", "out"]
    lone = net.peers[0]
    assert lone.finished and lone.cut_off is None and lone.cut is None and lone.gave_up is None
    assert any(n.kind == "over" and "too few seats remain" in n.detail for n in lone.notes)


def test_how_a_seat_is_cut_off_and_gave_up_is_said_as_a_field_not_only_in_words() -> None:
    net = new_table(3, 26)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    cut(net, 0)
    net.run(until=net.now + 10.0)
    vote(net, 0, [1, 2])
    lone = net.peers[0]
    assert lone.cut is Cut.NETWORK_LOST and lone.gave_up is None
    assert [n.cut for n in lone.notes if n.cut is not None] == [Cut.NETWORK_LOST]
    lone.give_up(net.now + 30.0)
    assert lone.gave_up is Cut.NETWORK_LOST and lone.notes[-1].cut is Cut.NETWORK_LOST


def test_a_link_closed_by_the_other_end_is_journaled_so_a_replay_judges_the_cut_alike() -> None:
    from p2pcards.table.resume import absence, absent_record, closed_absence

    closed, silent = absent_record(1, True, 2.5, closed=True), absent_record(2, True, 2.5)
    assert absence(closed) == (1, True, 2.5) and absence(silent) == (2, True, 2.5)
    assert closed_absence(closed) and not closed_absence(silent)
    assert not closed_absence(absent_record(1, False, 3.0, closed=True))  # back: nothing closed
