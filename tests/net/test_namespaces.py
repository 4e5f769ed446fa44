"""Real multicast between two network hosts: two network namespaces joined by a veth pair, made and torn
down here. Nothing is ever sent on this machine's own interfaces."""

from __future__ import annotations

import secrets
import shutil
import subprocess
from collections.abc import Iterator

import pytest
from net_procs import PeerProc


def _ip(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)


@pytest.fixture
def two_hosts() -> Iterator[tuple[str, str]]:
    """Namespaces A (10.77.0.1/24) and B (10.77.0.2/24) on one veth link; skipped where the kernel refuses."""
    if shutil.which("ip") is None:
        pytest.skip("the `ip` command (iproute2) is not installed")
    tag = secrets.token_hex(3)
    a, b = f"p2pc-a-{tag}", f"p2pc-b-{tag}"
    made = _ip("netns", "add", a)
    if made.returncode != 0:
        pytest.skip(f"cannot create a network namespace here: {made.stderr.strip()}")
    try:
        steps = [("netns", "add", b),
                 ("link", "add", "veth-a", "netns", a, "type", "veth", "peer", "name", "veth-b", "netns", b),
                 ("-n", a, "addr", "add", "10.77.0.1/24", "dev", "veth-a"),
                 ("-n", b, "addr", "add", "10.77.0.2/24", "dev", "veth-b")]
        steps += [("-n", ns, "link", "set", dev, "up") for ns in (a, b) for dev in ("lo", "veth-a" if ns == a else "veth-b")]
        for step in steps:
            done = _ip(*step)
            if done.returncode != 0:
                pytest.skip(f"`ip {' '.join(step)}` failed: {done.stderr.strip()}")
        yield a, b
    finally:
        _ip("netns", "del", a)
        _ip("netns", "del", b)


@pytest.mark.slow  # a whole game between processes on two hosts
def test_peers_on_two_network_hosts_find_each_other_by_multicast_and_finish_a_game(two_hosts: tuple[str, str]) -> None:
    a, b = two_hosts
    table = f"lan {secrets.token_hex(3)}"
    # Every IPv4 interface (the default): inside a namespace that is its loopback and its veth end.
    host = PeerProc("--create", "--game", "crisp", "--limit", "5", "--table", table, "--json",
                    prefix=["ip", "netns", "exec", a])
    guest = PeerProc("--table", table, "--json", prefix=["ip", "netns", "exec", b])
    try:
        results = [host.result(120), guest.result(120)]
    finally:
        host.stop()
        guest.stop()
    assert all(r["finished"] and not r["faults"] for r in results), (host.text(), guest.text())
    assert results[0]["log"] == results[1]["log"]
