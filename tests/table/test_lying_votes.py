"""Red-team: lying `gone` / `out` votes (protocol.md §14.9)."""

from __future__ import annotations

import pytest

from test_going_on import new_table, playing


@pytest.mark.parametrize("players", [3, 4])
def test_a_colluders_vote_signed_a_round_ahead_does_not_hang_the_table_when_its_partner_leaves(players: int) -> None:
    # Seat 1 leaves in round 1; its partner, seat 2, votes it gone in a round it has not reached (round 2), so the
    # void round is 2 and every honest peer must first finish round 1, which waits on the leaver for ever. The
    # honest peers voted the leaver gone (no time-out of it): before the fix they waited for ever, blaming no one.
    net = new_table(players, 13)
    cheat = net.peers[2]

    def vote_ahead(seat: int, why: str) -> None:  # its vote on the leaver, signed in the round after its own
        if seat not in cheat.seating.votes.by(cheat.me):
            cheat.emit.send(cheat.emit.round() + 1, "gone", {"seat": seat})

    cheat.seating.vote_gone = vote_ahead  # type: ignore[method-assign]
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    net.send_as(1, net.peers[1].leave(net.now, "losing"))
    net.dead.add(1)
    net.run(until=net.now + 60.0)
    for i, p in enumerate(net.peers):
        if i in (1, 2):
            continue
        assert p.stopped is not None and not p.finished, p.notes[-4:]
        assert [n.blame for n in p.faults] == ["p2"], p.faults


def test_one_seat_voting_every_other_seat_gone_ends_the_game_as_a_stop_would_and_names_the_voter() -> None:
    # A lone liar at three seats votes both live seats gone: {p1, p2} qualifies on its votes alone (only the
    # seats outside a set vote) and leaves one seat, too few. Like a false fault report (§15) it can end the
    # game for everyone, no more: no one is blamed, and the seats put out are told who voted, not that
    # "every other seat" did (p1 and p2 never voted each other gone).
    net = new_table(3, 13)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    for seat in (1, 2):
        net.send_as(0, net.peers[0].gone(seat, net.now, "a lie"))
    net.run(until=net.now + 60.0)
    for p in net.peers[1:]:
        assert p.finished and p.successor is None and not p.faults, p.notes[-4:]
        over = [n.detail for n in p.notes if n.kind == "over"]
        assert over == ["p0 voted us and " + ("p2" if p.me == 1 else "p1") + " gone: too few seats remain, the game ends"]
        assert not any(n.blame in ("p1", "p2") for n in p.notes if n.kind != "missing")


@pytest.mark.slow
def test_a_lone_vote_on_a_live_seat_changes_nothing() -> None:
    net = new_table(4, 14)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    net.send_as(0, net.peers[0].gone(3, net.now, "a lie"))
    net.send_as(0, net.peers[0].gone(2, net.now, "a lie"))
    played = [len(p.game.events) for p in net.peers]
    net.run(until=net.now + 8.0)
    assert all(p.successor is None and p.stopped is None and not p.faults for p in net.peers)
    assert not any(n.kind in ("void", "over") for p in net.peers for n in p.notes)  # nobody put out
    assert all(len(p.game.events) > before for p, before in zip(net.peers, played))  # and the game goes on


def test_an_out_naming_seats_nobody_else_voted_gone_is_no_decision() -> None:
    net = new_table(3, 15)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    cheat = net.peers[0]
    cheat.emit.send(cheat.round, "out", {"seats": [1]})  # no votes at all behind it
    net.send_as(0, cheat._flush())
    played = [len(p.game.events) for p in net.peers]
    net.run(until=net.now + 8.0)
    assert all(p.successor is None and p.stopped is None and not p.faults for p in net.peers[1:])
    assert not any(n.kind in ("void", "over") for p in net.peers[1:] for n in p.notes)  # nobody put out
    assert all(len(p.game.events) > before for p, before in zip(net.peers[1:], played[1:]))  # and the game goes on


def test_leaving_once_the_round_is_over_and_lost_voids_it_for_the_others_who_go_on_without_the_leaver() -> None:
    # Does leaving pay? A seat that sees the faces of a round it lost (the round is over, before the openings)
    # and leaves voids that round, but it is out of the game: the others replay the round without it.
    from p2pcards.table.round import Stage
    net = new_table(3, 21)
    net.start()
    net.run(until=600.0, stop=lambda n: n.peers[1].rs is not None and n.peers[1].rs.stage is Stage.SETTLING
            and n.peers[1].round == 1)
    before = tuple(net.peers[0].votes.totals_at[1])
    net.send_as(1, net.peers[1].leave(net.now, "lost"))
    net.dead.add(1)
    net.run(until=net.now + 30.0)
    left = [net.peers[0], net.peers[2]]
    assert all(p.finished and not p.faults and p.successor is not None for p in left), [p.notes[-3:] for p in left]
    assert left[0].successor == left[1].successor and left[0].successor.names == ("p0", "p2")  # type: ignore[union-attr]
    assert [p.seating.passed_on for p in left] == [((before[0], before[2]), 0)] * 2  # round 1 void for all
