"""SIGTERM (or SIGHUP) to the client in a real terminal (tmux): it leaves the table as `Q` would, bots and all."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_ui_terminal import Terminal, wait_for

from p2pcards.sim.transcript import Transcript
from p2pcards.table.chains import frame_head

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install -y tmux)"),
]


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGHUP])  # SIGHUP: a table of bots has no seat to keep
def test_sigterm_leaves_the_table_saves_the_record_and_ends_the_bots(tmp_path: Path, sig: signal.Signals) -> None:
    env = dict(os.environ, P2PCARDS_HOME=str(tmp_path), TERM="xterm-256color")
    record = tmp_path / "game.bin"
    term = Terminal(f"{sys.executable} -m p2pcards play --bots 2 --name Tess --record {record}; "
                    f"echo EXIT=$?; sleep 60", env)
    try:
        wait_for(term, "Crisp · round 1", 60)
        client = subprocess.run(["pgrep", "-f", f"^{sys.executable} -m p2pcards play --bots 2 --name Tess"],
                                capture_output=True, text=True).stdout.split()
        assert len(client) == 1
        bots = Path(f"/proc/{client[0]}/task/{client[0]}/children").read_text().split()
        assert len(bots) == 2
        os.kill(int(client[0]), sig)
        screen = wait_for(term, "EXIT=", 20)
        assert f"EXIT={128 + sig}" in screen and "Traceback" not in screen
        kinds = [frame_head(frame) for _, frame in Transcript.load(str(record)).frames]
        assert any(head is not None and head[1] == "leave" for head in kinds), "the record holds our leave"
        deadline = time.monotonic() + 20
        while any(Path(f"/proc/{b}").exists() for b in bots) and time.monotonic() < deadline:
            time.sleep(0.2)
        assert not any(Path(f"/proc/{b}").exists() for b in bots), "the bots quit with us"
    finally:
        term.close()


def test_a_lobby_whose_terminal_closes_says_goodbye_to_its_guest_and_exits_quietly(tmp_path: Path) -> None:
    # Closing the terminal (tmux kill-session) while the lobby ran printed an EIO traceback: SIGHUP raised at whatever
    # line ran, and the screen's last redraw wrote to a terminal that was gone.
    env = dict(os.environ, P2PCARDS_HOME=str(tmp_path), TERM="xterm-256color")
    err = tmp_path / "stderr"
    term = Terminal(f"exec {sys.executable} -m p2pcards play --name Ann --interface 127.0.0.1 2>{err}", env)
    bob: subprocess.Popen[str] | None = None
    try:
        wait_for(term, "Tables on this network", 30)
        for key in ("n", "Enter", "1", "Enter"):  # a new table: its name as offered, Crisp, its options as they are
            term.keys(key)
            time.sleep(0.3)
        port = re.search(r"--peer 127.0.0.1:(\d+)", wait_for(term, "is open", 20))
        assert port
        bob = subprocess.Popen([sys.executable, "-m", "p2pcards", "peer", "--interface", "127.0.0.1", "--name", "Bob",
                                "--peer", f"127.0.0.1:{port.group(1)}"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, text=True, env=env)
        wait_for(term, "Players (2)", 30)
        pid = int(term._tmux("display", "-p", "-t", "play", "#{pane_pid}"))
        term._tmux("kill-session", "-t", "play")  # the window closes: the client gets SIGHUP, its terminal is gone
        out, _ = bob.communicate(timeout=30)
        assert "the host said goodbye: quit" in out, out
        deadline = time.monotonic() + 20
        while Path(f"/proc/{pid}").exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not Path(f"/proc/{pid}").exists()
        assert err.read_text() == ""
    finally:
        term.close()
        if bob is not None and bob.poll() is None:
            bob.kill()
            bob.wait(10)
