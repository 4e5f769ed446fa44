"""Faults on the in-memory transport (--faults) and load (--tables): honest peers survive, and the report says so."""

from __future__ import annotations

import random
from pathlib import Path
from typing import Any

import pytest

from p2pcards.cli import main
from p2pcards.errors import InputError
from p2pcards.games.base import Move
from p2pcards.sim.batch import play_batch
from p2pcards.sim.faults import FaultSpec, FaultTap
from p2pcards.sim.memnet import MemNet
from p2pcards.sim.table_game import make_table
from p2pcards.table.peer import Send

SMALL = {"limit": 10}


def test_a_fault_spec_reads_like_the_option() -> None:
    spec = FaultSpec.parse("delay=20, jitter=30,reorder=0.1,dup=0.05,drop=0")
    assert (spec.delay, spec.jitter, spec.reorder, spec.dup, spec.drop) == (20, 30, 0.1, 0.05, 0)
    assert spec.text() == "delay=20,jitter=30,reorder=0.1,dup=0.05"
    assert FaultSpec.parse(spec.text()) == FaultSpec(20, 30, 0.1, 0.0, 0.05)
    two = FaultSpec.parse("gone=3:2")
    assert (two.gone, two.gone_seats, two.text()) == (3, 2, "gone=3:2") and FaultSpec.parse("gone=3").gone_seats == 1
    for bad in ("gone=3:0", "gone=3:x", "gone=3:1.5", "gone=3:\u00b2", "gone=3:-1"):
        with pytest.raises(InputError, match="gone=T:N"):
            FaultSpec.parse(bad)
    # A fault that would keep a game from ever ending is refused: every time has a bound.
    for bad, says in (("partition=1:1e300", "at most 600 s"), ("partition=1e9:5", "AT from 0 to 3600"),
                      ("delay=1e300", "ms from 0 to 10000"), ("restart=1e9", "seconds above 0 and at most 3600"),
                      ("jitter=nan", "ms from 0")):
        with pytest.raises(InputError, match=says):
            FaultSpec.parse(bad)
    # `sim crisp --transport tcp --faults restart=0` crashed no seat and reported "faults (none): survived in 1/1
    # games" with status 0: 0 is the spec's "never". A crash is asked for at a time above 0.
    for bad in ("restart=0", "gone=0", "gone=0:2", "restart=-0"):
        with pytest.raises(InputError, match="seconds above 0 and at most 3600"):
            FaultSpec.parse(bad)


@pytest.mark.parametrize("spec", ["reorder=0.3", *(pytest.param(s, marks=pytest.mark.slow) for s in ("delay=40,jitter=80", "dup=0.2"))])
def test_honest_peers_survive_delay_reorder_and_duplicates(spec: str) -> None:
    [report] = play_batch("crisp", 3, SMALL, 2, 1, faults=FaultSpec.parse(spec))
    assert report.ok and report.agreed
    assert set(report.ended.values()) == {"finished"}
    kind = spec.split("=")[0]
    if kind in ("reorder", "dup"):
        assert report.faults[kind] > 5


def test_honest_peers_survive_dropped_frames() -> None:
    """Lost frames are asked for again (table/recovery.py): nobody times out, nobody is blamed."""
    [report] = play_batch("crisp", 3, SMALL, 2, 1, faults=FaultSpec.parse("drop=0.02"), timeout=3.0)
    assert report.faults["drop"] > 0
    assert report.ok


def test_a_peer_crashed_mid_round_comes_back_from_its_journal_and_the_game_survives() -> None:
    spec = FaultSpec.parse("restart=1.5,reorder=0.1")
    assert spec.restart == 1.5 and spec.text() == "reorder=0.1,restart=1.5"
    seen: list[tuple[object, object]] = []
    [report] = play_batch("crisp", 3, SMALL, 2, 1, faults=spec,
                          on_game=lambda report, run: seen.append((run.peers[2], run.net.peers[2])))
    assert report.ok and report.agreed, report.ended
    assert set(report.ended.values()) == {"finished"}
    [(judged, live)] = seen
    assert judged is live and getattr(live, "journal")  # the rebuilt peer was judged, and journals on
    with pytest.raises(InputError, match="seconds"):
        FaultSpec.parse("restart=-1")


