"""Whole games between real `p2pcards peer` processes on loopback: found by mDNS or given an address,
linked by authenticated TCP, and attacked by raw sockets while they play."""

from __future__ import annotations

import asyncio
import re
import secrets
import signal
import socket
import struct
import time
from pathlib import Path

import pytest
from net_procs import PeerProc, journal_moves, until

from p2pcards.crypto.identity import generate
from p2pcards.net.discovery import Discovery
from p2pcards.net.handshake import Hello, new_hello, prove
from p2pcards.net.link import HELLO, PROOF, pack

LOOP = ["--interface", "127.0.0.1", "--json"]


def agree(results: list[dict[str, object]]) -> None:
    ok = all(r["finished"] and r["stopped"] is None and not r["faults"] and r["rc"] == 0 for r in results)
    assert ok, "\n\n".join(str(r["output"]) for r in results)
    assert len({r["log"] for r in results}) == 1
    assert len({str(r["totals"]) for r in results}) == 1


def run_all(procs: list[PeerProc], within: float = 300) -> list[dict[str, object]]:
    try:
        results = [p.result(within) for p in procs]
        for r, p in zip(results, procs):
            r["output"] = p.text()  # shown when a test fails
        return results
    finally:
        for p in procs:
            p.stop()


@pytest.mark.slow
def test_three_peers_find_a_crisp_table_by_mdns_and_finish_the_game() -> None:
    table = f"crisp {secrets.token_hex(3)}"
    host = PeerProc("--create", "--game", "crisp", "--limit", "25", "--players", "3", "--table", table, *LOOP)
    guests = [PeerProc("--table", table, "--bot", bot, *LOOP) for bot in ("good", "random")]
    agree(run_all([host, *guests]))


@pytest.mark.slow  # a Crescendo round between processes found by mDNS (test_local_tcp.py plays a whole game)
def test_two_peers_find_a_crescendo_table_by_mdns_and_sign_its_first_round_alike() -> None:
    table = f"crescendo {secrets.token_hex(3)}"
    host = PeerProc("--create", "--game", "crescendo", "--players", "2", "--table", table, "--bot", "good", *LOOP)
    guest = PeerProc("--table", table, "--game", "crescendo", *LOOP)
    signed = r"round 1 verified and signed by all: (\[.*\])"
    try:
        scores = {p.wait_line(signed, 180)[1].group(1) for p in (host, guest)}
        assert len(scores) == 1, scores
        for p in (host, guest):  # then both leave, as at the end of an evening: a goodbye, no traceback
            p.signal(signal.SIGTERM)
        for p in (host, guest):
            p.proc.wait(20)
            assert "Traceback" not in p.text(), p.text()
    finally:
        host.stop()
        guest.stop()


@pytest.mark.slow
def test_a_guest_given_the_hosts_address_plays_without_multicast() -> None:
    host = PeerProc("--create", "--game", "crisp", "--limit", "10", "--no-mdns", "--bot", "good", *LOOP)
    guest = PeerProc("--peer", f"127.0.0.1:{host.port()}", *LOOP)
    results = run_all([host, guest], 120)
    agree(results)
    # --help names every key of the JSON line (a script needs them): "blamed" was missing, as were the docs
    from p2pcards.net.botpeer import SUMMARY
    documented = {k for keys in SUMMARY for k in keys.split(", ")}
    keys = [set(r) - {"output", "rc"} for r in results]  # run_all's own
    assert all(k == documented for k in keys), [k ^ documented for k in keys]


def hostile_sockets(port: int) -> list[socket.socket]:
    """Garbage, a 4 GiB length prefix, a deeply nested hello, a replayed handshake, and idle sockets."""
    socks = []
    attacks = [secrets.token_bytes(2000), struct.pack(">I", 0xFFFFFFFF) + b"\0" * 64,
               pack(HELLO, b"\x91" * 5000 + b"\xc0")]
    for data in attacks:
        s = socket.create_connection(("127.0.0.1", port))
        s.sendall(data)
        socks.append(s)
    # A handshake recorded on one connection and replayed on another.
    eve = generate("eve")
    s = socket.create_connection(("127.0.0.1", port))
    head = s.recv(4)
    theirs = s.recv(struct.unpack(">I", head)[0])[1:]
    table = Hello.parse(theirs).table
    mine = new_hello(table, eve.public, 0).to_bytes()
    recorded = pack(HELLO, mine) + pack(PROOF, prove(eve, "dialer", theirs, mine))
    s.sendall(recorded)
    socks.append(s)
    replay = socket.create_connection(("127.0.0.1", port))
    replay.sendall(recorded)
    socks.append(replay)
    socks += [socket.create_connection(("127.0.0.1", port)) for _ in range(200)]
    return socks


def ended(s: socket.socket) -> bool:
    """Whether the other end closed `s` (what it sent before, such as its hello, read and dropped)."""
    s.setblocking(False)
    try:
        while s.recv(65536):
            pass
    except BlockingIOError:
        return False
    except ConnectionError:
        pass
    return True


