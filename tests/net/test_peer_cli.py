"""`p2pcards peer`: every bad input is one line on stderr and status 2."""

from __future__ import annotations

from pathlib import Path

import pytest

from p2pcards.cli import main


@pytest.mark.parametrize("args, says", [
    (["--create"], "--create needs --game"),
    (["--peer", "nope"], "HOST:PORT"),
    (["--peer", "127.0.0.1:70000"], "HOST:PORT"),
    (["--create", "--game", "crisp", "--players", "9"], "2 to 8 players"),
    (["--create", "--game", "crescendo", "--limit", "5"], "Crisp options"),
    (["--no-mdns"], "needs --peer"),
    (["--create", "--game", "crisp", "--interface", "no-such-if0"], "no such IPv4 interface"),
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
