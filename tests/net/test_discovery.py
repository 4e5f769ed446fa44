"""Discovery on real multicast DNS, loopback only: tables appear, change, clash and vanish with a goodbye."""

from __future__ import annotations

import asyncio
import contextlib
import secrets
from collections.abc import Callable
from types import SimpleNamespace

import pytest
from zeroconf import DNSOutgoing, ServiceStateChange  # type: ignore[attr-defined]
from zeroconf.const import _FLAGS_AA, _FLAGS_QR_RESPONSE
from zeroconf.asyncio import AsyncServiceInfo

from p2pcards.crypto.identity import generate
from p2pcards.errors import InputError, MalformedMessage
from p2pcards.net.discovery import MAX_SEEN, SERVICE, Discovery, TableAd, wire_options
from p2pcards.net.resolving import MAX_RESOLVING, MAX_WAITING, RESOLVE_S

LOOPBACK = ["127.0.0.1"]
ANN, BOB = generate("ann"), generate("bob")


def ad(name: str, **kw: object) -> TableAd:
    fields: dict[str, object] = dict(name=name, table=secrets.token_bytes(16), game="crisp", host="ann",
                                     fingerprint=ANN.fingerprint, port=4000,
                                     options=wire_options({"limit": 50, "draw_seconds": 30}), taken=1, free=2)
    fields.update(kw)
    return TableAd(**fields)  # type: ignore[arg-type]


async def seen(disco: Discovery, test: Callable[[tuple[TableAd, ...]], bool], within: float = 10) -> tuple[TableAd, ...]:
    async with asyncio.timeout(within):
        async for tables in disco.tables():
            if test(tables):
                return tables
    raise AssertionError("unreachable")


def test_a_table_appears_with_its_txt_changes_and_vanishes_on_goodbye() -> None:
    tag = secrets.token_hex(3)

    async def main() -> None:
        async with Discovery(LOOPBACK) as host, Discovery(LOOPBACK) as guest:
            ann = await host.announce(ad(f"ann {tag}"), ANN)
            tables = await seen(guest, lambda ts: any(t.name == f"ann {tag}" for t in ts))
            got = next(t for t in tables if t.name == f"ann {tag}")
            assert got.table == ann.ad.table and got.game == "crisp" and got.free == 2
            assert got.opts == {"limit": 50, "draw_seconds": 30} and got.addresses == ("127.0.0.1",)
            await ann.update(taken=3, free=0)
            await seen(guest, lambda ts: any(t.name == f"ann {tag}" and t.free == 0 for t in ts))
            await ann.withdraw()
            await seen(guest, lambda ts: all(t.name != f"ann {tag}" for t in ts), within=5)

    asyncio.run(main())


def test_leaving_the_block_says_goodbye_even_on_an_exception() -> None:
    tag = secrets.token_hex(3)

    async def main() -> None:
        async with Discovery(LOOPBACK) as guest:
            with pytest.raises(RuntimeError):
                async with Discovery(LOOPBACK) as host:
                    await host.announce(ad(f"bob {tag}"), ANN)
                    await seen(guest, lambda ts: any(t.name == f"bob {tag}" for t in ts))
                    raise RuntimeError("the host crashed")
            await seen(guest, lambda ts: all(t.name != f"bob {tag}" for t in ts), within=5)

    asyncio.run(main())


@pytest.mark.slow  # 15 s of real time: a browser's first queries must be over, or they would find the table again
def test_a_goodbye_forged_for_a_table_whose_host_is_still_there_hides_it_for_an_instant_only() -> None:
    # Before: anyone's goodbye took the table off every lobby until the browsers asked again, about an hour later.
    tag = secrets.token_hex(3)

    async def main() -> tuple[list[bool], list[bool]]:
        async with Discovery(LOOPBACK) as host, Discovery(LOOPBACK) as guest, Discovery(LOOPBACK) as evil:
            ann = await host.announce(ad(f"ann {tag}"), ANN)
            assert (before := await shown(guest, ann.ad.name, 15))[-1], before
            info = AsyncServiceInfo(SERVICE, f"{ann.ad.name}.{SERVICE}")
            assert await info.async_request(evil.zc.zeroconf, 3000)
            evil.zc.zeroconf.async_send(evil.zc.zeroconf.generate_service_broadcast(info, 0))  # its records, TTL 0
            forged = await shown(guest, ann.ad.name, 3, back=True)
            assert forged[-1] and False in forged, forged
            # Again, its pointer alone: as our first ask went, the host's answer came, and no one asks or answers the
            # same twice in a second. Before: hidden for an hour, as after one goodbye without the asks.
            again = DNSOutgoing(_FLAGS_QR_RESPONSE | _FLAGS_AA)
            again.add_answer_at_time(info.dns_pointer(override_ttl=0), 0)
            evil.zc.zeroconf.async_send(again)
            forged += await shown(guest, ann.ad.name, 4)
            await ann.withdraw()  # the host's own goodbye: nobody answers for the table then
            withdrawn = await shown(guest, ann.ad.name, RESOLVE_S + 1)
            return forged, withdrawn

    forged, withdrawn = asyncio.run(main())
    assert forged[-1] and forged.count(False) == 2, forged
    assert withdrawn[-1] is False, withdrawn


