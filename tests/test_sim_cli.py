"""`p2pcards sim`: a whole simulated table, and one seat cheating while the others catch it."""

from __future__ import annotations

import pytest

from p2pcards.cli import main


def test_sim_plays_a_whole_game_between_peers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--players", "3", "--limit", "20", "--seed", "4", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.count("finished") == 3


@pytest.mark.parametrize("cheat", ["out-of-turn", "king-swap", "withhold-private"])
def test_sim_cheats_are_caught_by_every_honest_peer(cheat: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--cheat", cheat, "--seed", "2"]) == 0
    out = capsys.readouterr().out
    assert "blamed p1 first and ended alike: yes" in out


def test_sim_refuses_a_cheater_seat_not_at_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--cheat", "out-of-turn", "--cheater", "7"]) == 2
    assert "--cheater" in capsys.readouterr().err
