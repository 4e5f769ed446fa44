"""`p2pcards peer`: every bad input is one line on stderr and status 2."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
from functools import partial
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from p2pcards.cli import main
from p2pcards.files import write_file

store_file = partial(write_file, overwrite=True, private=True)  # as a seat writes its store's files


@pytest.mark.parametrize("args, says", [
    (["--create"], "--create needs --game"),
    (["--peer", "nope"], "HOST:PORT"),
    (["--peer", "127.0.0.1:70000"], "HOST:PORT"),
    (["--create", "--game", "crisp", "--players", "9"], "--players: crisp seats 2 to 8 players, not 9"),
    (["--create", "--game", "crisp", "--name", "", "--port", "70000"], "--name: a name must be 1 to 32 bytes"),  # was bot-XXXX
    (["--create", "--game", "crisp", "--name", "x" * 33, "--port", "70000"], "--name: a name must be"),
    (["--create", "--game", "crescendo", "--limit", "5"], "Crisp options"),
    (["--no-mdns"], "needs --peer"),
    # a host's options on a guest, and a guest's on a host, were silently ignored (a bad --port too, so that
    # without the check the peer stops at once, on the wrong message, rather than going looking for a table)
    (["--peer", "127.0.0.1:9", "--limit", "30", "--port", "70000"], "only with --create"),
    (["--players", "4", "--peer", "127.0.0.1:9", "--port", "70000"], "only with --create"),
    (["--discard-draw", "--peer", "127.0.0.1:9", "--port", "70000"], "only with --create"),
    (["--create", "--game", "crisp", "--peer", "127.0.0.1:9", "--port", "70000"], "dials no one"),
    (["--create", "--game", "crisp", "--interface", "no-such-if0"], "no such IPv4 interface"),
    # a table's name the network cannot carry as given was announced cut or changed, so a guest typing it found nothing
    (["--create", "--game", "crisp", "--table", "t" * 64, "--port", "70000"], "at most 63 bytes on the network, not 64"),
    (["--create", "--game", "crisp", "--table", "Ann.s", "--port", "70000"], "no dot"),
    (["--table", " Ann", "--port", "70000"], "no space at either end"),
])
def test_bad_input_is_one_line_and_status_2(args: list[str], says: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["peer", *args]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("junk, says", [
    ({"journal": b"my diary"}, "holds journal but no seat to come back to"),
    ({"table": b"garbage", "other.txt": b"kept"}, "holds table but no seat"),
])
def test_a_state_directory_of_someone_elses_files_is_refused_before_joining_and_left_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], junk: dict[str, bytes], says: str) -> None:
    for name, data in junk.items():
        (tmp_path / name).write_bytes(data)
    assert main(["peer", "--peer", "127.0.0.1:9", "--state", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert says in err and len(err.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == junk


def test_a_state_that_is_a_file_is_refused(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "f").write_bytes(b"x")
    assert main(["peer", "--peer", "127.0.0.1:9", "--state", str(tmp_path / "f")]) == 2
    assert "not a directory" in capsys.readouterr().err


def test_a_state_directory_another_peer_holds_is_refused_before_joining(tmp_path: Path,
                                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # Two peers on one journal would each sign places of one chain: the second says so and stops.
    from p2pcards.net.store import Lock

    with Lock(tmp_path):
        assert main(["peer", "--peer", "127.0.0.1:9", "--state", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "another p2pcards process of yours is using" in err and len(err.strip().splitlines()) == 1


EVIL = "\x1b[2J\x1b]0;pwned\x07\rYOU WON\n"


@pytest.mark.parametrize("ending", ["stopped", "link"])
def test_what_other_peers_say_is_printed_with_no_control_character(
        ending: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # A seated peer's leave or fault reason, or a goodbye, is its own text: printed by `p2pcards peer`, an ANSI
    # escape in it must not reach our terminal as one.
    from p2pcards.errors import LinkBroken
    from p2pcards.net import botpeer
    from p2pcards.table.outputs import Note

    async def hostile(cfg: object, saved: object, on_note: Any = None, **kw: object) -> dict[str, Any]:
        on_note(Note("fault", f"mallory stopped the table: {EVIL}", "mallory"))
        on_note(Note("missing", f"mallory left the table ({EVIL}): we vote it gone"))
        on_note(Note("missing", f"mallory is missing: said goodbye: {EVIL}"))
        if ending == "link":
            raise LinkBroken(f"the host said goodbye: {EVIL}")
        return {"finished": False, "stopped": f"mallory stopped the table: {EVIL}", "names": ["a", "b"], "totals": [0, 0]}

    monkeypatch.setattr(botpeer, "play_seat", hostile)
    main(["peer", "--create", "--game", "crisp", "--no-mdns", "--interface", "127.0.0.1", "--name", "bot"])
    out, err = capsys.readouterr()
    printed = (out + err).splitlines()
    assert printed and all(line.isprintable() for line in printed), printed
    assert sum("YOU WON" in line for line in printed) == 4  # the fault, the leave, the goodbye, and the end


def test_a_peer_coming_back_on_its_state_runs_with_the_options_it_was_started_with(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # The first run was `p2pcards peer --bot good --interface 127.0.0.1 --gone-after 7.5 --state DIR`; after a crash,
    # `p2pcards peer --state DIR` must not listen on every interface with a random bot.
    from p2pcards.crypto.identity import generate, key_file
    from p2pcards.net import botpeer
    from p2pcards.net.store import BOT_KEY, NodeState, SeatStore
    from p2pcards.sim.table_game import make_table

    cfg = make_table("crisp", 2)[0].cfg
    SeatStore(tmp_path, cfg, 1).close()
    me = generate("x")
    store_file(tmp_path / BOT_KEY, key_file(me.key))
    store_file(tmp_path / "node", NodeState(me.public, 4000, {}, cfg, 1, ("127.0.0.1",), 7.5, "good").to_bytes())
    started: list[dict[str, Any]] = []

    class Stop:
        """Node's stand-in: what the peer asked for, then a port in use (so nothing is played)."""

        def __init__(self, identity: Any, interfaces: Any = None, **kw: Any) -> None:
            started.append({"interfaces": interfaces, **kw})

        async def __aenter__(self) -> None:
            raise OSError("stop here")

        async def __aexit__(self, *exc: object) -> None:
            pass

    monkeypatch.setattr(botpeer, "Node", Stop)
    assert main(["peer", "--state", str(tmp_path)]) == 2
    assert main(["peer", "--state", str(tmp_path), "--interface", "127.0.0.2", "--bot", "random"]) == 2
    assert "stop here" in capsys.readouterr().err
    kept, again = started
    assert (list(kept["interfaces"]), kept["bot"], kept["gone_after"], kept["port"]) == (["127.0.0.1"], "good", 7.5, 4000)
    assert (again["interfaces"], again["bot"], again["gone_after"]) == (["127.0.0.2"], "random", 7.5)  # given again: wins
    # Its port is where the other seats dial it: the same one given again is no change, another is refused.
    assert main(["peer", "--state", str(tmp_path), "--port", "4000"]) == 2 and started[-1]["port"] == 4000
    capsys.readouterr()
    assert main(["peer", "--state", str(tmp_path), "--port", "4001"]) == 2 and len(started) == 3
    assert "--port 4001: this seat comes back on its port, 4000" in capsys.readouterr().err


