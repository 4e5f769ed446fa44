"""`p2pcards bench net`: its latency figures, and one real run between processes."""

from __future__ import annotations

import argparse
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from p2pcards.cli import main
from p2pcards.errors import InputError, RunFailed
from p2pcards.net import bench as bench_net
from p2pcards.net.bench import goal_figures, goal_line, memory_figures, net_figures, percentiles, row_line, run


def test_percentiles_are_the_median_and_the_99th_in_ms() -> None:
    assert percentiles([]) == "-"
    assert percentiles([0.002]) == "2/2"
    assert percentiles([i / 1000 for i in range(1, 100)]) == "50/99"  # fewer than 100: the slowest
    assert percentiles([i / 1000 for i in range(1, 101)]) == "50/99"  # ms 1..100: median 50.5 rounds to 50
    assert percentiles([i / 1000 for i in range(1, 201)]) == "100/198"  # the 198th of 200


@pytest.mark.parametrize("games, peers, limit, repeat, says", [
    ("crisp", "2", 5, 0, "--repeat"),
    ("crisp", "2", 10 ** 23, 1, "--limit"),
    ("crescendo", "7,8", 5, 1, "crescendo seats 2 to 6"),
])
def test_bench_net_refuses_what_it_cannot_run(games: str, peers: str, limit: int, repeat: int, says: str) -> None:
    with pytest.raises(InputError, match=says):
        run(argparse.Namespace(games=games, peers=peers, limit=limit, slow=0, journal=False, repeat=repeat))


@pytest.mark.slow  # a whole game between two processes
def test_bench_net_reports_draw_and_move_latency(capsys: pytest.CaptureFixture[str]) -> None:
    figures = run(argparse.Namespace(games="crisp", peers="2", limit=5, slow=1.2, journal=False, repeat=1))
    out = capsys.readouterr().out.splitlines()
    assert [row_line(row) for row in figures.rows] == out[2:5] and len(figures.more["slow_link"]) == 3
    [goal] = figures.more["goals"]
    assert out[5] == "" and out[6].startswith("the goals:") and "draw ms p99" in out[7], out
    assert out[8] == goal_line(goal) and goal["setup_over_crypto"] > 0, out
    slow = [line.split() for line in out[out.index("", 6) + 3:]]
    assert len(slow) == 3 and [row[1] for row in slow] == ["none", "1.2", "1.2"], out
    assert all(row[-2] == "0" and row[-1] == "3/3" for row in slow), out  # a slow link blames no one
    assert "draw ms p50/99" in out[1]
    tcp, memory, cores = out[2].split(), out[3].split(), out[4].split()
    assert tcp[:3] == ["crisp", "2", "tcp"] and tcp[-1] == "2/2"
    assert memory[0] == "memory" and memory[-1] == "2/2"  # the same table in memory, under it
    assert cores[0] == "cores" and cores[-1] == "2/2"  # and with a core per peer
    for row in (tcp, memory, cores):
        draws, draw, move = int(row[-4]), row[-3], row[-2]
        assert draws > 0 and draw != "-" and move != "-", out
        assert all(int(x) >= 0 for x in draw.split("/") + move.split("/"))


@pytest.mark.slow  # a whole game between two processes
def test_bench_net_with_journals_plays_the_same_game_and_leaves_no_state(capsys: pytest.CaptureFixture[str]) -> None:
    def states() -> set[Path]:
        return set(Path(tempfile.gettempdir()).glob("p2pcards-bench-*"))

    before = states()  # a bench killed earlier may have left its own
    assert run(argparse.Namespace(games="crisp", peers="2", limit=5, slow=0, journal=True, repeat=1)).rows
    out = capsys.readouterr().out.splitlines()
    row = out[2].split()
    assert row[:3] == ["crisp", "2", "tcp+j"] and row[-1] == "2/2" and row[-3] != "-", out
    assert states() <= before  # every journal went with its table


def _peer(draws: list[float], cpu: float, finished: bool = True) -> dict[str, object]:
    return {"ready_at": 100.0, "first_turn_at": 101.0, "end_at": 110.0, "cpu_s": cpu, "peak_rss_kib": 1024,
            "frames_out": 10, "bytes_out": 2048, "latency": {"draw": draws, "swap": [0.5]}, "finished": finished}


def test_a_row_pools_the_draws_of_every_game() -> None:
    one = [_peer([0.001, 0.002], 1.0), _peer([0.003], 3.0)]
    two = [_peer([0.004], 2.0), _peer([], 2.0, finished=False)]
    figures = net_figures("crisp", 2, [one, two], "tcp")
    assert figures["draw_ms"] == pytest.approx([1, 2, 3, 4])  # every draw, for a file's reader to count its own way
    row = row_line(figures).split()
    assert row[:3] == ["crisp", "2", "tcp"] and row[3:5] == ["1.00", "10.0"] and row[5] == "2.00"  # mean CPU
    assert row[-4:] == ["4", "2/4", "252/500", "3/4"]  # moves: the draws and 4 swaps
    memory = row_line(memory_figures("crisp", 2, [
        {"setup": 1.0, "game": 5.0, "cpu": 1.0, "finished": 2, "latency": [{"draw": [0.001]}]},
        {"setup": 3.0, "game": 7.0, "cpu": 2.0, "finished": 1, "latency": [{"draw": [0.009]}]}]))
    assert memory.split() == ["memory", "2.00", "6.0", "1.50", "2", "5/9", "5/9", "3/4"]