async def shown(disco: Discovery, name: str, seconds: float, back: bool = False) -> list[bool]:
    """Whether `disco` lists the table `name`, at once and each time that changes for `seconds` (other tables come
    and go meanwhile: tests run side by side on loopback); `back`: until it is listed again after it was not."""
    listed: list[bool] = []

    async def follow() -> None:
        async for tables in disco.tables():
            now = any(t.name == name for t in tables)
            if not listed or listed[-1] != now:
                listed.append(now)
            if back and listed[-1] and False in listed:
                return

    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(follow(), seconds)
    return listed


@pytest.mark.slow  # seconds of real time: mDNS probing
def test_a_name_clash_gets_a_new_name() -> None:
    tag = secrets.token_hex(3)

    async def main() -> None:
        async with Discovery(LOOPBACK) as a, Discovery(LOOPBACK) as b, Discovery(LOOPBACK) as guest:
            first = await a.announce(ad(f"same {tag}", port=4001), ANN)
            await seen(guest, lambda ts: any(t.name == f"same {tag}" for t in ts))
            second = await b.announce(ad(f"same {tag}", port=4002, host="bob", fingerprint=BOB.fingerprint), BOB)
            assert first.ad.name == f"same {tag}" and second.ad.name != first.ad.name
            tables = await seen(guest, lambda ts: sum(t.name.startswith(f"same {tag}") for t in ts) == 2)
            assert {t.port for t in tables if t.name.startswith(f"same {tag}")} == {4001, 4002}

    asyncio.run(main())


def test_a_txt_record_that_breaks_the_rules_is_no_table() -> None:
    good = ad("x").txt()
    assert TableAd.from_txt("x", good, ["127.0.0.1"]).free == 2
    for key, value in [("game", "chess"), ("port", "0"), ("opts", '{"limit":0}'), ("opts", '{"speed":1}'),
                       ("id", "zz"), ("id", "AB" * 16), ("id", "ab cd"), ("free", "99"), ("opts", "x" * 300),
                       ("pv", "2"), ("pv", "3"), ("pv", "5"), ("txtvers", "2"), ("fpr", "1234"), ("fpr", "12345 12345 12345 12345 1234x"),
                       ("fpr", "١٢٣٤٥ 12345 12345 12345 12345")]:
        with pytest.raises(MalformedMessage):
            TableAd.from_txt("x", {**good, key: value}, [])
    with pytest.raises(MalformedMessage):
        TableAd.from_txt("x", {k: v for k, v in good.items() if k != "fpr"}, [])


def test_an_ad_whose_names_could_write_to_a_terminal_is_no_table() -> None:
    # The lobby and `p2pcards peer` show the instance name and the host's name: from anyone on the LAN,
    # so neither may hold a control character (an ANSI escape, a newline) nor be longer than the rules say.
    good = ad("x").txt()
    for host in ["\x1b[2Jann", "ann\nfake line", "a" * 33, " ann", "ann\u202e"]:
        with pytest.raises(MalformedMessage):
            TableAd.from_txt("x", {**good, "host": host}, [])
    for name in ["\x1b]0;pwned\x07", "Ann's\ntable", "\x9b2J", "t" * 64, ""]:
        with pytest.raises(MalformedMessage):
            TableAd.from_txt(name, good, [])
    assert TableAd.from_txt("Ann's table-2", {**good, "host": "Zoë"}, []).host == "Zoë"


def test_every_txt_string_stays_within_dns_sd_limits() -> None:
    big = ad("y" * 63, host="h" * 32, options=wire_options({"limit": 500, "discard_draw": True, "draw_seconds": 60}))
    strings = [f"{k}={v}".encode() for k, v in big.txt().items()]
    assert all(len(s) <= 255 for s in strings) and sum(len(s) + 1 for s in strings) < 400


def test_an_unknown_interface_is_one_clear_error() -> None:
    with pytest.raises(InputError, match="no such IPv4 interface"):
        Discovery(["no-such-if0"])


