"""Slow links and games that never end: what the sim reports lets a tester tell what went on without reading code."""

from __future__ import annotations

import pytest

from p2pcards.cli import main
from p2pcards.crypto.envelope import parse
from p2pcards.sim.batch import play_batch
from p2pcards.sim.cheaters import run_table
from p2pcards.sim.faults import FaultSpec
from p2pcards.sim.memnet import MemNet
from p2pcards.sim.outcome import Outcome
from p2pcards.table.peer import TablePeer

SMALL = {"limit": 10}


def test_a_game_that_never_ends_says_what_each_peer_waits_on() -> None:
    """A seat that vanishes for good at a table with no network layer to vote it gone leaves the others waiting
    until the run's end: the report said only "still waiting", not on whom, for what, or which frames were missing."""
    def vanish(net: MemNet, peers: list[TablePeer]) -> None:
        def kill(net: MemNet) -> None:
            net.dead.add(2)
            for peer in net.peers[:2]:
                peer.absent(2, True, net.now)
        net.call_at(8.0, kill)
    run = run_table("crisp", 3, {"limit": 30}, 1, setup=vanish, until=60.0)
    for peer in run.peers[:2]:
        outcome = Outcome.of(peer)
        assert not outcome.finished and outcome.stopped is None
        assert outcome.ended.startswith("still waiting (round ")
        assert "waiting on p2 for " in outcome.ended and "link missing to p2" in outcome.ended, outcome.ended
        assert Outcome.from_json(outcome.to_json()) == outcome  # a seat process's summary carries it too
    assert Outcome.of(run.peers[0]).waiting is not None


def test_a_peer_that_misses_a_frame_names_it() -> None:
    """A frame held ahead of its chain names the gap below it: which seat's frames, from which place."""
    run = run_table("crisp", 3, SMALL, 2, until=5.0)
    peer = run.peers[0]
    seq = peer.chains.received(1)
    assert peer.waiting().startswith(f"round {peer.round}; ")
    peer.chains.held[(peer.cfg.keys[1], seq + 2)] = b""  # as if the frame two places on had come first
    assert f"missing p1's frames {seq} to {seq + 1}" in peer.waiting()


def test_moves_are_counted_once_and_their_copies_sent_again_apart() -> None:
    """Over a slow link a move's order comes back after RESEND_S, so the move is sent again (protocol.md §18.5):
    the report counted every copy as a move (`sim crescendo --faults delay=400,jitter=1000` read 1019 moves where
    the game had about 250)."""
    frames: list[bytes] = []

    def record(net: MemNet, peers: list[TablePeer]) -> None:
        net.on_send = lambda sender, frame: frames.append(frame)
    [report] = play_batch("crisp", 3, SMALL, 2, 1, faults=FaultSpec.parse("delay=400,jitter=300"), setup=lambda seed: record)
    moves = {f for f in frames if parse(f).envelope.type == "move"}
    assert report.ok and report.resent > 0
    assert report.moves == len(moves)


def test_a_delay_is_said_to_fall_on_every_frame(capsys: pytest.CaptureFixture[str]) -> None:
    """A delay falls on every frame and is not counted: the report read "faults injected: none fell"."""
    assert main(["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "1", "--quiet",
                 "--faults", "delay=300,jitter=100"]) == 0
    out = capsys.readouterr().out
    assert "faults injected: every frame delayed 300 ms + up to 100 ms more: survived" in out
    assert "none fell" not in out


def test_a_game_not_survived_sets_each_peer_apart_from_what_it_says() -> None:
    """`--faults delay=2000,jitter=1000` read "NOT survived: p0 p1 stopped the table, blaming p0 …; p1 malformed
    order …": which peer says it, and which seat did it, ran together."""
    from p2pcards.sim.batch import GameReport, not_survived

    stop = "p1 stopped the table, blaming p0 on its word only: malformed order from p0"
    r = GameReport(seed=11, rounds=1, moves=5, frames=50, bytes=5000, wall_s=1.0, table_s=20.0, cpu_s=[0.1] * 3,
                   agreed=True, ended={"p0": stop, "p1": "malformed order from p0", "p2": stop},
                   blamed={}, fault_blame={}, totals={})
    assert not_survived(r) == f"p0: {stop}; p1: malformed order from p0; p2: {stop}"


def test_a_cut_longer_than_the_time_out_is_a_missing_link_in_memory_too() -> None:
    """`sim crisp --faults partition=5:20`: over TCP the links across a cut go quiet after SILENT_S and their seats are
    missing, which holds the time-out; in memory they stayed up, so 15 s into the cut each side blamed the other for
    what it could not send (p0 blamed p2 for a private box, p2 blamed p1 for an order), and the honest peers
    disagreed."""
    [report] = play_batch("crisp", 3, {"limit": 40}, 31, 1, faults=FaultSpec.parse("partition=5:20"))
    assert report.faults["partition"] > 0
    assert report.survived and report.ok, report.ended
