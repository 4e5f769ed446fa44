"""The crypto benchmark runs, counts the operations each step needs, and prints a table with ratios."""

from __future__ import annotations

import argparse

import pytest

from p2pcards.bench import crypto as bench
from p2pcards.errors import InputError


@pytest.mark.slow  # the crypto bench at every table size
def test_counts_match_the_protocol() -> None:
    """Operation counts per step follow from the protocol: e.g. a proven pass, checked by S-1 peers."""
    costs = {op: 1e-6 for op in bench.PRIMITIVES}
    rows = {r.step: r for r in bench.bench_config(52, 3, costs, repeat=1)}
    n, s = 52, 3
    # pass: n·G and n·PK; proof: u (n·G), B (n·G, n var), A' (n var), B' (n·G, n var), F' (2n var + 1), 4 more ·G
    assert (rows["pass"].counts["mul"], rows["pass"].counts["base"]) == (6 * n + 1, 4 * n + 4)
    # verify: A, Σk_E·h, B' (2n), F and Σk_E·out (4n), plus (Πe)·h_0, v·C, v·D, k_F·PK; k_B·G and 4 more ·G
    assert (rows["verify"].counts["mul"], rows["verify"].counts["base"]) == (8 * n + 4, n + 4)
    assert rows["verify"].counts.get("valid", 0) == 0  # every received point is validated by the mul it enters
    sh = rows["shuffle"].counts
    assert sh["mul"] == s * (6 * n + 1) + s * (s - 1) * (8 * n + 4)
    assert sh["base"] == s * (4 * n + 4) + s * (s - 1) * (n + 4)
    pr = rows["private"].counts
    shares = s * (s - 1) * bench.HAND
    # prover: x·c1, k·c1 (+ k·G); verifier: e·D, e·PK, s·c1 (+ s·G); recipient: own share
    assert pr["mul"] == 2 * shares + 3 * shares + s * bench.HAND
    assert pr["base"] == 2 * shares
    for r in rows.values():
        assert r.seconds > 0 and r.bound > 0 and (r.wire > 0) == (r.step != "verify")
    assert rows["shuffle"].wire > s * n * 64


@pytest.mark.slow  # the whole crypto bench, briefly
def test_run_prints_table(capsys: pytest.CaptureFixture[str]) -> None:
    """`p2pcards bench crypto --configs 52x2` prints every step with a ratio."""
    p = argparse.ArgumentParser()
    bench.add_arguments(p)
    assert len(bench.run(p.parse_args(["--configs", "52x2", "--repeat", "1"])).rows) == len(bench.STEPS)
    out = capsys.readouterr().out
    for step in bench.STEPS:
        assert f" {step} " in out
    assert "worst ratio" in out
    assert "52 cards x  2 seats" in out


def test_bad_configs() -> None:
    """Unknown deck sizes and seat counts are input errors."""
    for bad in ("52", "53x2", "52x1", "axb"):
        with pytest.raises(InputError):
            bench.parse_configs(bad)