def test_what_anyone_on_the_network_makes_us_resolve_and_keep_is_bounded() -> None:
    async def main() -> tuple[list[str], int, list[str]]:
        disco = Discovery(LOOPBACK)
        disco.zc = SimpleNamespace(zeroconf=None)  # type: ignore[assignment]
        resolved: list[str] = []
        go = asyncio.Event()

        async def resolve(name: str) -> bool:
            resolved.append(name)
            await go.wait()
            return True

        disco._resolve = resolve  # type: ignore[method-assign]
        for change in (ServiceStateChange.Added, ServiceStateChange.Updated, ServiceStateChange.Updated):
            disco._on_change(None, SERVICE, "a", change)  # type: ignore[arg-type]
        await asyncio.sleep(0)
        assert resolved == ["a"]  # one at a time per name ...
        go.set()
        await asyncio.sleep(0.01)
        assert resolved == ["a", "a"]  # ... and once more for what changed meanwhile, not once per change
        disco.seen = {f"t{i}": ad(f"t{i}") for i in range(MAX_SEEN)}
        disco._take("one too many", ad("one too many"))  # only tables kept: a new ad takes no table's place
        disco._take("t7", ad("t7", free=0, addresses=("127.0.0.1",)).signed(ANN, 1))
        await asyncio.sleep(0.01)
        return resolved, len(disco._tasks), list(disco.seen)

    resolved, running, kept = asyncio.run(main())
    assert resolved == ["a", "a"] and running == 0 and kept == [f"t{i}" for i in range(MAX_SEEN) if i != 7] + ["t7"]


def test_a_flood_of_100000_new_names_resolves_a_bounded_number_at_once_and_keeps_a_bounded_queue() -> None:
    # Each resolve is a task that asks the LAN for 3 s: a host sending thousands of new names must not make every
    # lobby on the network start thousands of them (memory, and a multicast query storm of our own), nor hold them all.
    async def main() -> tuple[int, int, int]:
        disco = Discovery(LOOPBACK)
        disco.zc = SimpleNamespace(zeroconf=None)  # type: ignore[assignment]
        go = asyncio.Event()

        async def resolve(name: str) -> bool:
            await go.wait()
            return True

        disco._resolve = resolve  # type: ignore[method-assign]
        most_running = most_waiting = 0
        for i in range(100_000):
            disco._on_change(None, SERVICE, f"flood{i}", ServiceStateChange.Added)  # type: ignore[arg-type]
            most_running = max(most_running, len(disco._tasks))
            most_waiting = max(most_waiting, disco._queue.waiting)
        go.set()
        while disco._tasks:  # every name still held is resolved in turn
            await asyncio.sleep(0)
        return most_running, most_waiting, disco._queue.busy + disco._queue.waiting

    most_running, most_waiting, left = asyncio.run(main())
    assert most_running == MAX_RESOLVING and most_waiting == MAX_WAITING and left == 0


class FakeZeroconf:
    """AsyncZeroconf as `announce` and `withdraw` use it: probing waits on `probed`, announcing never ends."""

    def __init__(self) -> None:
        self.services: dict[str, object] = {}
        self.zeroconf = SimpleNamespace(registry=SimpleNamespace(async_get_info_name=self.services.get))
        self.probed = asyncio.Event()
        self.goodbyes: list[str] = []

    async def async_register_service(self, info: SimpleNamespace, allow_name_change: bool) -> asyncio.Future[None]:
        await self.probed.wait()
        self.services[info.key] = info
        return asyncio.get_running_loop().create_future()  # the announcements: still being sent when cancelled

    async def async_unregister_service(self, info: SimpleNamespace) -> asyncio.Future[None]:
        del self.services[info.key]
        self.goodbyes.append(info.name)
        done = asyncio.get_running_loop().create_future()
        done.set_result(None)
        return done


@pytest.mark.parametrize("probed", [False, True])
def test_an_ad_cancelled_while_it_is_probed_or_announced_leaves_nothing_registered(probed: bool) -> None:
    # A node that closes within a second or two of being seated cancels its peer ad's task: registered by then
    # (announcing), it must say goodbye, or a client back in its lobby (one Discovery) answers for it still.
    async def main() -> FakeZeroconf:
        disco = Discovery(LOOPBACK)
        disco.zc = fake = FakeZeroconf()  # type: ignore[assignment]
        task = asyncio.create_task(disco.announce(ad("peer 12345", role="peer"), ANN))
        if probed:
            fake.probed.set()
        for _ in range(5):
            await asyncio.sleep(0)
        assert bool(fake.services) == probed
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert not disco._announced
        return fake

    fake = asyncio.run(main())
    assert not fake.services
    assert fake.goodbyes == ([f"peer 12345.{SERVICE}"] if probed else [])


def test_the_dns_numbers_of_the_one_shot_query_are_zeroconfs() -> None:
    """The query for a table's name uses RFC 1035's numbers of its own: zeroconf's are private and may move."""
    from zeroconf import const

    from p2pcards.net import discovery
    assert (discovery.CLASS_IN, discovery.FLAGS_QUERY, discovery.TYPE_PTR) == (
        const._CLASS_IN, const._FLAGS_QR_QUERY, const._TYPE_PTR)