def test_faults_report_and_exit_status(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "1", "--quiet",
                 "--faults", "reorder=0.2,dup=0.1"]) == 0
    out = capsys.readouterr().out
    assert "faults (reorder=0.2,dup=0.1): survived in 1/1 games" in out
    assert main(["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "2", "--quiet",
                 "--faults", "drop=0.05"]) == 0
    assert "faults (drop=0.05): survived in 1/1 games" in capsys.readouterr().out


def test_tables_at_once_report_each_tables_rate(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "1", "--tables", "2"]) == 0
    out = capsys.readouterr().out
    assert "load: 2 tables at once" in out and "failures: none" in out
    assert "honest peers agreed on every result: yes (2/2 games)" in out


@pytest.mark.slow  # the load run: 1, 10 and 50 tables at once
@pytest.mark.parametrize("tables", [1, 10, 50])
def test_load_runs_without_a_failure(tables: int, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "1", "--tables", str(tables)]) == 0
    assert "failures: none" in capsys.readouterr().out


@pytest.mark.slow  # every fault kind, in both games
@pytest.mark.parametrize("game", ["crisp", "crescendo"])
def test_every_fault_but_drop_is_survived_in_both_games(game: str) -> None:
    spec = FaultSpec.parse("delay=30,jitter=60,reorder=0.2,dup=0.1")
    reports = play_batch(game, 3, SMALL if game == "crisp" else {}, 3, 2, faults=spec)
    assert all(r.ok for r in reports), [r.ended for r in reports]


def test_no_copy_of_a_frame_crosses_a_cut_link() -> None:
    # A duplicate or a reordered copy is delivered later by `inject`: across a cut it would leak past it.
    peers = make_table("crisp", 3, {"limit": 30}, random.Random(1))
    net = MemNet(peers, [None] * 3, random.Random(2))
    tap = FaultTap(net, FaultSpec.parse("partition=0:10:2,reorder=1,dup=1"), random.Random(3))
    frame = b"any frame"

    def copies() -> int:
        return sum(1 for event in net._queue if event[2] == "frame")

    assert tap(0, 2, frame) == frame and copies() == 0  # cut: MemNet drops it, and nothing else goes
    assert tap(0, 1, frame) is None and copies() == 2  # not cut: a duplicate, and the frame reordered


@pytest.mark.slow  # a whole game; a lost move sent again is in the default run (test_lost_frames.py)
def test_a_move_lost_on_its_way_to_the_orderer_alone_is_sent_again_not_blamed_on_it() -> None:
    # Seed 215: p1's move (1, 7) is dropped on its way to the orderer and nothing of p1 follows it, so no
    # one sees a gap; asked for only by the probes, it came 3 s late and the honest orderer was blamed for
    # its stamp. The mover now sends a move its orderer has not ordered within RESEND_S again.
    [report] = play_batch("crisp", 4, {"limit": 30}, 215, 1, faults=FaultSpec.parse("reorder=0.2,dup=0.1,drop=0.05"))
    assert report.ok and report.agreed, report.ended


def test_our_move_not_ordered_in_time_goes_out_again_until_it_is() -> None:
    peers = make_table("crisp", 3, {"limit": 30}, random.Random(4))
    net = MemNet(peers, [None] * 3, random.Random(5))
    net.start()
    net.run(until=5.0)  # dealt; nobody moves without bots
    mover = next(p for p in peers if p.me != p.rs.orderer and p.view().turn == p.me)  # type: ignore[union-attr]
    [sent] = [out for out in mover.play(Move(mover.names[mover.me], "draw", source="pile"), net.now) if isinstance(out, Send)]
    assert [out for out in mover.tick(net.now + 0.3) if isinstance(out, Send)] == []
    assert [(out.frame, out.again) for out in mover.tick(net.now + 0.6) if isinstance(out, Send)] == [(sent.frame, True)]
    assert not sent.again  # the first time it goes first hand; sent again, it says so (protocol.md §18.5)
    assert [out for out in mover.tick(net.now + 0.8) if isinstance(out, Send)] == []  # not again at once
    assert [out.frame for out in mover.tick(net.now + 1.2) if isinstance(out, Send)] == [sent.frame]


def test_faults_at_a_cheating_table_survive_when_the_cheat_is_caught_as_it_should(
        capsys: pytest.CaptureFixture[str]) -> None:
    """A void cheat stops the table by design: the faults are survived when honest peers still did what the cheat
    expects (the report once said "NOT survived" of every such game, and still exited 0)."""
    assert main(["sim", "crisp", "--cheat", "split-view", "--faults", "dup=0.05", "--seed", "3", "--quiet"]) == 0
    out = capsys.readouterr().out
    assert "faults (dup=0.05): survived in 1/1 games" in out, out
    assert "NOT survived" not in out and "caught in 1/1 games" in out


