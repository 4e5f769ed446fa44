"""The command line: every subcommand listed, and bad input gets one clear line and exit status 2."""

from __future__ import annotations

import json
import os
import signal
import sys
import time
import types
from pathlib import Path

import pytest

from p2pcards.cards import CRISP_DECK
from p2pcards.cli import COMMANDS, load_command, main

EXAMPLE = Path(__file__).parent / "scenarios" / "examples" / "crisp-one-round.json"


def scenario(tmp_path: Path, data: object) -> str:
    path = tmp_path / "s.json"
    path.write_text(data if isinstance(data, str) else json.dumps(data))
    return str(path)


def good() -> dict[str, object]:
    return {"game": "crisp", "players": ["ann", "bob"], "decks": [list(CRISP_DECK)],
            "moves": [{"by": "bob", "do": "draw"}]}


def test_help_lists_every_subcommand(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for name in COMMANDS:
        assert f"  {name} " in out


def test_help_lists_the_commands_in_the_readmes_order(capsys: pytest.CaptureFixture[str]) -> None:
    table = [line for line in (Path(__file__).parents[1] / "README.md").read_text().splitlines()
             if line.startswith("| `p2pcards ")]
    readme = list(dict.fromkeys(line.split()[2].rstrip("`") for line in table))
    assert main(["--help"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines() if line.startswith("  ")]
    assert listed == readme


def test_unknown_command_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["deal"]) == 2
    err = capsys.readouterr().err
    assert "unknown command 'deal'" in err and err.count("\n") == 1


def test_bench_names_every_kind_in_the_command_list(capsys: pytest.CaptureFixture[str]) -> None:
    from p2pcards.bench import KINDS
    assert main(["--help"]) == 0
    line = next(x for x in capsys.readouterr().out.splitlines() if x.startswith("  bench "))
    assert all(kind in line for kind in KINDS)


@pytest.mark.parametrize("option", ["--json", "--record"])
def test_sim_refuses_an_output_file_it_cannot_write_before_playing(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str) -> None:
    assert main(["sim", "crisp", "--seed", "1", option, str(tmp_path / "no" / "x")]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and f"argument {option}: no directory" in err
    assert main(["sim", "crisp", "--seed", "1", option, str(tmp_path)]) == 2
    assert "is a directory" in capsys.readouterr().err


@pytest.mark.parametrize("option", ["--json", "--record"])
def test_an_output_that_is_no_regular_file_is_refused_and_left_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str) -> None:
    # A file is written as a new one renamed over the old: `--json /dev/null --overwrite`, as root, put a plain
    # file in place of /dev/null; here a named pipe stands for it.
    import stat
    pipe = tmp_path / "pipe"
    os.mkfifo(pipe)
    assert main([*QUICK_SIM, option, str(pipe), "--overwrite"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and "is not a regular file" in err
    assert stat.S_ISFIFO(pipe.stat().st_mode)


def test_a_scenario_prints_its_result(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", str(EXAMPLE)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert result["totals"] == {"ann": 20, "bob": 16, "cy": 12}


@pytest.mark.parametrize("mutate, message", [
    (lambda d: "{not json", "not valid JSON"),
    (lambda d: [1, 2], "JSON object"),
    (lambda d: {**d, "game": "chess"}, "unknown game"),
    # a missing game read "unknown game None", a field of the wrong type "scenario: scenario: 'decks' has the wrong type"
    (lambda d: {k: v for k, v in d.items() if k != "game"}, "p2pcards scenario: missing 'game'"),
    (lambda d: {**d, "decks": "x"}, "p2pcards scenario: 'decks' must be a list, not 'x'"),
    (lambda d: {**d, "moves": [{"do": "wait", "seconds": "2"}]}, "move 0: 'seconds' must be a number, not '2'"),
    (lambda d: {**d, "players": ["ann"]}, "2 to 8 players"),
    (lambda d: {**d, "dealer": "zed"}, "unknown dealer"),
    (lambda d: {**d, "decks": [list(CRISP_DECK)[:51]]}, "52 cards"),
    (lambda d: {**d, "decks": [list(CRISP_DECK)[:-1] + ["ZZ"]]}, "not a Crisp card"),
    (lambda d: {**d, "options": {"limit": 0}}, "limit"),
    (lambda d: {**d, "options": {"colour": "red"}}, "unknown Crisp option"),
    (lambda d: {**d, "moves": [{"by": "zed", "do": "draw"}]}, "unknown player"),
    (lambda d: {**d, "moves": [{"by": "bob", "do": "fly"}]}, "unknown move"),
    (lambda d: {**d, "moves": [{"by": "bob", "do": "replace", "slot": "top"}]}, "left, middle or right"),
    (lambda d: {**d, "moves": [{"do": "wait", "seconds": -1}]}, "negative"),
    (lambda d: "[" * 100_000 + "]" * 100_000, "nested too deeply"),
    (lambda d: json.dumps(good()).replace('"draw"}]', '"draw", "x": ' + "9" * 5000 + "}]"), "out of range"),
    (lambda d: json.dumps({**d, "moves": [{"do": "wait", "seconds": 0}]}).replace(": 0}", ": 1e400}"), "out of range"),
    (lambda d: json.dumps({**d, "moves": [{"do": "wait", "seconds": 10 ** 400}]}), "out of range"),
    (lambda d: json.dumps({**d, "moves": [{"do": "wait", "seconds": 0}]}).replace(": 0}", ": NaN}"), "NaN is not"),
    (lambda d: json.dumps({**d, "options": {"crisp_window_s": 0}}).replace(": 0}", ": Infinity}"), "Infinity"),
])
def test_a_malformed_scenario_gets_one_line_and_status_2(tmp_path: Path, capsys: pytest.CaptureFixture[str],
                                                         mutate: object, message: str) -> None:
    data = mutate(good())  # type: ignore[operator]
    assert main(["scenario", scenario(tmp_path, data)]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err and captured.err.count("\n") == 1, captured.err


def test_a_move_that_needs_a_missing_deck_is_a_file_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = json.loads(EXAMPLE.read_text())
    data["moves"].append({"by": "bob", "do": "draw"})  # round 2 has no deck in the file
    assert main(["scenario", scenario(tmp_path, data)]) == 2
    assert "round 2" in capsys.readouterr().err


def test_an_illegal_move_is_recorded_and_changes_nothing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    data = good()
    data["moves"] = [{"by": "ann", "do": "draw"}, {"by": "bob", "do": "crisp"}]
    assert main(["scenario", scenario(tmp_path, data)]) == 0
    result = json.loads(capsys.readouterr().out)
    assert [r["move"] for r in result["rejected"]] == [0, 1]
    assert result["state"]["turn"] == "bob" and result["state"]["draw_pile"] == 46


def test_a_missing_file_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenario", "/nonexistent/file.json"]) == 2
    assert "cannot read" in capsys.readouterr().err


@pytest.mark.parametrize("game, options, says", [
    ("crisp", {"limit": 10 ** 23}, "limit must be a whole number from 1 to"),
    ("crisp", {"crisp_window_s": 1e300}, "crisp_window_s must be a number of seconds from 0 to"),
    ("crisp", {"draw_seconds": 0}, "draw_seconds must be a number of seconds above 0"),
    ("crescendo", {"number_window_s": 86_401}, "number_window_s must be a number from 0 to"),
    ("crescendo", {"number_tie_ms": -1}, "number_tie_ms must be a number from 0 to"),
])
def test_an_option_out_of_range_is_refused_by_the_engine(game: str, options: dict[str, object], says: str) -> None:
    from p2pcards.errors import InputError
    from p2pcards.games.crescendo import CrescendoOptions
    from p2pcards.games.crisp import CrispOptions

    kind = CrispOptions if game == "crisp" else CrescendoOptions
    with pytest.raises(InputError, match=says):
        kind.from_dict(options)
    with pytest.raises(InputError, match=says):
        kind.from_dict({k: float("nan") for k in options} if "limit" not in options else options)


def test_a_file_to_write_where_nothing_can_be_written_is_refused_before_the_work(
        capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["sim", "crisp", "--record", "/proc/x.bin"]) == 2
    assert "cannot write in '/proc'" in capsys.readouterr().err


def test_play_refuses_a_record_file_it_cannot_write_and_leaves_no_file_when_it_refuses(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["play", "--bots", "2", "--record", "/proc/x.bin"]) == 2
    assert "cannot write in '/proc'" in capsys.readouterr().err
    target = tmp_path / "game.p2pt"
    assert main(["play", "--bots", "9", "--record", str(target)]) == 2  # refused for its --bots
    assert not target.exists()


QUICK_SIM = ["sim", "crisp", "--players", "2", "--limit", "10", "--seed", "3", "--quiet"]


@pytest.mark.parametrize("option", ["--json", "--record"])
def test_sim_refuses_a_file_that_exists_before_playing_and_replaces_it_only_with_overwrite(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], option: str) -> None:
    saved = tmp_path / "saved"
    saved.write_bytes(b"a transcript kept for a year")
    assert main([*QUICK_SIM, option, str(saved)]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.count("\n") == 1 and f"{option}: {saved} already exists" in err and "--overwrite" in err
    assert saved.read_bytes() == b"a transcript kept for a year"
    assert main([*QUICK_SIM, option, str(saved), "--overwrite"]) == 0
    assert saved.read_bytes() != b"a transcript kept for a year"
    assert [p.name for p in tmp_path.iterdir()] == ["saved"]  # no temporary file left


def test_sim_will_not_write_its_transcript_and_report_to_one_file(tmp_path: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    target = str(tmp_path / "both")
    assert main([*QUICK_SIM, "--record", target, "--json", target]) == 2
    assert "one file each" in capsys.readouterr().err and not (tmp_path / "both").exists()


def test_sim_json_to_standard_output_is_the_json_alone_and_the_report_goes_to_standard_error(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "-").write_text("a file named -, which `--json -` neither refuses nor replaces")
    assert main([*QUICK_SIM, "--json", "-"]) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["params"]["seed"] == 3 and data["summary"]["ok"] and len(data["games"]) == 1
    assert "honest peers agreed on every result: yes" in err and "sim crisp, 2 players, seed 3" in err
    assert [p.name for p in tmp_path.iterdir()] == ["-"] and (tmp_path / "-").read_text().startswith("a file named")


def test_a_transcript_is_never_written_to_a_file_named_dash_by_mistake(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    assert main([*QUICK_SIM, "--record", "-"]) == 2
    assert "'-' is standard output" in capsys.readouterr().err and list(tmp_path.iterdir()) == []


def test_play_refuses_a_record_file_that_exists_before_anything_starts(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    saved = tmp_path / "game.p2pt"
    saved.write_bytes(b"last week's game")
    assert main(["play", "--bots", "2", "--record", str(saved)]) == 2  # refused before it asks for a terminal
    err = capsys.readouterr().err
    assert f"--record: {saved} already exists" in err and "--overwrite" in err
    assert saved.read_bytes() == b"last week's game"
    assert "--overwrite" in load_command("play").format_help() and "--overwrite" in load_command("sim").format_help()


def test_a_file_is_written_whole_or_not_at_all_and_never_over_one_that_appeared(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    from p2pcards.errors import InputError
    from p2pcards.files import write_file

    target = tmp_path / "t.bin"
    target.write_bytes(b"good")

    def crash(fd: int) -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "fsync", crash)  # the disk fills up halfway
    with pytest.raises(InputError, match="No space left"):
        write_file(str(target), b"new and longer", overwrite=True)
    monkeypatch.undo()
    assert target.read_bytes() == b"good" and [p.name for p in tmp_path.iterdir()] == ["t.bin"]
    with pytest.raises(InputError, match="appeared while we worked") as caught:  # made by someone else meanwhile
        write_file(str(target), b"ours")
    assert target.read_bytes() == b"good"
    kept = str(caught.value).rsplit(" ", 1)[1]
    assert Path(kept).read_bytes() == b"ours"
    write_file(str(tmp_path / "new.bin"), b"fresh")
    assert (tmp_path / "new.bin").read_bytes() == b"fresh"


def test_sighup_ends_a_command_as_sigterm_does_but_not_under_nohup(monkeypatch: pytest.MonkeyPatch) -> None:
    # A closed terminal sends SIGHUP: the client must leave as on SIGTERM (every `finally`: goodbyes, bots).
    def run(args: object) -> int:
        os.kill(os.getpid(), signal.SIGHUP)
        time.sleep(0.05)  # the handler runs here
        return 0

    module = types.ModuleType("hangs_up")
    module.add_arguments = lambda parser: None  # type: ignore[attr-defined]
    module.run = run  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "hangs_up", module)
    monkeypatch.setitem(COMMANDS, "hup", ("hangs_up", "sends itself SIGHUP"))
    def ours(signum: int, frame: object) -> None:  # stands for the default action, which would end pytest
        pass

    before = signal.signal(signal.SIGHUP, ours)
    try:
        assert main(["hup"]) == 128 + signal.SIGHUP
        assert signal.getsignal(signal.SIGHUP) is ours  # put back
        signal.signal(signal.SIGHUP, signal.SIG_IGN)  # nohup
        assert main(["hup"]) == 0
        assert signal.getsignal(signal.SIGHUP) == signal.SIG_IGN
    finally:
        signal.signal(signal.SIGHUP, before)


def test_the_clients_signals_put_back_a_python_handler_and_leave_one_set_outside_python(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # signal.getsignal says None for a handler that was not set from Python: there is none to put back, and
    # signal.signal(sig, None) raised TypeError as the client ended, after its goodbyes.
    import asyncio

    from p2pcards.ui.app import Signals

    def ours(signum: int, frame: object) -> None:
        pass

    before = {sig: signal.getsignal(sig) for sig in (signal.SIGTERM, signal.SIGHUP)}
    real = signal.getsignal
    signal.signal(signal.SIGTERM, ours)
    monkeypatch.setattr(signal, "getsignal", lambda sig: None if sig == signal.SIGHUP else real(sig))

    async def run() -> set[int]:
        with Signals() as signals:
            return set(signals._taken)

    try:
        assert asyncio.run(run()) == {signal.SIGTERM, signal.SIGHUP}  # both taken while the client runs
        assert real(signal.SIGTERM) is ours  # put back
    finally:
        for sig, handler in before.items():
            if handler is not None:
                signal.signal(sig, handler)
