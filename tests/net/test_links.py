"""Links on real loopback sockets: only a proven key at the right table gets a link; rule breakers are cut at once."""

from __future__ import annotations

import asyncio
import secrets
import time
import socket
import struct
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from p2pcards.crypto.encoding import encode
from p2pcards.crypto.identity import Identity, generate
from p2pcards.errors import LinkBroken, MalformedMessage, Refused
from p2pcards.net import link as link_mod
from p2pcards.net.handshake import Hello, check_proof, new_hello, prove
from p2pcards.net.link import BEAT, FRAME, HELLO, PROOF, Link, Links, pack, read_frame

LOCAL = "127.0.0.1"


class Side:
    """One peer's Links, recording what it received and lost."""

    def __init__(self, identity: Identity, table: bytes, allowed: set[bytes]) -> None:
        self.frames: list[bytes] = []
        self.lost: list[tuple[str, str]] = []
        self.quiet: list[bool] = []
        self.links = Links(identity, table, allowed.__contains__, self._frame, on_lost=self._lost,
                           on_quiet=lambda link, quiet: self.quiet.append(quiet))

    def _frame(self, link: Link, kind: int, payload: bytes) -> None:
        if kind != FRAME:
            raise LinkBroken(f"kind {kind}")
        self.frames.append(payload)

    def _lost(self, link: Link, why: str) -> None:
        self.lost.append((link.hello.key.hex()[:8], why))


def run(main: Callable[[], Awaitable[None]]) -> None:
    asyncio.run(asyncio.wait_for(main(), 30))


async def until(cond: Callable[[], bool], within: float = 5.0) -> None:
    async with asyncio.timeout(within):
        while not cond():
            await asyncio.sleep(0.01)


async def pair(table: bytes | None = None) -> tuple[Side, Side, Identity, Identity]:
    a_id, b_id = generate("ann"), generate("bob")
    table = table or secrets.token_bytes(16)
    a = Side(a_id, table, {b_id.public})
    b = Side(b_id, table, {a_id.public})
    port = await a.links.listen([LOCAL])
    await b.links.dial([(LOCAL, port)], a_id.public)
    await until(lambda: b_id.public in a.links.links)
    return a, b, a_id, b_id


def test_two_seats_link_and_frames_flow_both_ways() -> None:
    async def main() -> None:
        a, b, a_id, b_id = await pair()
        a.links.broadcast(FRAME, b"to bob", [b_id.public])
        b.links.send(a_id.public, FRAME, b"to ann")
        await until(lambda: a.frames == [b"to ann"] and b.frames == [b"to bob"])
        await b.links.close("done")
        await until(lambda: bool(a.lost))
        assert "goodbye" in a.lost[0][1]
        await a.links.close("done")

    run(main)


def test_a_goodbye_reason_reaches_us_with_no_control_character() -> None:
    # The reason is anyone's text, shown to the player and printed by `p2pcards peer`: an ANSI escape in it
    # must not reach a terminal as one (it is shown escaped).
    async def main() -> None:
        a, b, a_id, b_id = await pair()
        b.links.links[a_id.public].send(link_mod.BYE, "\x1b[2J\x1b]0;pwned\x07\r\nYOU WON\u202e".encode())
        await until(lambda: bool(a.lost))
        why = a.lost[0][1]
        assert why.isprintable() and "YOU WON" in why and "\\x1b[2J" in why, why
        await a.links.close("done")
        await b.links.close("done")

    run(main)


def test_a_long_goodbye_is_cut_at_a_character_boundary() -> None:
    # §18.1: a goodbye's reason is UTF-8 of at most 200 bytes; cut byte-wise, "é" * 150 ended in half an "é"
    # (and a lone surrogate in an error's text raised out of close).
    async def main() -> None:
        a_id, b_id = generate("ann"), generate("bob")
        table = secrets.token_bytes(16)
        a = Side(a_id, table, {b_id.public})
        port = await a.links.listen([LOCAL])
        reader, writer, _, theirs = await raw(port)
        mine = new_hello(table, b_id.public, 0).to_bytes()
        writer.write(pack(HELLO, mine) + pack(PROOF, prove(b_id, "dialer", theirs, mine)))
        assert (await read_frame(reader, 100))[0] == PROOF
        await until(lambda: b_id.public in a.links.links)
        a.links.links[b_id.public].close("x" + "é" * 150 + "\udc80", goodbye=True)
        while (frame := await read_frame(reader, 1000))[0] != link_mod.BYE:
            pass
        assert frame[1].decode() == "x" + "é" * 99 and len(frame[1]) == 199
        writer.close()
        await a.links.close("done")

    run(main)