@pytest.mark.slow  # 400 sockets and a whole game
def test_garbage_huge_prefixes_deep_nesting_replays_and_idle_sockets_change_nothing() -> None:
    host = PeerProc("--create", "--game", "crisp", "--limit", "10", "--players", "2", "--no-mdns", *LOOP)
    port = host.port()
    socks = hostile_sockets(port)  # before anyone joins: a finished handshake or an idle socket is no seat
    guest = PeerProc("--peer", f"127.0.0.1:{port}", *LOOP)
    guest.wait_line("round 1 begins", 60)
    during = hostile_sockets(port)  # and again while the game is played
    socks += during
    until(lambda: all(map(ended, during[:5])), 20, "the host closing every hostile connection but the idle ones")
    rss = [p.peak_rss_kib() for p in (host, guest) if p.proc.poll() is None]
    try:
        results = run_all([host, guest], 120)
    finally:
        for s in socks:
            s.close()
    agree(results)
    assert all(r["seat"] in (0, 1) for r in results)
    assert max(rss) < 150_000, rss  # KiB: what a peer costs anyway, and far below a 4 GiB frame


@pytest.mark.slow  # whole games between processes; test_vanished_seat.py covers a kill in the default run
@pytest.mark.parametrize("sig,seen,within", [
    (signal.SIGKILL, "missing: doomed is missing", 6.0),  # its link ends: voted gone after gone_after (3 s)
    (signal.SIGTERM, "doomed is out: round 1 is void", 2.5),  # its signed leave: voted gone at once
])
def test_a_seat_killed_or_stopped_mid_game_is_named_within_seconds_and_the_others_go_on_without_it(
        sig: signal.Signals, seen: str, within: float) -> None:
    host = PeerProc("--create", "--game", "crisp", "--limit", "10", "--players", "3", "--no-mdns",
                    "--gone-after", "3", *LOOP)
    port = host.port()
    doomed = PeerProc("--peer", f"127.0.0.1:{port}", "--name", "doomed", *LOOP)
    other = PeerProc("--peer", f"127.0.0.1:{port}", *LOOP)
    try:
        doomed.wait_line("round 1 begins", 60)
        killed = time.monotonic()
        doomed.signal(sig)
        for p in (host, other):
            at, _ = p.wait_line(seen, 15)
            assert at - killed < within, p.text()
        results = [host.result(120), other.result(120)]
        texts = [host.text(), other.text()]
        if sig == signal.SIGTERM:
            assert doomed.proc.wait(10) == 0 and "Traceback" not in doomed.text()
    finally:
        for p in (host, doomed, other):
            p.stop()
    # Voted gone by both, doomed is out (protocol.md §14.9): its round is void, the two finish the game.
    assert all(r["finished"] and not r["faults"] for r in results), results
    assert all("void: doomed is out: round 1 is void" in t for t in texts), texts
    assert len({tuple(r["totals"]) for r in results}) == 1 and len(results[0]["totals"]) == 2, results


@pytest.mark.slow
def test_two_seats_killed_at_once_are_voted_out_together_and_the_other_two_finish() -> None:
    host = PeerProc("--create", "--game", "crisp", "--limit", "10", "--players", "4", "--no-mdns",
                    "--gone-after", "3", *LOOP)
    port = host.port()
    doomed = [PeerProc("--peer", f"127.0.0.1:{port}", "--name", name, *LOOP) for name in ("ann", "bob")]
    other = PeerProc("--peer", f"127.0.0.1:{port}", "--gone-after", "3", *LOOP)
    try:
        for p in doomed:
            p.wait_line("round 1 begins", 60)
        for p in doomed:
            p.signal(signal.SIGKILL)
        for p in (host, other):
            p.wait_line("(ann, bob|bob, ann) are out", 20)
        results = [host.result(120), other.result(120)]
        texts = [host.text(), other.text()]
    finally:
        for p in (host, other, *doomed):
            p.stop()
    # Neither of the two could vote the other gone: the two that remain put both out together.
    assert all(r["finished"] and not r["faults"] for r in results), results
    assert all(re.search("the table goes on without (ann, bob|bob, ann) from round 1", t) for t in texts), texts
    assert len({tuple(r["totals"]) for r in results}) == 1 and len(results[0]["totals"]) == 2, results


def test_sigterm_says_goodbye_and_the_table_vanishes_at_once() -> None:
    table = f"gone {secrets.token_hex(3)}"

    async def main() -> None:
        async with Discovery(["127.0.0.1"]) as disco:
            host = PeerProc("--create", "--game", "crisp", "--players", "2", "--table", table, *LOOP)
            try:
                async with asyncio.timeout(20):
                    async for tables in disco.tables():
                        if any(t.name == table for t in tables):
                            break
                host.signal(signal.SIGTERM)
                async with asyncio.timeout(5):
                    async for tables in disco.tables():
                        if all(t.name != table for t in tables):
                            break
                assert host.proc.wait(10) == 0
                assert "Traceback" not in host.text()
            finally:
                host.stop()

    asyncio.run(main())


