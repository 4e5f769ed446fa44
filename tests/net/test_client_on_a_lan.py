"""The terminal client seated at a table on a LAN of network hosts (lan_hosts.py): a standard DNS-SD browser
(BIND's `dig`, asking the client's own address) resolves the client's peer ad, and closing the client's terminal
(SIGHUP) withdraws it with an mDNS goodbye at once, as every way out of the client must (protocol.md §17), while
its seat is kept to come back into, as after a crash."""

from __future__ import annotations

import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from lan_hosts import Host, NoNamespaces, lan
from net_procs import PeerProc

pytestmark = [
    pytest.mark.slow,  # real processes on network namespaces, a real terminal
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install -y tmux)"),
    pytest.mark.skipif(shutil.which("dig") is None, reason="needs dig, BIND's DNS client (Debian: bind9-dnsutils)"),
]

# Prints "seen NAME" and "gone NAME" as peer ads come and go on the LAN (goodbye or expiry).
WATCH = """
import asyncio
from p2pcards.net.discovery import Discovery

async def main() -> None:
    async with Discovery() as disco:
        shown: set[str] = set()
        while True:
            now = {ad.name for ad in disco.seen.values() if ad.role == "peer"}
            for name in sorted(now - shown):
                print("seen", name, flush=True)
            for name in sorted(shown - now):
                print("gone", name, flush=True)
            shown = now
            await asyncio.sleep(0.1)

asyncio.run(main())
"""


def dig(asker: Host, server: str, name: str, rtype: str) -> list[list[str]]:
    """The answers `asker` gets from the mDNS responder at `server` (a one-shot query), as dig prints them."""
    out = subprocess.run([*asker.prefix(), "dig", "+time=2", "+tries=2", "-p", "5353", f"@{server}", name, rtype,
                          "+noall", "+answer"], capture_output=True, text=True, timeout=20).stdout
    return [line.split(None, 4) for line in out.splitlines() if line and not line.startswith(";")]


def alive(pid: int) -> bool:
    """Whether process `pid` runs (a zombie waiting for a parent to reap it does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


class Tmux:
    """A tmux server of our own with one window running `command`."""

    def __init__(self, command: str, env: dict[str, str]) -> None:
        self.socket, self.env = f"p2pc-lan-{secrets.token_hex(3)}", env
        self._tmux("new-session", "-d", "-s", "play", "-x", "100", "-y", "30", command)

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=self.env,
                              timeout=10).stdout

    def wait_for(self, text: str, seconds: float) -> str:
        """The screen once it shows `text`; AssertionError after `seconds`."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            screen = self._tmux("capture-pane", "-p", "-t", "play")
            if text in screen:
                return screen
            time.sleep(0.2)
        raise AssertionError(f"{text!r} never showed; the screen was:\n{self._tmux('capture-pane', '-p', '-t', 'play')}")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "play", *keys)

    def pid(self) -> int:
        """The process id of the program in the window."""
        return int(self._tmux("display", "-p", "-t", "play", "#{pane_pid}"))

    def close(self) -> None:
        """Kill the server: its window closes, and the program in it gets SIGHUP as from any closed terminal."""
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, env=self.env, timeout=10)


def test_a_seated_client_answers_dns_sd_for_its_peer_ad_and_says_goodbye_when_its_terminal_closes(
        tmp_path: Path) -> None:
    try:
        with lan(2, net=79) as (h1, h2):
            table = f"lan {secrets.token_hex(3)}"
            host = PeerProc("--create", "--game", "crisp", "--players", "2", "--limit", "100", "--table", table,
                            "--name", "Ann", prefix=h1.prefix())
            watch = PeerProc(prefix=h1.prefix(), program=[sys.executable, "-c", WATCH])
            env = dict(os.environ, P2PCARDS_HOME=str(tmp_path), TERM="xterm-256color")
            client = Tmux(f"exec {' '.join(h2.prefix())} {sys.executable} -m p2pcards play --name Tess", env)
            pid = client.pid()  # `ip netns exec` execs the client: this is the client itself
            try:
                client.wait_for(table, 30)  # the only table on this LAN: Enter joins it
                client.keys("Enter")
                client.wait_for("Crisp · round 1", 30)
                name = watch.wait_line(r"seen (Tess \d{5})", 20)[1].group(1)  # seated: its peer ad came

                ptr = [a[4] for a in dig(h1, h2.address, "_p2pcards._tcp.local.", "PTR")]
                instance = name.replace(" ", "\\032") + "._p2pcards._tcp.local."
                assert set(ptr) == {instance}, ptr
                _, _, port, target = dig(h1, h2.address, instance, "SRV")[0][4].split()
                txt = dig(h1, h2.address, instance, "TXT")[0][4]
                assert '"role=peer"' in txt and '"host=Tess"' in txt and f'"port={port}"' in txt, txt
                assert [a[4] for a in dig(h1, h2.address, target, "A")] == [h2.address]

                client.close()
                watch.wait_line(re.escape(f"gone {name}"), 8)  # a goodbye: without it, minutes of TTL
                deadline = time.monotonic() + 10
                while alive(pid) and time.monotonic() < deadline:
                    time.sleep(0.1)
                assert not alive(pid), "the client quit with its terminal"
                host.wait_line(r"missing: Tess is missing", 10)  # no leave: it may come back, as after a crash
                assert "left the table" not in host.text(), host.text()
                assert (tmp_path / "state" / "journal").stat().st_size > 0  # the seat to come back into
            finally:
                client.close()
                if alive(pid):
                    os.kill(pid, signal.SIGKILL)
                for proc in (host, watch):
                    proc.stop()
    except NoNamespaces as exc:
        pytest.skip(str(exc))
