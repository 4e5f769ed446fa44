"""End to end: `p2pcards play --bots 2` in a real terminal (tmux), played by reading the screen and pressing keys."""

from __future__ import annotations

import json
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

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed (apt-get install -y tmux)"),
]


class Terminal:
    """One tmux server of our own with one 80x24 window running a command."""

    def __init__(self, command: str, env: dict[str, str], width: int = 80, height: int = 24) -> None:
        # A server of its own: a new session on the socket of a server just told to quit was lost (1 in 7 runs).
        self.socket = f"p2pcards-test-{os.getpid()}-{secrets.token_hex(4)}"
        self.env = env
        made = self._run("new-session", "-d", "-s", "play", "-x", str(width), "-y", str(height), command)
        assert made.returncode == 0, f"tmux could not start the terminal: {made.stderr}"

    def _run(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["tmux", "-L", self.socket, *args], capture_output=True, text=True, env=self.env,
                              timeout=10)

    def _tmux(self, *args: str) -> str:
        return self._run(*args).stdout

    def screen(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "play")

    def keys(self, *keys: str) -> None:
        self._tmux("send-keys", "-t", "play", *keys)

    def resize(self, width: int, height: int) -> None:
        self._tmux("resize-window", "-t", "play", "-x", str(width), "-y", str(height))

    def alive(self) -> bool:
        return subprocess.run(["tmux", "-L", self.socket, "has-session", "-t", "play"], capture_output=True,
                              env=self.env).returncode == 0

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True, env=self.env)


def wait_for(term: Terminal, text: str, seconds: float) -> str:
    deadline = time.time() + seconds
    while time.time() < deadline:
        screen = term.screen()
        if text in screen:
            return screen
        time.sleep(0.2)
    raise AssertionError(f"{text!r} never showed; the screen was:\n{term.screen()}")


def person_key(screen: str) -> str | None:
    """What a person reading the bottom of the screen presses: crisp at once, else draw, else get rid of the card."""
    keys = "\n".join(screen.splitlines()[-3:])
    for shown, key in (("c CALL CRISP", "c"), ("d draw", "d"), ("k King", "k"), ("j Jack", "j"),
                       ("x discard it", "x"), ("1-3 swap", "1")):
        if shown in keys:
            return key
    return None


def test_play_bots_in_a_real_terminal(tmp_path: Path) -> None:
    env = dict(os.environ, P2PCARDS_HOME=str(tmp_path), TERM="xterm-256color")
    env.pop("NO_COLOR", None)
    command = f"{sys.executable} -m p2pcards play --bots 2 --limit 50 --name Tess"
    term = Terminal(command, env)
    try:
        screen = wait_for(term, "Crisp · round 1", 60)
        assert "Tess" in screen and "Ada" in screen and "Bo" in screen
        screen = wait_for(term, "Draw pile:", 60)
        drew = False
        resized = False
        deadline = time.time() + 120
        while time.time() < deadline and "Round 1 revealed" not in screen:
            key = person_key(screen)
            if key is not None:
                drew = drew or key == "d"
                term.keys(key)
                time.sleep(0.5)
            else:
                time.sleep(0.2)
            if drew and not resized:
                term.resize(100, 30)  # the screen redraws at the new size and the game goes on
                resized = True
                assert "Draw pile:" in wait_for(term, "Draw pile:", 5)
            screen = term.screen()
        assert drew, "never saw our turn"
        assert "Round 1 revealed" in screen and "Scores" in screen and "Tess" in screen
        term.keys("Enter")
        screen = wait_for(term, "Crisp · round", 10)
        leave_cleanly(term)
    finally:
        term.close()


def leave_cleanly(term: Terminal) -> None:
    """Quit as a person would (Q, then y at the question) and see the client end within seconds."""
    term.keys("Q")
    wait_for(term, "Leave the table?", 5)
    term.keys("y")
    deadline = time.time() + 15
    while term.alive() and time.time() < deadline:
        time.sleep(0.2)
    assert not term.alive(), "the client did not leave cleanly"


def test_no_color_and_a_tiny_window_in_a_real_terminal(tmp_path: Path) -> None:
    env = dict(os.environ, P2PCARDS_HOME=str(tmp_path), TERM="xterm-256color", NO_COLOR="1")
    term = Terminal(f"{sys.executable} -m p2pcards play --bots 2 --name Tess", env)
    try:
        wait_for(term, "Draw pile:", 90)
        coloured = term._tmux("capture-pane", "-e", "-p", "-t", "play")
        assert "\x1b[1m" in coloured  # bold and reverse carry the looks …
        assert not re.search(r"\x1b\[[0-9;]*(3[0-7]|9[0-7]|38;)[0-9;]*m", coloured)  # … and no colour at all
        term.resize(60, 10)  # too small for the table: the keys stay on screen
        time.sleep(1.0)
        bottom = "\n".join(term.screen().rstrip("\n").splitlines()[-3:])
        assert any(k in bottom for k in ("wait for the others", "d draw", "on its way", "swap it in", "CALL CRISP",
                                         "Enter")), term.screen()
        leave_cleanly(term)
    finally:
        term.close()


