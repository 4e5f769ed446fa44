"""The in-memory network with a core per peer (`MemNet(cores=True)`): each call takes its CPU time on the clock."""

from __future__ import annotations

import gc
import itertools
import random
from collections.abc import Iterator

import pytest

from p2pcards.bots.base import Bot, RandomBot
from p2pcards.sim import memnet
from p2pcards.sim.memnet import LinkModel, MemNet
from p2pcards.sim.table_game import make_table

STEP = 0.01  # every call a peer makes takes this much CPU, by the fake clock below


@pytest.fixture
def fake_cpu(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """process_time moves on by STEP at each reading: every timed call took STEP seconds (and no collection ran)."""
    ticks = itertools.count()
    monkeypatch.setattr(memnet.time, "process_time", lambda: next(ticks) * STEP)
    gc.disable()
    yield
    gc.enable()


def _net(cores: bool, players: int = 3) -> MemNet:
    peers = make_table("crisp", players, {"limit": 5}, random.Random(7))
    bots: list[Bot | None] = [RandomBot(random.Random(i), 0.05) for i in range(players)]
    return MemNet(peers, bots, random.Random(1), LinkModel(delay=0.001, jitter=0.0), cores=cores)


@pytest.mark.parametrize("cores, handled", [(False, [0.0, 0.0]), (True, [0.0, STEP])])
def test_what_comes_while_a_peer_is_busy_waits_for_its_core(fake_cpu: None, cores: bool, handled: list[float]) -> None:
    net = _net(cores)
    seen: list[float] = []
    net.on_deliver = lambda n, i: seen.append(n.now) if i == 0 else None
    for _ in range(2):
        net.inject(0, b"\x00" * 100, at=0.0)  # junk: refused, at the cost of one call each
    net.run(until=1.0)
    assert seen == handled


@pytest.mark.parametrize("cores, arrives", [(False, 0.001), (True, STEP + 0.001)])
def test_what_a_peer_sends_leaves_when_its_call_ends(fake_cpu: None, cores: bool, arrives: float) -> None:
    net = _net(cores, players=2)
    seen: list[float] = []
    net.on_deliver = lambda n, i: seen.append(n.now)
    net.start()  # each says ready, a call of STEP: its frame arrives a link's delay after that call ends
    net.run(stop=lambda n: bool(seen))
    assert seen == [pytest.approx(arrives)]


def _draws(net: MemNet, count: int) -> list[float]:
    net.start()
    net.run(stop=lambda n: sum(len(lat.get("draw", [])) for lat in n.latency) >= count)
    return [t for lat in net.latency for t in lat.get("draw", [])]


def test_with_a_core_per_peer_a_draw_waits_on_every_call_on_its_way(fake_cpu: None) -> None:
    # Without cores, a draw costs its links only; with them, at least its own play, the prover's answer
    # to the order and the drawer taking that answer.
    assert all(t < STEP for t in _draws(_net(False), 3))
    assert all(t >= 3 * STEP for t in _draws(_net(True), 3))


def test_a_pause_of_the_collector_is_charged_one_nth_to_the_call_it_interrupts(fake_cpu: None) -> None:
    net = _net(True, players=4)

    def collected_once() -> list[object]:  # a call that a collection of one STEP interrupts: three STEPs in all
        net._collector("start", {})
        net._collector("stop", {})
        return []

    assert net._timed(0, collected_once) == []
    assert net.cpu[0] == pytest.approx(2 * STEP + STEP / 4)  # its own two, and a quarter of the collection
    assert net._free[0] == pytest.approx(net.cpu[0])  # its core is busy that long


def test_a_core_per_peer_plays_a_whole_game_alike() -> None:
    net = _net(True)
    net.start()
    net.run()
    assert all(p.finished for p in net.peers)
    assert len({p.log_hash for p in net.peers}) == 1
    assert all(first is not None for first in net.first_turn)
