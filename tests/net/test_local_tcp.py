"""Real end-to-end runs: one process per seat, real TCP on loopback, real keys and deck crypto."""

from __future__ import annotations

import pytest

from p2pcards.net.local import run_local_game

pytestmark = pytest.mark.slow  # whole games between processes


@pytest.mark.slow
def test_three_processes_play_crisp_over_tcp() -> None:
    seats = run_local_game("crisp", 3, {"limit": 30, "crisp_window_s": 0.5, "next_start_s": 0.2}, limit_s=240)
    assert all(s["finished"] and s["stopped"] is None and not s["faults"] for s in seats), seats
    assert len({s["log"] for s in seats}) == 1
    assert len({tuple(s["totals"]) for s in seats}) == 1
    assert max(seats[0]["totals"]) >= 30


@pytest.mark.slow
def test_two_processes_play_crescendo_over_tcp() -> None:
    seats = run_local_game("crescendo", 2, {"number_window_s": 0.3}, limit_s=400)
    assert all(s["finished"] and s["stopped"] is None and not s["faults"] for s in seats), seats
    assert len({s["log"] for s in seats}) == 1
    assert seats[0]["rounds"] == 3
