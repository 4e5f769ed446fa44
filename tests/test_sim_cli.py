"""`p2pcards sim`: a whole simulated table, and one seat cheating while the others catch it."""

from __future__ import annotations

import pytest

from p2pcards.cli import main


def test_sim_plays_a_whole_game_between_peers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--players", "3", "--limit", "20", "--seed", "4", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.count("finished") == 3


# king-swap needs a drawn King at the cheater's turn: seed 25 gives it none, so the next seed is tried.
@pytest.mark.parametrize("cheat, seed, fired", [("out-of-turn", 2, 2), ("king-swap", 25, 26), ("withhold-private", 2, 2)])
def test_sim_cheats_are_caught_by_every_honest_peer(cheat: str, seed: int, fired: int,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--cheat", cheat, "--seed", str(seed)]) == 0
    out = capsys.readouterr().out
    assert f"(seed {fired})" in out
    assert "blamed p1 first and ended alike: yes" in out


def test_sim_refuses_a_cheater_seat_not_at_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--cheat", "out-of-turn", "--cheater", "7"]) == 2
    assert "--cheater" in capsys.readouterr().err
