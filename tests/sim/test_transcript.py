"""Transcripts: `sim --record` saves every signed frame; `verify` checks it from the file alone."""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2pcards.bots.base import RandomBot
from p2pcards.cli import main
from p2pcards.crypto.envelope import parse
from p2pcards.sim.cheaters import outsider_frame
from p2pcards.sim.memnet import MemNet
from p2pcards.sim.table_game import make_table
from p2pcards.sim.transcript import Transcript, Witness, record, verify
from p2pcards.table.round import Stage


@functools.cache
def honest_game(game: str = "crisp", players: int = 2) -> bytes:
    """The transcript of a short seeded game between honest peers."""
    rng = random.Random(7)
    options = {"limit": 12} if game == "crisp" else {}
    peers = make_table(game, players, options, random.Random(rng.random()))
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(players)], rng)
    transcript = record(net, peers[0].cfg)
    net.start()
    net.run()
    assert all(p.finished for p in peers)
    return transcript.to_bytes()


def test_an_honest_game_verifies_with_every_round_and_the_final_totals() -> None:
    transcript = Transcript.from_bytes(honest_game())
    verdict = verify(transcript)
    assert verdict.ok and verdict.fault is None
    w = verdict.witness
    assert isinstance(w, Witness) and w.finished
    assert [number for number, _, _ in w.rounds] == list(range(1, w.round + 1))
    assert all(audit == "verified" for _, _, audit in w.rounds)
    assert verdict.lines[-1].startswith(f"verified: game over, totals {list(w.game.totals)}")
    # The boxes sealed to a seat stay closed to a witness: it says so, and counts every one.
    assert any(line.startswith("private boxes not opened") for line in verdict.lines)
    envs = [parse(frame).envelope for _, frame in transcript.frames]
    boxes = Counter((w.cfg.keys.index(e.sender), e.body["to"]) for e in envs if e.type == "private")
    assert w.boxes == dict(boxes) and boxes


def test_verify_command_on_a_recorded_sim(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "game.p2pt"
    assert main(["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "3", "--quiet",
                 "--record", str(path)]) == 0
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0
    assert "verified: game over" in capsys.readouterr().out


@pytest.mark.slow  # two whole games: the King swap needs the second
def test_a_cheat_in_the_transcript_is_the_fault_verify_reports_with_its_blame(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A drawn King swapped into a hand: only the audit, once every seed is opened, can see it.
    path = tmp_path / "cheat.p2pt"
    assert main(["sim", "crisp", "--cheat", "king-swap", "--seed", "25", "--record", str(path)]) == 0
    out = capsys.readouterr().out
    assert "seed 29: caught; p0 blamed p1; p2 blamed p1" in out and "caught in 1/1 games" in out
    assert main(["verify", str(path)]) == 1
    out = capsys.readouterr().out
    assert "FAULT: round 1 audit found a rules fault [blame: p1]" in out


def test_one_peers_own_record_of_what_it_sent_and_received_verifies() -> None:
    # The hook a client uses: every frame it sends or receives, kept once if a seated key signed it.
    rng = random.Random(11)
    peers = make_table("crisp", 3, {"limit": 10}, random.Random(rng.random()))
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(3)], rng)
    mine = Transcript(peers[2].cfg)
    net.on_send = lambda sender, frame: mine.keep(net.now, frame) if sender == 2 else None

    def tap(sender: int, receiver: int, frame: bytes) -> bytes:
        if receiver == 2:
            mine.keep(net.now, frame)
        return frame
    net.tap = tap
    net.start()
    for junk in (b"", bytes(100), outsider_frame(peers[0].cfg.context)):
        assert not mine.keep(0.0, junk)
    net.run()
    assert all(p.finished for p in peers)
    assert not mine.keep(net.now, mine.frames[0][1])  # a copy is kept once
    assert verify(Transcript.from_bytes(mine.to_bytes())).ok