def test_a_fault_due_after_the_game_was_over_never_fell_and_fails_the_run() -> None:
    """`--faults restart=1000` on a 5 s game reported "none fell: survived" and exit status 0: nothing was tested."""
    from p2pcards.sim.batch import GameReport, mark_missed, report_lines

    def game(table_s: float, faults: dict[str, int]) -> GameReport:
        return GameReport(seed=1, rounds=1, moves=5, frames=50, bytes=5000, wall_s=1.0, table_s=table_s, cpu_s=[0.1] * 3,
                          agreed=True, ended={"p0": "finished", "p1": "finished"}, blamed={"p0": [], "p1": []},
                          fault_blame={}, totals={"p0": [1, 2, 3], "p1": [1, 2, 3]}, faults=faults)

    spec = FaultSpec.parse("restart=1000,partition=3:2,drop=0.01")
    short, fell = game(5.0, {"drop": 2, "partition": 4}), game(2000.0, {"restart": 1, "partition": 9})
    mark_missed([short, fell], spec)
    assert short.missed == ["restart at 1000 s"] and not short.ok and not short.survived
    assert fell.missed == [] and fell.ok and fell.survived
    lines = report_lines([short, fell], None, spec)
    assert "faults (drop=0.01,restart=1000,partition=3:2): survived in 1/2 games (1 where a fault never fell)" in lines
    assert any("NEVER FELL: restart at 1000 s, but the game was over at 5.0 s" in line for line in lines)
    quiet = game(5.0, {})  # a partition while no frame crossed is not counted: it fell if the game got that far
    mark_missed([quiet], FaultSpec.parse("partition=3:1"))
    assert quiet.ok


@pytest.mark.slow  # a process per table
def test_a_load_tables_game_replays_alone_with_its_seed_and_no_good_bot(tmp_path: Path) -> None:
    """A failure at a --tables table names its seed; `sim --seed S --good 0` played another game (other random bots)."""
    import json
    load, alone = tmp_path / "load.json", tmp_path / "alone.json"
    assert main(["sim", "crisp", "--players", "2", "--limit", "5", "--tables", "1", "--seed", "4", "--json", str(load)]) == 0
    [game] = json.loads(load.read_text())["games"]
    assert main(["sim", "crisp", "--players", "2", "--limit", "5", "--seed", str(game["seed"]), "--good", "0",
                 "--quiet", "--json", str(alone)]) == 0
    [again] = json.loads(alone.read_text())["games"]
    assert {k: again[k] for k in ("frames", "bytes", "totals", "table_s")} == \
        {k: game[k] for k in ("frames", "bytes", "totals", "table_s")}


def test_a_game_whose_honest_peers_all_finished_but_disagreed_says_why_it_did_not_survive() -> None:
    """`sim crescendo --transport tcp --players 3 --faults partition=15:40`: the cut-off seat voted both others gone
    and ended the game alone ("finished", totals [0, 0, 0]) while they went on; the report read "NOT survived: "
    with nothing after it."""
    from p2pcards.sim.batch import GameReport, report_lines

    r = GameReport(seed=22, rounds=3, moves=5, frames=50, bytes=5000, wall_s=1.0, table_s=200.0, cpu_s=[0.1] * 3,
                   agreed=False, ended={"p0": "finished", "p1": "finished", "p2": "finished"},
                   blamed={"p0": [], "p1": [], "p2": []}, fault_blame={},
                   totals={"p0": [11, 20], "p1": [11, 20], "p2": [0, 0, 0]}, faults={"partition": 185})
    lines = report_lines([r], None, FaultSpec.parse("partition=15:40"))
    [line] = [line for line in lines if line.startswith("  seed 22:")]
    assert line.endswith("NOT survived: the honest peers disagreed: p0 [11, 20], p1 [11, 20], p2 [0, 0, 0]"), line


