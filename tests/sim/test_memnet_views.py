"""The in-memory network hands a bot asked again, with nothing new at its peer, the view it built last time."""

from __future__ import annotations

import random

from p2pcards.bots.base import Bot, RandomBot, View
from p2pcards.games.base import Move
from p2pcards.sim.memnet import LinkModel, MemNet
from p2pcards.sim.table_game import make_table


class Checked:
    """A random bot that checks each view it is handed against the one its peer would build now."""

    def __init__(self, seat: int, rng: random.Random) -> None:
        self.seat, self.inner, self.net = seat, RandomBot(rng, 0.1), None
        self.asked, self.kept, self.last = 0, 0, None

    def choose(self, view: View) -> Move | None:
        assert self.net is not None
        assert view == self.net.peers[self.seat].view(), "a bot was handed a view its peer no longer has"
        self.asked += 1
        self.kept += view is self.last
        self.last = view
        return self.inner.choose(view)


def test_a_bot_asked_again_gets_its_peers_view_as_it_is_now() -> None:
    peers = make_table("crisp", 3, {"limit": 5}, random.Random(3))
    bots = [Checked(s, random.Random(s)) for s in range(3)]
    net = MemNet(peers, list[Bot | None](bots), random.Random(5), LinkModel(delay=0.02, jitter=0.01))
    for bot in bots:
        bot.net = net  # type: ignore[assignment]
    net.call_at(4.0, lambda n: n.crash(1, 2.0, lambda n2: n2.peers[1]))  # a seat away and back meanwhile
    net.start()
    net.run(until=60.0)
    assert all(p.game.round_no >= 1 for p in net.peers)
    asked, kept = sum(b.asked for b in bots), sum(b.kept for b in bots)
    assert kept > asked // 2, f"only {kept} of {asked} views were kept: the test checks little"
