"""`p2pcards sim --transport tcp` (every peer a process, real links, faults through a proxy) and the partition fault."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from p2pcards.cli import main
from p2pcards.errors import InputError
from p2pcards.sim.batch import play_batch
from p2pcards.sim.catalogue import CATALOGUE, CheatKind
from p2pcards.sim.faults import FaultSpec, Partition
from p2pcards.sim.tcp import check_tcp_cheat


def test_a_partition_reads_like_the_option() -> None:
    spec = FaultSpec.parse("dup=0.1,partition=3:2.5:0+2")
    assert spec.partition == Partition(3.0, 2.5, (0, 2))
    assert spec.text() == "dup=0.1,partition=3:2.5:0+2"
    assert FaultSpec.parse("partition=1:2").partition == Partition(1.0, 2.0, None)
    assert Partition(1.0, 2.0, None).side(4) == {3}


@pytest.mark.parametrize("args, error", [
    (["--faults", "partition=3"], "is not AT:FOR"),
    (["--faults", "partition=3:0"], "FOR above 0"),
    (["--faults", "partition=1:2:5"], "seats are 0 to 2"),
    (["--faults", "partition=1:2:0+1+2"], "some must stay on the other side"),
    (["--transport", "tcp", "--cheat", "wrong-special"], "a cheat at crescendo"),
    (["--transport", "tcp", "--delay-ms", "3"], "over tcp: --faults delay=MS"),
    (["--transport", "tcp", "--record", "x.p2pt"], "--record: with --transport memory"),
    (["--transport", "udp"], "invalid choice"),
    (["--faults", "gone=3"], "gone=T is over tcp only"),
    (["--transport", "tcp", "--faults", "restart=3,gone=4"], "give one"),
    (["--transport", "tcp", "--faults", "gone=3:2"], "at least 2 of the 3 seats must stay"),
    (["--transport", "tcp", "--faults", "gone=3", "--cheat", "out-of-turn", "--cheater", "2"], "cannot be the cheater"),
])
def test_what_does_not_fit_is_one_line(args: list[str], error: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--players", "3", *args]) == 2
    err = capsys.readouterr().err
    assert error in err and len(err.strip().splitlines()) == 1, err


def test_a_cheat_not_built_for_a_seat_process_is_one_line() -> None:
    kind = CheatKind("net-only", ("crisp",), "a cheat of the memory network alone", "void",
                     lambda seat, players: {"tap": None, "until": 1.0})
    with pytest.raises(InputError, match="net-only is not built for a seat process: --transport memory only"):
        check_tcp_cheat(kind, 3, 1)
    for cheat in CATALOGUE.values():  # every cheat of the catalogue is
        check_tcp_cheat(cheat, 3, 1)


@pytest.mark.parametrize("spec, seed", [("partition=3:2:0", 1), pytest.param("partition=5:8:0+1", 2, marks=pytest.mark.slow)])
def test_honest_peers_survive_a_partition_that_heals_in_memory(spec: str, seed: int) -> None:
    """Seats cut off for a while: what they missed, and what they sent, is asked for again once it heals; an
    order or a move that crossed a long cut comes late through no one's fault (a 5:8 cut once stopped the table)."""
    [report] = play_batch("crisp", 3, {"limit": 30}, seed, 1, faults=FaultSpec.parse(spec))
    assert report.faults["partition"] > 5
    assert report.ok and set(report.ended.values()) == {"finished"}


