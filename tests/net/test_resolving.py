"""Resolving announced names under a flood of names that never answer: on a fake clock (the pure queue), in one
Discovery with its queries faked, and on real multicast DNS in a network namespace of its own."""

from __future__ import annotations

import asyncio
import heapq
import json
import math
import os
import secrets
import shutil
import subprocess
import sys
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from types import SimpleNamespace

import pytest
from zeroconf import ServiceStateChange

from p2pcards.crypto.identity import generate
from p2pcards.net.discovery import SERVICE, Discovery, TableAd, wire_options
from p2pcards.net.resolving import (MAX_RESOLVING, MAX_TRIES, MAX_WAITING, RESOLVE_S, RETRY_S, WAIT_BOUND_S,
                                    ResolveQueue)

FLOOD = [f"flood {i}.{SERVICE}" for i in range(100_000)]


def simulate(offers: list[tuple[float, str]], answers: Callable[[str], bool], until: float = 600.0,
             queue: ResolveQueue | None = None) -> tuple[dict[str, list[float]], int]:
    """A ResolveQueue run on a fake clock: each name offered at its time; a query that `answers` ends at once, any
    other after RESOLVE_S. When each name was tried, and the most names that ever waited."""
    queue = queue or ResolveQueue()
    ends: list[tuple[float, int, str]] = []
    tried: dict[str, list[float]] = defaultdict(list)
    most = at = 0

    def start(now: float) -> None:  # as Discovery does after each offer and each query's end
        while (name := queue.start(now)) is not None:
            tried[name].append(now)
            heapq.heappush(ends, (now if answers(name) else now + RESOLVE_S, len(tried), name))

    while times := [t for t in (offers[at][0] if at < len(offers) else None, ends[0][0] if ends else None,
                                queue.wake_at()) if t is not None]:
        now = min(times)
        if now > until:
            break
        while ends and ends[0][0] <= now:
            name = heapq.heappop(ends)[2]
            queue.done(name, answers(name), now)
            start(now)
        while at < len(offers) and offers[at][0] <= now:
            queue.offer(offers[at][1], now)
            most = max(most, queue.waiting)
            at += 1
            start(now)
        start(now)
    return tried, most


def real(name: str) -> bool:
    return not name.startswith("flood")


def test_the_stated_bound_is_what_the_slots_and_the_queue_give() -> None:
    assert WAIT_BOUND_S == RESOLVE_S * math.ceil(MAX_WAITING / MAX_RESOLVING) == 12.0


def test_a_name_seen_after_100000_that_never_answer_is_tried_within_the_bound_in_bounded_memory() -> None:
    # The flood fills every slot and the queue; the real name comes after it and is the newest of all.
    tried, most = simulate([(0.0, n) for n in FLOOD] + [(1.0, "real")], real, until=120)
    assert most == MAX_WAITING  # never more, however many names came
    assert len(tried["real"]) == 1 and 1.0 < tried["real"][0] <= 1.0 + WAIT_BOUND_S
    assert len(tried) == MAX_RESOLVING + MAX_WAITING  # the rest of the flood was dropped untried, not held


def test_a_name_seen_during_a_flood_that_goes_on_is_tried_within_the_bound() -> None:
    # 50 new names a second that never answer, each tried again and again: every slot stays taken for the whole run.
    flood = [(i / 50, n) for i, n in enumerate(FLOOD[:6000])]
    offers = sorted(flood + [(30.011, "real at 30"), (90.011, "real at 90")])
    tried, most = simulate(offers, real, until=130)
    assert most <= MAX_WAITING
    for t in (30.011, 90.011):  # each waited for a slot, and not long
        assert t < tried[f"real at {t:.0f}"][0] <= t + WAIT_BOUND_S
    assert sum(len(t) for n, t in tried.items() if n.startswith("flood")) > 0.9 * MAX_RESOLVING * 130 / RESOLVE_S