@pytest.mark.slow  # a whole game between processes, one of them killed and started again
def test_a_peer_killed_mid_round_and_started_again_on_its_state_comes_back_into_the_round(tmp_path: Path) -> None:
    host = PeerProc("--create", "--game", "crisp", "--limit", "10", "--players", "2", "--no-mdns", *LOOP)
    port = host.port()
    guest = PeerProc("--peer", f"127.0.0.1:{port}", "--name", "phoenix", "--state", str(tmp_path), *LOOP)
    again = None
    try:
        guest.wait_line("round 1 begins", 60)
        # Mid-round: keys, passes, the deal and some moves are in its journal.
        until(lambda: journal_moves(tmp_path) >= 2, 30, "two moves in the guest's journal")
        guest.signal(signal.SIGKILL)
        assert (tmp_path / "journal").stat().st_size > 0 and (tmp_path / "node").exists()
        # No table, no address, no interface: all of it is in the state (it listens on 127.0.0.1 again).
        again = PeerProc("--state", str(tmp_path), "--json")
        results = [host.result(120), again.result(120)]
    finally:
        for p in (host, guest, again):
            if p is not None:
                p.stop()
    assert all(r["finished"] and not r["faults"] for r in results), results
    assert results[1]["resumed"] and results[1]["name"] == "phoenix" and results[0]["log"] == results[1]["log"]
    assert "back: phoenix is back" in host.text() and "votes" not in host.text(), host.text()
    # The table is over: nothing left to come back to (the empty lock file stays, as in a client's state directory).
    assert [p.name for p in tmp_path.iterdir()] == ["lock"]


@pytest.mark.slow  # a game between processes by mDNS, one of them killed and started again
def test_a_seat_that_comes_back_announces_its_peer_ad_again(tmp_path: Path) -> None:
    # protocol.md §17: every seated peer announces itself; one back from its journal has no lobby, but is seated.
    table = f"back {secrets.token_hex(3)}"
    host = PeerProc("--create", "--game", "crisp", "--limit", "100", "--players", "2", "--table", table, *LOOP)
    guest = PeerProc("--table", table, "--name", "phoenix", "--state", str(tmp_path), *LOOP)
    again = None

    async def peer_ad_seen() -> bool:
        # A browser started after the kill: the killed process's ad is in no cache of ours, only a live one answers.
        async with Discovery(["127.0.0.1"]) as disco, asyncio.timeout(20):
            async for tables in disco.tables():  # seated, the table has no free seat: wait_for_table would not see it
                ids = [t.table for t in tables if t.name == table]
                if ids and any(p.host == "phoenix" for p in disco.peers_at(ids[0])):
                    return True
        return False

    try:
        guest.wait_line("round 1 begins", 60)
        guest.signal(signal.SIGKILL)
        again = PeerProc("--state", str(tmp_path), "--json")
        assert asyncio.run(peer_ad_seen())
    finally:
        for p in (host, guest, again):
            if p is not None:
                p.stop()


@pytest.mark.slow  # a whole game between processes, the host killed and started again while its port is taken
def test_a_seat_whose_port_was_taken_while_it_was_down_comes_back_on_another_and_dials_the_later_seats(
        tmp_path: Path) -> None:
    # The host is seat 0: every other seat dials it, at the port another program holds when it comes back.
    host = PeerProc("--create", "--game", "crisp", "--limit", "10", "--players", "3", "--no-mdns", "--name", "phoenix",
                    "--state", str(tmp_path), *LOOP)
    port = host.port()
    guests = [PeerProc("--peer", f"127.0.0.1:{port}", *LOOP) for _ in range(2)]
    again = None
    squatter = socket.socket()
    try:
        host.wait_line("round 1 begins", 60)
        until(lambda: journal_moves(tmp_path) >= 2, 30, "two moves in the host's journal")  # mid-round
        host.signal(signal.SIGKILL)
        host.proc.wait(10)
        squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        squatter.bind(("127.0.0.1", port))
        squatter.listen()  # it takes connections and never says a word: a dial there fails its handshake
        again = PeerProc("--state", str(tmp_path), "--json")
        _, moved = again.wait_line(r"coming back on port (\d+) \(port (\d+) was taken", 30)
        assert int(moved.group(1)) != port and int(moved.group(2)) == port
        results = [again.result(120)] + [g.result(120) for g in guests]
    finally:
        squatter.close()
        for p in (host, *guests, again):
            if p is not None:
                p.stop()
    assert all(r["finished"] and not r["faults"] for r in results), results
    assert results[0]["resumed"] and len({r["log"] for r in results}) == 1 and len(results[0]["totals"]) == 3
    assert all("votes" not in g.text() and "back: phoenix is back" in g.text() for g in guests), [g.text() for g in guests]
    assert [p.name for p in tmp_path.iterdir()] == ["lock"]