def test_frames_sent_together_go_in_one_write_and_arrive_one_by_one_in_order() -> None:
    async def main() -> None:
        a, b, a_id, b_id = await pair()
        link = a.links.links[b_id.public]
        writes: list[bytes] = []
        write = link.writer.write
        link.writer.write = lambda data: (writes.append(data), write(data))[1]  # type: ignore[method-assign]
        a.links.send_all(b_id.public, FRAME, [b"one", b"two", b"three"])
        a.links.send_all(b_id.public, FRAME, [])  # nothing to send: no write
        await until(lambda: b.frames == [b"one", b"two", b"three"])
        assert len(writes) == 1 and link.frames_out == 3
        await a.links.close("done")
        await b.links.close("done")

    run(main)


def test_a_stranger_with_a_valid_key_gets_no_link() -> None:
    async def main() -> None:
        a_id, stranger = generate("ann"), generate("eve")
        table = secrets.token_bytes(16)
        a = Side(a_id, table, set())
        port = await a.links.listen([LOCAL])
        eve = Side(stranger, table, {a_id.public})
        with pytest.raises(LinkBroken):
            await eve.links.dial([(LOCAL, port)])
        await until(lambda: bool(a.links.refused))
        assert not a.links.links and "not a seat" in a.links.refused[-1]
        await a.links.close("done")
        await eve.links.close("done")

    run(main)


def test_a_dialler_at_another_table_is_refused() -> None:
    async def main() -> None:
        a_id, b_id = generate("ann"), generate("bob")
        a = Side(a_id, secrets.token_bytes(16), {b_id.public})
        port = await a.links.listen([LOCAL])
        b = Side(b_id, secrets.token_bytes(16), {a_id.public})
        with pytest.raises(LinkBroken, match="another table"):
            await b.links.dial([(LOCAL, port)])
        assert not a.links.links
        await a.links.close("done")

    run(main)


def test_a_dial_every_address_refuses_says_so_and_one_that_answers_wrongly_does_not() -> None:
    # A refusal is the other machine's word that nothing listens there (a process gone, not our network lost).
    async def main() -> None:
        a, _, _, b_id = await pair()
        with socket.socket() as s:
            s.bind((LOCAL, 0))
            shut = s.getsockname()[1]  # bound, never listening: a dial there is refused
            with pytest.raises(Refused, match="connection refused"):
                await a.links.dial([(LOCAL, shut), (LOCAL, shut)], b_id.public)
            with pytest.raises(LinkBroken) as caught:  # the other end answered: no word that nothing is there
                await a.links.dial([(LOCAL, shut), (LOCAL, a.links.port)], b_id.public)
            assert not isinstance(caught.value, Refused)
        await a.links.close("done")
    run(main)


async def raw(port: int) -> tuple[asyncio.StreamReader, asyncio.StreamWriter, Hello, bytes]:
    reader, writer = await asyncio.open_connection(LOCAL, port)
    kind, theirs = await read_frame(reader, 1000)
    assert kind == HELLO
    return reader, writer, Hello.parse(theirs), theirs


async def closed_by_peer(reader: asyncio.StreamReader) -> bool:
    """True when the peer closes the connection within a few seconds (whatever it sent first)."""
    try:
        async with asyncio.timeout(6):
            while await reader.read(1 << 16):
                pass
    except (ConnectionError, TimeoutError):
        return False
    return True


def test_a_replayed_handshake_is_dropped_at_once() -> None:
    async def main() -> None:
        a_id, b_id = generate("ann"), generate("bob")
        table = secrets.token_bytes(16)
        a = Side(a_id, table, {b_id.public})
        port = await a.links.listen([LOCAL])
        # Bob's real handshake, recorded as an eavesdropper sees it.
        reader, writer, hello_a, theirs = await raw(port)
        mine = new_hello(table, b_id.public, 0).to_bytes()
        recorded = pack(HELLO, mine) + pack(PROOF, prove(b_id, "dialer", theirs, mine))
        writer.write(recorded)
        kind, proof = await read_frame(reader, 100)
        check_proof(a_id.public, "listener", theirs, mine, proof)
        await until(lambda: b_id.public in a.links.links)
        writer.close()
        # Replayed on a new connection: ann's nonce is fresh, so the old proof fails.
        reader, writer, _, _ = await raw(port)
        writer.write(recorded)
        assert await closed_by_peer(reader)
        assert "replay" in a.links.refused[-1]
        await a.links.close("done")

    run(main)


