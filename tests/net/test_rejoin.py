"""A seat killed with SIGKILL mid-round comes back from its journal on disk and the game finishes alike."""

from __future__ import annotations

import pytest

from p2pcards.net.local import Crash, run_local_game

pytestmark = pytest.mark.slow  # a whole game between processes, one of them killed and started again


def test_a_seat_killed_mid_round_and_restarted_finishes_the_game_with_everyone() -> None:
    # Seat 1's journal holds about 40 records once round 1's deal is being played.
    seats = run_local_game("crisp", 3, {"limit": 10, "crisp_window_s": 0.5, "next_start_s": 0.2},
                           limit_s=120, crash=Crash(1, 40))
    assert seats[1]["resumed"] and not seats[0]["resumed"], seats
    assert all(s["finished"] and s["stopped"] is None and not s["faults"] for s in seats), seats
    assert len({s["log"] for s in seats}) == 1
    assert len({tuple(s["totals"]) for s in seats}) == 1


def test_a_seat_gone_for_good_is_voted_out_and_the_other_two_finish() -> None:
    seats = run_local_game("crisp", 3, {"limit": 40, "crisp_window_s": 0.5, "next_start_s": 0.2},
                           limit_s=120, crash=Crash(2, 40, back=False), gone_after=2.0)
    assert seats[2] == {}, seats[2]
    left = seats[:2]
    assert all(s["finished"] and s["stopped"] is None and not s["faults"] and s["seats"] == 2 for s in left), left
    assert len({s["log"] for s in left}) == 1
    assert len({tuple(s["totals"]) for s in left}) == 1 and max(left[0]["totals"]) >= 40
