"""`p2pcards play --record FILE`: the player's own game saved as a transcript that `p2pcards verify` checks offline."""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path

import pytest

from p2pcards.bots.crescendo_bot import CrescendoBot
from p2pcards.cli import main
from p2pcards.crypto.identity import generate
from p2pcards.errors import IllegalMove
from p2pcards.ui.session import NetTable

pytestmark = pytest.mark.slow  # a whole game against bot processes


def play_whole_game(path: Path) -> NetTable:
    """Play a whole Crescendo game against one bot peer headlessly (a good bot chooses our moves), recording it."""
    session = NetTable(generate("you"), "crescendo", {}, bots=1, record=str(path))
    bot = CrescendoBot()

    async def run() -> None:
        try:
            await session.start()
            deadline = time.time() + 240
            while time.time() < deadline and not session.finished() and session.stopped() is None:
                await session.changed(0.1)
                view = session.view()
                if view is not None and not session.busy():
                    move = bot.choose(view)
                    if move is not None:
                        with contextlib.suppress(IllegalMove):  # a window that closed as we chose
                            session.play(move)
        finally:
            await session.leave()

    asyncio.run(run())
    return session


def test_a_recorded_game_verifies_and_one_changed_byte_fails(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "mine.p2pt"
    session = play_whole_game(path)
    assert session.finished(), session.stopped()
    assert main(["verify", str(path)]) == 0
    out = capsys.readouterr().out
    assert "verified: game over" in out and "you" in out
    data = bytearray(path.read_bytes())
    data[len(data) // 2] ^= 0x01
    path.write_bytes(bytes(data))
    assert main(["verify", str(path)]) != 0