@pytest.mark.parametrize("attack", ["4 GiB prefix", "garbage", "deep nesting", "empty frame", "wrong kind"])
def test_rule_breakers_are_closed_during_the_handshake(attack: str) -> None:
    payloads = {
        "4 GiB prefix": struct.pack(">I", 0xFFFFFFFF) + b"x" * 100,
        "garbage": secrets.token_bytes(300),
        "deep nesting": pack(HELLO, b"\x91" * 200 + b"\xc0"),
        "empty frame": struct.pack(">I", 0),
        "wrong kind": pack(FRAME, b"table traffic before a handshake"),
    }

    async def main() -> None:
        a = Side(generate("ann"), secrets.token_bytes(16), set())
        port = await a.links.listen([LOCAL])
        reader, writer, _, _ = await raw(port)
        writer.write(payloads[attack])
        assert await closed_by_peer(reader)
        assert not a.links.links
        await a.links.close("done")

    run(main)


def test_a_seat_that_breaks_framing_after_the_handshake_is_cut_and_reported() -> None:
    async def main() -> None:
        a, b, a_id, b_id = await pair()
        link = b.links.links[a_id.public]
        link.writer.write(struct.pack(">I", 0xFFFFFFFF))
        await until(lambda: bool(a.lost))
        assert "cap" in a.lost[0][1]
        assert b_id.public not in a.links.links
        await a.links.close("done")
        await b.links.close("done")

    run(main)


@pytest.mark.slow  # seconds of real time: a heartbeat time-out
def test_a_silent_seat_is_reported_at_once_and_cut_when_it_stays_silent(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_mod, "SILENT_S", 0.5)
    monkeypatch.setattr(link_mod, "HEARTBEAT_S", 0.1)
    monkeypatch.setattr(link_mod, "DEAD_S", 2.0)

    async def main() -> None:
        a, b, a_id, b_id = await pair()
        for task in list(b.links.links[a_id.public]._tasks):  # bob's process freezes: no heartbeats
            task.cancel()
        await until(lambda: a.quiet == [True], within=2)
        assert not a.lost  # quiet is not gone: a busy peer may speak again
        b.links.send(a_id.public, FRAME, b"back")
        await until(lambda: a.quiet == [True, False] and a.frames == [b"back"])
        await until(lambda: bool(a.lost), within=5)
        assert "silent for 2 s" in a.lost[0][1]
        await a.links.close("done")
        await b.links.close("done")

    run(main)


def test_a_seat_that_was_itself_stopped_does_not_report_the_others_missing(monkeypatch: pytest.MonkeyPatch) -> None:
    # A laptop asleep (SIGSTOP, then SIGCONT): on waking, its heartbeat timer fired before it read what the
    # others had sent meanwhile, and its player saw "Bob is missing: no heartbeat", then "Bob is back", for
    # every other seat, though they had been there all along and it was the one away.
    monkeypatch.setattr(link_mod, "SILENT_S", 0.3)
    monkeypatch.setattr(link_mod, "HEARTBEAT_S", 0.05)

    async def main() -> None:
        a, b, a_id, b_id = await pair()
        await asyncio.sleep(0.2)
        time.sleep(0.6)  # the whole process stops: both ends of the pair are away together
        await asyncio.sleep(0.3)
        assert not a.quiet and not b.quiet and not a.lost and not b.lost
        await a.links.close("done")
        await b.links.close("done")

    run(main)


def test_heartbeats_keep_a_quiet_link_alive(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_mod, "SILENT_S", 0.5)
    monkeypatch.setattr(link_mod, "HEARTBEAT_S", 0.1)

    async def main() -> None:
        a, b, a_id, b_id = await pair()
        await asyncio.sleep(1.5)
        assert not a.lost and not b.lost and not a.quiet and not b.quiet
        assert a.links.links[b_id.public].bytes_in >= 5 * 5  # heartbeats: 5 bytes each, never frames
        assert a.links.links[b_id.public].frames_in == 0
        await a.links.close("done")
        await b.links.close("done")

    run(main)


