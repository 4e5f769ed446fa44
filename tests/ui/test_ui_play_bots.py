"""Whole rounds against bot processes on loopback, played through keys alone (pipe input, no terminal)."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pcards.cli import main
from p2pcards.crypto.identity import generate
from p2pcards.games.crisp import CrispView
from p2pcards.ui.app import run_table
from p2pcards.ui.client import TableClient, plain
from p2pcards.ui.session import NetTable, TableSession, View

pytestmark = pytest.mark.slow


def crisp_key(view: View) -> str | None:
    """A simple player: draw, use a King or Jack, discard what it can, swap in what it must, call crisp at once."""
    assert isinstance(view, CrispView)
    actions = {m.action for m in view.legal}
    if "crisp" in actions:
        return "c"
    if "draw" in actions:
        return "d"
    for action, key in (("king", "k"), ("jack", "j"), ("discard", "x"), ("replace", "1")):
        if action in actions:
            return key
    return None


def crescendo_key(view: View) -> str | None:
    """A simple player: keep the row, draw and discard, call CRESCENDO when it opens, pass on a final turn."""
    actions = {m.action for m in view.legal}
    for action, key in (("crescendo", "c"), ("setup_pass", "p"), ("pass", "p"), ("draw", "d"), ("discard", "x")):
        if action in actions:
            return key
    return None


async def play_round_by_keys(session: TableSession, client: TableClient, game: str) -> dict[str, str]:
    """Run the table screen on `session`, turn the memory aid on and play round 1 by keys alone, then quit.

    Returns the screens seen on the way, and (as "bots") what our bot peers printed.
    """
    policy = crisp_key if game == "crisp" else crescendo_key
    screens: dict[str, str] = {}
    with create_pipe_input() as inp:
        task = asyncio.create_task(run_table(session, input=inp, output=DummyOutput(), client=client))
        deadline = time.time() + 120
        while time.time() < deadline:
            await asyncio.sleep(0.15)
            view = session.view()
            if view is not None and "aid" not in screens:
                screens["aid"] = "asked"
                inp.send_text("m")  # everyone is told, and sees it
            if view is None or session.busy():
                continue
            if view.rounds_played >= 1:
                client.absorb(time.time())  # as the screen's feed does, which may not have run yet
                screens["reveal"] = plain(client.lines(80, 24, time.time()))
                break
            key = policy(view)
            if key is not None:
                if "table" not in screens and key in ("x", "k", "j", "1"):  # we hold a drawn card
                    screens["table"] = plain(client.lines(80, 24, time.time()))
                inp.send_text(key)
        screens["last"] = plain(client.lines(80, 24, time.time()))  # what a failing assertion shows
        if isinstance(session, NetTable):
            for log in session._logs.values():
                log.seek(0)
                screens["bots"] = screens.get("bots", "") + log.read().decode(errors="replace")
        inp.send_text("Q")
        await asyncio.sleep(0.1)
        inp.send_text("y")
        assert await asyncio.wait_for(task, 20) == 0
    return screens


def play_one_round(game: str, options: dict[str, Any], record: str | None = None) -> tuple[str, str, NetTable, str]:
    """Play round 1 against two bot peers by keys; the table screen mid-round, the reveal, the session, the bots' output."""
    session = NetTable(generate("you"), game, options, bots=2, record=record)
    screens = asyncio.run(play_round_by_keys(session, TableClient(session), game))
    # A failure shows the last screen.
    return screens.get("table", ""), screens.get("reveal", screens["last"]), session, screens.get("bots", "")


def test_a_whole_crisp_round_against_two_bots_by_keys(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    record = tmp_path / "mine.p2pt"  # `play --record`: what we sent and received, checked offline
    table, reveal, session, bots = play_one_round("crisp", {"limit": 50}, str(record))
    assert "You drew: " in table and "You are to play" in table and "Draw pile:" in table
    assert "memory aid on" in table  # on our screen, next to our name
    assert "[Ada] aid: you turned the memory aid on" in bots and "[Bo] aid: you turned the memory aid on" in bots
    assert "Round 1 revealed" in reveal and "Scores" in reveal and "Round over." in reveal
    assert all(p.returncode is not None for p in session.bot_procs.values())  # the bots ended with the table
    capsys.readouterr()
    assert main(["verify", str(record)]) == 3  # we left in round 2: round 1 checks out, then our own signed leave
    out = capsys.readouterr().out
    assert all(name in out.splitlines()[0] for name in ("you", "Ada", "Bo")) and "round 1: audit verified" in out, out
    assert "you left the table in round 2 (quit)" in out and "INCOMPLETE" in out and "rejected" not in out, out
    data = bytearray(record.read_bytes())
    data[len(data) // 2] ^= 0x01
    record.write_bytes(bytes(data))
    assert main(["verify", str(record)]) == 2


def test_a_whole_crescendo_round_against_two_bots_by_keys() -> None:
    table, reveal, session, _ = play_one_round("crescendo", {})
    assert "You drew: " in table and "Reserve:" in table and "pile" in table
    assert "Round 1 revealed" in reveal and "Scores" in reveal
    assert all(p.returncode is not None for p in session.bot_procs.values())


def test_a_vanished_bot_shows_a_banner_then_is_voted_out_and_the_table_goes_on(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # Bo's process dies without a word: its link is lost, the banner counts down, and after 4 s the
    # two of us vote it gone and go on without it (protocol.md §14.9); the time-out (30 s) never comes.
    # The recording follows us to the table that goes on.
    record = tmp_path / "mine.p2pt"
    session = NetTable(generate("you"), "crisp", {"limit": 30}, bots=2, timeout=30, gone_after=4, record=str(record))
    client = TableClient(session)
    seen: list[str] = []

    async def play() -> None:
        await session.start()
        deadline = time.time() + 60
        killed = False
        after_out = 0
        while time.time() < deadline and session.stopped() is None and after_out < 10:
            await session.changed(0.2)
            client.absorb(time.time())
            view = session.view()
            assert view is not None
            if view.round >= 1 and not killed:
                session.bot_procs["Bo"].kill()  # Bo's process dies without a word
                killed = True
            if killed:
                seen.append(plain(client.lines(80, 24, time.time())))
            if "Bo" not in session.names:
                after_out += 1  # the table that goes on: play on it a little
            key = crisp_key(view) if not session.busy() else None
            if key is not None and key != "c":
                client.key(key)
        client.absorb(time.time())
        seen.append(plain(client.lines(80, 24, time.time())))
        assert session.stopped() is None, session.stopped()  # we go on, until we leave
        await session.leave()

    asyncio.run(play())
    assert any("Bo is missing (link lost): voted gone in" in s for s in seen)
    assert len(session.names) == 2 and any("Bo is out: round" in s for s in seen), seen[-1]
    capsys.readouterr()
    assert main(["verify", str(record)]) == 3  # both tables' frames; we left the second one
    out = capsys.readouterr().out
    assert "the table goes on without the seats voted out (protocol.md §14.9) as table" in out, out
    assert ": you, Ada" in out, out
    assert "you left the table in round" in out and "FAULT" not in out and "NOT THE GAME'S RECORD" not in out, out