def test_an_unanswered_name_is_tried_again_after_waits_that_double_then_forgotten_until_reported_again() -> None:
    waits = [RETRY_S * 2 ** k for k in range(MAX_TRIES - 1)]
    assert waits == [5, 10, 20, 40]
    tried, _ = simulate([(0.0, "flood lost"), (500.0, "flood lost")], real)
    expected = [0.0]
    for wait in waits:
        expected.append(expected[-1] + RESOLVE_S + wait)
    assert tried["flood lost"] == [*expected, 500.0, *(500.0 + t for t in expected[1:])]


def test_untried_names_go_first_and_the_most_unanswered_is_dropped_first() -> None:
    q = ResolveQueue(slots=1, room=3)
    q.offer("a", 0)
    assert q.start(0) == "a" and q.start(0) is None  # one slot
    q.done("a", False, 0)  # a waits RETRY_S
    q.offer("b", 1)
    q.offer("c", 1)
    assert q.waiting == 3
    q.offer("d", 1)  # one too many: a, unanswered once, goes, not an untried name
    assert q.waiting == 3 and q.wake_at() == 1
    q.offer("e", 1)  # only untried names wait: the oldest goes
    order = []
    while (name := q.start(100)) is not None:
        order.append(name)
        q.done(name, True, 100)
    assert order == ["c", "d", "e"]


def test_a_name_changed_while_resolved_is_resolved_again_and_one_gone_is_not_tried_again() -> None:
    q = ResolveQueue(slots=2)
    q.offer("a", 0)
    q.offer("b", 0)
    assert (q.start(0), q.start(0)) == ("a", "b")
    q.offer("a", 1)  # new records while its query runs
    q.forget("b")  # goodbye while its query runs
    q.done("a", True, 2)
    q.done("b", False, 2)
    assert q.start(2) == "a" and q.start(2) is None and q.wake_at() is None
    q.done("a", False, 3)
    assert q.wake_at() == 3 + RETRY_S
    q.offer("a", 4)  # reported changed while it waits: untried again, due at once
    assert q.wake_at() == 4
    q.forget("a")
    assert q.waiting == 0 and q.wake_at() is None and q.start(10) is None


ANN = generate("ann")


def table_ad(name: str) -> TableAd:
    """A table ad signed by its host (a lobby lists no other)."""
    return TableAd(name=name, table=secrets.token_bytes(16), game="crisp", host="ann", fingerprint=ANN.fingerprint,
                   port=4000, addresses=("127.0.0.1",), options=wire_options({"limit": 50}), taken=1, free=2).signed(ANN, 1)


def test_a_table_seen_while_names_that_never_answer_hold_every_slot_is_listed_once_a_slot_frees() -> None:
    # Before: every slot taken, the table's name was dropped, and never tried again until its record changed.
    async def main() -> tuple[str, ...]:
        disco = Discovery(["127.0.0.1"])
        disco.zc = SimpleNamespace(zeroconf=None)  # type: ignore[assignment]
        timed_out = asyncio.Event()

        async def resolve(name: str) -> bool:
            if name.startswith("flood"):
                await timed_out.wait()
                return False
            disco._take(name, table_ad(name[: -len(SERVICE) - 1]))
            return True

        disco._resolve = resolve  # type: ignore[method-assign]
        for name in [*FLOOD[:2 * MAX_RESOLVING], f"ann.{SERVICE}"]:
            disco._on_change(None, SERVICE, name, ServiceStateChange.Added)  # type: ignore[arg-type]
        for _ in range(5):
            await asyncio.sleep(0)
        assert not disco.seen
        timed_out.set()  # the flood's queries end unanswered: the untried names waiting, ours among them, go next
        async with asyncio.timeout(5):
            return tuple(t.name for t in await anext(ts async for ts in disco.tables() if ts))

    assert asyncio.run(main()) == ("ann",)


