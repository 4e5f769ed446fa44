"""`p2pcards sim`: a whole simulated table, and one seat cheating while the others catch it."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from p2pcards.cli import main


def test_sim_plays_a_whole_game_between_peers(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--players", "3", "--limit", "20", "--seed", "4", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert out.count("finished") == 3
    assert "honest peers agreed on every result: yes (1/1 games)" in out


def test_sim_plays_a_batch_of_games(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "1", "--games", "3"]) == 0
    out = capsys.readouterr().out
    assert "sim crisp, 2 players, seeds 1 to 3" in out and "games 3," in out


# king-swap needs a drawn King at the cheater's turn: seed 25 gives it none, so the next seed is tried.
@pytest.mark.parametrize("cheat, seed, fired, caught", [
    pytest.param("out-of-turn", 2, 2, "p0 rejected moves of p1; p2 rejected moves of p1", marks=pytest.mark.slow),
    # king-swap (caught by the audit only) is tried by tests/sim/test_transcript.py, which records it
    ("withhold-private", 2, 2, "p0 blamed p1; p2 blamed p1")])
def test_sim_cheats_are_caught_by_every_honest_peer(cheat: str, seed: int, fired: int, caught: str,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--cheat", cheat, "--seed", str(seed)]) == 0
    out = capsys.readouterr().out
    assert f"seed {fired}: caught; {caught}" in out
    assert "caught in 1/1 games" in out


def test_sim_refuses_a_cheater_seat_not_at_the_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--cheat", "out-of-turn", "--cheater", "7"]) == 2
    assert "--cheater" in capsys.readouterr().err


def test_a_cheating_table_is_given_the_time_its_whole_game_needs() -> None:
    """Crescendo has no limit a cheat can shorten: its cheating table once stopped at 300 s of table time, when an
    honest game of random bots takes 200 to 300 s, and a cheat rejected as it should was reported NOT CAUGHT
    ("p0 did not finish: still waiting"). A longer Crisp limit needs longer too."""
    from p2pcards.sim.cli import game_until
    assert game_until("crisp", 30, cheat=True, tcp=False) == 300.0
    assert game_until("crisp", 100, cheat=True, tcp=True) >= 1000.0
    assert game_until("crescendo", None, cheat=True, tcp=False) >= 1800.0
    assert game_until("crescendo", None, cheat=True, tcp=True) >= 1800.0
    assert game_until("crisp", None, cheat=False, tcp=False) == 36000.0
    assert game_until("crescendo", None, cheat=False, tcp=True) == 1800.0


@pytest.mark.slow  # a whole Crescendo game of random bots (about 8 s)
def test_a_rejected_cheat_at_crescendo_is_caught_in_a_long_game(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crescendo", "--cheat", "number-unheld", "--seed", "5", "--quiet"]) == 0
    assert "seed 5: caught" in capsys.readouterr().out


def test_a_sim_stopped_by_a_signal_saves_its_record_so_far(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture[str]) -> None:
    """The README: SIGTERM (or Ctrl-C) leaves a game cleanly, its --record saved; sim's was lost."""
    import random
    import p2pcards.sim.cli as sim_cli
    from p2pcards.cli import Terminated
    from p2pcards.sim.memnet import MemNet
    from p2pcards.sim.table_game import make_table

    def stopped(*args: object, prepare: object, **kwargs: object) -> None:
        peers = make_table("crisp", 2, {"limit": 10}, random.Random(1))
        prepare(MemNet(peers, [None, None], random.Random(2)), peers)  # type: ignore[operator]
        raise Terminated()

    monkeypatch.setattr(sim_cli, "play_batch", stopped)
    path = tmp_path / "stopped.p2pt"
    assert main(["sim", "crisp", "--players", "2", "--quiet", "--record", str(path)]) == 143
    assert "the game so far is in" in capsys.readouterr().err
    assert main(["verify", str(path)]) == 3  # a game that stops short
    assert "INCOMPLETE" in capsys.readouterr().out


def test_the_json_params_give_the_links_delay_and_jitter_that_faults_set(tmp_path: Path,
                                                                         capsys: pytest.CaptureFixture[str]) -> None:
    # --faults delay=20 with --delay-ms 5 played on 20 ms links, but params read delay_ms 5; and jitter=0, given,
    # was left out of params.faults ("") and the report's line read "faults (none)".
    report = tmp_path / "r.json"
    assert main(["sim", "crisp", "--players", "2", "--limit", "5", "--seed", "1", "--quiet", "--delay-ms", "5",
                 "--faults", "delay=20,jitter=0", "--json", str(report)]) == 0
    params = json.loads(report.read_text())["params"]
    assert (params["delay_ms"], params["jitter_ms"], params["faults"]) == (20, 0, "delay=20,jitter=0")
    assert "faults (delay=20,jitter=0): survived in 1/1 games" in capsys.readouterr().out


def test_sim_help_gives_every_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    # verify --help gave its exit statuses; sim --help gave none (only the README did).
    assert main(["sim", "--help"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "Exit status: 0 every game came out right; 1 honest peers disagreed" in text
    assert "2 a bad option or file; 130 (Ctrl-C) or 128 + the signal (SIGTERM: 143)" in text


def test_the_log_blames_a_seat_only_for_what_it_did_not_for_being_missing_or_back(
        capsys: pytest.CaptureFixture[str]) -> None:
    # A partition's log read "p3 is missing: no heartbeat (the partition)  [blame: p3]" and "p3 is back  [blame: p3]".
    assert main(["sim", "crisp", "--players", "4", "--limit", "20", "--seed", "4", "--faults", "partition=3:20"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "    back  p3 is back" in lines
    assert not [line for line in lines if "[blame:" in line]


@pytest.mark.parametrize("extra", [[], ["--tables", "2"]])
def test_a_crash_of_the_cheaters_own_seat_in_memory_is_one_line(extra: list[str],
                                                                capsys: pytest.CaptureFixture[str]) -> None:
    # Over tcp it was refused; in memory the cheater came back an honest peer from its cheat's journal, and
    # resuming "went another way": a LocalError's traceback.
    assert main(["sim", "crisp", "--faults", "restart=3", "--cheat", "withhold-private", "--cheater", "2",
                 "--seed", "1", *extra]) == 2
    err = capsys.readouterr().err
    assert err == "p2pcards sim: --faults restart/gone: a seat that crashes cannot be the cheater too\n"


def test_the_cheat_list_as_json_gives_a_script_every_cheat(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `sim --cheat list --json -` printed the list to standard error and nothing to standard output; with a FILE
    # it wrote no file.
    from p2pcards.sim.catalogue import CATALOGUE

    assert main(["sim", "--cheat", "list", "--json", "-"]) == 0
    captured = capsys.readouterr()
    data = json.loads(captured.out)
    assert [c["name"] for c in data["cheats"]] == list(CATALOGUE) and "king-swap" in captured.err
    mark = next(c for c in data["cheats"] if c["name"] == "pass-mark")
    assert mark == {"name": "pass-mark", "games": ["crisp", "crescendo"], "expect": "void", "never_from_seat": 0,
                    "orders": False, "what": CATALOGUE["pass-mark"].what}
    assert set(data["expect"]) == {c["expect"] for c in data["cheats"]}
    path = tmp_path / "cheats.json"
    assert main(["sim", "--cheat", "list", "--json", str(path)]) == 0
    assert json.loads(path.read_text()) == data
