"""`p2pcards bench KIND --json FILE`: the printed figures as numbers, with the options that produced them, on the
smallest runs the options allow (the costly parts of crypto and net stood in for: their rows are built alike)."""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from p2pcards.bench import KINDS
from p2pcards.bench import crypto as bench_crypto
from p2pcards.cli import main
from p2pcards.net import bench as bench_net


def bench(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[dict[str, Any], list[str]]:
    """Run `p2pcards bench ARGV --json -`: its JSON (standard output), and what it printed (standard error)."""
    assert main(["bench", *argv, "--json", "-"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["bench"] == argv[0] and set(data) >= {"params", "rows"}
    return data, err.splitlines()


def test_every_benchmark_takes_json_and_overwrite(capsys: pytest.CaptureFixture[str]) -> None:
    for kind in KINDS:
        assert main(["bench", kind, "--help"]) == 0
        text = capsys.readouterr().out
        assert "--json FILE" in text and "--overwrite" in text and "standard output" in text, kind


def test_bench_engine_json_holds_the_printed_row_as_numbers(capsys: pytest.CaptureFixture[str],
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("p2pcards.bench.engine._pin_one_core", lambda: False)  # not this test process
    data, printed = bench(["engine", "--seconds", "0.01", "--game", "crisp", "--crisp-players", "2", "--seed", "7"],
                          capsys)
    assert data["params"] == {"seconds": 0.01, "seed": 7, "game": "crisp", "crisp_players": 2,
                              "crescendo_players": 4, "pinned": False}
    [row] = data["rows"]
    shown = next(line.split() for line in printed if line.startswith("crisp "))
    assert shown == ["crisp", "2", str(row["games"]), f"{row['games_per_s']:.1f}", f"{row['moves_per_game']:.1f}",
                     f"{row['engine_games_per_s']:.1f}", f"{row['engine_us_per_move']:.1f}"]
    assert row["moves"] / row["games"] == row["moves_per_game"]


def test_bench_bots_json_holds_the_win_rate_and_its_interval(capsys: pytest.CaptureFixture[str]) -> None:
    data, printed = bench(["bots", "--games", "3", "--jobs", "1", "--game", "crisp", "--crisp-players", "2"], capsys)
    assert data["params"]["games"] == 3 and data["params"]["crisp_players"] == 2
    [row] = data["rows"]
    assert row["game"] == "crisp" and row["games"] == 3 and row["win_rate"] == row["wins"] / 3
    assert 0 <= row["ci95_low"] <= row["win_rate"] <= row["ci95_high"] <= 1 and row["random_baseline"] == 0.5
    assert any(f"win rate {row['win_rate']:6.1%}" in line for line in printed)


def test_bench_crypto_json_holds_every_step_the_costs_and_the_shuffle_per_peer(
        capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    costs = {op: 1e-6 for op in bench_crypto.PRIMITIVES}

    def rows(n: int, seats: int, costs: dict[str, float], repeat: int) -> list[bench_crypto.Row]:
        return [bench_crypto.Row(n, seats, step, 0.001 * (i + 1), 0.0, {"mul": 10 * (i + 1)}, 100 * i)
                for i, step in enumerate(bench_crypto.STEPS)]

    monkeypatch.setattr(bench_crypto, "measure_costs", lambda: costs)
    monkeypatch.setattr(bench_crypto, "bench_config", rows)
    data, printed = bench(["crypto", "--configs", "52x2", "--repeat", "1"], capsys)
    assert data["params"] == {"configs": [{"cards": 52, "seats": 2}], "repeat": 1}
    assert [r["step"] for r in data["rows"]] == list(bench_crypto.STEPS)
    verify = next(r for r in data["rows"] if r["step"] == "verify")
    assert verify["seconds"] == 0.003 and verify["bound_s"] == pytest.approx(30e-6) and verify["wire_bytes"] == 200
    assert verify["counts"] == {op: 30 if op == "mul" else 0 for op in bench_crypto.PRIMITIVES}
    assert verify["ratio"] == pytest.approx(100)
    assert data["cost_s_per_call"] == costs
    assert data["shuffle_per_peer_s"] == [{"cards": 52, "seats": 2, "seconds": pytest.approx(0.005)}]  # pass + 1 verify
    assert data["worst"] == {"cards": 52, "seats": 2, "step": "keys", "ratio": pytest.approx(100)}
    assert any(line.startswith("worst ratio 100.00 (52x2 keys)") for line in printed)


@pytest.fixture
def quick_net(monkeypatch: pytest.MonkeyPatch) -> None:
    """`bench net` with each game stood in for by its figures: two games between processes, two in memory."""
    def peer(cpu: float, draws: list[float]) -> dict[str, Any]:
        return {"ready_at": 100.0, "first_turn_at": 101.0, "end_at": 110.0, "cpu_s": cpu, "peak_rss_kib": 2048,
                "frames_out": 10, "bytes_out": 4096, "latency": {"draw": draws}, "finished": True}

    def memory(game: str, n: int, limit: int) -> dict[str, Any]:
        return {"setup": 1.0, "game": 5.0, "cpu": 0.5, "finished": n, "latency": [{"draw": [0.002]}] * n}

    monkeypatch.setattr(bench_net, "play_net", lambda game, n, limit, journal=False: [peer(1.0, [0.004])] * n)
    monkeypatch.setattr(bench_net, "play_memory", memory)
    monkeypatch.setattr(bench_net, "play_cores", memory)


def test_bench_net_json_holds_each_printed_row_and_its_options(quick_net: None,
                                                               capsys: pytest.CaptureFixture[str]) -> None:
    data, printed = bench(["net", "--games", "crisp", "--peers", "2,3", "--limit", "5", "--slow", "0"], capsys)
    assert data["params"] == {"games": ["crisp"], "peers": [2, 3], "limit": 5, "repeat": 1, "journal": False,
                              "slow": 0.0, "lan_delay_s": bench_net.LAN_DELAY_S, "lan_jitter_s": bench_net.LAN_JITTER_S}
    assert [(r["peers"], r["kind"]) for r in data["rows"]] == [(2, "tcp"), (2, "memory"), (2, "cores"),
                                                               (3, "tcp"), (3, "memory"), (3, "cores")]
    tcp, memory = data["rows"][:2]
    assert tcp == {"game": "crisp", "peers": 2, "kind": "tcp", "games": 1, "setup_s": 1.0, "game_s": 10.0,
                   "cpu_s_per_peer": 1.0, "peak_mib": 2.0, "frames_per_peer": 10, "kib_per_peer": 4.0, "draws": 2,
                   "draw_ms": [4.0, 4.0], "draw_ms_p50": 4.0, "draw_ms_p99": 4.0, "move_ms_p50": 4.0,
                   "move_ms_p99": 4.0, "finished": 2, "of": 2}
    assert memory["peak_mib"] is None and memory["draw_ms_p50"] == 2.0 and memory["finished"] == 2
    assert [bench_net.row_line(r) for r in data["rows"]] == printed[2:8]  # the same figures as the rows printed
    assert data["goals"] == [{"game": "crisp", "peers": n, "kind": "tcp", "draw_ms_p99": 4.0, "setup_s": 1.0,
                              "crypto_setup_s": 1.0, "setup_over_crypto": 1.0} for n in (2, 3)]
    assert [bench_net.goal_line(g) for g in data["goals"]] == printed[11:13]
    assert data["slow_link"] == []


def test_bench_net_json_of_the_slow_link_rows(quick_net: None, capsys: pytest.CaptureFixture[str],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    def table(game: str, n: int, options: dict[str, Any], seed: int, seat_links: dict[int, Any]) -> Any:
        slow = 1 in seat_links
        peers = [SimpleNamespace(faults=[], finished=True) for _ in range(3)]
        latency = [{"draw": [0.5 if slow and i == 1 else 0.01], "swap": [0.02]} for i in range(3)]
        return SimpleNamespace(now=60.0 if slow else 40.0, latency=latency, peers=peers)

    monkeypatch.setattr(bench_net, "play_table", table)
    data, printed = bench(["net", "--games", "crisp", "--peers", "2", "--slow", "0.5"], capsys)
    assert [(r["slow_s"], r["spikes"], r["game_s"]) for r in data["slow_link"]] == \
        [(0.0, False, 40.0), (0.5, False, 60.0), (0.5, True, 60.0)]
    slow = data["slow_link"][1]
    assert (slow["draw_ms_slow"], slow["draw_ms_others"], slow["faults"], slow["finished"]) == (500.0, 10.0, 0, 3)
    assert printed[-2].split() == ["crisp", "0.5", "s", "60", "500", "10", "260", "15", "0", "3/3"]


def test_bench_table_json_holds_the_game_its_traffic_and_its_cpu_split(capsys: pytest.CaptureFixture[str]) -> None:
    data, printed = bench(["table", "--game", "crisp", "--crisp-players", "2", "--limit", "1", "--top", "2"], capsys)
    assert data["params"] == {"game": "crisp", "crisp_players": 2, "crescendo_players": 6, "limit": 1, "seed": 1,
                              "bots": "random", "top": 2}
    [row] = data["rows"]
    assert row["game"] == "crisp" and row["finished"] and row["rounds"] == 1 and len(row["hot"]) == 2
    assert row["messages"] == sum(t["messages"] for t in row["by_type"].values()) > 0
    assert row["bytes"] == sum(t["bytes"] for t in row["by_type"].values())
    assert set(row["cpu_split_estimate_s"]) == {"crypto", "signing", "encoding", "rules", "rest"}
    assert printed[-1] == f"everything else / crypto, plain-run estimate (goal: below 1): crisp " \
                          f"{row['else_over_crypto_estimate']:.2f}"


def test_bench_json_refuses_a_file_that_exists_before_it_starts_and_replaces_it_with_overwrite(
        tmp_path: Path, quick_net: None, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "figures.json"
    saved.write_text("last month's figures")
    argv = ["bench", "net", "--games", "crisp", "--peers", "2", "--slow", "0", "--json", str(saved)]
    assert main(argv) == 2
    out, err = capsys.readouterr()
    assert out == "" and f"--json: {saved} already exists" in err and saved.read_text() == "last month's figures"
    assert main([*argv, "--overwrite"]) == 0
    out, err = capsys.readouterr()
    assert "bench net:" in out and err == ""  # to a file, the figures are printed as ever
    assert [r["kind"] for r in json.loads(saved.read_text())["rows"]] == ["tcp", "memory", "cores"]
    assert [p.name for p in tmp_path.iterdir()] == ["figures.json"]