@pytest.mark.slow  # one whole game of three processes
def test_a_tcp_sim_through_every_fault_of_the_proxy(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    spec = "delay=5,jitter=10,reorder=0.1,drop=0.05,dup=0.1,partition=3:4:1"  # a cut longer than a stamp's margin
    out = tmp_path / "report.json"
    assert main(["sim", "crisp", "--transport", "tcp", "--players", "2", "--limit", "10", "--seed", "1",
                 "--faults", spec, "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "over tcp" in text and f"faults ({spec}): survived in 1/1 games" in text
    assert "peak memory per peer (MiB, each its own process)" in text
    [game] = json.loads(out.read_text())["games"]
    assert game["transport"] == "tcp" and game["ok"] and len(game["rss_mib"]) == 2 and all(game["cpu_s"])
    assert all(game["faults"].get(k) for k in ("reorder", "dup", "drop", "partition")), game["faults"]
    assert game["frames"] > 20 and game["moves"] > 5 and len(set(map(tuple, game["totals"].values()))) == 1


@pytest.mark.slow  # a game of three processes, the cheater's with its cheat
@pytest.mark.parametrize("cheat", ["pass-substitute", "split-view", "chatter-stall"])  # a rewrite of its own frames,
# a tap on its links, a cheat on its own time
def test_a_cheat_over_tcp_is_caught(cheat: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--transport", "tcp", "--players", "3", "--limit", "10", "--seed", "1",
                 "--cheat", cheat]) == 0
    assert "caught in 1/1 games" in capsys.readouterr().out


@pytest.mark.slow  # two games of three processes
@pytest.mark.parametrize("fault, seats", [("restart=3", 3), ("gone=3", 2)])
def test_a_seat_killed_mid_round_over_tcp_comes_back_or_is_gone_for_good(fault: str, seats: int,
                                                                          capsys: pytest.CaptureFixture[str]) -> None:
    # restart: its process is killed with SIGKILL and started again on its journal; gone: it stays
    # dead, the others vote it gone and finish without it (the dead seat is not judged).
    assert main(["sim", "crisp", "--transport", "tcp", "--players", "3", "--limit", "10", "--seed", "1",
                 "--faults", fault]) == 0
    out = capsys.readouterr().out
    assert f"faults ({fault}): survived in 1/1 games" in out and f"{fault.split('=')[0]} 1" in out
    assert len(out.split("CPU per peer per game (s):")[1].split(";")[0].split(",")) == seats


@pytest.mark.slow  # one game of four processes
def test_two_seats_killed_at_once_over_tcp_are_voted_out_together(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--transport", "tcp", "--players", "4", "--limit", "10", "--seed", "1",
                 "--faults", "gone=3:2"]) == 0
    out = capsys.readouterr().out
    assert "faults (gone=3:2): survived in 1/1 games" in out and "gone 2" in out, out
    assert len(out.split("CPU per peer per game (s):")[1].split(";")[0].split(",")) == 2
    assert "  p3   killed for good at 3 s (--faults gone): the others went on without it" in out, out


def test_a_seat_killed_for_good_is_named_with_the_seats_that_finished(capsys: pytest.CaptureFixture[str]) -> None:
    # A 4-seat game with gone=6:2 listed p0 and p1 "finished" and said nothing of p2 and p3.
    import argparse

    from p2pcards.sim.batch import GameReport
    from p2pcards.sim.cli import _report
    from p2pcards.sim.faults import FaultSpec

    r = GameReport(seed=9, rounds=2, moves=16, frames=116, bytes=9000, wall_s=23.0, table_s=21.0, cpu_s=[0.9] * 2,
                   agreed=True, ended={"p0": "finished", "p1": "finished"}, blamed={}, fault_blame={},
                   totals={"p0": [15, 49], "p1": [15, 49]}, faults={"gone": 2}, transport="tcp")
    args = argparse.Namespace(game="crisp", players=4, transport="tcp", games=1)
    assert _report(args, [r], None, FaultSpec.parse("gone=6:2"), {}, lambda data: None) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[2:6] == ["  p0   finished   totals [15, 49]", "  p1   finished   totals [15, 49]",
                          "  p2   killed for good at 6 s (--faults gone): the others went on without it",
                          "  p3   killed for good at 6 s (--faults gone): the others went on without it"]


@pytest.mark.slow  # a game of two or three processes
@pytest.mark.parametrize("fault, players", [("restart=300", 2), ("gone=300", 3)])
def test_a_crash_due_after_the_game_is_over_is_neither_done_nor_counted(fault: str, players: int,
                                                                        capfd: pytest.CaptureFixture[str]) -> None:
    # The victim's process had ended with the game: it was still "killed" and started again (restart: on a
    # table gone, so it dialled until it died without a summary, and the game was reported not survived),
    # and the report counted a crash that never came ("gone 1: survived"). A fault that never fell tested
    # nothing: the run says so and fails.
    assert main(["sim", "crisp", "--transport", "tcp", "--players", str(players), "--limit", "10", "--seed", "1",
                 "--faults", fault]) == 1
    captured = capfd.readouterr()  # the seat processes' stderr too
    assert f"faults ({fault}): survived in 0/1 games (1 where a fault never fell)" in captured.out, captured.out
    assert f"seed 1: NEVER FELL: {fault.split('=')[0]} at 300 s" in captured.out, captured.out
    assert "Traceback" not in captured.err, captured.err
    judged = players - 1 if fault.startswith("gone") else players  # a seat due to go is never judged (nor summed)
    assert len(captured.out.split("CPU per peer per game (s):")[1].split(";")[0].split(",")) == judged


@pytest.mark.parametrize("transport", ["tcp", "memory"])
def test_a_run_stopped_by_a_signal_reports_the_games_already_over(transport: str, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  capsys: pytest.CaptureFixture[str]) -> None:
    """`timeout 45 p2pcards sim crisp --transport tcp --games 20` printed nothing of the games it had played
    when SIGTERM came in the sixth: now it reports those, writes their JSON, and still exits 143."""
    import signal

    from p2pcards.errors import Terminated
    from p2pcards.sim import batch, tcp
    from p2pcards.sim.batch import GameReport

    def game(seed: int) -> GameReport:
        return GameReport(seed=seed, rounds=2, moves=9, frames=50, bytes=5000, wall_s=1.0, table_s=5.0,
                          cpu_s=[0.1] * 2, agreed=True, ended={"p0": "finished", "p1": "finished"},
                          blamed={"p0": [], "p1": []}, fault_blame={}, totals={"p0": [30, 2], "p1": [30, 2]},
                          transport=transport)

    def played_two(*args: object, on_game: Callable[..., None], **kwargs: object) -> list[GameReport]:
        for seed in (7, 8):
            on_game(game(seed), *([] if transport == "tcp" else [type("R", (), {"net": None})()]))
        raise Terminated(signal.SIGTERM)

    monkeypatch.setattr(tcp if transport == "tcp" else batch, "play_batch", played_two)
    if transport == "memory":
        monkeypatch.setattr("p2pcards.sim.cli.play_batch", played_two)
        monkeypatch.setattr("p2pcards.sim.cli.watch", lambda progress, show: lambda net, receiver: None)
    out = tmp_path / "report.json"
    assert main(["sim", "crisp", "--transport", transport, "--games", "5", "--seed", "7", "--quiet",
                 "--json", str(out)]) == 128 + signal.SIGTERM
    captured = capsys.readouterr()
    assert "stopped after 2 of 5 games: the report on those" in captured.err
    assert "seeds 7 to 8" in captured.out and "honest peers agreed on every result: yes (2/2 games)" in captured.out
    report = json.loads(out.read_text())
    assert [g["seed"] for g in report["games"]] == [7, 8] and report["params"]["stopped_after"] == 2


def test_a_run_stopped_before_its_first_game_was_over_still_writes_its_json(tmp_path: Path,
                                                                           monkeypatch: pytest.MonkeyPatch,
                                                                           capsys: pytest.CaptureFixture[str]) -> None:
    # It wrote no file at all: a script that waited for `params.stopped_after` found nothing.
    import signal

    from p2pcards.errors import Terminated
    from p2pcards.sim import tcp

    def played_none(*args: object, **kwargs: object) -> None:
        raise Terminated(signal.SIGTERM)

    monkeypatch.setattr(tcp, "play_batch", played_none)
    out = tmp_path / "report.json"
    assert main(["sim", "crisp", "--transport", "tcp", "--games", "5", "--quiet", "--json", str(out)]) == 143
    assert "stopped after 0 of 5 games" in capsys.readouterr().err
    report = json.loads(out.read_text())
    assert report["games"] == [] and report["params"]["stopped_after"] == 0 and report["summary"]["games"] == 0


@pytest.mark.slow  # a game of three processes, one cut off by the proxy for 40 s
def test_a_seat_cut_off_past_gone_after_over_tcp_gives_up_unfinished_and_the_others_finish(
        capsys: pytest.CaptureFixture[str]) -> None:
    # The last seat's every link is cut (its Wi-Fi lost) well past the vote: it voted both others gone and ended the
    # game alone, "finished" with totals [0, 0, 0], while they went on; now it says it was cut off and finishes nothing.
    assert main(["sim", "crisp", "--transport", "tcp", "--players", "3", "--limit", "10", "--seed", "3",
                 "--faults", "partition=4:40"]) == 1  # a seat cut off past gone_after does not survive the cut
    out = capsys.readouterr().out
    assert re.search(r"p0 +finished", out) and re.search(r"p1 +finished", out), out
    assert re.search(r"p2 +cut off from every other seat: every other seat went missing at once \(p0, p1\): it looks "
                     r"like our own network was lost", out), out
    # It ended nothing the others could contradict: they agree, and it is why the cut was not survived.
    assert "honest peers agreed on every result: yes" in out and "disagreed" not in out, out


@pytest.mark.slow  # a game of three processes, one cut off by the proxy for 12 s
def test_a_seat_cut_off_whose_network_comes_back_after_the_others_voted_it_out_ends_voted_out(
        capsys: pytest.CaptureFixture[str]) -> None:
    # Cut at 4 s, each side finds the other quiet at 9 s and votes at 14 s (gone_after 5 s): the two decide it out and
    # go on, while it, having voted both gone, waits until 19 s. The cut heals at 16 s: it takes their votes and the
    # `out` naming it, and it is voted out. It took no `out` from a seat it had voted gone, and gave up "cut off".
    assert main(["sim", "crisp", "--transport", "tcp", "--players", "3", "--limit", "10", "--seed", "3",
                 "--faults", "partition=4:12"]) == 1  # a seat voted out does not survive the cut
    out = capsys.readouterr().out
    assert re.search(r"p0 +finished", out) and re.search(r"p1 +finished", out), out
    assert re.search(r"p2 +voted out: every other seat voted us gone: the table goes on without us", out), out
    assert "cut off" not in out and "honest peers agreed on every result: yes" in out, out


def test_a_seat_voted_out_holds_no_outcome_to_agree_with_and_the_report_says_it_was_voted_out() -> None:
    from p2pcards.sim.batch import report_from
    from p2pcards.sim.outcome import Outcome, agreed
    two = [Outcome(f"p{i}", True, None, (5, 20), (1,), 1, (), ()) for i in range(2)]
    out = Outcome("p2", True, None, (0, 0, 0), (), 1, (), (), "every other seat voted us gone: the table goes on")
    assert agreed([*two, out]) and Outcome.from_json(out.to_json()) == out
    report = report_from([*two, out], 3, None, None, False, moves=0, frames=0, bytes=0, wall_s=0.0, table_s=1.0,
                         cpu_s=[])
    assert report.ended["p2"] == "voted out: every other seat voted us gone: the table goes on" and not report.survived
