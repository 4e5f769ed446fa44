"""A LAN of network hosts for tests: N network namespaces, each with one veth end on a bridge that lives in a
namespace of its own (the LAN's switch), addresses 10.<net>.0.1 to N /24. Made and torn down here; nothing is
ever attached to this machine's own interfaces. Needs `ip` (iproute2) and root; the caller skips otherwise."""

from __future__ import annotations

import contextlib
import secrets
import shutil
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass


class NoNamespaces(Exception):
    """This machine cannot make the LAN (no `ip`, not root, a kernel that refuses): the reason."""


def ip(*args: str) -> subprocess.CompletedProcess[str]:
    """`ip ARGS`, its output captured."""
    return subprocess.run(["ip", *args], capture_output=True, text=True, timeout=10)


@dataclass(frozen=True)
class Host:
    """One host of the LAN: its namespace, its interface there and its address."""

    ns: str
    dev: str
    address: str

    def prefix(self) -> list[str]:
        """The command prefix that runs a program on this host."""
        return ["ip", "netns", "exec", self.ns]

    def link(self, up: bool) -> None:
        """Pull its cable (False) or plug it in again (True)."""
        ip("-n", self.ns, "link", "set", self.dev, "up" if up else "down")


@contextlib.contextmanager
def lan(hosts: int, net: int = 78) -> Iterator[list[Host]]:
    """`hosts` hosts on one bridge; NoNamespaces (before anything is left behind) when they cannot be made."""
    if shutil.which("ip") is None:
        raise NoNamespaces("the `ip` command (iproute2) is not installed")
    tag = secrets.token_hex(3)
    switch = f"p2pc-sw-{tag}"
    made: list[str] = []
    try:
        done = ip("netns", "add", switch)
        if done.returncode != 0:
            raise NoNamespaces(f"cannot create a network namespace here: {done.stderr.strip()}")
        made.append(switch)
        steps = [("-n", switch, "link", "add", "br0", "type", "bridge", "mcast_snooping", "0"),
                 ("-n", switch, "link", "set", "br0", "up")]
        out = [Host(f"p2pc-h{i}-{tag}", f"v{i}", f"10.{net}.0.{i}") for i in range(1, hosts + 1)]
        for i, h in enumerate(out, 1):
            done = ip("netns", "add", h.ns)
            if done.returncode != 0:
                raise NoNamespaces(f"cannot create a network namespace here: {done.stderr.strip()}")
            made.append(h.ns)
            steps += [("link", "add", h.dev, "netns", h.ns, "type", "veth", "peer", "name", f"p{i}", "netns", switch),
                      ("-n", switch, "link", "set", f"p{i}", "master", "br0"),
                      ("-n", switch, "link", "set", f"p{i}", "up"),
                      ("-n", h.ns, "addr", "add", f"{h.address}/24", "dev", h.dev),
                      ("-n", h.ns, "link", "set", h.dev, "up"),
                      ("-n", h.ns, "link", "set", "lo", "up")]
        for step in steps:
            done = ip(*step)
            if done.returncode != 0:
                raise NoNamespaces(f"`ip {' '.join(step)}` failed: {done.stderr.strip()}")
        yield out
    finally:
        for ns in reversed(made):  # a namespace takes its veth ends and the bridge with it
            ip("netns", "del", ns)