def test_a_game_cut_short_is_incomplete_and_names_who_it_waits_on() -> None:
    t = Transcript.from_bytes(honest_game())
    t.frames = t.frames[: len(t.frames) // 2]
    verdict = verify(t)
    assert not verdict.ok
    assert verdict.lines[-1].startswith("INCOMPLETE")


def test_files_that_are_not_transcripts_are_one_line_and_status_2(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad"
    for data in (b"", b"\x81\xa4body\xc0", honest_game()[:-1], b"\x00" * 100):
        bad.write_bytes(data)
        assert main(["verify", str(bad)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("p2pcards verify: ")
    assert main(["verify", str(tmp_path / "missing")]) == 2


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.data())
def test_one_changed_byte_anywhere_fails(tmp_path: Path, data: st.DataObject) -> None:
    good = honest_game()
    at = data.draw(st.integers(0, len(good) - 1), label="position")
    flip = data.draw(st.integers(1, 255), label="xor")
    bad = bytearray(good)
    bad[at] ^= flip
    path = tmp_path / "t.p2pt"
    path.write_bytes(bytes(bad))
    assert main(["verify", str(path)]) in (1, 2)


@settings(max_examples=12, deadline=None)
@given(st.data())
def test_a_changed_frame_fails_even_with_the_files_digest_made_again(data: st.DataObject) -> None:
    # The digest only guards against a damaged file: the signatures are what a forger cannot remake.
    t = Transcript.from_bytes(honest_game())
    i = data.draw(st.integers(0, len(t.frames) - 1), label="frame")
    when, frame = t.frames[i]
    at = data.draw(st.integers(0, len(frame) - 1), label="position")
    changed = bytearray(frame)
    changed[at] ^= data.draw(st.integers(1, 255), label="xor")
    t.frames[i] = (when, bytes(changed))
    assert not verify(Transcript.from_bytes(t.to_bytes())).ok


def goes_on_as_two(seed: int, journal: bool = False, first: Callable[[MemNet], None] | None = None,
                   second: Callable[[MemNet], None] | None = None) -> tuple[MemNet, MemNet]:
    """A Crisp table of three where p2 vanishes in round 2, and p0 and p1 vote it out and finish the game at the
    table that goes on (protocol.md §14.9): both tables' networks, `first` and `second` called on each before it starts."""
    rng = random.Random(seed)
    peers = make_table("crisp", 3, {"limit": 30}, random.Random(rng.random()), journal=journal)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(3)], rng)
    if first is not None:
        first(net)
    net.start()
    net.run(until=300.0, stop=lambda n: n.peers[2].round == 2 and n.peers[2].rs is not None
            and n.peers[2].rs.stage is Stage.PLAYING)
    net.dead.add(2)
    for i in (0, 1):
        net.call_at(net.now + 10.0, lambda n, i=i: n.send_as(i, n.peers[i].gone(2, n.now, "p2 was missing")))
    net.run(until=net.now + 60.0)
    nxt = [p.next_peer() for p in net.peers[:2]]
    assert nxt[0] is not None and nxt[1] is not None
    net2 = MemNet([nxt[0], nxt[1]], [RandomBot(random.Random(i), 0.05) for i in range(2)], net.rng)
    net2.now = net.now  # one clock for the whole game, as a client's recording has
    if second is not None:
        second(net2)
    net2.start()
    net2.run(until=net2.now + 600.0)
    assert all(p.finished and not p.faults for p in net2.peers)
    return net, net2


@pytest.mark.slow
def test_a_transcript_follows_the_table_that_goes_on_without_a_seat() -> None:
    # Seat 2 vanishes in round 2; p0 and p1 vote it out and finish the game at the successor table
    # (protocol.md §14.9). Its frames, recorded after the first table's, verify as one game.
    kept: list[Transcript] = []

    def second(net2: MemNet) -> None:
        transcript = kept[0]
        kept.append(Transcript(transcript.config, list(transcript.frames)))  # the first table's frames alone
        transcript.follow(net2.peers[0].cfg)
        net2.on_send = lambda sender, frame: transcript.add(net2.now, frame)

    _, net2 = goes_on_as_two(11, first=lambda net: kept.append(record(net, net.peers[0].cfg)), second=second)
    transcript, first = kept
    verdict = verify(transcript)
    assert verdict.ok, verdict.lines
    assert verdict.witness is not None and verdict.witness.game.totals == net2.peers[0].game.totals
    assert any("the table goes on without the seats voted out" in line and "p0, p1" in line for line in verdict.lines)
    alone = verify(first)  # the first table's frames alone: the game is not there
    assert not alone.ok and "INCOMPLETE" in alone.lines[-1], alone.lines
    # Without one vote the first table never names a successor: the second table's frames are no table of this game.
    votes = [(t, f) for t, f in transcript.frames if parse(f).envelope.type == "gone"]
    cut = Transcript(transcript.config, [x for x in transcript.frames if x != votes[0]])
    assert not verify(cut).ok
    # The witness votes nothing: what tells it no larger set will go is a seat's `out`. One is enough.
    outs = [x for x in transcript.frames if parse(x[1]).envelope.type == "out"]
    assert len(outs) == 2
    assert verify(Transcript(transcript.config, [x for x in transcript.frames if x != outs[0]])).ok
    assert not verify(Transcript(transcript.config, [x for x in transcript.frames if x not in outs])).ok


@pytest.mark.slow
def test_a_recording_made_again_from_both_tables_journals_verifies(tmp_path: Path) -> None:
    # A client that comes back with `play --record` keeps what it took and signed before from its journals:
    # the first table's, then that of the table that went on without a seat (ui/session.py `journaled`).
    from p2pcards.net.store import SeatStore
    from p2pcards.ui.session import journaled

    net, net2 = goes_on_as_two(12, journal=True)
    peers, nxt = net.peers, net2.peers
    store = SeatStore(tmp_path, peers[0].cfg, 0, compacting=False)  # as a client that records keeps it
    store.append(list(peers[0].journal or []))
    later = store.successor(nxt[0].cfg, 0)
    later.append(list(nxt[0].journal or []))
    transcript = Transcript(peers[0].cfg)
    for at, frame in journaled(store.path):
        transcript.keep(at, frame)
    transcript.follow(nxt[0].cfg)
    for at, frame in journaled(later.path):
        transcript.keep(at, frame)
    verdict = verify(transcript)
    assert verdict.ok, verdict.lines
    assert verdict.witness is not None and verdict.witness.game.totals == nxt[0].game.totals


def test_a_long_games_transcript_loads_whole() -> None:
    # A whole Crescendo game is well over half a MiB in thousands of frames: more than one frame may hold.
    frames = [(i, bytes([i % 256]) * 400) for i in range(5000)]
    back = Transcript.from_bytes(Transcript(make_table("crisp", 2)[0].cfg, frames).to_bytes())
    assert back.frames == frames


@pytest.mark.parametrize("mtype", ["key", *(pytest.param(m, marks=pytest.mark.slow) for m in ("pass", "order"))])
def test_a_frame_missing_from_the_file_is_waited_on_not_blamed_on_the_seats_ahead(mtype: str) -> None:
    # A witness sends no result, so the seats go on without it: with one frame of round 1 missing, it is
    # left behind while the file holds every later round. That is the missing frame's seat owing it (an
    # incomplete game), not a fault of the seats ahead ("more than 16 messages of a round not begun").
    rng = random.Random(3)
    peers = make_table("crisp", 3, {"limit": 40}, random.Random(rng.random()))
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(3)], rng)
    transcript = record(net, peers[0].cfg)
    net.start()
    net.run()
    envs = [parse(frame).envelope for _, frame in transcript.frames]
    assert max(e.round for e in envs) > 1
    i = next(k for k, e in enumerate(envs) if e.type == mtype and e.round == 1)
    verdict = verify(Transcript(transcript.config, transcript.frames[:i] + transcript.frames[i + 1:]))
    assert not verdict.ok and verdict.fault is None, verdict.lines[-1]
    sender = transcript.config.names[transcript.config.keys.index(envs[i].sender)]
    assert verdict.lines[-1] == f"INCOMPLETE: the game stops in round 1, waiting on {sender}"