@pytest.mark.parametrize("case", ["out", "cut_off", "healed"])
def test_a_peer_voted_out_or_cut_off_says_so_and_does_not_claim_it_finished(
        case: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    # A laptop lid closed longer than gone_after: opened again, the peer hears every other seat voted it out.
    # It used to print "finished; totals a 0, b 0, c 0" and exit 0, as if it had played the game to its end.
    # Its Wi-Fi lost for good, it hears nothing more: cut off, it gives up (it too said "finished" and exit 0).
    # Cut off, then back with the others in time, it stopped later over a time-out: that was said as "cut off", exit 3.
    from p2pcards.net import botpeer
    from p2pcards.sim.table_game import make_table
    from p2pcards.table.outputs import CUT_OFF, Cut

    peers = make_table("crisp", 3)
    cut_off = case == "cut_off"
    if case != "out":
        peers[2].seating.cut_off = "every other seat went missing at once (a, b): it looks like our own network was lost"
        peers[2].emit.stopped = f"{CUT_OFF}: {peers[2].seating.cut_off}" if cut_off else "a sent nothing owed for 15 s"
        peers[2].seating.gave_up = Cut.NETWORK_LOST if cut_off else None
    else:
        peers[2].seating.voted_out = "every other seat voted us gone: the table goes on without us"
        peers[2].seating.finished = True

    class Voted:
        def __init__(self, *a: object, **kw: object) -> None:
            self.seat = SimpleNamespace(peer=peers[2], shell=SimpleNamespace(over=True, notes=[], first_turn=None,
                                                                              latency={}), started=None)
            self.links = SimpleNamespace(port=4000, traffic=lambda: {})
            self.lobby = self.ad = self.moved_from = None
            self.resumed = False

        async def __aenter__(self) -> "Voted":
            return self

        async def __aexit__(self, *a: object) -> None:
            pass

        async def join(self, where: object) -> None:
            pass

        async def play(self, bot: object, think: float) -> None:
            pass

    monkeypatch.setattr(botpeer, "Node", Voted)
    status = main(["peer", "--peer", "127.0.0.1:4000", "--interface", "127.0.0.1", "--name", "c"])
    out, _ = capsys.readouterr()
    if cut_off:
        assert status == 3 and "cut off: every other seat went missing at once (a, b): it looks like our own " \
            "network was lost; the game did not finish here" in out and "finished;" not in out, out
    elif case == "healed":
        assert status == 1 and "stopped: a sent nothing owed for 15 s" in out and "cut off" not in out, out
    else:
        assert status == 1 and "voted out while we were missing: every other seat voted us gone" in out \
            and "finished" not in out, out


def test_peer_json_gives_a_fault_on_a_reports_word_only_as_a_claim_and_documents_it(
        capsys: pytest.CaptureFixture[str]) -> None:
    from p2pcards.net.botpeer import SUMMARY, fault_keys
    from p2pcards.table.outputs import Claim, Note

    faults = [Note("fault", "p0 stopped the table, blaming p1 on its word only: a bad box", None, Claim("p0", "p1")),
              Note("fault", "p1 stopped the table: gone", "p1")]
    keys = fault_keys(faults)
    assert keys["blamed"] == [None, "p1"] and keys["claims"] == [{"reporter": "p0", "blames": "p1"}, None]
    documented = {k for names in SUMMARY for k in names.split(", ")}
    assert set(keys) <= documented
    assert main(["peer", "--help"]) == 0
    assert "claims: for each fault that blames no one on a report's word only" in " ".join(capsys.readouterr().out.split())


def test_a_state_whose_parent_is_missing_is_refused_and_nothing_is_made(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `--state /a/new/dir` made the whole tree silently: a mistyped path journalled where nobody would look.
    assert main(["peer", "--peer", "127.0.0.1:9", "--state", str(tmp_path / "typo" / "state")]) == 2
    err = capsys.readouterr().err
    assert "argument --state: no directory" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "typo").exists()


def test_a_new_state_is_said_once(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from p2pcards.net import botpeer
    monkeypatch.setattr(botpeer, "_run", lambda cfg, saved, args: 0)
    for _ in range(2):
        assert main(["peer", "--peer", "127.0.0.1:9", "--state", str(tmp_path / "new")]) == 0
    err = capsys.readouterr().err
    assert (tmp_path / "new").is_dir()
    assert f"p2pcards peer: --state {tmp_path / 'new'} is a new directory" in err and len(err.splitlines()) == 1


def test_a_guest_says_which_table_it_looks_for() -> None:
    # With --table rdtest it said "joining the first table found".
    from p2pcards.net.botpeer import joining_words
    assert joining_words("rdtest", None) == "the table 'rdtest'"
    assert joining_words("rdtest", "crisp") == "the table 'rdtest' if it plays crisp"
    assert joining_words(None, "crescendo") == "the first crescendo table found with a free seat"
    assert joining_words(None, None) == "the first table found with a free seat"


@pytest.mark.slow
def test_peer_json_is_alone_on_standard_output() -> None:
    """`--json` said "one JSON line", but the peer's log lines went to standard output too: json.loads failed on it."""
    peer = [sys.executable, "-m", "p2pcards", "peer", "--json", "--no-mdns", "--interface", "127.0.0.1"]
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # free a moment ago: the host listens there
    host = subprocess.Popen([*peer, "--create", "--game", "crisp", "--players", "2", "--limit", "1", "--name", "h",
                             "--port", str(port)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    guest: subprocess.Popen[str] | None = None
    try:
        guest = subprocess.Popen([*peer, "--peer", f"127.0.0.1:{port}", "--name", "g"],
                                 stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for proc, name in ((host, "h"), (guest, "g")):
            out, err = proc.communicate(timeout=120)
            assert proc.returncode == 0, err
            summary = json.loads(out)  # the whole of standard output
            assert summary["finished"] and summary["names"] == ["h", "g"]
            assert f"[{name}] round 1" in err, err  # the log went to standard error
    finally:
        for proc in (host, guest):
            if proc is not None and proc.poll() is None:
                proc.kill()
                proc.wait()
