"""Three network hosts on one LAN (three namespaces on a bridge, lan_hosts.py): `p2pcards peer` processes find
the table by multicast, link to every seat over TCP and finish a game alike, also when one host's cable is
pulled for a while mid-game."""

from __future__ import annotations

import secrets
import time
from collections.abc import Callable, Iterator

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
