"""A `p2pcards peer` that hears nothing from every other seat at once, as when its own Wi-Fi is lost (protocol.md
§14.9): it says its own network looks lost, gives up unfinished with exit status 3 and `cut_off` in its summary,
and the others, once they hear again, go on without it and finish (real processes on 127.0.0.1)."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest
from net_procs import PeerProc

LOOP = ["--interface", "127.0.0.1", "--json"]


@pytest.mark.slow  # a game between processes, two of them frozen for 10 s or so
def test_a_peer_cut_off_from_every_other_seat_says_so_and_gives_up_unfinished_while_the_others_finish(
        tmp_path: Path) -> None:
    host = PeerProc("--create", "--game", "crisp", "--limit", "10", "--players", "3", "--no-mdns", *LOOP)
    port = host.port()
    other = PeerProc("--peer", f"127.0.0.1:{port}", *LOOP)
    lone = PeerProc("--peer", f"127.0.0.1:{port}", "--name", "lone", "--gone-after", "2", "--state", str(tmp_path),
                    *LOOP)
    frozen = (host, other)
    try:
        lone.wait_line("round 1 begins", 60)
        for p in frozen:  # to `lone`, just as its own network vanishing: nothing more comes, no link ends
            p.signal(signal.SIGSTOP)
        lone.wait_line("every other seat went missing at once .*: it looks like our own network was lost", 20)
        cut = lone.result(30)
        for p in frozen:
            p.signal(signal.SIGCONT)
        results = [host.result(120), other.result(120)]
    finally:
        for p in frozen:
            if p.proc.poll() is None:
                p.signal(signal.SIGCONT)
        for p in (host, other, lone):
            p.stop()
    assert cut["rc"] == 3 and not cut["finished"] and not cut["out"], cut
    assert cut["cut_off"].startswith("every other seat went missing at once") and not cut["faults"], cut
    assert cut["stopped"].startswith("cut off from every other seat"), cut
    assert not any(n.startswith("over") for n in cut["notes"]), cut["notes"]
    # Nothing to come back to (the empty lock file stays).
    assert [p.name for p in tmp_path.iterdir()] == ["lock"]
    # Its votes decided nothing for them: its `leave` put it out, and the two finish the game.
    assert all(r["finished"] and not r["faults"] for r in results), results
    assert len({tuple(r["totals"]) for r in results}) == 1 and len(results[0]["totals"]) == 2, results
    assert all("void: lone is out" in p.text() for p in frozen), [p.text() for p in frozen]


@pytest.mark.slow  # a game between processes, one killed and started again after the others went on without it
def test_a_peer_back_after_the_others_voted_it_out_learns_it_from_them_and_ends_voted_out(tmp_path: Path) -> None:
    # The host, seat 0, is back from its journal after the two voted it out: no seat dials it (they went on), and they
    # refused its links ('not a seat at this table'), so it voted both gone, gave up "cut off" and exited 3.
    host = PeerProc("--create", "--game", "crisp", "--limit", "30", "--players", "3", "--no-mdns", "--name", "phoenix",
                    "--gone-after", "3", "--state", str(tmp_path), *LOOP)
    port = host.port()
    guests = [PeerProc("--peer", f"127.0.0.1:{port}", "--gone-after", "3", *LOOP) for _ in range(2)]
    again = None
    try:
        host.wait_line("round 1 begins", 60)
        host.signal(signal.SIGKILL)
        host.proc.wait(10)
        for g in guests:
            g.wait_line("void: phoenix is out", 30)
        again = PeerProc("--state", str(tmp_path), "--json")
        back = again.result(60)
        results = [g.result(180) for g in guests]
    finally:
        for p in (host, *guests, again):
            if p is not None:
                p.stop()
    assert back["resumed"] and back["out"] and not back["finished"] and back["cut_off"] is None, back
    assert back["voted_out"] == "every other seat voted us gone: the table goes on without us", back
    assert back["rc"] == 1 and not back["faults"], back
    assert [p.name for p in tmp_path.iterdir()] == ["lock"]  # nothing to come back to
    assert all(r["finished"] and not r["faults"] for r in results), results
    assert len({tuple(r["totals"]) for r in results}) == 1 and len(results[0]["totals"]) == 2, results


@pytest.mark.slow  # a game between processes, two of them killed at once
def test_a_peer_whose_every_other_seat_is_killed_at_once_is_not_cut_off_too_few_seats_remain(tmp_path: Path) -> None:
    # Their kernels closed their links (end of stream): our own network works, so it is no cut (protocol.md §14.9).
    host = PeerProc("--create", "--game", "crisp", "--limit", "10", "--players", "3", "--no-mdns", *LOOP)
    port = host.port()
    other = PeerProc("--peer", f"127.0.0.1:{port}", *LOOP)
    lone = PeerProc("--peer", f"127.0.0.1:{port}", "--name", "lone", "--gone-after", "2", "--state", str(tmp_path),
                    *LOOP)
    try:
        lone.wait_line("round 1 begins", 60)
        for p in (host, other):
            p.signal(signal.SIGKILL)
        left = lone.result(60)
    finally:
        for p in (host, other, lone):
            p.stop()
    assert left["cut_off"] is None and not left["faults"] and left["rc"] != 3, left
    assert "over: too few seats remain" in " ".join(left["notes"]), left["notes"]
    assert "our own network" not in lone.text(), lone.text()
    assert [p.name for p in tmp_path.iterdir()] == ["lock"]  # nothing to come back to