def test_a_seat_that_gave_up_cut_off_holds_no_outcome_the_others_could_disagree_with() -> None:
    # `sim --transport tcp --faults partition=4:40`: the cut-off seat gives up unfinished while the two finish alike;
    # the report read "the honest peers disagreed: p0 [75, 115], p1 [75, 115], p2 [0, 0, 0]".
    from p2pcards.sim.outcome import Outcome, agreed
    from p2pcards.table.outputs import Cut

    def outcome(name: str, stopped: str | None, totals: tuple[int, ...], gave_up: Cut | None = None) -> Outcome:
        return Outcome(name, stopped is None, stopped, totals, (0,), 3, (), (), gave_up=gave_up)

    two = [outcome("p0", None, (75, 115)), outcome("p1", None, (75, 115))]
    cut = outcome("p2", "cut off from every other seat: every other seat went missing at once (p0, p1)", (0, 0, 0),
                  Cut.NETWORK_LOST)
    assert Outcome.from_json(cut.to_json()) == cut
    assert agreed([*two, cut])
    assert not agreed([two[0], outcome("p1", None, (75, 110)), cut])
    assert not agreed([*two, outcome("p2", "p0 sent nothing owed for 15 s", (0, 0, 0))])


def test_a_load_run_stopped_by_sigterm_stops_every_table_at_once_without_a_traceback() -> None:
    # It waited for every table's every game before it exited (minutes; with --tables 1000000, thousands of
    # processes), and each table's process printed a traceback of its own.
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "p2pcards", "sim", "crisp", "--tables", "2", "--games", "1000",
                             "--players", "2"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    children = Path(f"/proc/{proc.pid}/task/{proc.pid}/children")
    try:
        while len(pids := children.read_text().split()) < 2:  # both tables' processes are playing
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)  # a guard against a hang, not a measure
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM and "Traceback" not in err, err

    def alive(pid: str) -> bool:
        try:
            return Path(f"/proc/{pid}/stat").read_text().split()[2] != "Z"
        except OSError:
            return False

    for _ in range(600):  # the tables' processes were ended, not left playing (a guard of 30 s, not a measure)
        if not any(alive(p) for p in pids):
            break
        time.sleep(0.05)
    assert not any(alive(p) for p in pids), pids