def test_discovery_tries_an_unanswered_name_again_once_its_wait_is_over_and_says_what_a_failing_query_raised() -> None:
    async def main() -> tuple[list[float], list[int], list[str], int]:
        loop = asyncio.get_running_loop()
        skew = 0.0
        clock = loop.time
        loop.time = lambda: clock() + skew  # type: ignore[method-assign]  # the loop's own clock, moved on at will
        errors: list[str] = []
        loop.set_exception_handler(lambda _, context: errors.append(str(context["exception"])))
        disco = Discovery(["127.0.0.1"])
        disco.zc = SimpleNamespace(zeroconf=None)  # type: ignore[assignment]
        tried: list[float] = []

        async def resolve(name: str) -> bool:
            if name == "broken":
                raise RuntimeError("a bug")
            tried.append(loop.time())
            return False

        disco._resolve = resolve  # type: ignore[method-assign]
        disco._on_change(None, SERVICE, "lost", ServiceStateChange.Added)  # type: ignore[arg-type]
        disco._on_change(None, SERVICE, "broken", ServiceStateChange.Added)  # type: ignore[arg-type]
        seen = []
        for wait in (0.0, RETRY_S - 0.5, 0.5):
            skew += wait
            await asyncio.sleep(0.01)
            seen.append(len(tried))
        return tried, seen, errors, disco._queue.busy

    tried, seen, errors, busy = asyncio.run(main())
    assert seen == [1, 1, 2] and tried[1] - tried[0] >= RETRY_S  # not before its wait, and then at once
    assert errors == ["a bug"] * 2 and busy == 0  # said (and tried again as unanswered); its slot is free again


# ------------------------------------------------------------ real multicast DNS, in a namespace of its own

FLAGS_ANSWER = 0x8400  # RFC 1035 §4.1.1: a response, authoritative (RFC 6762 §18.4)


async def flood_then_announce() -> dict[str, float | int | None]:
    """In this process's own network: 2 * MAX_RESOLVING names with no records flood a guest's browser, then a table is
    announced; how long after its announcement the guest lists it (None: not within WAIT_BOUND_S), and how many of
    the guest's tasks resolved names when it was announced."""
    from zeroconf import DNSOutgoing, DNSPointer  # type: ignore[attr-defined]

    from p2pcards.net.discovery import CLASS_IN, TYPE_PTR
    loop = asyncio.get_running_loop()
    async with Discovery(["127.0.0.1"]) as guest, Discovery(["127.0.0.1"]) as host:
        for disco in (guest, host):
            await disco.zc.zeroconf.async_wait_for_start()  # the guest browsing, the host with a socket to send on
        flood = DNSOutgoing(FLAGS_ANSWER)
        for name in FLOOD[:2 * MAX_RESOLVING]:
            flood.add_answer_at_time(DNSPointer(SERVICE, TYPE_PTR, CLASS_IN, 4500, name), 0)
        host.zc.zeroconf.async_send(flood)
        async with asyncio.timeout(RESOLVE_S):
            while len(guest._tasks) < MAX_RESOLVING:
                await asyncio.sleep(0.01)
        await host.announce(table_ad("real table"), ANN)
        announced, busy = loop.time(), len(guest._tasks)
        try:
            async with asyncio.timeout(WAIT_BOUND_S):
                await guest.wait_for_table("real table")
        except TimeoutError:
            return {"after": None, "busy": busy}
        return {"after": loop.time() - announced, "busy": busy}


def test_a_table_announced_on_real_mdns_while_a_flood_holds_every_slot_is_listed_within_the_bound() -> None:
    # The flood goes out on loopback: in a network namespace of its own, lest it reach other programs' browsers.
    if shutil.which("unshare") is None or shutil.which("ip") is None:
        pytest.skip("needs unshare (util-linux) and ip (iproute2) for a network namespace of its own")
    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(root), os.environ.get("PYTHONPATH")]))}
    done = subprocess.run(["unshare", "--net", "sh", "-c", 'ip link set lo up && exec "$0" "$1"', sys.executable,
                           __file__], capture_output=True, text=True, timeout=60, env=env, cwd=root)
    if done.returncode != 0 and "unshare failed" in done.stderr:
        pytest.skip(f"cannot make a network namespace here: {done.stderr.strip()}")
    assert done.returncode == 0, done.stderr
    got = json.loads(done.stdout.splitlines()[-1])
    assert got["busy"] >= MAX_RESOLVING  # every slot was taken by the flood when the table was announced
    assert got["after"] is not None and got["after"] <= WAIT_BOUND_S, got


if __name__ == "__main__":
    print(json.dumps(asyncio.run(flood_then_announce())))
