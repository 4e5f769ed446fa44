"""After a game: Q at a table reached through the lobby goes back there; against our own bots, n plays again."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from collections.abc import Sequence
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

import p2pcards.ui.app
from p2pcards.cards import CRESCENDO_DECK
from p2pcards.cli import main
from p2pcards.crypto.identity import generate
from p2pcards.files import numbered
from p2pcards.table.peer import Note
from p2pcards.ui.cli import saved_words
from p2pcards.ui.client import TableClient, plain
from p2pcards.ui.lobby import LobbyClient, NoDirectory, run_lobby
from p2pcards.ui.session import NetTable
from ui_harness import RefereeSession  # tests/ui is on sys.path (prepend mode)
from test_ui_client import DECK


def over_client(game: str = "crisp", **kwargs: Any) -> TableClient:
    """A table whose game ended (by a vote: the engine's own end takes whole rounds), Crisp unless told."""
    session = RefereeSession(game, ("you", "Bo"), DECK if game == "crisp" else list(CRESCENDO_DECK), dealer=1)
    session.finished = lambda: True  # type: ignore[method-assign]
    session.pending.append(Note("over", "too few seats remain without Bo: the game ends"))
    client = TableClient(session, **kwargs)
    client.absorb(0.0)
    return client


def test_at_game_over_a_lobby_player_reads_and_gets_back_to_the_lobby() -> None:
    client = over_client(back_to_lobby=True)
    text = plain(client.lines(80, 24, 0.0))
    assert "The game is over. Q back to the lobby" in text and "Q leave" in text.splitlines()[1]
    assert client.key("Q") == "leave" and client.outcome == "leave"
    assert over_client(back_to_lobby=True).key("c-c") == "quit"  # Ctrl-C leaves the program, as anywhere


def test_at_game_over_our_own_bots_offer_a_new_game_and_q_quits() -> None:
    client = over_client(against_bots=True, again=True)
    assert "The game is over. n new game (same bots)  Q quit" in plain(client.lines(80, 24, 0.0))
    assert client.key("n") == "again"
    assert over_client(against_bots=True, again=True).key("Q") == "leave"
    assert over_client(against_bots=True).key("n") is None  # a table that cannot offer another game


def test_a_crescendo_number_key_as_the_game_ends_does_not_start_a_new_one() -> None:
    # n is Crescendo's NUMBER: pressed as the last window closed, it swept the final reveal away into a new game.
    client = over_client("crescendo", against_bots=True, again=True)
    assert client.key("n") is None and "n for a new game works in a second" in client.status[1]
    client.absorb(1.5)
    assert client.key("n") == "again"


@pytest.mark.parametrize("game", ["crisp", "crescendo"])
@pytest.mark.parametrize("width", [80, 40])
def test_after_a_game_ended_by_a_vote_the_keys_offer_only_what_can_be_done(game: str, width: int) -> None:
    # The keys under the title still offered "m memory aid: off", and m told the table of an aid in a game over.
    for kwargs in ({"against_bots": True, "again": True}, {"back_to_lobby": True}):
        client = over_client(game, **kwargs)
        lines = plain(client.lines(width, 24, 0.0)).splitlines()
        assert lines[1].startswith("? rules  Q ") and "memory aid" not in "\n".join(lines), lines
        assert "The game is over." in "\n".join(lines)
        assert client.key("m") is None and "game is over" in client.status[1]
        assert not client.session.aided() and "memory aid" not in plain(client.lines(width, 24, 0.0)).splitlines()[1]


def test_leaving_mid_game_from_the_lobby_asks_where_to() -> None:
    session = RefereeSession("crisp", ("you", "Bo", "Cy"), DECK, dealer=2)
    client = TableClient(session, back_to_lobby=True)
    assert client.key("Q") is None
    assert "Leave the table? The others go on without you.  y back to the lobby  n stay" in plain(
        client.lines(100, 24, 0.0))
    assert client.key("y") == "leave"
    client.key("c-c")
    assert "Leave the table and quit p2pcards?" in plain(client.lines(100, 24, 0.0))
    assert client.key("y") == "quit"


def test_the_nth_file_of_a_run_takes_a_free_numbered_name(tmp_path: Path) -> None:
    path = str(tmp_path / "game.p2pt")
    assert numbered(path, 1) == path
    assert numbered(path, 2) == str(tmp_path / "game-2.p2pt")
    (tmp_path / "game-2.p2pt").write_bytes(b"")
    assert numbered(path, 2) == str(tmp_path / "game-3.p2pt")  # never refused once the game is played
    assert numbered(path, 2, overwrite=True) == str(tmp_path / "game-2.p2pt")


def test_the_lobby_says_how_the_last_game_ended_once_back() -> None:
    lobby = LobbyClient(generate("zoe"), NoDirectory(), asking="bots")
    lobby.back("Bo wins.")
    text = plain(lobby.lines(80, 24))
    assert "Back in the lobby. Last game: Bo wins." in text and "b play against bots" in text


def test_q_after_a_table_goes_back_to_the_lobby_and_ctrl_c_at_a_table_quits(tmp_path: Path,
                                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("P2PCARDS_HOME", str(tmp_path))
    played: list[tuple[NetTable, TableClient]] = []
    saved: list[str] = []

    async def table(session: NetTable, rules: object, input: Any, output: Any, clock: object,
                    client: TableClient) -> int:
        played.append((session, client))
        session.recorded = session.record  # as leaving saves it
        client.outcome = "leave" if len(played) == 1 else "quit"
        input.send_text("b11")  # the lobby again: a bot game (Crisp, one bot)
        return 0

    monkeypatch.setattr(p2pcards.ui.app, "run_table", table)

    async def go() -> int:
        with create_pipe_input() as inp:
            inp.send_text("b11")
            return await asyncio.wait_for(
                run_lobby("zoe", None, peer=("127.0.0.1", 9), record=str(tmp_path / "g.p2pt"), input=inp,
                          output=DummyOutput(), host_options={"limit": 50}, saved=saved), 10)

    assert asyncio.run(go()) == 0
    assert len(played) == 2 and all(client.back_to_lobby and client.against_bots for _, client in played)
    assert [s.record for s, _ in played] == saved == [str(tmp_path / "g.p2pt"), str(tmp_path / "g-2.p2pt")]
    assert played[0][0].options == {"limit": 50}  # the command line's options hold for a bot game of the lobby


def play_bots(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, games: int, *argv: str,
              aid: Sequence[bool] = ()) -> list[tuple[NetTable, TableClient]]:
    """`p2pcards play --bots 2 --name zoe ARGV` on a terminal, n pressed after each game until `games` were played
    (each one's transcript, if any, saved as leaving saves it; the memory aid on at its end as `aid` says, by
    game): the tables played, each with its client."""
    monkeypatch.setenv("P2PCARDS_HOME", str(tmp_path))
    monkeypatch.setattr(sys.stdin, "isatty", lambda: True)
    monkeypatch.setattr(sys.stdout, "isatty", lambda: True)
    played: list[tuple[NetTable, TableClient]] = []

    async def table(session: NetTable, rules: object, client: TableClient) -> int:
        played.append((session, client))
        session.recorded = session.record  # as leaving saves it
        client.outcome = "again" if len(played) < games else "leave"
        client.aid_at_end = len(played) <= len(aid) and aid[len(played) - 1]
        return 0

    monkeypatch.setattr(p2pcards.ui.app, "run_table", table)
    assert main(["play", "--bots", "2", "--name", "zoe", *argv]) == 0
    return played


def test_n_after_a_game_against_bots_starts_another_with_the_same_bots(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    played = play_bots(tmp_path, monkeypatch, 3, "--limit", "50")
    assert len(played) == 3 and all(s.bots == 2 and s.options == {"limit": 50} for s, _ in played)


def test_n_keeps_the_memory_aid_on_in_the_next_game_and_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The aid on all game, n: the next game had it off, and the cards looked at hid again after a few seconds.
    client = over_client(against_bots=True, again=True)
    client.session.set_aid(True)  # turned on in the game (m, once it is over, says so and does nothing)
    assert client.memory_aid and client.key("n") == "again" and client.aid_at_end
    session = RefereeSession("crisp", ("you", "Bo"), DECK, dealer=1)
    fresh = TableClient(session, against_bots=True, again=True, aid_again=True)
    fresh.absorb(0.0)
    assert fresh.memory_aid and fresh.status[1] == "Memory aid on, as in your last game (everyone sees it): m turns it off."
    assert "You turned the memory aid on." in plain(fresh.lines(80, 24, 0.0))  # in the log, as every seat reads it
    played = play_bots(tmp_path, monkeypatch, 3, aid=[True, False])
    assert [c.aid_again for _, c in played] == [False, True, False]  # on when the game before ended with it on


def test_where_record_saved_each_game_is_said_once_the_screen_is_gone(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                                      capsys: pytest.CaptureFixture[str]) -> None:
    # `play --bots 2 --record rec.p2pt`, then n: the second game went to rec-2.p2pt, and the terminal said nothing.
    record = str(tmp_path / "rec.p2pt")
    play_bots(tmp_path, monkeypatch, 2, "--record", record)
    assert capsys.readouterr().out == (f"Your games' transcripts are saved in {record}, {tmp_path / 'rec-2.p2pt'}: "
                                       "p2pcards verify FILE checks one.\n")


def test_the_lobby_says_where_the_last_games_transcript_was_saved() -> None:
    lobby = LobbyClient(generate("zoe"), NoDirectory(), asking="bots")
    lobby.back("Bo wins.", "/tmp/g-2.p2pt")
    assert "Back in the lobby. Last game: Bo wins. Its transcript is saved in /tmp/g-2.p2pt." in \
        plain(lobby.lines(100, 24))


def test_one_saved_transcript_is_said_with_the_command_that_checks_it() -> None:
    # It read "Your game's transcript is saved in /tmp/rec1: p2pcards verify FILE checks it.": FILE to fill in.
    assert saved_words(["/tmp/rec1"]) == ("Your game's transcript is saved in /tmp/rec1: "
                                          "p2pcards verify /tmp/rec1 checks it.")
    assert saved_words(["/tmp/my game"]).endswith(": p2pcards verify '/tmp/my game' checks it.")
