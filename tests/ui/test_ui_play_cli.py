"""`p2pcards play` and `p2pcards rules`: bad input gets one clear line and exit status 2."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from p2pcards.cli import main


@pytest.mark.parametrize("argv,said", [
    (["play", "--bots", "8"], "crisp takes 2 to 8 players: --bots must be 1 to 7"),
    (["play", "--bots", "0"], "--bots must be 1 to 7"),
    (["play", "--game", "crescendo", "--bots", "6"], "crescendo takes 2 to 6 players: --bots must be 1 to 5"),
    (["play", "--game", "crescendo", "--limit", "50", "--bots", "2"], "--limit is not an option of crescendo"),
    (["play", "--game", "crescendo", "--discard-draw", "--bots", "2"], "--discard-draw is not an option of crescendo"),
    (["play", "--game", "crescendo", "--limit", "50", "--draw-seconds", "30", "--bots", "2"],
     "--limit, --draw-seconds are not options of crescendo"),
    (["play", "--peer", "127.0.0.1:4242", "--bots", "2"], "--bots plays on this machine only"),
    (["play", "--peer", "nowhere"], "--peer wants HOST:PORT, not 'nowhere'"),
    (["play", "--bots", "2"], "needs a terminal"),  # pytest's stdin is not one
    (["rules", "crescendo", "--number-window", "5"], "unrecognized arguments: --number-window 5"),  # no host option
    (["rules", "crisp", "--number-window", "5"], "unrecognized arguments: --number-window 5"),
    (["rules", "crescendo", "--limit", "50"], "--limit is not an option of crescendo"),
])
def test_bad_play_input_is_one_line_and_status_2(argv: list[str], said: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(argv) == 2
    err = capsys.readouterr().err
    assert said in err and err.count("\n") == 1


def test_rules_print_with_the_hosts_options(capsys: pytest.CaptureFixture[str]) -> None:
    status = main(["rules", "crisp", "--limit", "50"])
    out, err = capsys.readouterr()
    assert status == 0 and "50" in out and not err


def test_a_state_dir_whose_parent_is_missing_is_refused_and_nothing_is_made(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # `--state /a/new/dir` made the whole tree silently: a mistyped path journalled where nobody would look.
    wanted = tmp_path / "typo" / "state"
    assert main(["play", "--state", str(wanted)]) == 2
    err = capsys.readouterr().err
    assert "argument --state: no directory" in err and err.count("\n") == 1
    assert not (tmp_path / "typo").exists()


def test_a_new_state_dir_is_said_once_and_an_existing_one_not_at_all(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    from p2pcards.ui import lobby
    lobbies: list[Path] = []

    async def run_lobby(*args: Any, state: Path, **kwargs: Any) -> int:
        lobbies.append(state)
        state.mkdir(exist_ok=True)  # as the lobby's Lock does
        return 0

    monkeypatch.setattr(lobby, "run_lobby", run_lobby)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    for _ in range(2):
        assert main(["play", "--state", str(tmp_path / "new")]) == 0
    err = capsys.readouterr().err
    assert lobbies == [tmp_path / "new"] * 2
    assert err.count("\n") == 1 and f"--state {tmp_path / 'new'} is a new directory: making it" in err


@pytest.mark.parametrize("files", [{"table": b"my kitchen table plans", "journal": b"dear diary"},
                                   {"node": b"junk", "table": b"junk", "notes.txt": b"kept"}])
def test_a_state_dir_of_someone_elses_files_is_refused_and_left_as_it_was(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch,
        files: dict[str, bytes]) -> None:
    # `play --state DIR` cleared files of a seat's names that were no seat (the user's own `table`, `journal`),
    # silently, and made DIR 0700: the peer refused such a directory, the client deleted its files.
    from p2pcards.ui import lobby

    async def run_lobby(*args: Any, **kwargs: Any) -> int:
        raise AssertionError("the lobby must not start")

    monkeypatch.setattr(lobby, "run_lobby", run_lobby)
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdout.isatty", lambda: True)
    for name, data in files.items():
        (tmp_path / name).write_bytes(data)
    tmp_path.chmod(0o755)
    assert main(["play", "--state", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert f"--state {tmp_path} holds" in err and err.count("\n") == 1, err
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == files
    assert tmp_path.stat().st_mode & 0o777 == 0o755
