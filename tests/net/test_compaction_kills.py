"""A `p2pcards peer --state` killed as its journal is begun anew at a checkpoint (protocol.md §14.10), again and again:
it comes back into its round each time and the table finishes alike (real processes on 127.0.0.1)."""

from __future__ import annotations

import signal
import sys
import time
from pathlib import Path

import pytest
from net_procs import PeerProc

LOOP = ["--interface", "127.0.0.1", "--json"]
# `p2pcards peer` that dies by SIGKILL as it renames a new journal over the old one: written and synced, not yet in place.
KILLED_AT_RENAME = """
import os, signal, sys
replace = os.replace
def dying(src, dst, *args, **kwargs):
    if os.path.basename(os.fspath(dst)) == "journal":
        os.kill(os.getpid(), signal.SIGKILL)
    return replace(src, dst, *args, **kwargs)
os.replace = dying
from p2pcards.cli import main
sys.exit(main(sys.argv[1:]))
"""


def begun_anew(journal: Path, proc: PeerProc, within: float = 120.0) -> None:
    """Wait until `journal` is another file (a checkpoint began it anew), watching closely enough to kill right after."""
    first = journal.stat().st_ino
    end = time.monotonic() + within
    while journal.stat().st_ino == first:
        assert proc.proc.poll() is None and time.monotonic() < end, proc.text()
        time.sleep(0.002)


@pytest.mark.slow  # about 30 s: a three-round game between processes, one killed twice at its checkpoints
def test_a_peer_killed_as_its_journal_is_begun_anew_comes_back_each_time_and_the_table_finishes_alike(
        tmp_path: Path) -> None:
    host = PeerProc("--create", "--game", "crisp", "--limit", "75", "--players", "2", "--no-mdns", *LOOP)
    procs = [host]
    try:
        port = host.port()
        guest = PeerProc("--peer", f"127.0.0.1:{port}", "--name", "phoenix", "--state", str(tmp_path), *LOOP,
                         program=[sys.executable, "-c", KILLED_AT_RENAME, "peer"])
        procs.append(guest)
        assert guest.proc.wait(120) == -signal.SIGKILL, guest.text()
        # Killed between the new journal synced and its rename: the old one is in place, the new one a temporary.
        assert any(p.name.startswith(".journal.") for p in tmp_path.iterdir())
        again = PeerProc("--state", str(tmp_path), "--json")
        procs.append(again)
        again.wait_line("coming back", 30)
        assert not any(p.name.startswith(".journal.") for p in tmp_path.iterdir())
        begun_anew(tmp_path / "journal", again)  # the next checkpoint, and killed at once after it
        again.signal(signal.SIGKILL)
        again.proc.wait(10)
        last = PeerProc("--state", str(tmp_path), "--json")
        procs.append(last)
        results = [host.result(120), last.result(120)]
    finally:
        for p in procs:
            p.stop()
    assert all(r["finished"] and not r["faults"] and r["stopped"] is None for r in results), results
    assert results[1]["resumed"] and results[0]["log"] == results[1]["log"]
    assert results[0]["totals"] == results[1]["totals"] and results[0]["rounds"] >= 3
    said = [line.split("] ", 1)[-1] for line in host.text().splitlines() if line.startswith("[")]
    assert not [line for line in said if not line.startswith(("round", "missing: phoenix", "back: phoenix", "over",
                                                                "hosting"))], said
    # The table is over: nothing left to come back to (the empty lock file stays, as in a client's state directory).
    assert [p.name for p in tmp_path.iterdir()] == ["lock"]