def bot_peer(tmp_path: Path, name: str, *args: str) -> tuple[subprocess.Popen[bytes], Path]:
    """A `p2pcards peer` bot process on loopback (no multicast), its output in a file."""
    out = tmp_path / f"{name}.out"
    with open(out, "wb") as f:
        proc = subprocess.Popen([sys.executable, "-m", "p2pcards", "peer", "--name", name, "--interface", "127.0.0.1",
                                 "--json", *args], stdout=f, stderr=subprocess.STDOUT)
    return proc, out


def test_a_client_killed_mid_round_comes_back_into_it_and_the_game_ends_with_the_others(tmp_path: Path) -> None:
    # Host and Bob are bot peers; Tess plays in a real terminal, joining by address. Killed (SIGKILL) with a drawn
    # card in hand, her client is started again: it offers the game, Enter takes her back into the same turn.
    # Started again with --record, it saves the whole game, made from its journal and what came after.
    host, host_out = bot_peer(tmp_path, "Host", "--create", "--game", "crisp", "--limit", "10", "--players", "3",
                              "--no-mdns")
    bob: subprocess.Popen[bytes] | None = None
    home = tmp_path / "home"
    env = dict(os.environ, P2PCARDS_HOME=str(home), TERM="xterm-256color")
    term: Terminal | None = None
    try:
        deadline = time.time() + 30
        while not (port := re.search(r"on port (\d+)", host_out.read_text())) and time.time() < deadline:
            time.sleep(0.1)
        assert port, host_out.read_text()
        address = f"127.0.0.1:{port.group(1)}"
        bob, bob_out = bot_peer(tmp_path, "Bob", "--peer", address)
        command = f"exec {sys.executable} -m p2pcards play --peer {address} --interface 127.0.0.1"
        term = Terminal(f"{command} --name Tess", env)
        wait_for(term, address, 30)
        term.keys("Enter")  # join the one table given by address; the host seats it once Bob and we are in
        wait_for(term, " d draw", 60)  # the key, not "no discard draws" in the lobby
        term.keys("d")
        drew = re.search(r"You drew: (\S+)", wait_for(term, "You drew: ", 10))
        assert (home / "state" / "journal").stat().st_size > 0  # our seat, journaled before anything is sent
        pid = int(term._tmux("display", "-p", "-t", "play", "#{pane_pid}"))
        os.kill(pid, signal.SIGKILL)
        while term.alive():  # its one window closes with it, and the tmux server with that
            time.sleep(0.05)
        term.close()
        record = tmp_path / "back.p2pt"
        term = Terminal(f"{command} --record {record}", env)
        screen = wait_for(term, "Your game is not over", 30)
        assert "You were playing Crisp with Host, Bob" in screen
        term.keys("Enter")
        screen = wait_for(term, "You drew: ", 30)  # the same turn, the card we drew still in hand
        again = re.search(r"You drew: (\S+)", screen)
        assert drew and again and again.group(1) == drew.group(1), screen
        deadline = time.time() + 60
        while time.time() < deadline and "Game over" not in screen:
            key = person_key(screen)
            if key is not None:
                term.keys(key)
            time.sleep(0.3)
            screen = term.screen()
        assert "Game over" in screen and "Tess" in screen, screen
        host.wait(30)
        bob.wait(30)
        results = [json.loads(out.read_text().splitlines()[-1]) for out in (host_out, bob_out)]
        assert all(r["finished"] and not r["faults"] for r in results), results
        assert "Tess is back" in host_out.read_text() and "votes" not in host_out.read_text()
        assert not (home / "state" / "journal").exists()  # the table is over: nothing to come back to
        term.keys("Q")  # back to the lobby, the record saved; Q there quits
        wait_for(term, "Back in the lobby. Last game:", 15)
        term.keys("Q")
        deadline = time.time() + 15
        while term.alive() and time.time() < deadline:
            time.sleep(0.2)
        verdict = subprocess.run([sys.executable, "-m", "p2pcards", "verify", str(record)], capture_output=True,
                                 text=True)
        assert verdict.returncode == 0 and "verified: game over" in verdict.stdout, verdict.stdout
    finally:
        if term is not None:
            term.close()
        for proc in (host, bob):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait(10)


def test_q_at_a_table_reached_through_the_lobby_goes_back_to_the_lobby(tmp_path: Path) -> None:
    # The lobby without multicast (a host given by address that is not there): a bot game, left with Q, comes back.
    env = dict(os.environ, P2PCARDS_HOME=str(tmp_path), TERM="xterm-256color")
    term = Terminal(f"{sys.executable} -m p2pcards play --peer 127.0.0.1:9 --name Tess", env)
    try:
        wait_for(term, "play against bots", 20)
        term.keys("b", "1", "1")  # Crisp against one bot
        assert "Q leave" in wait_for(term, "Draw pile:", 60)
        term.keys("Q")
        question = " ".join(wait_for(term, "Leave the table?", 5).split())
        assert "The bots leave with you. y back to the lobby n stay" in question
        term.keys("y")
        assert "play against bots" in wait_for(term, "Back in the lobby: you left the table.", 15)
        term.keys("Q")
        deadline = time.time() + 10
        while term.alive() and time.time() < deadline:
            time.sleep(0.2)
        assert not term.alive(), "Q in the lobby did not quit"
    finally:
        term.close()
