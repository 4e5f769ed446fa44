"""`p2pcards peer`: every bad input is one line on stderr and status 2."""

from __future__ import annotations

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
