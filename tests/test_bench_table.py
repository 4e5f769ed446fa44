"""`p2pcards bench table` on tiny games: it plays them and prints every figure (no timed assertions)."""

from __future__ import annotations

import argparse

import pytest

from p2pcards.bench import KINDS
from p2pcards.bench import table


@pytest.mark.slow  # a whole game or two: tens of seconds
def test_bench_table_prints_the_figures(capsys: pytest.CaptureFixture[str]) -> None:
    assert KINDS["table"][0] == "p2pcards.bench.table"
    parser = argparse.ArgumentParser()
    table.add_arguments(parser)
    args = parser.parse_args(["--crisp-players", "2", "--crescendo-players", "2", "--limit", "10", "--top", "3"])
    assert [row["game"] for row in table.run(args).rows] == ["crisp", "crescendo"]
    out = capsys.readouterr().out
    for name in ("crisp, 2 players", "crescendo, 2 players"):
        assert name in out
    for figure in ("wall time", "CPU time", "virtual game time", "rounds", "messages", "sent", "shares", "pass",
                   "crypto", "signing", "encoding", "rules", "rest", "everything else / crypto",
                   "profiler-free bound", "largest costs outside crypto", "resume"):
        assert figure in out, figure
    assert out.count("%") > 20
