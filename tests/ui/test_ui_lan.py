"""The lobby on a real network (zeroconf and TCP on loopback): a `p2pcards peer` host is listed, joined and played."""

from __future__ import annotations

import asyncio
import secrets
import subprocess
import sys
import time
from dataclasses import replace
from functools import partial

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pcards.crypto.identity import fingerprint, generate
from p2pcards.errors import InputError
from p2pcards.net.discovery import SERVICE, TableAd as NetAd, ask_for_table, wire_options
from p2pcards.ui.client import TableClient, plain
from p2pcards.ui.lobby import Lan, LobbyClient, NewTable, run_lobby_app
from p2pcards.ui.session import NetTable

from test_ui_play_bots import play_round_by_keys  # tests/ui is on sys.path (prepend mode)

PEER = [sys.executable, "-m", "p2pcards", "peer", "--interface", "127.0.0.1", "--attached"]


def test_a_bot_peer_quits_with_a_goodbye_when_its_launcher_goes() -> None:
    host = subprocess.Popen([*PEER, "--create", "--game", "crisp", "--players", "3", "--no-mdns"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert host.stdout is not None and "hosting" in host.stdout.readline()
        assert host.stdin is not None
        host.stdin.close()  # what the kernel does when the client that started it dies
        assert host.wait(timeout=20) == 0
        out = host.stdout.read()
        assert "quit on the end of standard input: said goodbye" in out, out
    finally:
        host.kill()


@pytest.mark.slow  # a whole round between processes
def test_the_lobby_lists_a_lan_table_joins_it_and_plays_a_round_by_keys() -> None:
    name = f"kitchen-{secrets.token_hex(3)}"
    host = subprocess.Popen([*PEER, "--create", "--game", "crisp", "--players", "2", "--limit", "50",
                             "--table", name, "--bot", "good", "--name", "Ann"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    me = generate("you")

    async def main() -> tuple[str, NetTable, dict[str, str]]:
        async with Lan(["127.0.0.1"]) as lan:
            lobby = LobbyClient(me, lan.directory, joinable=True)
            with create_pipe_input() as inp:
                task = asyncio.create_task(run_lobby_app(lobby, inp, DummyOutput(), lan=lan))
                deadline = time.time() + 30
                while name not in plain(lobby.lines(100, 30)) and time.time() < deadline:
                    await asyncio.sleep(0.2)
                listed = plain(lobby.lines(100, 30))
                while (ad := lobby.selected_table()) is not None and ad.name != name:
                    inp.send_text("\x1b[B")  # down
                    await asyncio.sleep(0.1)
                inp.send_text("\r")
                session = await asyncio.wait_for(task, 30)
            assert isinstance(session, NetTable)
            screens = await play_round_by_keys(session, TableClient(session), "crisp")
            return listed, session, screens

    try:
        listed, session, screens = asyncio.run(main())
        out, err = host.communicate(timeout=30)  # our leaving ends its table
    finally:
        host.kill()
    assert name in listed and "1 of 2 seats taken" in listed and "host Ann" in listed
    players = session.lobby_players()
    assert [n for n, _ in players] == ["Ann", "you"] and players[1][1] == me.fingerprint
    assert session.names == ("Ann", "you") and session.options == {"limit": 50, "discard_draw": False,
                                                                    "draw_seconds": None}
    assert "Round 1 revealed" in screens.get("reveal", screens["last"]) and "Scores" in screens["reveal"]
    assert "You drew: " in screens["table"]
    assert "[Ann]" in out, err
    assert "[Ann] aid: you turned the memory aid on" in out  # told across the LAN


class Responder(asyncio.DatagramProtocol):
    """An mDNS responder of our own on a free port: it answers every query with `ads` and, first, `noise` datagrams."""

    def __init__(self, ads: list[NetAd], noise: tuple[bytes, ...] = ()) -> None:
        self.ads, self.noise = ads, noise
        self.transport: asyncio.DatagramTransport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self.transport = transport  # type: ignore[assignment]  # a datagram endpoint's

    def datagram_received(self, data: bytes, addr: tuple[str, int]) -> None:
        from zeroconf import DNSOutgoing  # type: ignore[attr-defined]
        from zeroconf.asyncio import AsyncServiceInfo
        from zeroconf.const import _FLAGS_AA, _FLAGS_QR_RESPONSE

        assert self.transport is not None
        for junk in self.noise:
            self.transport.sendto(junk, addr)
        out = DNSOutgoing(_FLAGS_QR_RESPONSE | _FLAGS_AA)
        for ad in self.ads:
            info = AsyncServiceInfo(SERVICE, f"{ad.name}.{SERVICE}", port=ad.port, properties=ad.txt(),
                                    server="p2pc-test.local.")
            out.add_answer_at_time(info.dns_pointer(), 0)
            out.add_answer_at_time(info.dns_text(), 0)
        for packet in out.packets():
            self.transport.sendto(packet, addr)


@pytest.mark.slow
def test_a_table_joined_by_address_is_named_as_its_host_announces_it(monkeypatch: pytest.MonkeyPatch) -> None:
    # The name is not in the host's lobby frames: a guest that joined by address read "Ann's table at 127.0.0.1:PORT"
    # where every other guest read "den". The host's mDNS responder answers a one-shot query with its ad (§17).
    import p2pcards.ui.session

    async def main() -> tuple[str, str, int | None, int | None]:
        loop = asyncio.get_running_loop()
        ann = generate("Ann")
        host = NetTable(ann, interfaces=["127.0.0.1"], mdns=False)
        guest = NetTable(generate("Zoe"), interfaces=["127.0.0.1"], mdns=False)
        responder = Responder([])
        transport, _ = await loop.create_datagram_endpoint(lambda: responder, local_addr=("127.0.0.1", 0))
        port = transport.get_extra_info("sockname")[1]
        monkeypatch.setattr(p2pcards.ui.session, "ask_for_table", partial(ask_for_table, port=port, timeout=5),
                            raising=False)
        try:
            await host.open()
            await host.host("den")
            assert host.node is not None and host.node.lobby is not None
            lobby = host.node.lobby
            ad = NetAd("den", lobby.table, "crisp", "Ann", fingerprint(lobby.host), host.port, ("127.0.0.1",),
                       options=wire_options({}), taken=1, free=3).signed(ann, 1)
            # Another table's ad, one that another key signed, and one its host did not sign, name nothing.
            zoe = generate("Zoe")
            responder.ads = [replace(ad, name="other", table=b"\x01" * 16).signed(ann, 2),
                             replace(ad, name="fake", fingerprint=zoe.fingerprint).signed(zoe, 3),
                             replace(ad, name="unsigned", signature=b"")]
            await guest.open()
            await guest.join([("127.0.0.1", host.port)])
            unnamed, unknown = guest.table_name, guest.offered
            await guest.leave()
            responder.ads.append(ad)
            responder.noise = (b"", b"\x00" * 12, secrets.token_bytes(300))  # a responder never crashes on these
            again = NetTable(generate("Zoe"), interfaces=["127.0.0.1"], mdns=False)
            await again.open()
            await again.join([("127.0.0.1", host.port)])
            named, offered = again.table_name, again.offered
            await again.leave()
            return unnamed, named, unknown, offered
        finally:
            transport.close()
            await host.leave()

    unnamed, named, unknown, offered = asyncio.run(main())
    assert unnamed.startswith("Ann's table at 127.0.0.1:") and named == "den"
    assert unknown is None and offered == 4  # the seats the ad says its host offers: taken and free


def test_a_guest_sees_the_seats_its_host_offers_change_in_the_lobby() -> None:
    # The host offered its seats once, as it opened the table: three friends and a fourth who came late meant a new
    # table. Now + and - in its lobby change them, its ad says so, and its guests' lobbies follow the ad.
    name = f"den-{secrets.token_hex(3)}"

    async def offered_at(guest: NetTable, seats: int) -> int | None:
        async with asyncio.timeout(10):
            while guest.offered != seats:
                await guest.lobby_changed(0.2)
        return guest.offered

    async def main() -> list[int | None]:
        async with Lan(["127.0.0.1"]) as ours, Lan(["127.0.0.1"]) as theirs:
            host = await ours.host(generate("Ann"), NewTable(name, seats=3))
            try:
                assert theirs.disco is not None
                ad = await asyncio.wait_for(theirs.disco.wait_for_table(name), 10)
                guest = await theirs._join(generate("Zoe"), ad)
                try:
                    seen = [guest.offered]
                    host.offer(5)
                    seen.append(await offered_at(guest, 5))
                    host.offer(2)  # the two who are there: the table is full
                    seen.append(await offered_at(guest, 2))
                    with pytest.raises(InputError, match="a table of Crisp seats 2 to 8 players"):
                        host.offer(1)
                    return seen
                finally:
                    await guest.leave()
            finally:
                await host.leave()

    assert asyncio.run(main()) == [3, 5, 2]
