"""A time-out counts only the wait it names: a stall at one round's start is not the same stall as the next round's."""

from __future__ import annotations

import random

from p2pcards.bots.base import RandomBot
from p2pcards.sim.memnet import LinkModel, MemNet
from p2pcards.sim.table_game import make_table


def test_a_round_that_begins_as_the_last_one_did_starts_its_wait_afresh() -> None:
    # Seat 0 waits on seat 1's pass at each round's start (both keys in, its own pass made): the very
    # same seats and counts each time.
    # Its shell may tick only then (frames coming faster than every half second put a tick off,
    # as a busy TCP shell did): the wait of round 2 must not be counted from round 1's.
    rng = random.Random(3)
    peers = make_table("crisp", 2, {"limit": 30, "crisp_window_s": 0.5, "next_start_s": 0.2}, rng, timeout=3.0)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(2)], rng, link=LinkModel(delay=0.3, jitter=0))
    first, tick = peers[0], peers[0].tick
    waits_at_start: list[tuple[int, float]] = []

    def tick_only_at_a_rounds_start(now: float) -> list[object]:
        rs = first.rs
        if rs is not None and rs.decks.owed() == {1} and len(rs.decks.anns) == 2:
            waits_at_start.append((first.round, now))
            return tick(now)  # type: ignore[return-value]
        first.now = max(first.now, now)
        return []

    first.tick = tick_only_at_a_rounds_start  # type: ignore[method-assign]
    net.start()
    net.run(until=3000)
    rounds = sorted({r for r, _ in waits_at_start})
    assert len(rounds) >= 2, waits_at_start  # the same wait, seen in two rounds
    assert waits_at_start[-1][1] - waits_at_start[0][1] > first.timeout  # more than a time-out apart
    assert not first.faults and first.finished, [n.detail for n in first.faults]
