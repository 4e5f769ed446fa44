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