@pytest.mark.slow  # tables of seat processes over tcp, stopped while they play
def test_a_tcp_load_run_stopped_by_sigterm_ends_its_seat_processes_at_once() -> None:
    # Each tcp table is a thread of the command: after SIGTERM it exited only once every thread had played its game
    # to the end (a game to 1000 points: minutes), its seat processes playing on meanwhile.
    import contextlib
    import signal
    import subprocess
    import sys
    import time

    proc = subprocess.Popen([sys.executable, "-m", "p2pcards", "sim", "crisp", "--transport", "tcp", "--tables", "2",
                             "--games", "50", "--players", "2", "--limit", "1000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    def seats() -> list[str]:  # each table's thread starts its own (a thread's children are listed under it)
        found = []
        for task in Path(f"/proc/{proc.pid}/task").iterdir():
            with contextlib.suppress(OSError):  # a thread that ended meanwhile
                found += (task / "children").read_text().split()
        return found

    try:
        for _ in range(1200):  # a guard of 60 s, not a measure
            if len(playing := seats()) >= 4:  # both tables' two seats are playing
                break
            time.sleep(0.05)
        assert len(playing) >= 4, playing
        proc.send_signal(signal.SIGTERM)
        out, err = proc.communicate(timeout=120)  # a guard against the old wait (minutes), not a measure
    finally:
        proc.kill()
    assert proc.returncode == 128 + signal.SIGTERM and "Traceback" not in err, err
    for seat in playing:  # killed, not left playing to the end of their game
        assert not Path(f"/proc/{seat}").exists() or Path(f"/proc/{seat}/stat").read_text().split()[2] == "Z", seat


def test_the_seat_processes_of_a_tcp_load_run_do_not_inherit_blocked_signals(monkeypatch: pytest.MonkeyPatch) -> None:
    # The command blocks SIGINT, SIGTERM and SIGHUP while a process pool forks in-memory tables; a tcp table is a
    # thread, which (and every seat process it starts) would keep them blocked, deaf to Ctrl-C and `timeout`.
    import signal

    from p2pcards.sim import load

    masks: list[set[signal.Signals]] = []

    def one_table(*args: object) -> object:
        masks.append(signal.pthread_sigmask(signal.SIG_BLOCK, set()))
        return load.TableRun.__new__(load.TableRun)

    monkeypatch.setattr(load, "_one_table", one_table)
    load.run_tables(2, "crisp", 2, {}, 1, 1, transport="tcp")
    assert masks and all(not (mask & load.STOPS) for mask in masks), masks


def test_honest_peers_that_stopped_and_disagreed_are_told_apart_by_whom_each_named() -> None:
    """`sim crisp --faults drop=1`: each peer stopped blaming another, and the report read "the honest peers
    disagreed: p0 [0, 0, 0], p1 [0, 0, 0], p2 [0, 0, 0]", alike for all three."""
    from p2pcards.sim.batch import GameReport, not_survived

    stop = "sent nothing owed for 15 s (ready)"
    r = GameReport(seed=5, rounds=0, moves=0, frames=6, bytes=2000, wall_s=0.1, table_s=16.0, cpu_s=[0.0] * 3,
                   agreed=False, ended={"p0": f"p1, p2 {stop}", "p1": f"p0, p2 {stop}", "p2": "finished"},
                   blamed={}, fault_blame={"p0": "p1", "p1": None},
                   fault_claim={"p1": {"reporter": "p2", "blames": "p0"}},
                   totals={"p0": [0, 0, 0], "p1": [0, 0, 0], "p2": [4, 5, 6]}, faults={"drop": 96})
    assert not_survived(r).endswith("the honest peers disagreed: p0 named p1, p1 named p0, p2 [4, 5, 6]")


def test_one_move_sent_again_is_one_copy() -> None:
    from p2pcards.sim.batch import GameReport, report_lines

    r = GameReport(seed=20, rounds=1, moves=9, frames=60, bytes=6000, wall_s=0.5, table_s=8.0, cpu_s=[0.1] * 3,
                   agreed=True, ended={"p0": "finished", "p1": "finished", "p2": "finished"}, blamed={},
                   fault_blame={}, totals={}, resent=1)
    assert "moves 9 (and 1 copy sent again: orders slow to come)" in report_lines([r], None)[0]  # was "1 copies"


def test_a_load_reports_failures_say_why_each_game_failed() -> None:
    """`sim --tables 2 --faults restart=1000`: the honest peers agreed, the crash never fell, and the failures read
    "table 0, seed 3: disagreed"; a game whose peers stopped read "p0 p1, p2 sent nothing …", two seats in one."""
    from p2pcards.sim.batch import GameReport
    from p2pcards.sim.load import TableRun, load_lines

    def game(seed: int, **kw: object) -> GameReport:
        fields: dict[str, Any] = dict(seed=seed, rounds=1, moves=7, frames=60, bytes=6000, wall_s=1.0, table_s=4.5,
                                      cpu_s=[0.1] * 3, agreed=True, blamed={}, fault_blame={}, totals={},
                                      ended={"p0": "finished", "p1": "finished", "p2": "finished"})
        return GameReport(**(fields | kw))

    missed = game(3, missed=["restart at 1000 s"])
    stalled = game(4, agreed=False, ended={"p0": "p1, p2 sent nothing owed for 15 s (ready)", "p1": "finished",
                                           "p2": "finished"}, fault_blame={"p0": "p1"},
                   totals={"p1": [5, 6, 7], "p2": [5, 6, 7]})
    lines = load_lines([TableRun(0, [missed, stalled], 5.0)], 5.0)
    assert lines[-2:] == [
        "    table 0, seed 3: a fault never fell: restart at 1000 s, but the game was over at 4.5 s of table time",
        "    table 0, seed 4: p0: p1, p2 sent nothing owed for 15 s (ready); the honest peers disagreed: p0 named p1, "
        "p1 [5, 6, 7], p2 [5, 6, 7]"]


def test_a_cheating_game_whose_honest_peers_disagreed_says_how() -> None:
    # It read "NOT survived: the honest peers disagreed" and no more.
    from p2pcards.sim.batch import GameReport, not_survived

    r = GameReport(seed=7, rounds=1, moves=9, frames=60, bytes=6000, wall_s=0.5, table_s=8.0, cpu_s=[0.1] * 3,
                   agreed=False, ended={"p0": "finished", "p2": "finished"}, blamed={}, fault_blame={},
                   totals={"p0": [1, 2, 3], "p2": [1, 2, 4]}, cheat="out-of-turn", cheater=1, fired=True)
    assert not_survived(r) == "the honest peers disagreed: p0 [1, 2, 3], p2 [1, 2, 4]"
