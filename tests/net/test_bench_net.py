"""`p2pcards bench net`: its latency figures, and one real run between processes."""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pytest

from p2pcards.net.bench import percentiles, run


def test_percentiles_are_the_median_and_the_99th_in_ms() -> None:
    assert percentiles([]) == "-"
    assert percentiles([0.002]) == "2/2"
    assert percentiles([i / 1000 for i in range(1, 101)]) == "50/100"  # ms 1..100: median 50.5 rounds to 50


@pytest.mark.slow  # a whole game between two processes
def test_bench_net_reports_draw_and_move_latency(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(argparse.Namespace(games="crisp", peers="2", limit=5, slow=1.2, journal=False)) == 0
    out = capsys.readouterr().out.splitlines()
    slow = [line.split() for line in out[out.index("") + 3:]]
    assert len(slow) == 3 and [row[1] for row in slow] == ["none", "1.2", "1.2"], out
    assert all(row[-2] == "0" and row[-1] == "3/3" for row in slow), out  # a slow link blames no one
    assert "draw ms p50/99" in out[1]
    tcp, memory = out[2].split(), out[3].split()
    assert tcp[:3] == ["crisp", "2", "tcp"] and tcp[-1] == "2/2"
    assert memory[0] == "memory" and memory[-1] == "2/2"  # the same table in memory, under it
    for row in (tcp, memory):
        draws, draw, move = int(row[-4]), row[-3], row[-2]
        assert draws > 0 and draw != "-" and move != "-", out
        assert all(int(x) >= 0 for x in draw.split("/") + move.split("/"))


@pytest.mark.slow  # a whole game between two processes
def test_bench_net_with_journals_plays_the_same_game_and_leaves_no_state(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(argparse.Namespace(games="crisp", peers="2", limit=5, slow=0, journal=True)) == 0
    out = capsys.readouterr().out.splitlines()
    row = out[2].split()
    assert row[:3] == ["crisp", "2", "tcp+j"] and row[-1] == "2/2" and row[-3] != "-", out
    assert not list(Path(tempfile.gettempdir()).glob("p2pcards-bench-*"))  # every journal went with its table
