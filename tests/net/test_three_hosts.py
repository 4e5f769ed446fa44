"""Three network hosts on one LAN (three namespaces on a bridge, lan_hosts.py): `p2pcards peer` processes find
the table by multicast, link to every seat over TCP and finish a game alike, also when one host's cable is
pulled for a while mid-game."""

from __future__ import annotations

import secrets
import signal
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from lan_hosts import Host, NoNamespaces, lan
from net_procs import PeerProc


@pytest.fixture
def three_hosts() -> Iterator[list[Host]]:
    """Hosts 10.78.0.1, .2 and .3 on one bridge; skipped where namespaces cannot be made."""
    try:
        with lan(3) as hosts:
            yield hosts
    except NoNamespaces as exc:
        pytest.skip(str(exc))


def play(hosts: list[Host], during: Callable[[list[PeerProc]], None] | None = None) -> tuple[list[dict[str, object]], list[str]]:
    """A Crisp game to 5 hosted on the first host and joined from the others, `during(procs)` while it runs:
    each peer's summary and everything it printed."""
    table = f"lan3 {secrets.token_hex(3)}"
    first, *others = hosts
    procs = [PeerProc("--create", "--game", "crisp", "--players", "3", "--limit", "5", "--table", table, "--json",
                      prefix=first.prefix())]
    procs += [PeerProc("--table", table, "--json", prefix=h.prefix()) for h in others]
    try:
        if during is not None:
            during(procs)
        results = [p.result(180) for p in procs]
    finally:
        for p in procs:
            p.stop()
    assert all(r["finished"] and not r["faults"] for r in results), [p.text() for p in procs]
    return results, [p.text() for p in procs]


@pytest.mark.slow  # a whole game between processes on three hosts
def test_three_peers_on_three_hosts_find_the_table_by_multicast_and_finish_a_game(three_hosts: list[Host]) -> None:
    results, _ = play(three_hosts)
    assert results[0]["log"] == results[1]["log"] == results[2]["log"]


@pytest.mark.slow  # seconds of real time with a cable pulled
def test_a_host_whose_cable_is_pulled_for_a_few_seconds_mid_game_plays_on_to_the_same_end(
        three_hosts: list[Host]) -> None:
    def pull(procs: list[PeerProc]) -> None:
        procs[2].wait_line(r"\] round", 90)  # the game is under way
        three_hosts[2].link(False)
        time.sleep(7)  # over the links' SILENT_S: the others see it missing, well within GONE_AFTER_S
        three_hosts[2].link(True)

    results, seen = play(three_hosts, pull)
    assert results[0]["log"] == results[1]["log"] == results[2]["log"]
    assert "] missing" in seen[0] and "] back" in seen[0], seen[0]


SQUAT = ("import socket, sys, time\n"
         "s = socket.socket(); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)\n"
         "s.bind(('0.0.0.0', int(sys.argv[1]))); s.listen(); print('squatting', flush=True)\n"
         "time.sleep(600)\n")


@pytest.mark.slow  # a game between processes on three hosts, two of them killed and started again on other ports
def test_two_seats_back_on_other_ports_on_their_hosts_find_each_other_by_their_peer_ads(
        three_hosts: list[Host], tmp_path: Path) -> None:
    # protocol.md §17: neither knows where the other listens now (each knows only the other's old port, where a
    # program that answers no handshake sits); each finds the other where its peer ad says.
    table = f"lan3 {secrets.token_hex(3)}"
    first, *others = three_hosts
    host = PeerProc("--create", "--game", "crisp", "--players", "3", "--limit", "10", "--table", table, "--json",
                    "--gone-after", "120", prefix=first.prefix())
    states = [tmp_path / "a", tmp_path / "b"]
    guests = [PeerProc("--table", table, "--name", f"phoenix{i}", "--state", str(state), "--gone-after", "120",
                       "--json", prefix=h.prefix()) for i, (h, state) in enumerate(zip(others, states))]
    procs = [host, *guests]
    try:
        ports = [g.port() for g in guests]
        for g in guests:
            g.wait_line("round 1 begins", 90)
        time.sleep(1.0)  # mid-round
        for g in guests:
            g.signal(signal.SIGKILL)
            g.proc.wait(10)
        for h, port in zip(others, ports):
            squatter = PeerProc(str(port), prefix=h.prefix(), program=[sys.executable, "-c", SQUAT])
            procs.append(squatter)
            squatter.wait_line("squatting", 10)
        again = [PeerProc("--state", str(state), "--json", prefix=h.prefix()) for h, state in zip(others, states)]
        procs += again
        results = [host.result(180)] + [p.result(180) for p in again]
    finally:
        for p in procs:
            p.stop()
    assert all(r["finished"] and not r["faults"] for r in results), [p.text() for p in again]
    assert all(r["resumed"] for r in results[1:]) and len({r["log"] for r in results}) == 1
    assert all("was taken" in p.text() for p in again), [p.text() for p in again]
    assert "back: phoenix1 is back" in again[0].text() and "back: phoenix0 is back" in again[1].text(), \
        [p.text() for p in again]
