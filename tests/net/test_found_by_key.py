"""A seat whose every known address is stale is found by its key, where its own mDNS peer ad says it listens now
(protocol.md §17, §14.10): real `p2pcards peer` processes on 127.0.0.1."""

from __future__ import annotations

import signal
import socket
import time
from pathlib import Path

import pytest
from net_procs import PeerProc

LOOP = ["--interface", "127.0.0.1", "--json"]


@pytest.mark.slow  # a game between processes by mDNS, two of them killed and started again on other ports
def test_two_seats_back_on_other_ports_find_each_other_by_their_announcements(tmp_path: Path) -> None:
    # Both guests come back where neither knows the other listens: the host learns both from their hellos, but each
    # knows only the other's old port, where a squatter answers no handshake. Only the peer ads tell them.
    table = f"found {time.monotonic_ns() % 1000000}"
    host = PeerProc("--create", "--game", "crisp", "--limit", "10", "--players", "3", "--table", table,
                    "--gone-after", "120", *LOOP)
    states = [tmp_path / "a", tmp_path / "b"]
    guests = [PeerProc("--table", table, "--name", f"phoenix{i}", "--gone-after", "120", "--state", str(state), *LOOP)
              for i, state in enumerate(states)]
    again: list[PeerProc] = []
    squatters = [socket.socket() for _ in guests]
    try:
        ports = [g.port() for g in guests]
        for g in guests:
            g.wait_line("round 1 begins", 60)
        time.sleep(1.0)  # mid-round
        for g in guests:
            g.signal(signal.SIGKILL)
            g.proc.wait(10)
        for squatter, port in zip(squatters, ports):
            squatter.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            squatter.bind(("127.0.0.1", port))
            squatter.listen()  # it takes connections and never says a word: a dial there fails its handshake
        again = [PeerProc("--state", str(state), "--json") for state in states]
        for p, port in zip(again, ports):
            _, moved = p.wait_line(r"coming back on port (\d+) \(port (\d+) was taken", 30)
            assert int(moved.group(1)) != port and int(moved.group(2)) == port
        results = [host.result(150)] + [p.result(150) for p in again]
    finally:
        for squatter in squatters:
            squatter.close()
        for p in (host, *guests, *again):
            p.stop()
    assert all(r["finished"] and not r["faults"] for r in results), [p.text() for p in again]
    assert results[1]["resumed"] and results[2]["resumed"]
    assert len({r["log"] for r in results}) == 1 and len(results[0]["totals"]) == 3
    assert all("votes" not in p.text() for p in (host, *again)), [p.text() for p in (host, *again)]
    # They linked to each other (the host alone would have relayed every frame they missed: §18.5).
    assert "back: phoenix1 is back" in again[0].text() and "back: phoenix0 is back" in again[1].text(), \
        [p.text() for p in again]
