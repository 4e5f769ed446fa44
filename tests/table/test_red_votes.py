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