def test_many_idle_connections_cost_nothing_and_never_become_links(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_mod, "HANDSHAKE_S", 1.0)

    async def main() -> None:
        a, b, a_id, b_id = await pair()
        idle = [await asyncio.open_connection(LOCAL, a.links.port) for _ in range(300)]
        a.links.broadcast(FRAME, b"still here", [b_id.public])
        await until(lambda: b.frames == [b"still here"])
        assert set(a.links.links) == {b_id.public}
        # Every idle one is closed by the handshake time-out (or at once, past MAX_PENDING).
        results = await asyncio.gather(*(closed_by_peer(r) for r, _ in idle))
        assert all(results)
        for _, w in idle:
            w.close()
        await a.links.close("done")
        await b.links.close("done")

    run(main)


def test_a_hello_is_exactly_its_fields() -> None:
    hello = new_hello(b"t" * 16, bytes(32), 7)
    assert Hello.parse(hello.to_bytes()) == hello
    for bad in ({"v": 1, "table": b"t", "key": bytes(32), "nonce": bytes(32), "port": 1},  # before R frames
                {"v": 2, "table": b"t", "key": bytes(32), "nonce": bytes(32), "port": 1},  # reveals named no deck
                {"v": 3, "table": b"t", "key": bytes(32), "nonce": bytes(32), "port": 1},  # no left in the lobby
                {"v": 5, "table": b"t", "key": bytes(32), "nonce": bytes(32), "port": 1},
                {"v": 4, "table": b"t", "key": bytes(31), "nonce": bytes(32), "port": 1},
                {"v": 4, "table": b"t", "key": bytes(32), "nonce": bytes(32), "port": 70000},
                {"v": 4, "table": b"t", "key": bytes(32), "nonce": bytes(32)}):
        with pytest.raises(Exception, match="hello|version"):
            Hello.parse(encode(bad))  # type: ignore[arg-type]
    with pytest.raises(MalformedMessage, match="link version 3; this peer speaks 4"):
        Hello.parse(encode({"v": 3, "table": b"t", "key": bytes(32), "nonce": bytes(32), "port": 1}))


def test_heartbeat_kind_is_never_delivered() -> None:
    async def main() -> None:
        a, b, a_id, b_id = await pair()
        b.links.send(a_id.public, BEAT)
        b.links.send(a_id.public, FRAME, b"x")
        await until(lambda: a.frames == [b"x"])
        await a.links.close("done")
        await b.links.close("done")

    run(main)


def test_a_flooding_seat_does_not_starve_another() -> None:
    async def main() -> None:
        table = secrets.token_bytes(16)
        ids = [generate(n) for n in ("ann", "bob", "cat")]
        keys = {i.public for i in ids}
        a, b, c = (Side(i, table, keys - {i.public}) for i in ids)
        port = await a.links.listen([LOCAL])
        await b.links.dial([(LOCAL, port)], ids[0].public)
        await c.links.dial([(LOCAL, port)], ids[0].public)
        await until(lambda: len(a.links.links) == 2)
        for _ in range(2000):
            b.links.send(ids[0].public, FRAME, b"f" * 1000)
        await asyncio.sleep(0)
        c.links.send(ids[0].public, FRAME, b"from cat")
        await until(lambda: len(a.frames) == 2001, within=20)
        assert a.frames.index(b"from cat") < 2000  # served in turn, not after the whole flood
        for side in (a, b, c):
            await side.links.close("done")

    run(main)


def test_shutting_down_mid_handshake_logs_nothing() -> None:
    errors: list[dict[str, object]] = []

    async def main() -> None:
        asyncio.get_running_loop().set_exception_handler(lambda loop, context: errors.append(context))
        a_id = generate("ann")
        a = Side(a_id, secrets.token_bytes(16), set())
        port = await a.links.listen([LOCAL])
        reader, writer = await asyncio.open_connection(LOCAL, port)
        await read_frame(reader, 4096)  # its hello: the handshake waits on ours
        await a.links.close("done")
        for task in asyncio.all_tasks() - {asyncio.current_task()}:
            task.cancel()  # what asyncio.run does to whatever is left on the way out
        await asyncio.sleep(0.05)
        writer.close()

    asyncio.run(main())
    assert errors == []