def test_the_goals_are_each_tcp_rows_draw_p99_and_its_set_up_over_the_cores_rows() -> None:
    def row(kind: str, peers: int, setup: float, p99: float | None) -> dict[str, object]:
        return {"game": "crisp", "peers": peers, "kind": kind, "setup_s": setup, "draw_ms_p99": p99}

    rows = [row("tcp", 8, 1.5, 9.25), row("memory", 8, 2.4, 4.0), row("cores", 8, 0.75, 3.0),
            row("tcp+j", 2, 0.2, None), row("memory", 2, 0.2, None), row("cores", 2, 0.1, None)]
    goals = goal_figures(rows)
    assert [(g["kind"], g["peers"], g["setup_over_crypto"]) for g in goals] == [("tcp", 8, 2.0), ("tcp+j", 2, 2.0)]
    assert goal_line(goals[0]).split() == ["crisp", "8", "tcp", "9.2", "1.50", "s", "/", "0.75", "s", "=", "2.0×"]
    assert goal_line(goals[1]).split()[3] == "-"


def _gone(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().split(")")[-1].split()[0] == "Z"  # reaped by no one here
    except FileNotFoundError:
        return True


@pytest.mark.slow  # two peer processes
def test_bench_net_stopped_by_sigterm_takes_its_peers_and_journals_with_it(tmp_path: Path) -> None:
    env = dict(os.environ, TMPDIR=str(tmp_path))
    bench = subprocess.Popen([sys.executable, "-m", "p2pcards", "bench", "net", "--games", "crisp", "--peers", "2",
                              "--slow", "0", "--journal"], env=env, stdout=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 60
        while not list(tmp_path.glob("p2pcards-bench-*/1/journal")) and time.monotonic() < deadline:
            time.sleep(0.1)
        peers = [int(p) for p in Path(f"/proc/{bench.pid}/task/{bench.pid}/children").read_text().split()]
        assert len(peers) == 2 and list(tmp_path.iterdir())
        bench.send_signal(signal.SIGTERM)
        assert bench.wait(20) == 128 + signal.SIGTERM
        assert list(tmp_path.iterdir()) == []  # the peers' journals went with the bench
        deadline = time.monotonic() + 10
        while not all(_gone(p) for p in peers) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert all(_gone(p) for p in peers)
    finally:
        bench.kill()


def test_a_guest_that_cannot_start_ends_the_game_at_once_with_what_it_said(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    # Once, a guest that ended before it joined left the host waiting for its seat, and the bench for 15 minutes.
    not_a_seat = tmp_path / "file"
    not_a_seat.write_text("")
    real = bench_net._peer

    def peer(*args: str, log: Path | None = None) -> subprocess.Popen[str]:
        return real(*args, *(["--state", str(not_a_seat)] if "--peer" in args else []), log=log)

    monkeypatch.setattr(bench_net, "_peer", peer)
    with pytest.raises(RunFailed, match=r"peer 1 ended with status 2 before the game did: .*is not a directory"):
        bench_net.play_net("crisp", 2, 5, limit_s=120)


def test_waiting_on_peers_takes_a_cut_off_seats_status_and_gives_up_after_its_limit(tmp_path: Path) -> None:
    def proc(status: int, sleep: float = 0) -> subprocess.Popen[str]:
        return subprocess.Popen([sys.executable, "-c", f"import sys, time; time.sleep({sleep}); sys.exit({status})"],
                                stdout=subprocess.PIPE, text=True)

    bench_net._wait([proc(0, 0.5), proc(3)], [None, None], 60)  # 3: a seat cut off gave up, as a game may end
    slow = proc(0, 60)
    try:
        with pytest.raises(RunFailed, match="did not end within 0.5 s"):
            bench_net._wait([slow], [None], 0.5)
    finally:
        slow.kill()
        slow.wait()


def test_bench_net_says_why_a_run_failed_in_one_line(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    def failing(*args: object, **kwargs: object) -> list[dict[str, object]]:
        raise RunFailed("peer 3 ended with status 1 before the game did: p2pcards peer: link broken")

    monkeypatch.setattr(bench_net, "play_net", failing)
    assert main(["bench", "net", "--games", "crisp", "--peers", "2", "--slow", "0"]) == 1
    assert capsys.readouterr().err == ("p2pcards bench: peer 3 ended with status 1 before the game did: "
                                       "p2pcards peer: link broken\n")
