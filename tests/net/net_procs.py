"""Real `p2pcards peer` processes for tests: start, read their lines with arrival times, stop."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from p2pcards.crypto.envelope import parse
from p2pcards.net.store import parse_journal


def until(cond: Callable[[], bool], within: float, what: str) -> None:
    """Return once `cond()` holds, looking every 50 ms; AssertionError saying `what` was awaited after `within` s."""
    end = time.monotonic() + within
    while not cond():
        if time.monotonic() > end:
            raise AssertionError(f"not within {within:g} s: {what}")
        time.sleep(0.05)


def journal_moves(state: Path) -> int:
    """How many moves (anyone's) the journal of a running peer's --state directory holds so far."""
    path = state / "journal"
    records, _ = parse_journal(path.read_bytes()) if path.exists() else ([], 0)
    return sum(kind == "frame" and parse(data).envelope.type == "move" for kind, _, data in records)


class PeerProc:
    """One `p2pcards peer` process (or another `program`) whose output lines are collected, each with the time it came."""

    def __init__(self, *args: str, prefix: Sequence[str] = (), program: Sequence[str] | None = None) -> None:
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        program = [sys.executable, "-m", "p2pcards.cli", "peer"] if program is None else program
        self.proc = subprocess.Popen([*prefix, *program, *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, env=env)
        self.lines: list[tuple[float, str]] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            self.lines.append((time.monotonic(), line.rstrip("\n")))

    def wait_line(self, pattern: str, within: float = 60.0) -> tuple[float, re.Match[str]]:
        """The first line matching `pattern` (its arrival time and match); AssertionError after `within` s."""
        end = time.monotonic() + within
        while time.monotonic() < end:
            for at, line in list(self.lines):
                m = re.search(pattern, line)
                if m:
                    return at, m
            if self.proc.poll() is not None and not self._reader.is_alive():
                break
            time.sleep(0.05)
        raise AssertionError(f"no line matching {pattern!r} in: {self.text()}")

    def port(self) -> int:
        """The port it said it listens on."""
        return int(self.wait_line(r"on port (\d+)", 30)[1].group(1))

    def result(self, within: float = 300.0) -> dict[str, Any]:
        """Wait for the exit; its JSON summary line (the peer must run with --json)."""
        self.proc.wait(within)
        self._reader.join(5)
        for _, line in reversed(self.lines):
            if line.startswith("{"):
                summary: dict[str, Any] = json.loads(line)
                summary["rc"] = self.proc.returncode
                return summary
        raise AssertionError(f"no summary: {self.text()}")

    def text(self) -> str:
        """Everything it printed."""
        return "\n".join(line for _, line in self.lines)

    def peak_rss_kib(self) -> int:
        """Its peak resident memory so far (Linux: VmHWM)."""
        with open(f"/proc/{self.proc.pid}/status") as f:
            return int(next(line for line in f if line.startswith("VmHWM")).split()[1])

    def signal(self, sig: int = signal.SIGTERM) -> None:
        """Send a signal (SIGTERM by default)."""
        self.proc.send_signal(sig)

    def stop(self) -> None:
        """Kill it if it still runs."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait(10)