def test_a_game_whose_frames_were_lost_and_sent_again_records_each_once_and_verifies(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A frame lost on a link is asked for and sent again: the recorder used to keep every sending, and
    # `verify` then called an honest game "NOT THE GAME'S RECORD: ... 2 copied".
    path = tmp_path / "lossy.p2pt"
    assert main(["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "3", "--quiet",
                 "--faults", "drop=0.1", "--record", str(path)]) == 0
    frames = [f for _, f in Transcript.load(str(path)).frames]
    assert len(frames) == len(set(frames))
    capsys.readouterr()
    assert main(["verify", str(path)]) == 0, capsys.readouterr().out


def test_a_changed_config_is_not_the_games_record_not_a_game_waiting_on_every_seat(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Two seats' names swapped in the config (the digest made again): every frame is then for another table.
    # verify used to say only "INCOMPLETE: ... waiting on p1, p0" with status 1, as if the seats had stalled.
    import dataclasses
    t = Transcript.from_bytes(honest_game())
    names = t.config.names
    swapped = dataclasses.replace(t.config, names=(names[1], names[0]) + names[2:])
    path = tmp_path / "swapped.p2pt"
    path.write_bytes(Transcript(swapped, t.frames).to_bytes())
    assert main(["verify", str(path)]) == 3
    out = capsys.readouterr().out
    assert f"NOT THE GAME'S RECORD: {len(t.frames)} frame(s) for a table that is not this config's" in out, out
    assert "blame" not in out.replace("no seat is to blame", "")


def test_a_frame_changed_under_its_signature_is_named_as_such_even_when_the_game_then_stops(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A result's score changed under its old signature: the game cannot finish without it, and the file says why.
    t = Transcript.from_bytes(honest_game())
    i = max(k for k, (_, f) in enumerate(t.frames) if parse(f).envelope.type == "result")
    when, frame = t.frames[i]
    signed = parse(frame)
    body = dict(signed.envelope.body)
    body["totals"] = [x + 1 for x in body["totals"]]  # type: ignore[union-attr]
    import dataclasses
    changed = frame[:64] + dataclasses.replace(signed.envelope, body=body).encode()
    t.frames[i] = (when, changed)
    path = tmp_path / "changed.p2pt"
    path.write_bytes(t.to_bytes())
    assert main(["verify", str(path)]) == 3
    out = capsys.readouterr().out
    assert "INCOMPLETE" in out and "NOT THE GAME'S RECORD: 1 frame(s) whose signature does not verify" in out, out


def test_exit_status_tells_a_fault_from_a_game_that_stops_short(tmp_path: Path) -> None:
    t = Transcript.from_bytes(honest_game())
    path = tmp_path / "short.p2pt"
    path.write_bytes(Transcript(t.config, t.frames[: len(t.frames) // 2]).to_bytes())
    assert main(["verify", str(path)]) == 3  # incomplete: no seat is blamed, unlike a fault (1)


def test_an_orders_recorded_time_moved_before_its_stamp_blames_no_seat(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A transcript's times are signed by no one: a tester moved an order's recorded time 3 s earlier (and made
    # the digest again), and verify blamed its honest orderer ("an order stamped 4.462 s when our clock reads
    # 1.523 s [blame: p1]", status 1). Every seat signed the results that took that order: the file is wrong.
    t = Transcript.from_bytes(honest_game())
    orders = [k for k, (_, f) in enumerate(t.frames) if parse(f).envelope.type == "order"]
    k = orders[-2]
    when = t.frames[k][0] - 2_000_000
    frames = t.frames[:k] + t.frames[k + 1:]
    frames.insert(next(i for i, (x, _) in enumerate(frames) if x > when), (when, t.frames[k][1]))
    path = tmp_path / "moved.p2pt"
    path.write_bytes(Transcript(t.config, frames).to_bytes())
    assert main(["verify", str(path)]) == 3
    out = capsys.readouterr().out
    assert "the file's times were changed" in out and "[blame:" not in out, out


def test_a_hostile_file_of_a_million_empty_frames_is_refused_at_once(tmp_path: Path,
                                                                    capsys: pytest.CaptureFixture[str]) -> None:
    # 5 MB of [0, b"x"] items (the digest made again) took 5.7 s and 200 MB; a 256 MiB one would have taken
    # some 10 GB. A file now holds at most MAX_TRANSCRIPT // MIN_FRAME frames, each at least MIN_FRAME bytes.
    from p2pcards.crypto.encoding import digest, encode
    from p2pcards.sim.transcript import FORMAT, PERSON
    cfg = make_table("crisp", 2)[0].cfg
    pre = encode({"config": cfg.to_wire(), "format": FORMAT, "frames": None, "v": 1})
    at = pre.index(b"\xa6frames\xc0") + 7
    n = 1_000_000
    body = pre[:at] + b"\xdd" + n.to_bytes(4, "big") + encode([0, b"x"]) * n + pre[at + 1:]
    path = tmp_path / "hostile.p2pt"
    path.write_bytes(encode({"body": body, "digest": digest(PERSON, body)}))
    assert main(["verify", str(path)]) == 2
    assert "an array of 1000000, over the limit of" in capsys.readouterr().err
    path.write_bytes(Transcript(cfg, [(0, b"x")] * 1000).to_bytes())
    assert main(["verify", str(path)]) == 2
    assert "frame 0 is 1 bytes: too short to be a signed frame" in capsys.readouterr().err


def test_deep_nesting_is_named_as_such(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "deep.p2pt"
    path.write_bytes(b"\x91" * 100_000 + b"\xc0")
    assert main(["verify", str(path)]) == 2
    assert "nested too deeply" in capsys.readouterr().err  # was "not msgpack: " and nothing after it


def test_every_seats_refused_moves_are_counted_not_only_the_first_five() -> None:
    # A tester's wrong-special cheat (p1) was the sixth refused move of a Crescendo game: verify printed the
    # first five (bots' slips of other seats) and said nothing of it.
    from p2pcards.sim.transcript import rejected_lines
    from p2pcards.table.outputs import Note
    notes = [Note("rejected", f"p0 number {i}: only one NUMBER claim", "p0") for i in range(6)]
    notes.append(Note("rejected", "p1 peek 0 p2: the Reserve's top card shows lock, not peek", "p1"))
    lines = rejected_lines(notes)
    assert lines[0].endswith("p0 6, p1 1")
    assert "rejected: p1 peek 0 p2: the Reserve's top card shows lock, not peek [blame: p1]" in lines
    assert "rejected: ... and 3 more of p0's" in lines


def test_a_verified_game_says_what_was_checked_and_what_could_not_be() -> None:
    lines = verify(Transcript.from_bytes(honest_game())).lines
    checked = next(line for line in lines if line.startswith("checked: "))
    assert "signatures and chains" in checked and "Not checked: the contents of the boxes sealed" in checked
    assert "the file's times are signed by no one" in checked and lines[-1].startswith("verified: ")


def test_a_file_over_the_cap_is_named_as_such_not_by_a_wrong_size(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                 capsys: pytest.CaptureFixture[str]) -> None:
    """Only cap + 1 bytes are read: a 70 MB file was said to be "67108865 bytes"."""
    import p2pcards.sim.transcript as transcript
    monkeypatch.setattr(transcript, "MAX_TRANSCRIPT", 1000)
    path = tmp_path / "big.p2pt"
    path.write_bytes(b"\x00" * 5000)
    assert main(["verify", str(path)]) == 2
    err = capsys.readouterr().err
    assert err == f"p2pcards verify: {path}: over 1000 bytes, the most a transcript may be (protocol.md §14.8)\n"


def test_verify_json_gives_a_script_the_outcome_the_text_gives(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import json
    path = tmp_path / "game.p2pt"
    path.write_bytes(honest_game())
    assert main(["verify", str(path), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    w = verify(Transcript.from_bytes(honest_game())).witness
    assert w is not None
    assert data["status"] == "verified" and data["exit"] == 0 and data["fault"] is None
    assert data["totals"] == list(w.game.totals) and data["players"] == ["p0", "p1"]
    assert [r["round"] for r in data["rounds"]] == list(range(1, w.round + 1))
    assert all(r["audit"] == "verified" for r in data["rounds"])
    assert data["lines"][-1].startswith("verified: game over")
    # a game cut short: status and exit 3, and whom it waits on
    t = Transcript.from_bytes(honest_game())
    path.write_bytes(Transcript(t.config, t.frames[:-1]).to_bytes())
    assert main(["verify", "--json", str(path)]) == 3
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "incomplete" and data["exit"] == 3 and data["waiting_on"] and data["totals"] is None
    # a file that is no transcript: still one JSON object on stdout, and the one line on stderr
    path.write_bytes(b"junk")
    assert main(["verify", "--json", str(path)]) == 2
    out, err = capsys.readouterr()
    assert json.loads(out)["status"] == "unreadable" and err.startswith("p2pcards verify: ") and err.count("\n") == 1


def test_verify_json_counts_the_frames_not_the_games_and_names_a_fault_and_its_blame(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    import json

    from p2pcards.sim.transcript import Verdict
    from p2pcards.sim.verify_cli import as_json
    from p2pcards.table.outputs import Note
    t = Transcript.from_bytes(honest_game())
    frames = list(t.frames)
    frames.insert(len(frames) // 2, frames[len(frames) // 2])  # a frame recorded twice: not the game's record
    path = tmp_path / "copy.p2pt"
    path.write_bytes(Transcript(t.config, frames).to_bytes())
    assert main(["verify", "--json", str(path)]) == 3
    data = json.loads(capsys.readouterr().out)
    assert data["status"] == "not-record" and data["not_the_games"] == {"copies": 1}
    fault = Verdict(False, ["x"], Note("fault", "BadPass: pass repeats a point", "p1"), None, "fault", clocked=True,
                    unclocked=None)
    data = as_json("f", t, fault)
    assert (data["status"], data["exit"]) == ("fault", 1)
    assert data["fault"] == {"detail": "BadPass: pass repeats a point", "blame": "p1", "claim": None, "clocked": True,
                             "unclocked": None}


@functools.cache
def quit_game(players: int = 2, at: float = 3.0) -> Transcript:
    """The transcript of a seeded game where the last seat quits `at` s in (at two, too few seats remain: the game
    ends)."""
    rng = random.Random(7)
    peers = make_table("crisp", players, {"limit": 40}, random.Random(rng.random()))
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(players)], rng)
    transcript = record(net, peers[0].cfg)
    net.start()
    net.call_at(at, lambda n: n.send_as(players - 1, n.peers[-1].leave(n.now, "quit")))
    net.run(until=600)
    assert peers[-1].stopped == "we left: quit"
    return Transcript.from_bytes(transcript.to_bytes())


def test_a_game_that_ended_when_a_seat_quit_verifies_with_no_winner_named() -> None:
    verdict = verify(quit_game())
    assert verdict.ok
    assert verdict.lines[-1] == (f"verified: too few seats remain without p1: the game ends, totals "
                                 f"{list(verdict.witness.game.totals)}, no winner")  # not "winners " and nothing


def test_a_record_that_ends_where_a_seat_quit_says_whom_it_waits_on_to_vote_it_gone() -> None:
    # The quitter's own record ends at its `leave`: verify said "waiting on nobody named".
    t = quit_game()
    kinds = [parse(f).envelope.type for _, f in t.frames]
    cut = kinds.index("leave") + 1
    verdict = verify(Transcript(t.config, t.frames[:cut]))
    assert verdict.kind == "incomplete" and verdict.waiting == ["p0"]
    assert verdict.lines[-1] == ("INCOMPLETE: the game stops in round 2, after p1 left the table (quit): "
                                 "waiting on p0 to vote it gone")
    verdict = verify(Transcript(t.config, t.frames[:cut + 1]))  # p0's vote, not yet its `out`
    assert verdict.waiting == ["p0"] and verdict.lines[-1].endswith("waiting on p0 to say who is out (its `out`)")


def test_a_record_that_ends_where_no_seat_owes_a_frame_says_a_move_was_due() -> None:
    t = quit_game()
    kinds = [parse(f).envelope.type for _, f in t.frames]
    cut = kinds.index("leave")  # up to the shares that turned a card: a player's turn
    verdict = verify(Transcript(t.config, t.frames[:cut]))
    assert verdict.kind == "incomplete" and verdict.waiting == []
    assert "nobody named" not in verdict.lines[-1]
    assert "waiting on no seat's frame: the file ends where the game waits on a player's move" in verdict.lines[-1]


@pytest.mark.parametrize(("data", "says"), [
    (b"", "an empty file, not a transcript"),
    (b'{"params": {}, "games": []}\n', "JSON, not a transcript (verify reads the file --record saves, not a --json "
                                       "report)"),
    (honest_game()[:5000], "a transcript cut short or damaged (not msgpack: cut short)"),
    (b"\xc1" * 10, "not a transcript, the file --record saves (not msgpack: not a valid encoding)"),
])
def test_a_file_that_is_no_transcript_at_all_says_what_it_looks_like(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], data: bytes, says: str) -> None:
    # A sim --json report given to verify was "not msgpack: bytes after the end of the message".
    bad = tmp_path / "bad"
    bad.write_bytes(data)
    assert main(["verify", str(bad)]) == 2
    assert capsys.readouterr().err == f"p2pcards verify: {bad}: {says}\n"


def test_a_record_that_stops_before_the_first_round_says_so_not_round_0() -> None:
    t = quit_game()
    verdict = verify(Transcript(t.config, t.frames[:1]))
    assert verdict.lines[-1] == "INCOMPLETE: the game stops before round 1 begins, waiting on p1"


def test_verify_reads_a_transcript_from_standard_input(monkeypatch: pytest.MonkeyPatch,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    # `verify - < FILE` said "-: No such file or directory" (sim's --json takes - for standard output).
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(honest_game())))
    assert main(["verify", "-"]) == 0
    assert capsys.readouterr().out.splitlines()[-1].startswith("verified: game over")
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"")))
    assert main(["verify", "-"]) == 2
    assert capsys.readouterr().err == "p2pcards verify: standard input: an empty file, not a transcript\n"


def test_a_record_that_ends_where_a_seat_quit_mid_shuffle_waits_on_the_votes_not_on_what_was_owed() -> None:
    # p2 quit while p1 still owed a private box: verify said "waiting on p1", though the round was void and the
    # table waited on the votes that p2 is gone.
    t = quit_game(3, 0.05)
    kinds = [parse(f).envelope.type for _, f in t.frames]
    verdict = verify(Transcript(t.config, t.frames[:kinds.index("leave") + 1]))
    assert verdict.waiting == ["p0", "p1"]
    assert verdict.lines[-1] == ("INCOMPLETE: the game stops in round 1, after p2 left the table (quit): "
                                 "waiting on p0, p1 to vote it gone")