def _stop_reading(side: Side, key: bytes) -> Link:
    """`side` freezes on its link to `key`: it reads nothing more and sends no heartbeat."""
    frozen = side.links.links[key]
    for task in list(frozen._tasks):
        task.cancel()
    return frozen


def _small_send_buffer(link: Link) -> None:
    """The kernel holds little of what we send, so the rest waits in the link's own buffer."""
    sock = link.writer.get_extra_info("socket")
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 4096)


def test_a_link_closed_on_a_peer_that_reads_nothing_lets_go_of_its_socket(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_mod, "CLOSE_S", 0.3)

    async def main() -> None:
        a, b, a_id, b_id = await pair()
        _stop_reading(b, a_id.public)
        link = a.links.links[b_id.public]
        _small_send_buffer(link)
        link.send_all(FRAME, [bytes(50_000)] * 40)  # 2 MB: under the backlog cap, far over what the sockets hold
        await asyncio.sleep(0.1)
        assert link.writer.transport.get_write_buffer_size() > 0
        # Leaving says goodbye behind what is unsent; the socket is cut once CLOSE_S is up, not held for ever.
        await asyncio.wait_for(a.links.close("done"), 3)
        assert link.writer.transport.get_write_buffer_size() == 0
        await b.links.close("done")

    run(main)


def test_a_link_too_slow_for_its_backlog_is_cut_at_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_mod, "MAX_BACKLOG", 1 << 20)
    monkeypatch.setattr(link_mod, "CLOSE_S", 30.0)  # a cut link does not wait for it

    async def main() -> None:
        a, b, a_id, b_id = await pair()
        _stop_reading(b, a_id.public)
        link = a.links.links[b_id.public]
        _small_send_buffer(link)
        link.send_all(FRAME, [bytes(50_000)] * 40)
        assert link.closed is not None and "too slow" in link.closed and a.lost
        assert b_id.public not in a.links.links
        await asyncio.wait_for(link.wait_closed(), 3)
        assert link.writer.transport.get_write_buffer_size() == 0
        await a.links.close("done")
        await b.links.close("done")

    run(main)


def test_a_connection_whose_handshake_the_loops_end_cancels_at_once_logs_no_traceback() -> None:
    """A seat that finished its game while 900 connections flooded its port printed "Exception in callback
    StreamReaderProtocol.connection_made…: CancelledError" with a traceback: asyncio's server (3.11) makes a task
    of a coroutine handler, and asks that task for its exception when it is done; one that the loop's end
    cancelled before its first step raised CancelledError there. The handler is now a plain function whose
    handshake task is ours (cancelled and awaited by `close`). Here asyncio's server is played step by step."""
    logged: list[str] = []

    async def main() -> None:
        loop = asyncio.get_running_loop()
        loop.set_exception_handler(lambda loop, context: logged.append(context["message"]))
        links = Side(generate("ann"), secrets.token_bytes(16), set()).links
        port = await links.listen([LOCAL])
        reader, writer = await asyncio.open_connection(LOCAL, port)
        for _ in range(3):
            res: object = links._accepted(reader, writer)  # type: ignore[func-returns-value]  # what asyncio does
            if asyncio.iscoroutine(res):
                task = loop.create_task(res)
                task.add_done_callback(lambda task: task.exception())
            for task in asyncio.all_tasks() - {asyncio.current_task()}:
                task.cancel()  # the loop's end, before the handshake's first step
            await asyncio.sleep(0.05)
        writer.close()
        await links.close("done")

    asyncio.run(main())
    assert logged == []


def test_with_no_port_given_a_seat_listens_below_the_machines_ephemeral_range(tmp_path: Path) -> None:
    # The system's own pick is a port its outgoing connections also take: one of them could hold it while the seat
    # is down, and the seat could not come back where the others dial it.
    ranges = tmp_path / "ip_local_port_range"
    ranges.write_text("20000\t60999\n")
    ports = link_mod.listen_ports(50, ranges)
    assert ports[-1] == 0 and all(10000 <= p < 20000 for p in ports[:-1]) and len(set(ports)) > 10
    assert all(10000 <= p < 32768 for p in link_mod.listen_ports(50, tmp_path / "none")[:-1])  # unknown: below IANA's
    ranges.write_text("10010 60999\n")
    assert link_mod.listen_ports(20, ranges) == [0]  # no room below it: the system's choice

    async def main() -> None:
        side = Side(generate("ann"), secrets.token_bytes(16), set())
        port = await side.links.listen([LOCAL])
        first = int(link_mod.EPHEMERAL_RANGE.read_text().split()[0]) if link_mod.EPHEMERAL_RANGE.exists() else 32768
        assert 10000 <= port < min(first, 32768)
        await side.links.close("done")
    run(main)


