"""The fault proxy between seat processes (`sim --transport tcp --faults`): closed mid-game, it ends quietly."""

from __future__ import annotations

import random
import socket
import struct
import subprocess
import sys
import textwrap

import pytest

from p2pcards.crypto.envelope import Outbox
from p2pcards.crypto.identity import generate
from p2pcards.net.link import FRAME
from p2pcards.sim.faults import FaultSpec
from p2pcards.sim.proxy import FaultProxy

# A link through the proxy with a frame held at a cut, and the proxy closed while it is piped: what
# `sim --transport tcp --faults …` does when Ctrl-C or SIGTERM (`timeout`) stops it mid-game.
CLOSED_MID_GAME = textwrap.dedent("""
    import random, socket, struct, time
    from p2pcards.net.link import FRAME
    from p2pcards.sim.faults import FaultSpec
    from p2pcards.sim.proxy import FaultProxy
    server = socket.create_server(("127.0.0.1", 0))
    proxy = FaultProxy(FaultSpec.parse("delay=5,partition=0:30"), 2, random.Random(1))
    front = proxy.dial(1, [server.getsockname()[1], 0])[0]
    with socket.create_connection(("127.0.0.1", front)) as dialler:
        upstream, _ = server.accept()
        dialler.sendall(struct.pack(">I", 2) + bytes([FRAME]) + b"x")
        time.sleep(0.3)
        proxy.close()
        assert proxy.loop.is_closed()
        upstream.close()
    server.close()
""")


def test_a_proxy_closed_while_it_pipes_links_leaves_no_traceback_at_exit() -> None:
    done = subprocess.run([sys.executable, "-c", CLOSED_MID_GAME], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stderr == ""  # it printed 'Task was destroyed but it is pending!' and 'Event loop is closed' tracebacks


def test_the_proxy_says_how_far_a_slow_game_has_gone() -> None:
    """A tcp run's progress line read '3 processes playing seed 1' for the ten minutes a slow game took, whether it
    moved or stalled: the proxy, which sees every table frame, says the round and when the last one went by."""
    server = socket.create_server(("127.0.0.1", 0))
    proxy = FaultProxy(FaultSpec.parse("delay=5"), 2, random.Random(1))
    try:
        assert proxy.status() == "no table frame relayed yet"
        frame = Outbox(generate("ann"), b"t" * 16).seal(2, "move", {"m": 1}).frame
        front = proxy.dial(1, [server.getsockname()[1], 0])[0]
        with socket.create_connection(("127.0.0.1", front)) as dialler:
            upstream, _ = server.accept()
            dialler.sendall(struct.pack(">I", len(frame) + 1) + bytes([FRAME]) + frame)
            upstream.settimeout(10)
            assert upstream.recv(4)  # it went through
            upstream.close()
        assert proxy.status().startswith("round 2, 1 table frames relayed, the last ")
    finally:
        proxy.close()
        server.close()


@pytest.mark.slow  # a whole game of two processes
def test_a_tcp_game_without_faults_is_watched_for_the_progress_line_too() -> None:
    """`sim --transport tcp` without --faults had no proxy, and its progress line no word of the game (the round, the
    frames relayed, the last one's age) that the same run with faults had: a watcher gets a proxy that only relays."""
    from p2pcards.sim.tcp import play_game

    watched: list[FaultProxy] = []
    report = play_game("crisp", 2, {"limit": 10}, 1, ["random", "random"], on_proxy=watched.append)
    assert report.ok and report.faults == {}
    [proxy] = watched
    assert proxy.relayed > 0 and proxy.counts == {} and proxy.status().startswith("round ")
