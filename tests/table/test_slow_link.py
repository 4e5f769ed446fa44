"""A slow link costs its player time, never an honest orderer blame (protocol.md, "Timed calls over a slow link")."""

from __future__ import annotations

import pytest

from p2pcards.sim.memnet import LinkModel
from p2pcards.sim.table_game import play_table

# Wi-Fi at its worst: every frame takes 1.2 s, give or take 0.1 s.
SLOW = LinkModel(delay=1.2, jitter=0.1)


@pytest.mark.parametrize("game, options", [
    ("crisp", {"limit": 20}),
    pytest.param("crescendo", {}, marks=pytest.mark.slow),  # about 20 s
])
def test_a_slow_link_blames_no_one(game: str, options: dict[str, int]) -> None:
    net = play_table(game, 3, options, seed=4, link=SLOW, until=3000.0)
    for i, peer in enumerate(net.peers):
        assert peer.finished, (i, peer.stopped)
        assert not peer.faults
    assert len({peer.log_hash for peer in net.peers}) == 1


def test_one_seat_with_wifi_spikes_blames_no_one_and_costs_every_draw_its_round_trip() -> None:
    spikes = LinkModel(spike=0.2, spike_s=1.2)  # one frame in five to or from seat 1 takes 1.2 s more
    fast = play_table("crisp", 3, {"limit": 20}, seed=4)
    net = play_table("crisp", 3, {"limit": 20}, seed=4, seat_links={1: spikes})
    assert all(peer.finished and not peer.faults for peer in net.peers)
    assert len({peer.log_hash for peer in net.peers}) == 1
    draws = [t for seat in net.latency for t in seat.get("draw", [])]
    fast_draws = [t for seat in fast.latency for t in seat.get("draw", [])]
    # Every seat's shares are needed to show a drawn card, so a slow seat slows everyone's draws (by about
    # a spike: a move that a spike holds up is sent again after RESEND_S, which may overtake it).
    assert max(draws) > 1.0 > max(fast_draws)