def test_a_port_taken_is_passed_over_unless_it_was_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    taken = socket.create_server((LOCAL, 0))
    busy = taken.getsockname()[1]
    monkeypatch.setattr(link_mod, "listen_ports", lambda: [busy, busy, 0])

    async def main() -> None:
        side = Side(generate("ann"), secrets.token_bytes(16), set())
        port = await side.links.listen([LOCAL])
        assert port != busy and len(side.links._servers) == 1
        await side.links.close("done")
        again = Side(generate("bob"), secrets.token_bytes(16), set())
        with pytest.raises(OSError):  # a seat coming back must listen where it did: no other port will do
            await again.links.listen([LOCAL], busy)
        assert again.links._servers == [] and again.links.port == 0
    try:
        run(main)
    finally:
        taken.close()


def test_a_link_says_whether_its_other_end_closed_it_or_our_own_network_lost_it() -> None:
    # protocol.md §14.9: an end of stream or a reset came over our network; unreachable or timed out did not.
    import errno

    class Failing:
        def __init__(self, code: int) -> None:
            self.code = code

        async def readexactly(self, n: int) -> bytes:
            raise OSError(self.code, "failed")

    async def main() -> tuple[list[bool], list[type[BaseException]]]:
        lost: list[bool] = []
        a, b = generate("a"), generate("b")
        table = b"t" * 16
        la = Links(a, table, lambda key: True, lambda *x: None, on_lost=lambda link, why: lost.append(link.by_them))
        lb = Links(b, table, lambda key: True, lambda *x: None)
        port = await la.listen(["127.0.0.1"])
        await lb.dial([("127.0.0.1", port)], a.public)
        async with asyncio.timeout(5):
            while b.public not in la.links:
                await asyncio.sleep(0.01)
        await lb.close("test over")  # its goodbye, then its end of stream
        async with asyncio.timeout(5):
            while not lost:
                await asyncio.sleep(0.01)
        await la.close("test over")
        kinds: list[type[BaseException]] = []
        for code in (errno.ENETUNREACH, errno.ETIMEDOUT, errno.ECONNRESET):
            try:
                await read_frame(Failing(code), 10)  # type: ignore[arg-type]
            except LinkBroken as exc:
                kinds.append(type(exc))
        return lost, kinds

    lost, kinds = asyncio.run(main())
    assert lost == [True]
    assert kinds == [link_mod.NetworkLost, link_mod.NetworkLost, LinkBroken]


def test_a_port_where_nobody_listens_is_said_in_plain_words() -> None:
    """Joining by address where nothing listened read "[Errno 111] Connect call failed ('127.0.0.1', …)"."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: refused

        async def main() -> str:
            links = Links(generate("a"), b"t" * 16, lambda key: True, lambda *x: None)
            try:
                await links.dial([("127.0.0.1", port)], attempts=2, pause=0.01)
            except LinkBroken as exc:
                return str(exc)
            finally:
                await links.close("test over")
            return "linked"

        said = asyncio.run(main())
    assert said == f"no link: 127.0.0.1:{port}: connection refused (tried 2 times)"


def test_a_host_that_does_not_resolve_and_a_silent_listener_are_said_in_plain_words(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(link_mod, "HANDSHAKE_S", 0.2)

    async def main() -> tuple[str, str]:
        silent = await asyncio.start_server(lambda r, w: None, "127.0.0.1", 0)  # accepts, never speaks
        port = silent.sockets[0].getsockname()[1]
        links = Links(generate("a"), b"t" * 16, lambda key: True, lambda *x: None)
        said: list[str] = []
        for where in [("nosuch.invalid", 4000), ("127.0.0.1", port)]:
            try:
                await links.dial([where])
            except LinkBroken as exc:
                said.append(str(exc))
        await links.close("test over")
        silent.close()
        return said[0], said[1]

    unresolved, silent = asyncio.run(main())
    assert "unknown error" not in unresolved and "nosuch.invalid:4000: " in unresolved  # it read "unknown error -2"
    assert silent.endswith(": no answer to the handshake (timed out)")  # it read "127.0.0.1:PORT: " and nothing
