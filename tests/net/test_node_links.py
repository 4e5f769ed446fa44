"""What a node does with what comes over its links before and as it is seated: rule breakers are cut."""

from __future__ import annotations

import asyncio
import socket
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from p2pcards.crypto.encoding import decode, encode
from p2pcards.crypto.envelope import GENESIS, Envelope, seal
from p2pcards.crypto.identity import generate
from p2pcards.errors import InputError, LinkBroken, MalformedMessage, Refused
from p2pcards.net import node as node_mod
from p2pcards.net.link import ADDRS, AGAIN, FRAME, Link, Links
from p2pcards.net.botpeer import BotPeer, run_bot_peer
from p2pcards.net.node import Node
from p2pcards.net.seat import Seat


def test_a_guest_that_links_but_never_joins_is_cut_so_its_place_is_free(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(node_mod, "JOIN_S", 0.3)

    async def main() -> list[str]:
        lost: list[str] = []
        async with Node(generate("host"), interfaces=["127.0.0.1"], mdns=False) as host:
            await host.host("crisp", {"limit": 10}, "t")
            squatter = Links(generate("eve"), None, lambda key: True, lambda *a: None,
                             on_lost=lambda link, why: lost.append(why))
            await squatter.dial([("127.0.0.1", host.links.port)])
            async with asyncio.timeout(5):
                while not lost:
                    await asyncio.sleep(0.05)
            assert not host.links.links  # the place is free again
            await squatter.close("done")
        return lost

    assert "no join within 0.3 s" in asyncio.run(main())[0]


def _seated(me_at: int = 2) -> tuple[Node, Any, list[bytes], list[tuple[str, object]]]:
    """A node seated (as far as its link handlers look) at seat `me_at` of 4, the host at seat 0."""
    me = generate("me")
    keys = [generate(f"s{i}").public for i in range(4)]
    keys[me_at] = me.public
    node = Node(me, interfaces=["127.0.0.1"], mdns=False)
    calls: list[tuple[str, object]] = []
    node.lobby = SimpleNamespace(host=keys[0])  # type: ignore[assignment]
    node.seat = SimpleNamespace(peer=SimpleNamespace(cfg=SimpleNamespace(keys=keys)),  # type: ignore[assignment]
                                take=lambda link, kind, payload: calls.append(("take", kind)),
                                frame=lambda payload: calls.append(("frame", payload)))
    return node, SimpleNamespace(key=keys[0], address="127.0.0.1"), keys, calls


def test_a_table_frame_reaches_the_seat_after_the_links_silences() -> None:
    node, host_link, keys, calls = _seated()
    sender = generate("s1")
    frame = seal(sender, Envelope(b"t" * 16, 1, sender.public, 0, GENESIS, "ready", {})).frame
    node._frame(host_link, FRAME, frame)
    node._frame(host_link, AGAIN, frame)
    assert calls == [("take", FRAME), ("take", AGAIN)]  # Seat.take tells the table of the silences, then takes it
    with pytest.raises(MalformedMessage):
        node._frame(host_link, AGAIN, b"not an envelope")  # sent again or not, garbage cuts the link


def test_a_frame_sent_again_before_we_are_seated_is_ignored_not_kept_nor_cut() -> None:
    node, host_link, keys, calls = _seated()
    node.seat = None
    sender = generate("s1")
    frame = seal(sender, Envelope(b"t" * 16, 1, sender.public, 0, GENESIS, "ready", {})).frame
    seat_link = SimpleNamespace(key=keys[1])
    node._frame(seat_link, AGAIN, frame)  # nothing was asked for, no round is under way
    node._frame(seat_link, FRAME, frame)  # a seat seated before us says ready: kept until we are
    assert node.early == [frame] and calls == []


@pytest.mark.parametrize("where, why", [
    ([[b"?" * 32, ["127.0.0.1"], 4000]], "names no seat"),
    (["key"], "not \\[key"),
    ({"k": 1}, "not a list"),
    ("seat1", "not a list"),
])
def test_the_seats_addresses_that_break_the_rules_cut_the_hosts_link(where: Any, why: str) -> None:
    node, host_link, keys, _ = _seated()
    with pytest.raises(MalformedMessage, match=why):
        node._seat_addresses(encode(where), "127.0.0.1")


@pytest.mark.parametrize("hosts, port", [
    (["127.0.0.1\x00"], 4000), (["example.org"], 4000), ([], 4000), (["10.0.0.1"] * 17, 4000),
    (["127.0.0.1"], 0), (["127.0.0.1"], 70000), (["127.0.0.1"], -1), ([1], 4000),
])
def test_a_seat_address_is_ip_literals_and_a_port(hosts: list[object], port: int) -> None:
    node, host_link, keys, _ = _seated()
    with pytest.raises(MalformedMessage):
        node._seat_addresses(encode([[keys[1], hosts, port]]), "127.0.0.1")


@pytest.mark.parametrize("via, hosts, kept", [
    ("192.168.7.2", ["127.0.0.1", "192.168.7.3"], ["192.168.7.3"]),  # loopback from a host elsewhere: our machine
    ("192.168.7.2", ["::1", "::ffff:127.0.0.2"], []),
    ("127.0.0.1", ["127.0.0.1", "::1"], ["127.0.0.1", "::1"]),  # a host on this machine: its seats may be too
    ("192.168.7.2", ["224.0.0.251", "255.255.255.255", "0.0.0.0", "::", "ff02::fb", "240.0.0.1"], []),
    ("", ["127.0.0.1", "fe80::1%eth0", "10.1.2.3"], ["fe80::1%eth0", "10.1.2.3"]),
])
def test_a_guest_dials_only_where_a_seat_can_be(via: str, hosts: list[str], kept: list[str]) -> None:
    """A hostile host cannot point its guests at their own machine, a broadcast or a multicast group."""
    node, _, keys, _ = _seated()
    assert node._seat_addresses(encode([[keys[1], hosts, 4001]]), via) == {keys[1]: [(h, 4001) for h in kept]}


def test_the_seats_addresses_come_once_and_name_only_the_seats_before_ours() -> None:
    async def main() -> None:
        node, host_link, keys, _ = _seated()
        node.links.dial = _no_dial  # type: ignore[method-assign]
        where = [[keys[0], ["127.0.0.1"], 4000], [keys[1], ["127.0.0.1", "::1"], 4001], [keys[3], ["127.0.0.1"], 4003]]
        node._frame(host_link, ADDRS, encode(where))
        await asyncio.sleep(0.05)
        assert node.dialled == {keys[0]: [("127.0.0.1", 4000)], keys[1]: [("127.0.0.1", 4001), ("::1", 4001)]}
        assert node.later == {keys[3]: [("127.0.0.1", 4003)]}  # kept, not dialled: for a comeback on another port
        with pytest.raises(LinkBroken, match="once"):
            node._frame(host_link, ADDRS, encode(where))

    asyncio.run(main())


def test_a_seats_link_says_where_it_listens_now_first_and_a_port_0_says_nothing() -> None:
    # A seat back on another port (its own taken) dials us: from its hello's port we learn where to dial it again.
    node, _, keys, _ = _seated()
    node.dialled = {keys[1]: [("10.0.0.1", 4001), ("127.0.0.1", 4001)]}
    node.later = {keys[3]: [("10.0.0.3", 4003)]}
    for key, address, port in ((keys[1], "127.0.0.1", 5001), (keys[3], "10.0.0.9", 5003), (keys[0], "10.0.0.7", 0)):
        node._learn(SimpleNamespace(key=key, address=address, hello=SimpleNamespace(port=port)))  # type: ignore[arg-type]
    assert node.dialled == {keys[1]: [("127.0.0.1", 5001), ("10.0.0.1", 5001)]}
    assert node.later == {keys[3]: [("10.0.0.9", 5003), ("10.0.0.3", 5003)]}


def test_the_seats_addresses_before_the_seats_cut_the_hosts_link() -> None:
    node, host_link, keys, _ = _seated()
    node.seat = None
    with pytest.raises(LinkBroken, match="after the seats"):
        node._frame(host_link, ADDRS, encode([]))


async def _no_dial(*args: object, **kwargs: object) -> Link:
    raise LinkBroken("not in this test")


def test_a_bot_peer_that_never_links_to_every_seat_leaves_no_journal(tmp_path: Path,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """It never said ready: there is no game to come back to, and `peer --state` must not offer one."""
    monkeypatch.setattr(Seat.play, "__defaults__", (3600.0, 0.5, False))  # link_up_s: half a second

    async def main() -> None:
        async with Node(generate("host"), interfaces=["127.0.0.1"], mdns=False) as host, \
                Node(generate("deaf"), interfaces=["127.0.0.1"], mdns=False) as deaf:
            await host.host("crisp", {"limit": 10}, "t")
            await deaf.join([("127.0.0.1", host.links.port)])
            for server in deaf.links._servers:  # seat 1 takes no more links: seat 2 cannot dial it
                server.close()
            bot = BotPeer("random", "bot", peers=[("127.0.0.1", host.links.port)], interfaces=["127.0.0.1"],
                          mdns=False, state=str(tmp_path / "bot"))
            task = asyncio.create_task(run_bot_peer(bot))
            await host.wait_players(3)
            host.seat_table()
            with pytest.raises(LinkBroken, match="no link to deaf"):
                await task

    asyncio.run(main())
    assert list((tmp_path / "bot").iterdir()) == []


def test_a_guest_whose_hello_says_port_0_is_left_out_of_the_seats_addresses() -> None:
    async def main() -> None:
        async with Node(generate("host"), interfaces=["127.0.0.1"], mdns=False) as host, \
                Node(generate("eve"), interfaces=["127.0.0.1"], mdns=False) as eve, \
                Node(generate("bo"), interfaces=["127.0.0.1"], mdns=False) as bo:
            await host.host("crisp", {"limit": 10}, "t")
            sent: list[tuple[int, bytes]] = []
            broadcast = host.links.broadcast
            host.links.broadcast = lambda kind, payload, keys: (  # type: ignore[method-assign]
                sent.append((kind, payload)), broadcast(kind, payload, keys))[1]
            eve.links.port = 0  # its hello says it listens nowhere
            await eve.join([("127.0.0.1", host.links.port)])
            await bo.join([("127.0.0.1", host.links.port)])
            await asyncio.wait_for(host.wait_players(3), 5)
            host.seat_table()
            await asyncio.wait_for(bo.wait_seated(), 5)
            where = [decode(payload) for kind, payload in sent if kind == ADDRS]
            assert len(where) == 1 and [bytes(k) for k, _, _ in where[0]] == [bo.identity.public]
            await asyncio.sleep(0.2)
            assert host.identity.public in bo.links.links  # bo kept its link to the host

    asyncio.run(main())


def test_strangers_that_link_and_never_join_cannot_keep_a_guest_out_of_the_lobby() -> None:
    """`lobbyatk.py 47302 idle 20` (20 fresh keys that link to the host and send no join) held all 16 places of the
    lobby: `p2pcards peer --peer 127.0.0.1:47302` was refused ('no link: end of stream') and stopped, two guests
    alike, and the host waited for ever. Now the oldest link with no join makes room for a newcomer."""
    from p2pcards.table.lobby import MAX_GUESTS

    async def main() -> tuple[list[str], list[str]]:
        lost: list[str] = []
        async with Node(generate("host"), interfaces=["127.0.0.1"], mdns=False) as host:
            await host.host("crisp", {"limit": 10}, "t", seats=2)
            squatters = [Links(generate(f"eve{i}"), None, lambda key: True, lambda *a: None,
                               on_lost=lambda link, why: lost.append(why)) for i in range(MAX_GUESTS + 4)]
            for squatter in squatters:
                await squatter.dial([("127.0.0.1", host.links.port)])
            async with Node(generate("ada"), interfaces=["127.0.0.1"], mdns=False) as ada:
                await ada.join([("127.0.0.1", host.links.port)])
                await asyncio.wait_for(host.wait_players(2), 5)
                players = list(host.players)
                host.seat_table()
                await asyncio.wait_for(ada.wait_seated(), 5)
            for squatter in squatters:
                await squatter.close("done")
        return players, lost

    players, lost = asyncio.run(main())
    assert players == ["host", "ada"]
    assert any("made room for another guest: no join yet" in why for why in lost), lost


def test_a_join_the_host_refuses_is_told_why_in_the_goodbye() -> None:
    async def main() -> list[str]:
        async with Node(generate("host"), interfaces=["127.0.0.1"], mdns=False) as host:
            await host.host("crisp", {"limit": 10}, "t", seats=3)
            told = []
            async with Node(generate("ada"), interfaces=["127.0.0.1"], mdns=False) as ada, \
                    Node(generate("bo"), interfaces=["127.0.0.1"], mdns=False) as bo:
                for late in (ada, generate("host"), bo, generate("cy")):  # the second's name is taken; the fourth
                    if isinstance(late, Node):                             # finds the table full
                        await late.join([("127.0.0.1", host.links.port)])
                        continue
                    async with Node(late, interfaces=["127.0.0.1"], mdns=False) as refused:
                        await refused.join([("127.0.0.1", host.links.port)])
                        with pytest.raises(LinkBroken) as exc:
                            await asyncio.wait_for(refused.wait_seated(), 5)
                        told.append(str(exc.value))
                await asyncio.wait_for(host.wait_players(3), 5)
                assert host.players == ["host", "ada", "bo"]
                host.seat_table()
                await asyncio.wait_for(bo.wait_seated(), 5)
            return told

    taken, full = asyncio.run(main())
    assert taken.startswith("the host said goodbye: your join was refused: a name must be new"), taken
    assert full == "the host said goodbye: the table is full (3 seats)", full


def test_the_host_offers_more_seats_or_fewer_until_it_starts_never_fewer_than_have_joined() -> None:
    async def main() -> tuple[list[str], list[str], list[str]]:
        async with Node(generate("host"), interfaces=["127.0.0.1"], mdns=False) as host, \
                Node(generate("ada"), interfaces=["127.0.0.1"], mdns=False) as ada, \
                Node(generate("bo"), interfaces=["127.0.0.1"], mdns=False) as bo:
            await host.host("crisp", {"limit": 10}, "t", seats=2)
            await ada.join([("127.0.0.1", host.links.port)])
            await asyncio.wait_for(host.wait_players(2), 5)
            await bo.join([("127.0.0.1", host.links.port)])
            with pytest.raises(LinkBroken, match="the table is full"):
                await asyncio.wait_for(bo.wait_seated(), 5)
            refused = []
            for seats in (1, 9):
                with pytest.raises(InputError) as exc:
                    host.offer_seats(seats)
                refused.append(str(exc.value))
            host.offer_seats(3)
            async with Node(generate("bo"), interfaces=["127.0.0.1"], mdns=False) as again:
                await again.join([("127.0.0.1", host.links.port)])
                await asyncio.wait_for(host.wait_players(3), 5)
                with pytest.raises(InputError) as exc:
                    host.offer_seats(2)
                refused.append(str(exc.value))
                host.seat_table()
                await asyncio.wait_for(again.wait_seated(), 5)
                with pytest.raises(InputError) as exc:
                    host.offer_seats(4)
                refused.append(str(exc.value))
                for guest in (ada, again):
                    with pytest.raises(InputError) as exc:
                        guest.offer_seats(4)
                    refused.append(str(exc.value))
            return host.players, refused[:3], refused[3:]

    players, refused, not_ours = asyncio.run(main())
    assert players == ["host", "ada", "bo"]
    assert refused == ["a table of Crisp seats 2 to 8 players", "a table of Crisp seats 2 to 8 players",
                       "3 players have joined: the table cannot offer fewer seats"], refused
    assert not_ours == ["only the host sets the seats offered, before it starts the game"] * 3, not_ours


def test_a_guest_that_vanishes_from_the_lobby_frees_its_place_and_its_name() -> None:
    # A laptop killed after it joined and before the table is seated: the host must not seat a key it has
    # no link to (every seat would wait 30 s for a link to it, then give up), the guests already in the lobby
    # see it go, and the player who starts again (a new key) may join under the same name, which they take too.
    async def main() -> tuple[list[str], tuple[str, ...], tuple[str, ...]]:
        async with Node(generate("host"), interfaces=["127.0.0.1"], mdns=False) as host, \
                Node(generate("bo"), interfaces=["127.0.0.1"], mdns=False) as bo:
            await host.host("crisp", {"limit": 10}, "t", seats=3)
            async with Node(generate("ada"), interfaces=["127.0.0.1"], mdns=False) as ada:
                await ada.join([("127.0.0.1", host.links.port)])
                await bo.join([("127.0.0.1", host.links.port)])
                await asyncio.wait_for(host.wait_players(3), 5)
                ada.links.links[host.identity.public].writer.transport.abort()  # as SIGKILL does
                async with asyncio.timeout(5):
                    while len(host.players) == 3 or len(bo.players) == 3:  # bo is told (it was not: §6.1's `left`)
                        await asyncio.sleep(0.05)
            players = host.players
            assert bo.players == players
            async with Node(generate("ada"), interfaces=["127.0.0.1"], mdns=False) as again:
                await again.join([("127.0.0.1", host.links.port)])
                await asyncio.wait_for(host.wait_players(3), 5)
                host.seat_table()
                await asyncio.wait_for(again.wait_seated(), 5)
                await asyncio.wait_for(bo.wait_seated(), 5)
                assert bo.seat is not None and again.seat is not None
                assert bo.seat.peer.cfg.keys[2] == again.identity.public
                return players, bo.seat.peer.cfg.names, again.seat.peer.cfg.names

    players, names, again = asyncio.run(main())
    assert players == ["host", "bo"], players
    assert names == again == ("host", "bo", "ada")


def test_a_node_coming_back_listens_on_another_port_when_its_own_is_taken_and_only_then() -> None:
    async def main() -> None:
        squatter = socket.socket()
        squatter.bind(("127.0.0.1", 0))
        squatter.listen()
        port = squatter.getsockname()[1]
        try:
            with pytest.raises(OSError):  # a port asked for (--port) and taken: said in one line, as ever
                async with Node(generate("a"), interfaces=["127.0.0.1"], mdns=False, port=port):
                    pass
            async with Node(generate("b"), interfaces=["127.0.0.1"], mdns=False, port=port, comeback=True) as node:
                assert node.moved_from == port and node.links.port not in (0, port)
            async with Node(generate("c"), interfaces=["127.0.0.1"], mdns=False, comeback=True) as node:
                assert node.moved_from is None
        finally:
            squatter.close()

    asyncio.run(main())


def test_a_guest_that_left_the_lobby_joins_again_under_the_same_key_and_is_seated() -> None:
    # Over real links: Esc in a table's lobby, then Enter on that table again. The host refused the new join
    # ("two different signed messages at seq 0") and a second guest, holding the first join, refused the seats.
    ann = generate("ann")

    async def main() -> tuple[list[str], list[str]]:
        async with Node(generate("host"), interfaces=["127.0.0.1"], mdns=False) as host:
            await host.host("crisp", {"limit": 10}, "t", seats=3)
            where = [("127.0.0.1", host.links.port)]
            async with Node(generate("bob"), interfaces=["127.0.0.1"], mdns=False) as bob:
                await bob.join(where)
                async with Node(ann, interfaces=["127.0.0.1"], mdns=False) as first:
                    await first.join(where)
                    await host.wait_players(3)
                async with asyncio.timeout(10):
                    while len(host.players) == 3:  # ann's link ended: her place is free again
                        host.changed.clear()
                        await host.changed.wait()
                async with Node(ann, interfaces=["127.0.0.1"], mdns=False) as again:
                    await again.join(where)
                    async with asyncio.timeout(10):
                        await host.wait_players(3)
                        host.seat_table()
                        await asyncio.gather(bob.wait_seated(), again.wait_seated())
                    assert bob.seat is not None and again.seat is not None
                    return list(bob.seat.peer.names), list(again.seat.peer.names)

    assert asyncio.run(main()) == (["host", "bob", "ann"], ["host", "bob", "ann"])


def test_a_seat_that_went_on_admits_a_seat_of_a_table_it_sat_at_before_and_no_stranger() -> None:
    # A seat voted out while cut off, back on the network, links to ask for the frames of the table before: it was
    # refused, "not a seat at this table", and never learnt that it was voted out.
    node, _, keys, _ = _seated()
    old = generate("voted out").public
    node.seat = SimpleNamespace(names=dict.fromkeys(keys), sat_with=lambda key: key == old)  # type: ignore[assignment]
    assert node._admit(keys[1]) and node._admit(old) and not node._admit(generate("stranger").public)


def test_a_seat_cut_off_dials_the_seats_after_its_own_which_dial_it_no_more_once_they_went_on(
        monkeypatch: pytest.MonkeyPatch) -> None:
    async def main() -> tuple[list[bytes], bytes]:
        node, _, keys, _ = _seated(me_at=0)
        later = keys[2]
        node.later = {later: [("127.0.0.1", 1)]}
        peer = SimpleNamespace(cut_off=None)
        node.seat = SimpleNamespace(names=dict.fromkeys(keys), shell=SimpleNamespace(over=False),  # type: ignore[assignment]
                                    peer=peer)
        dialled: list[bytes] = []

        async def dial(addresses: object, key: bytes, attempts: int = 1) -> None:
            dialled.append(key)
            if peer.cut_off is None:
                raise LinkBroken("no link: connection refused")  # unlinked: a wrong dial here would come again
            node.links.links[key] = SimpleNamespace()  # type: ignore[assignment]  # linked: it dials no more
        monkeypatch.setattr(node.links, "dial", dial)
        monkeypatch.setattr(node_mod, "REDIAL_S", 0.01)
        task = asyncio.get_running_loop().create_task(node._dial_cut_off(later))
        await asyncio.sleep(0.3)  # 30 turns of REDIAL_S: a seat that dialled while not cut off would have, many times
        assert dialled == []  # not cut off: the later seat dials us, as ever
        peer.cut_off = "every other seat went missing at once"
        await asyncio.wait_for(task, 5)
        return dialled, later

    dialled, later = asyncio.run(main())
    assert dialled == [later]


def test_a_seat_back_from_its_journal_dials_a_later_seat_that_never_dialled_it_once_and_hears_a_refusal(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # A refusal at every address we know is the seat's machine's word that its process is gone (§14.9); one where
    # an ad names another place, or a dial that timed out, says nothing of the kind.
    async def main() -> tuple[list[bytes], list[bytes]]:
        node, _, keys, _ = _seated(me_at=0)
        later = keys[2]
        node.later = {later: [("127.0.0.1", 1)]}
        refused: list[bytes] = []
        node.seat = SimpleNamespace(shell=SimpleNamespace(over=False), refused=refused.append)  # type: ignore[assignment]
        dialled: list[bytes] = []
        errors = iter([Refused("no link: connection refused"), Refused("no link: connection refused"),
                       LinkBroken("no link: no answer (timed out)")])

        async def dial(addresses: object, key: bytes, attempts: int = 1) -> None:
            dialled.append(key)
            raise next(errors)
        monkeypatch.setattr(node.links, "dial", dial)
        monkeypatch.setattr(node_mod, "UNHEARD_S", 0.01)
        await node._dial_unheard(later)
        await node._dial_known(later, node.later[later], only=False)
        await node._dial_known(later, node.later[later])
        return dialled, refused

    dialled, refused = asyncio.run(main())
    assert len(dialled) == 3 and refused == [dialled[0]]


def test_a_seat_is_looked_for_only_where_the_freshest_ad_its_own_key_signed_says() -> None:
    # protocol.md §17: anyone may announce a seat's fingerprint. A forged ad is never dialled, a flood of them does
    # not crowd out the seat's own, and an older ad of the seat's played back does not replace its fresher one.
    from p2pcards.crypto.identity import fingerprint
    from p2pcards.net.discovery import MAX_SEEN, SERVICE, Discovery, TableAd

    node, _, keys, _ = _seated()
    seat = generate("seat")
    keys[1] = seat.public
    table = b"\x01" * 16
    node.links.table = table
    node.seat.tables = {table: None}  # type: ignore[union-attr]
    disco = Discovery(["127.0.0.1"])  # never entered: no socket, only what it has seen
    disco._bump = lambda: None  # type: ignore[method-assign]
    node.disco = disco
    disco.watch(keys[1:])

    def ad(addresses: tuple[str, ...], port: int, at: int, by: Any = seat, on: bytes = table) -> TableAd:
        made = TableAd(f"{by.name} {by.fingerprint[:5]}", on, "crisp", by.name, by.fingerprint, port, addresses,
                       role="peer").signed(by, at)
        return TableAd.from_txt(made.name, made.txt(), [])

    def heard(name: str, got: TableAd) -> None:
        disco._take(f"{name}.{SERVICE}", got)

    def strangers(first: int, last: int) -> None:  # ads naming the seat's fingerprint, stamped later, at their places
        for i in range(first, last):
            forged = ad(("127.0.0.1",), 20000 + i, 2000 + i, generate(f"x{i}"))
            heard(f"forged {i}", TableAd.from_txt(f"forged {i}", {**forged.txt(), "fpr": fingerprint(seat.public)},
                                                  []))

    strangers(0, 150)
    heard("unsigned", TableAd("unsigned", table, "crisp", "x", fingerprint(seat.public), 7000, ("127.0.0.1",),
                              role="peer"))
    assert node._announced(keys[1]) == []  # a stranger's word: never dialled
    heard("the seat", ad(("127.0.0.1", "224.0.0.251", "127.0.0.1", "127.0.0.2"), 5001, 1000))
    strangers(150, 300)
    assert len(disco.seen) == MAX_SEEN and node._announced(keys[1]) == [("127.0.0.1", 5001), ("127.0.0.2", 5001)]
    heard("the seat", ad(("127.0.0.1",), 5002, 3000))  # back on another port
    heard("replayed", ad(("127.0.0.1",), 5001, 1000))
    assert node._announced(keys[1]) == [("127.0.0.1", 5002)]
    heard("elsewhere", ad(("127.0.0.1",), 5003, 4000, on=b"\x02" * 16))  # its freshest word is on another table
    assert node._announced(keys[1]) == []
    assert node._announced(keys[2]) == []  # nobody announces it
    heard("the seat", ad(("127.0.0.1",), 5004, 5000))
    assert node._announced(keys[1]) == [("127.0.0.1", 5004)]
    disco.addresses = ["192.168.7.2"]  # our own ads are not on loopback: one that is names our machine, not a seat
    assert node._announced(keys[1]) == []


def test_a_seat_after_ours_is_dialled_where_its_ad_names_a_port_we_do_not_know_and_only_then(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # It dials us again itself, unless it came back on another port where it may not know where we are either (§17).
    async def main() -> list[list[tuple[str, int]]]:
        node, _, keys, _ = _seated(me_at=0)
        later = keys[2]
        node.later = {later: [("10.0.0.3", 4003)]}
        node.seat = SimpleNamespace(names=dict.fromkeys(keys), shell=SimpleNamespace(over=False),  # type: ignore[assignment]
                                    peer=SimpleNamespace(cut_off=None))
        ads = [("10.0.0.9", 4003)]  # one more address where it listened before: nothing new
        monkeypatch.setattr(node, "_announced", lambda key: list(ads))
        dialled: list[list[tuple[str, int]]] = []

        async def dial(addresses: list[tuple[str, int]], key: bytes, attempts: int = 1) -> None:
            dialled.append(addresses)
            if ("10.0.0.3", 5003) not in addresses:
                raise LinkBroken("no link")
            node.links.links[key] = SimpleNamespace()  # type: ignore[assignment]  # linked: it dials no more
        monkeypatch.setattr(node.links, "dial", dial)
        monkeypatch.setattr(node_mod, "REDIAL_S", 0.01)
        task = asyncio.get_running_loop().create_task(node._dial_cut_off(later))
        await asyncio.sleep(0.05)
        assert not dialled
        ads.insert(0, ("10.0.0.3", 5003))  # back on another port
        await asyncio.wait_for(task, 5)
        return dialled

    # Where we knew it first, then where it announces itself, each announced address on its own.
    assert asyncio.run(main()) == [[("10.0.0.3", 4003)], [("10.0.0.3", 5003)], [("10.0.0.9", 4003)]]


def test_announced_addresses_that_never_answer_do_not_hold_back_the_dials_where_we_know_a_seat(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # Anyone may announce a seat's fingerprint. Dialled one after another with the known address, 8 that accept and
    # never speak held each turn for up to 80 s: a seat back at its old address was voted gone meanwhile.
    async def main() -> int:
        node, _, keys, _ = _seated(me_at=2)
        earlier = keys[1]
        node.dialled = {earlier: [("10.0.0.1", 4001)]}
        node.seat = SimpleNamespace(names=dict.fromkeys(keys), shell=SimpleNamespace(over=False),  # type: ignore[assignment]
                                    peer=SimpleNamespace(cut_off=None))
        monkeypatch.setattr(node, "_announced", lambda key: [(f"10.0.9.{i}", 4001) for i in range(8)])
        known_dials = 0

        async def dial(addresses: list[tuple[str, int]], key: bytes, attempts: int = 1) -> None:
            nonlocal known_dials
            if addresses != [("10.0.0.1", 4001)]:
                await asyncio.Event().wait()  # a tarpit: accepts, never speaks
            known_dials += 1
            if known_dials < 3:
                raise LinkBroken("no link")
            node.links.links[key] = SimpleNamespace()  # type: ignore[assignment]  # back where we knew it
        monkeypatch.setattr(node.links, "dial", dial)
        monkeypatch.setattr(node_mod, "REDIAL_S", 0.01)
        monkeypatch.setattr(node_mod, "ANNOUNCED_S", 0.05)
        await asyncio.wait_for(node._redial(earlier), 10)
        return known_dials

    assert asyncio.run(main()) == 3


def test_the_host_takes_a_guest_off_the_table_every_guest_is_told_and_that_key_may_not_join_again() -> None:
    eve = generate("eve")

    async def main() -> tuple[str, list[str], list[str], str, tuple[str, ...]]:
        async with Node(generate("host"), interfaces=["127.0.0.1"], mdns=False) as host, \
                Node(generate("bo"), interfaces=["127.0.0.1"], mdns=False) as bo:
            await host.host("crisp", {"limit": 10}, "t", seats=3)
            where = [("127.0.0.1", host.links.port)]
            with pytest.raises(InputError):
                host.take_off(host.identity.public)  # the host is no guest
            async with Node(eve, interfaces=["127.0.0.1"], mdns=False) as taken:
                await taken.join(where)
                await bo.join(where)
                await asyncio.wait_for(host.wait_players(3), 5)
                host.take_off(eve.public)
                with pytest.raises(LinkBroken) as exc:
                    await asyncio.wait_for(taken.wait_seated(), 5)
                async with asyncio.timeout(5):
                    while len(bo.players) == 3:  # bo is told, as of any guest that left
                        await asyncio.sleep(0.05)
                told = bo.players
            async with Node(eve, interfaces=["127.0.0.1"], mdns=False) as again:  # the same key, started anew
                await again.join(where)
                with pytest.raises(LinkBroken) as refused:
                    await asyncio.wait_for(again.wait_seated(), 5)
            with pytest.raises(InputError):
                host.take_off(eve.public)  # no longer in the lobby
            async with Node(generate("eve"), interfaces=["127.0.0.1"], mdns=False) as other:  # another key, same name
                await other.join(where)
                await asyncio.wait_for(host.wait_players(3), 5)
                host.seat_table()
                await asyncio.wait_for(bo.wait_seated(), 5)
                assert bo.seat is not None
                return str(exc.value), told, host.players, str(refused.value), bo.seat.peer.cfg.names

    why, told, players, refused, seated = asyncio.run(main())
    assert why == refused == "the host said goodbye: you were taken off this table", (why, refused)
    assert told == ["host", "bo"] and players == ["host", "bo", "eve"] and seated == ("host", "bo", "eve")
