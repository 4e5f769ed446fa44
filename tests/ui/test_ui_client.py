"""The table screen on the referee engine: keys become moves, shut keys say why, memory stays memory."""

from __future__ import annotations

import asyncio
import math
from pathlib import Path
from dataclasses import replace

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK
from p2pcards.errors import IllegalMove
from p2pcards.games.base import Move
from p2pcards.games.crisp import CrispView
from p2pcards.rulestext import rules_text
from p2pcards.scenario import build, load, parse_move
from p2pcards.table.outputs import Cut
from p2pcards.table.peer import Note
from p2pcards.ui.app import color_depth, run_table
from p2pcards.ui.client import PEEK_S, TableClient, plain, stall_words
from p2pcards.ui.session import Progress, Stall
from p2pcards.ui.words import back_word, revealed_words
from ui_harness import RefereeSession, ragged  # tests/ui is on sys.path (prepend mode)

SCENARIOS = Path(__file__).parents[1] / "scenarios"


def crisp_deck(top: list[str]) -> list[str]:
    """A Crisp deck that starts with `top`, the rest in the usual order."""
    return top + [c for c in CRISP_DECK if c not in top]


# Two seats, we deal second so we play first: our hand is A♠ 3♠ 5♠ (left, middle, right), theirs 2♠ 4♠ 6♠.
DECK = crisp_deck(["AS", "2S", "3S", "4S", "5S", "6S", "QH", "7S", "JH", "9D"])


def crisp_client(deck: list[str] = DECK, names: tuple[str, ...] = ("you", "Bo")) -> tuple[TableClient, RefereeSession]:
    session = RefereeSession("crisp", names, deck, dealer=len(names) - 1)
    client = TableClient(session)
    client.absorb(0.0)
    return client, session


def screen(client: TableClient, now: float = 0.0, width: int = 80, height: int = 24) -> str:
    client.absorb(now)
    return plain(client.lines(width, height, now))


def test_draw_then_a_queen_swap_chosen_by_number_keys() -> None:
    client, session = crisp_client()
    client.key("d")
    assert session.played == [Move("you", "draw", source="pile")]
    assert "You drew: Q♥" in screen(client)
    client.key("q")
    assert "which of your cards? 1 left  2 middle  3 right" in screen(client)
    client.key("3")  # our right card; Bo is the only other player, so only his slot is asked next
    assert "which of Bo's cards?" in screen(client)
    client.key("1")
    assert session.played[-1] == Move("you", "queen", pos=2, target="Bo", target_pos=0)
    r = session.engine.r
    assert r is not None and session.engine.faces.get(r.hands[0][2]) == "2S"


def test_a_shut_key_says_why_and_changes_nothing() -> None:
    client, session = crisp_client()
    client.key("x")
    assert client.status[1] == "Draw first: press d."
    client.key("d")
    client.key("j")
    assert client.status[1] == "You drew Q♥, not a Jack."
    client.key("1")
    assert "never be swapped into your hand" in client.status[1]
    client.key("c")
    assert "only in the 3 s right after your own turn" in client.status[1]
    assert session.played == [Move("you", "draw", source="pile")]
    assert len(session.engine.inputs) == 1


def test_a_second_draw_key_says_the_card_drawn_waits_to_be_played() -> None:
    client, _ = crisp_client()
    client.key("d")  # Q♥
    client.key("d")
    assert client.status == ("class:warn", "You drew Q♥ already: play it first (the keys below).")


def test_not_our_turn_says_whose_turn_or_when_ours_opens() -> None:
    client, session = crisp_client()
    client.key("d")
    client.key("x")
    client.key("d")
    assert client.status[1] == "It is Bo's turn."
    session.others(2.5)  # Bo's turn opens; he draws and discards; ours opens 2 s later
    client.absorb(2.5)
    client.key("d")
    assert client.status[1] == "Your turn opens in 2.0 s (the last player may still call crisp)."


def test_the_time_for_a_draw_counts_down_to_the_engines_own_time_out() -> None:
    session = RefereeSession("crisp", ("you", "Bo"), DECK, {"draw_seconds": 30}, dealer=1)
    client = TableClient(session)
    assert "your draw: 27 s left" in screen(client, now=3.0)
    client.key("d")  # drawing does not restart the clock: the draw and its use share the time
    assert "your draw: 25 s left" in screen(client, now=5.0)


def test_the_draw_countdown_rounds_up_so_it_never_reads_0_while_the_draw_is_open() -> None:
    # With 0.4 s left it read "your draw: 0 s left" and the player took the draw for gone (and 29.6 s read 30).
    session = RefereeSession("crisp", ("you", "Bo"), DECK, {"draw_seconds": 30}, dealer=1)
    client = TableClient(session)
    assert "your draw: 1 s left" in screen(client, now=29.6)
    assert "your draw: 30 s left" in screen(client, now=0.0) and "your draw: 30 s left" in screen(client, now=0.4)
    client.key("?")
    assert "Your turn (1 s left)" in screen(client, now=29.5)
    assert "your draw: 0 s left" not in screen(TableClient(session), now=29.99)


def test_crisp_is_one_key_right_after_our_turn() -> None:
    client, session = crisp_client()
    client.key("d")
    client.key("x")
    assert "c CALL CRISP" in screen(client)
    client.key("c")
    assert session.played[-1] == Move("you", "crisp")
    assert "You called CRISP!" in screen(client)


def status_line(text: str) -> str:
    """The line that says whose turn it is and counts the timed rules down."""
    return next(line for line in text.splitlines() if " to play " in line)


def test_no_crisp_window_at_a_rounds_start_nor_after_a_turn_that_timed_out() -> None:
    session = RefereeSession("crisp", ("you", "Bo"), DECK, {"draw_seconds": 30}, dealer=0, start=50.0)
    client = TableClient(session)
    assert "crisp window" not in status_line(screen(client, now=50.5))  # the dealer has played no turn
    session.others(80.5)  # Bo's turn (open since 50) timed out at 80: a forfeit opens no crisp window
    text = screen(client, now=80.5)
    assert "Bo ran out of time" in text
    assert "crisp window" not in status_line(text) and "your turn starts in 1.5 s" in status_line(text)


def test_every_open_crisp_window_counts_down_oldest_first() -> None:
    session = RefereeSession("crisp", ("you", "Bo", "Cy"), DECK, {"crisp_window_s": 4, "next_start_s": 0.5}, dealer=2)
    client = TableClient(session)
    client.key("d")
    client.key("x")  # our window: 0 to 4 s
    session.others(0.5)  # Bo's: 0.5 to 4.5 s
    session.others(1.0)  # Cy's: 1 to 5 s; our turn opens at 1.5 s
    text = screen(client, now=1.2)
    assert "crisp windows: yours 2.8 s, Bo 3.3 s, Cy 3.8 s" in status_line(text)
    assert "c CALL CRISP (2.8 s)" in text
    assert " your turn starts in 0.3 s" in text and max(map(len, text.splitlines())) <= 80  # on a second line
    assert "crisp windows: Bo 0.3 s, Cy 0.8 s" in status_line(screen(client, now=4.2))  # ours is over
    assert "crisp window: Cy 0.3 s" in status_line(screen(client, now=4.7))
    # A countdown rounds up: a window with 0.04 s left is still open, and says 0.1 s, not 0.0 s.
    assert "crisp window: Cy 0.1 s" in status_line(screen(client, now=4.96))


def test_a_card_we_look_at_hides_after_a_few_seconds_unless_the_memory_aid_is_on() -> None:
    client, _ = crisp_client()
    assert "L (A♠)" in screen(client, now=100.0) and "R (5♠)" in screen(client, now=100.0)
    later = screen(client, now=106.0)
    assert "A♠" not in later and "L [ · ]" in later and "M [ ? ]" in later
    assert "(7♥) you know it  [ · ] seen, hidden again  [ ? ] unseen" in later  # the legend: states are not colours
    client.key("m")
    again = screen(client, now=106.0)
    assert "L (A♠)" in again and "memory aid on" in again and "memory aid: ON" in again


def test_everyone_sees_who_uses_the_memory_aid() -> None:
    client, session = crisp_client(names=("you", "Bo", "Cy"))
    client.key("m")
    assert session.aided() == {0}  # told to the table, not kept to ourselves
    session.set_aid(True, seat=2)
    text = screen(client, now=1.0)
    rows = {line.split()[1]: line for line in text.splitlines() if line[1:2].isdigit()}
    assert "memory aid on" in rows["you"] and "memory aid on" in rows["Cy"] and "memory aid" not in rows["Bo"]
    assert "You turned the memory aid on." in text and "Cy turned the memory aid on." in text
    client.key("m")
    text = screen(client, now=2.0)
    assert "memory aid on" not in text.split("\n")[3] and "You turned the memory aid off." in text
    assert "memory aid: off" in text


def test_the_memory_aid_tag_sits_under_the_name_when_a_crescendo_row_is_full() -> None:
    session = RefereeSession("crescendo", ("you", "Bo", "Cy", "Di", "Ed", "Flo"), list(CRESCENDO_DECK), dealer=5)
    client = TableClient(session)
    session.set_aid(True, seat=1)
    lines = screen(client).splitlines()
    assert all(len(line) <= 80 for line in lines) and len(lines) <= 24
    bo = next(i for i, line in enumerate(lines) if line.startswith(" 2 Bo"))
    assert "memory aid on" not in lines[bo] and lines[bo + 1].lstrip().startswith("memory aid on")


def test_a_missing_peer_and_a_late_one_show_a_banner_with_the_protocols_countdowns() -> None:
    client, session = crisp_client(names=("you", "Bo", "Cy"))
    session.stalled = Stall(owed=("Bo",), waited=5.2, blamed_in=9.8, missing=(("Cy", 23.4),))
    text = screen(client)
    assert " Cy is missing (link lost): voted gone in 24 s unless Cy comes back." in text
    assert " Waiting on Bo: blamed in 10 s unless Bo sends what the table needs." in text  # one clock, not two
    assert "d draw" in text  # the keys stay: the game goes on if they come back
    session.stalled = None
    assert "missing" not in screen(client)


def test_every_other_seat_missing_and_voted_gone_says_the_table_may_have_gone_on_without_us() -> None:
    client, session = crisp_client(names=("you", "Bo", "Cy"))  # e.g. we came back too late
    session.stalled = Stall(missing=(("Bo", 0.0), ("Cy", 3.0)), alone=True)
    assert "gone on without you" not in screen(client)  # Cy may still come back
    session.stalled = Stall(missing=(("Bo", 0.0), ("Cy", 0.0)), alone=True)
    text = screen(client)
    assert " Bo and Cy are missing (link lost) and voted gone." in text
    assert " No other seat is linked: the table may have gone on without you. Q leaves." in text


def test_a_seat_cut_off_from_every_other_at_once_says_its_own_network_seems_lost_and_no_game_over() -> None:
    client, session = crisp_client(names=("you", "Bo", "Cy"))
    session.stalled = Stall(missing=(("Bo", 0.0), ("Cy", 0.0)), alone=True,
                            cut_off="every other seat went missing at once (Bo, Cy): it looks like our own network ...",
                            cut=Cut.NETWORK_LOST)
    text = screen(client, width=120)
    assert "Every other seat went missing at once: your own network seems lost." in text
    assert "may have gone on without you" not in text and "Game over" not in text
    session.stalled = Stall(missing=(("Bo", 0.0), ("Cy", 0.0)), alone=True,
                            cut_off="no other seat was back since we came back (Bo, Cy): they most likely went on "
                                    "without us while we were away, or our own network is lost", cut=Cut.AWAY_TOO_LONG)
    assert " No other seat was back since you came back: they most likely went on without you while you were away, " \
           "or your network is lost. Q leaves." in " ".join(screen(client, width=240).split("\n"))
    session.stalled = None
    session.stopped = lambda: "cut off from every other seat: every other seat went missing at once"  # type: ignore[method-assign]
    session.gave_up = lambda: Cut.NETWORK_LOST  # type: ignore[method-assign]
    client.absorb(1.0)
    assert client.winners == "your network seemed lost, and the game did not finish for you."  # the lobby's words


def test_the_shuffle_of_the_next_round_shows_its_progress_in_one_line() -> None:
    names = tuple(f"player{i}" for i in range(8))
    client, session = crisp_client(crisp_deck([]), names)
    session.shuffling = Progress(2, 8, 3, 8)
    lines = screen(client).splitlines()
    assert "Crisp · round 2 (shuffling)" in lines[0]
    shuffle = [line for line in lines if "Shuffling round 2" in line]
    assert len(shuffle) == 1 and "keys 8/8, passes 3/8, then dealing" in shuffle[0] and len(shuffle[0]) <= 80


def test_the_rules_are_one_key_away_and_their_tables_keep_their_columns() -> None:
    session = RefereeSession("crescendo", ("you", "Bo"), list(CRESCENDO_DECK), dealer=1)
    client = TableClient(session, rules_text)
    client.key("?")
    pages = []
    for _ in range(12):
        pages.append(screen(client))
        client.key("pagedown")
    text = "\n".join(pages)
    assert "Rules of Crescendo" in text and "    1-10    1 4 7 10              2 5 8" in text
    assert all(len(line) <= 80 for line in text.splitlines())
    client.key("escape")
    assert "Rules of" not in screen(client) and "l look at a card" in screen(client)


def test_the_rules_in_40_columns_fill_their_lines_not_break_each_80_column_line_in_two() -> None:
    # At 40 columns the rules read "call "crisp" right after" / "your turn: you may call from the" / ... "later." /
    # "The next player ...": every line of the 78-column text broken in two, the second half often one word.
    client, _ = crisp_client()
    client.rules = rules_text
    client.key("?")
    pages = []
    for _ in range(15):
        pages.append("\n".join(screen(client, width=40).splitlines()[1:-2]))  # the body: no title, no keys
        client.key("pagedown")
    assert "call \"crisp\" right after" not in "\n".join(pages)
    assert [line for page in pages for line in ragged(page, 40)] == []


@pytest.mark.parametrize("width", [40, 60])
def test_crescendos_table_of_backs_keeps_its_columns_on_a_narrow_rules_screen(width: int) -> None:
    # At 40 columns the 69-column table wrapped: "91-100  91 94 97 100  92 95 98" / "93 96 99", no column kept.
    client, _ = crescendo_client()
    client.rules = rules_text
    client.key("?")
    body = []
    for _ in range(40):
        body += screen(client, width=width).splitlines()[1:-2]
        client.key("pagedown")
    text = "\n".join(body)
    assert all(len(line) <= width for line in body)
    if width == 40:
        assert "1-10    Peek: 1 4 7 10\n" in text and "        Lock: 93 96 99\n" in text
    else:
        head = next(line for line in body if line.strip().startswith("back    Peek"))
        last = next(line for line in body if line.strip().startswith("91-100"))
        assert last[head.index("Swap"):].startswith("92 95 98") and last[head.index("Lock"):] == "93 96 99"


def test_the_rules_scrolled_past_their_end_between_two_draws_show_their_last_page() -> None:
    client, _ = crisp_client()
    client.rules = rules_text
    client.key("?")
    for _ in range(50):
        client.key("pagedown")
    assert "next_start_s = 2" in screen(client)


def test_ctrl_c_on_the_rules_screen_asks_to_leave_as_at_the_table() -> None:
    client, _ = crisp_client()
    client.rules = rules_text
    client.key("?")
    assert client.key("c-c") is None
    assert "Rules of" not in screen(client) and "Leave the table?" in screen(client)
    assert client.key("y") == "leave"


def test_a_stopped_table_offers_only_to_leave() -> None:
    client, session = crisp_client()
    session.stopped = lambda: "Bo sent nothing owed for 15 s"  # type: ignore[method-assign]
    text = screen(client)
    assert "The table stopped: Bo sent nothing owed for 15 s. Press Q to leave." in text
    assert " Q leave the table" in text and "d draw" not in text
    narrow = " ".join(line.strip() for line in screen(client, width=40).splitlines()[-4:])
    assert "Q leave the table (the rounds before stand, signed by all)" in narrow  # 40 columns cut it at "st"
    assert client.key("Q") == "leave"  # no question: there is no round left to void


@pytest.mark.parametrize("stopped,gave_up,said", [
    ("we left before the restart", None, "The table stopped before the program restarted: you had left it. Press Q"),
    ("we reported a fault before the restart: Bo sent a bad share", None,
     "The table stopped before the program restarted: it reported a fault (Bo sent a bad share). Press Q"),
    ("we left: quit", None, "You left the table. Press Q"),
    ("cut off from every other seat: every other seat went missing at once (Bo, Cy): it looks like our own network "
     "was lost, not that they all left", Cut.NETWORK_LOST,
     "Your network seems to have been lost: every other seat went missing at once"),
    ("cut off from every other seat: no other seat was back since we came back (Bo, Cy): they most likely went on "
     "without us while we were away, or our own network is lost", Cut.AWAY_TOO_LONG,
     "No other seat was back since you came back: they most likely went on without you while you were away"),
])
def test_a_table_stopped_by_our_own_seat_says_so_in_a_sentence(stopped: str, gave_up: Cut | None, said: str) -> None:
    # A seat taken up again read "The table stopped: stopped before the restart (leave). Press Q to leave.".
    client, session = crisp_client()
    session.stopped = lambda: stopped  # type: ignore[method-assign]
    session.gave_up = lambda: gave_up  # type: ignore[method-assign]
    assert said in screen(client, width=120)


def test_a_table_we_are_leaving_offers_no_key_to_leave_by() -> None:
    # Q then y: while the goodbye went out the screen read "You left the table. Press Q to leave." over
    # "Q leave the table (the rounds before stand, signed by all)" and "Leaving the table …": Q again did nothing.
    client, session = crisp_client()
    assert client.key("Q") is None and client.key("y") == "leave"
    client.status = ("class:warn", "Leaving the table …")  # as the app says it
    session.stopped = lambda: "we left: leave"  # type: ignore[method-assign]
    text = screen(client)
    assert "You left the table." in text and text.rstrip().endswith("Leaving the table …")
    assert "Press Q" not in text and "Q leave" not in text and "d draw" not in text
    over, _ = crisp_client()
    over.again = True
    over.session.view = lambda: replace(over.session.engine.view("you"), over=True)  # type: ignore[method-assign]
    assert "n new game" in screen(over) and over.key("Q") == "leave"
    assert "n new game" not in screen(over) and "The game is over." not in screen(over)


def test_a_game_ended_by_a_vote_shows_it_is_over_not_the_turn_it_stopped_on() -> None:
    client, session = crisp_client()
    client.key("d")
    client.key("x")
    session.others(2.5)  # Bo's turn: then he leaves, and too few seats remain for the game
    session.finished = lambda: True  # type: ignore[method-assign]
    session.pending.append(Note("over", "too few seats remain without Bo: the game ends"))
    text = screen(client, 2.5)
    assert "Game over. Too few seats remain without Bo: the game ends." in text
    assert "The game is over. Q quit" in text
    assert "is to play" not in text and "▶" not in text and "wait for the others" not in text
    client.key("d")
    assert client.status[1] == "The game is over."
    assert client.key("Q") == "leave"  # nothing left to leave mid-game: no question


def test_a_crescendo_game_ended_by_a_vote_shows_no_window_still_open() -> None:
    session = RefereeSession("crescendo", ("you", "Bo"), list(CRESCENDO_DECK), dealer=1)
    client = TableClient(session)
    client.key("p")
    session.others(1.0)
    client.key("d")
    client.key("x")  # a NUMBER window opens
    session.finished = lambda: True  # type: ignore[method-assign]
    text = screen(client, 1.0)
    assert "NUMBER" not in text and "is to play" not in text and "The game is over. Q quit" in text


def test_a_table_going_on_without_a_seat_is_not_a_game_over() -> None:
    client, session = crisp_client()
    session.pending.append(Note("over", "the table goes on without Bo from round 1"))
    text = screen(client)
    assert "The table goes on without Bo from round 1." in text and "Game over" not in text
    assert client.winners == ""


def test_quitting_asks_first() -> None:
    client, _ = crisp_client()
    assert client.key("Q") is None
    assert "Leave the table?" in screen(client)
    assert client.key("n") is None and "Leave the table?" not in screen(client)
    client.key("Q")
    assert client.key("y") == "leave"


@pytest.mark.parametrize("width,height", [(80, 24), (60, 20), (120, 40), (40, 10)])
def test_eight_crisp_seats_fit_any_size(width: int, height: int) -> None:
    names = tuple(f"player{i}" for i in range(8))
    client, _ = crisp_client(crisp_deck([]), names)
    lines = client.lines(width, height, 0.0)
    assert len(lines) <= height
    assert all(sum(len(t) for _, t in line) <= width for line in lines)
    assert " d draw" in plain(lines)  # the keys open now are never cut off
    if height >= 24:
        text = plain(lines)
        assert all(n[:8] in text for n in names)


def test_every_crisp_card_shows_in_40_columns() -> None:
    client, _ = crisp_client(names=("you", "Bartholomew"))
    rows = [line for line in screen(client, width=40, height=12).splitlines() if " L " in line]
    assert rows[0] == "▶1 you  *   0  L (A♠)   M [ ? ]  R (5♠)"
    assert rows[1] == " 2 Bart     0  L [ ? ]  M [ ? ]  R [ ? ]"


@pytest.mark.parametrize("width", [80, 60, 40])
def test_the_crisp_legend_shows_whole_however_narrow(width: int) -> None:
    text = screen(crisp_client()[0], width=width)
    assert all(words in text for words in ("(7♥) you know it", "[ · ] seen, hidden again", "[ ? ] unseen"))
    assert all(len(line) <= width for line in text.splitlines())


def test_the_last_reveal_of_eight_seats_shows_every_score_and_the_winners_in_80_by_24() -> None:
    names = tuple(f"player{i}" for i in range(8))
    client, session = crisp_client(crisp_deck([]), names)
    over = replace(session.view(), turn=None, rounds_played=1, over=True, totals=tuple(range(100, 108)))
    session.snaps.append(over)
    session.view = lambda: over  # type: ignore[method-assign]
    client.winners = "player0 wins."
    client.absorb(0.0)
    lines = screen(client).splitlines()
    assert len(lines) <= 24 and "Round 1 revealed" in lines[2]
    assert "Game over: player0 wins." in screen(client) and "107" in lines[-3]
    assert lines[-1] == " Enter back to the table  Q quit"


def test_six_crescendo_seats_fit_80_by_24() -> None:
    names = tuple(f"p{i}" for i in range(6))
    session = RefereeSession("crescendo", names, list(CRESCENDO_DECK), dealer=5)
    client = TableClient(session)
    client.absorb(0.0)
    text = screen(client)
    lines = text.splitlines()
    assert len(lines) <= 24 and max(map(len, lines)) <= 80
    assert all(f"{i + 1} p{i}" in text for i in range(6))
    assert "1-10" in text and "Reserve:" in text


def seat_rows(text: str) -> dict[str, list[str]]:
    """Each seat's row by name: the tokens after the name, score and pile (the cards)."""
    rows = {}
    for line in text.splitlines():
        if line[1:2].isdigit():
            tokens = line[2:].replace("*", " ").split()
            rows[tokens[0]] = tokens[3:]
    return rows


@pytest.mark.parametrize("seats", [6, 3])
def test_crescendo_backs_show_range_and_action_in_80_columns(seats: int) -> None:
    names = tuple(f"p{i}" for i in range(seats))
    session = RefereeSession("crescendo", names, list(CRESCENDO_DECK), dealer=seats - 1)
    client = TableClient(session)
    text = screen(client)
    lines = text.splitlines()
    assert len(lines) <= 24 and max(map(len, lines)) <= 80
    view = session.view()
    rows = seat_rows(text)
    for seat in range(1, seats):  # every card of another row is a back: its range and its action's initial
        assert rows[names[seat]] == [back_word(b) for b in view.backs[seat]]
    assert len(rows["p0"]) == (7 if seats > 4 else 8)  # one line per row, even with 8 cards
    head = next(line for line in lines if " pts " in line)
    row = next(line for line in lines if " p1 " in line)
    assert row[head.index(" pl ") + 2] == "0" and row[head.index(" 1 ") + 1] != " "  # columns under their heads
    assert "81-90P unseen: its back's range and action (P peek, S swap, L lock)" in text


def test_a_crescendo_card_seen_and_hidden_again_is_marked_and_the_legend_says_so() -> None:
    session = RefereeSession("crescendo", ("you", "Bo"), list(CRESCENDO_DECK), dealer=1)
    client = TableClient(session)
    client.key("l")
    client.key("2")
    assert seat_rows(screen(client, now=1.0))["you"][1] == "(3)"
    later = screen(client, now=1.0 + PEEK_S)
    assert seat_rows(later)["you"][1] == back_word(session.view().backs[0][1]) + "·"
    assert seat_rows(later)["you"][0] == back_word(session.view().backs[0][0])  # unseen: no mark
    for state in ("(52) you know it", "81-90P· seen, hidden again", "[66] locked", "81-90P unseen"):
        assert state in later


@pytest.mark.parametrize("game,seats", [("crescendo", 6), ("crescendo", 3), ("crisp", 8)])
def test_nothing_is_cut_at_80_columns_the_call_the_aid_and_a_long_name_in_a_later_round(game: str, seats: int) -> None:
    me = "Tessaloniki Anastasia Papadopoulo"[:32]  # the longest name the wire allows
    names = (me, *(f"player{i}" for i in range(1, seats)))
    deck = list(CRESCENDO_DECK) if game == "crescendo" else crisp_deck([])
    session = RefereeSession(game, names, deck, dealer=seats - 1)
    called = replace(session.view(), caller=seats - 1)
    session.view = lambda: called  # type: ignore[method-assign]
    session.set_aid(True, seat=seats - 1)
    session.shuffling = Progress(2, seats, 1, seats)
    client = TableClient(session)
    text = screen(client, now=0.0)
    lines = text.splitlines()
    assert len(lines) <= 24 and max(map(len, lines)) <= 80
    title = "Crescendo · round 2 of 3 (shuffling) · sort your row from low to high" if game == "crescendo" \
        else "Crisp · round 2 (shuffling) · lowest total wins · game ends at 100"
    assert title in text and f"you: {me}" in text
    last = next(i for i, line in enumerate(lines) if line[1:].startswith(f"{seats} playe"))  # 5 letters of 8 cards
    tags = lines[last] + lines[last + 1]
    assert f"called {game.upper()}" in tags and "memory aid on" in tags


def crescendo_client() -> tuple[TableClient, RefereeSession]:
    # Deck in order: we (seat 0, first) hold 1, 3, 5, ... 15; Bo holds 2, 4, ... 16; 17 starts the discard pile.
    session = RefereeSession("crescendo", ("you", "Bo"), list(CRESCENDO_DECK), dealer=1)
    client = TableClient(session)
    client.absorb(0.0)
    return client, session


def number_window_client() -> tuple[TableClient, RefereeSession]:
    """A Crescendo client whose draw turned 18 face up at 0.0: the NUMBER window is open."""
    client, session = crescendo_client()
    client.key("p")
    session.others(0.0)
    client.absorb(0.0)
    client.key("d")
    client.key("x")  # 18 goes face up: the NUMBER window opens
    return client, session


def test_crescendo_setup_a_draw_and_number_as_one_digit() -> None:
    client, session = crescendo_client()
    assert "l look at a card" in screen(client)
    client.key("l")
    client.key("2")
    assert session.played == [Move("you", "setup_look", pos=1)]
    assert "(3)" in screen(client, now=0.0)
    session.others(0.0)
    client.absorb(0.0)
    client.key("c")
    assert client.status[1] == "CRESCENDO is open from turn 7 of the round (this is turn 1)."
    client.key("d")
    client.key("x")  # 18 goes face up: the NUMBER window opens
    client.absorb(0.1)
    assert "NUMBER window: 1.9 s" in screen(client, now=0.1)  # the engine's own deadline: opened at 0.0
    client.key("8")  # our eighth card is 15: within 2 of 18? no, 3 away: a penalty
    assert session.played[-1] == Move("you", "number", pos=7)
    assert "wrong" in screen(client, now=0.2)


def test_a_second_number_claim_in_one_window_says_the_engines_reason() -> None:
    client, session = number_window_client()
    client.key("8")  # our claim uses the window up; it stays open as the wait before Bo's turn
    assert session.played[-1] == Move("you", "number", pos=7)
    with pytest.raises(IllegalMove, match="only one NUMBER claim between one turn and the next"):
        session.engine.check(Move("you", "number", pos=0))
    client.absorb(0.5)
    for key in ("n", "1"):
        client.key(key)
        assert client.status[1] == "Only one NUMBER claim between one turn and the next."
    assert session.played[-1] == Move("you", "number", pos=7)


def test_the_special_action_key_follows_the_reserve_top() -> None:
    client, session = crescendo_client()
    client.key("p")
    session.others(0.0)
    client.absorb(0.0)
    view = session.view()
    top = view.reserve_top
    assert top is not None
    wrong = next(k for k, a in (("p", "peek"), ("s", "swap"), ("l", "lock")) if a != top.action)
    client.key(wrong)
    assert f"shows {top.action.upper()}" in client.status[1]


def test_no_color_means_monochrome(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("NO_COLOR", "1")
    assert color_depth() is not None and color_depth().value == "DEPTH_1_BIT"  # type: ignore[union-attr]
    monkeypatch.delenv("NO_COLOR")
    assert color_depth() is None


def test_the_app_plays_keys_from_a_pipe_and_leaves_when_asked() -> None:
    session = RefereeSession("crisp", ("you", "Bo"), DECK, dealer=1)

    async def main() -> int:
        with create_pipe_input() as inp:
            task = asyncio.create_task(run_table(session, input=inp, output=DummyOutput(), clock=lambda: 0.0))
            for keys in ("m", "d", "x", "Q", "y"):
                await asyncio.sleep(0.1)
                inp.send_text(keys)
            return await asyncio.wait_for(task, 10)

    assert asyncio.run(main()) == 0
    assert session.played == [Move("you", "draw", source="pile"), Move("you", "discard")]
    assert session.aided() == {0} and session.left


def test_crescendo_status_says_setup_only_while_setup_choices_are_open() -> None:
    session = RefereeSession("crescendo", ("you", "Bo"), list(CRESCENDO_DECK), dealer=1)
    client = TableClient(session)
    assert "setup: each player may look at one card or swap two" in screen(client)
    client.key("p")  # keep the row
    session.others(0.0)  # Bo keeps its row too: setup is over, the first turn begins
    after = screen(client)
    assert session.view().phase != "setup"
    assert "setup:" not in after and "turn 1 (CRESCENDO from turn 7)" in after


def test_a_game_taken_up_again_keeps_the_cards_seen_before_hidden() -> None:
    # After a crash the journal gives back every face we had seen: a second look at them would be a free peek.
    session = RefereeSession("crisp", ("you", "Bo"), DECK, dealer=1)
    client = TableClient(session, seen_before=True)
    first = screen(client, now=100.0)
    assert "A♠" not in first and "L [ · ]" in first and "R [ · ]" in first
    client.key("d")
    assert "You drew: Q♥" in screen(client, now=100.5)  # what comes after the crash shows as ever
    fresh = TableClient(session)
    assert "L (A♠)" in screen(fresh, now=100.0)  # a game begun now shows its first look


def call_crisp_and_end_the_round(session: RefereeSession) -> float:
    """We draw, discard and call crisp; the others play on, 5 s a turn, until the round ends: the time it did."""
    for move in (Move("you", "draw", source="pile"), Move("you", "discard"), Move("you", "crisp")):
        session.play(move)
    now = 0.0
    while session.view().rounds_played < 1:
        now += 5.0
        session.others(now)
    return now


def test_a_card_seen_in_a_round_before_is_a_new_look_when_dealt_again_and_the_reveal_says_our_turn_came() -> None:
    session = RefereeSession("crisp", ("you", "Bo"), DECK, dealer=1)
    session.engine.queue_deck(crisp_deck(["2S", "AS", "4S", "3S", "6S", "5S"]))  # round 2 deals us A♠ and 5♠ again
    client = TableClient(session)
    assert "L (A♠)" in screen(client, 0.0) and "R (5♠)" in screen(client, 0.0)
    now = call_crisp_and_end_the_round(session)
    assert session.view().round == 2 and session.view().turn == 0  # Bo played round 2's first turn meanwhile
    reveal = screen(client, now)
    assert "Round 1 revealed" in reveal and "Your turn in round 2: Enter back to the table" in reveal
    client.key("enter")
    table = screen(client, now)
    assert "L (A♠)" in table and "R (5♠)" in table  # seen in round 1, dealt afresh: shown for PEEK_S again
    assert "L [ · ]" in screen(client, now + PEEK_S + 1)


def test_a_reveal_with_no_room_for_a_score_row_shows_no_scores_heading() -> None:
    # In 40x10 the reveal ended on a "Scores" heading over nothing; the keys under it.
    session = RefereeSession("crisp", ("you", "Bo", "Cy"), DECK, dealer=2)
    client = TableClient(session)
    now = call_crisp_and_end_the_round(session)
    lines = screen(client, now, width=40, height=10).splitlines()
    assert "Round 1 revealed" in lines[2] and not any(line.startswith(" Scores") for line in lines)
    assert "\n Scores\n" in screen(client, now, width=40, height=16)  # with the room, the heading and its rows


def test_leaving_a_table_of_our_own_bots_says_they_leave_too() -> None:
    session = RefereeSession("crisp", ("you", "Bo", "Cy"), DECK, dealer=2)
    for client, words in ((TableClient(session), "The others go on without you."),
                          (TableClient(session, against_bots=True), "The bots leave with you.")):
        client.key("Q")
        assert f"Leave the table? {words}  y leave  n stay" in screen(client)


def test_crescendo_counts_the_turn_in_play_until_it_ends() -> None:
    session = RefereeSession("crescendo", ("you", "Bo"), list(CRESCENDO_DECK), dealer=1)
    client = TableClient(session)
    client.key("p")
    session.others(0.0)  # setup over: our first turn
    assert "turn 1 (CRESCENDO from turn 7)" in screen(client)
    session.play(Move("you", "draw", source="reserve"))
    assert "turn 1 (CRESCENDO from turn 7)" in screen(client)  # still ours: the drawn card waits
    session.play(Move("you", "discard"))
    session.others(5.0)
    assert "turn 3 (CRESCENDO from turn 7)" in screen(client, 5.0)  # Bo's turn 2 ended: ours is the third


def test_a_game_taken_up_again_in_round_3_shows_no_reveal_of_rounds_ended_before_and_the_next_one_right() -> None:
    # Back after a crash in round 3: rounds 1 and 2 ended before; the session holds our view then for each.
    session = RefereeSession("crisp", ("you", "Bo"), DECK, dealer=1)
    session.engine.queue_deck(crisp_deck(["2S", "AS", "4S", "3S", "6S", "5S"]))
    session.engine.queue_deck(crisp_deck(["2S", "AS", "4S", "3S", "6S", "5S"]))

    def round_played(now: float) -> float:
        """We draw, discard and call crisp as soon as our turn opens; Bo plays its final turn: the round ends."""
        rounds = session.view().rounds_played
        while session.view().turn != 0:
            now += 1.0
            session.others(now)
        now = max(now, session.view().opens_at)
        session.others(now)
        for move in (Move("you", "draw", source="pile"), Move("you", "discard"), Move("you", "crisp")):
            session.play(move)
        while session.view().rounds_played == rounds:
            now += 5.0
            session.others(now)
        return now

    now = round_played(round_played(0.0))
    while session.view().turn != 0:
        now += 1.0
        session.others(now)
    assert session.view().round == 3
    session.snaps = [session.view()] * 2  # what NetTable keeps for the rounds ended before we came back
    client = TableClient(session, seen_before=True)
    table = screen(client, now)
    assert "Round 1 revealed" not in table and "Round 2 revealed" not in table and "d draw" in table
    now = round_played(now)
    reveal = screen(client, now)
    assert "Round 3 revealed" in reveal and "R1-2    R3  total" in reveal
    totals = session.view().totals
    assert f"{totals[0] - session.snaps[1].totals[0]:+d}" in reveal.splitlines()[3]
    # Each row adds up to its total, as on the screens of the players who never left: rounds 1 and 2 in one
    # column, their sum (a resumed player saw "R3  total" with a total its one column did not add up to).
    lines = reveal.splitlines()
    rows = [line.split() for line in lines[lines.index(next(x for x in lines if "R1-2" in x)) + 1:][:2]]
    assert [r[0] for r in rows] == ["you", "Bo"] and all(int(r[1]) + int(r[2]) == int(r[3]) for r in rows), rows


def test_the_reveal_after_a_seat_left_matches_every_players_scores_by_name_not_by_seat() -> None:
    # Cy left in round 3: the table went on without Cy, so Bo sits in seat 2 now, not 3.
    session = RefereeSession("crisp", ("you", "Bo"), DECK, dealer=1)
    client = TableClient(session)
    v = session.view()
    three = ("you", "Cy", "Bo")
    session.snaps = [replace(v, players=three, totals=(16, 5, 16), rounds_played=1),
                     replace(v, players=three, totals=(32, 21, 25), rounds_played=2),
                     replace(v, totals=(50, 25), rounds_played=3)]
    client.panel_round = 3
    lines = screen(client).splitlines()
    assert "round +0" in next(line for line in lines if line.startswith(" Bo ") and "round" in line)
    scores = [line.split() for line in lines if line.startswith(" Bo ") and "round" not in line]
    assert scores == [["Bo", "16", "9", "0", "25"]]


def test_the_rules_screen_says_when_our_turn_comes_and_how_long_the_draw_has_left() -> None:
    # Reading the rules hides the table: a timed draw must not run out unseen.
    session = RefereeSession("crisp", ("you", "Bo"), DECK, {"draw_seconds": 30}, dealer=0)
    client = TableClient(session, rules=rules_text)
    client.key("?")
    assert "your turn" not in screen(client, 0.5).lower()  # Bo plays first
    session.others(0.5)
    text = screen(client, 3.5)
    assert "Rules of Crisp" in text and "Your turn (29 s left)" in text.splitlines()[-1]


def test_every_screen_says_setup_while_another_player_makes_a_setup_choice() -> None:
    session = RefereeSession("crescendo", ("you", "Bo", "Cy"), list(CRESCENDO_DECK), dealer=0)  # Bo chooses first
    client = TableClient(session)
    assert "setup: each player may look at one card or swap two" in screen(client)
    session.others(0.0)  # Bo and Cy keep their rows: our setup choice is due
    assert "setup: each player" in screen(client)
    client.key("p")
    assert "setup:" not in screen(client) and "turn 1 (CRESCENDO from turn 10)" in screen(client)


def test_leaving_a_table_of_two_says_the_game_ends_for_the_other() -> None:
    client, _ = crisp_client()
    client.key("Q")
    assert "Leave the table? The game ends for Bo too.  y leave  n stay" in screen(client)
    three, _ = crisp_client(names=("you", "Bo", "Cy"))
    three.key("Q")
    assert "Leave the table? The others go on without you." in screen(three)


def test_our_turn_not_yet_open_says_so_not_wait_for_the_others() -> None:
    client, session = crisp_client()
    client.key("d")
    client.key("x")
    session.others(2.5)  # Bo draws and discards at 2.5: our turn opens at 4.5, while his crisp window runs
    session.others(3.5)  # our own crisp window has closed: nothing is open to us for one more second
    text = screen(client, now=3.5)
    assert "You are to play" in text
    assert "wait for the others" not in text
    assert text.splitlines()[-1] == " Your turn opens in 1.0 s (the last player may still call crisp)."
    assert "your turn starts in 1.0 s" in text


def called_by_keys_and_revealed(deck: list[str] = DECK) -> TableClient:
    """Two seats: we press d, x and c (draw, discard, call crisp); Bo's final turn at 3 s ends the round."""
    client, session = crisp_client(deck)
    client.key("d")
    client.key("x")
    client.key("c")
    session.others(3.0)  # Bo's final turn: the round ends
    return client


def test_the_reveal_says_how_a_callers_round_score_came_about() -> None:
    text = screen(called_by_keys_and_revealed(), now=3.0)  # our hand A♠ 3♠ 5♠: 9; Bo's 2♠ 4♠ 6♠: 12
    assert "Round 1 revealed" in text
    row = next(line for line in text.splitlines() if line.startswith(" you "))
    assert "round +4" in row and row.endswith("cards +9, called crisp, lowest -5")


def test_the_reveal_says_a_caller_who_tied_for_the_lowest_tied_not_that_they_were_not_the_lowest() -> None:
    # Our hand A♠ 3♠ 5♠: 9; Bo's 2♠ 4♠ 3♥: 9 as well.
    client = called_by_keys_and_revealed(crisp_deck(["AS", "2S", "3S", "4S", "5S", "3H", "QH", "7S", "JH", "9D"]))
    text = screen(client, now=3.0)
    assert " you        A♠ 3♠ 5♠         round +14\n    cards +9, called crisp, tied for the lowest +5\n" in text


def test_the_game_over_says_who_won_and_why_the_game_ended() -> None:
    client, session = crisp_client()
    over = replace(session.view(), turn=None, rounds_played=1, over=True, totals=(62, 119))
    session.snaps.append(over)
    session.view = lambda: over  # type: ignore[method-assign]
    session.pending.append(Note("over", "winners: you"))
    text = screen(client, width=100)
    assert "Game over: You win." in text  # the reveal's scores
    assert "Game over: You win (Bo reached 119, the game ends at 100: the lowest total wins)." in text  # the log


def test_a_crescendo_game_over_with_tied_totals_says_which_tie_break_decided() -> None:
    # Tied totals read "(three rounds played: the most points wins; a tie goes to the points of CRESCENDO calls,
    # then the last round)": the rule, not which of its tie-breaks decided this game, nor on what numbers.
    client, session = crescendo_client()
    over = replace(session.view(), turn=None, round=3, rounds_played=3, over=True, totals=(14, 14),
                   tie_keys=((14, -4, 3), (14, 6, 3)))  # the engine's: total, CRESCENDO call points, last round
    session.view = lambda: over  # type: ignore[method-assign]
    session.pending.append(Note("over", "winners: Bo"))
    assert ("Game over: Bo wins (three rounds played; you and Bo tied on 14 points; the tie went to CRESCENDO calls: "
            "you -4, Bo 6).") in screen(client, width=200)


@pytest.mark.parametrize("last,said", [
    (5, "you and Bo tied on 14 points, on CRESCENDO calls too (0 each); the tie went to the last round: "
           "you 5, Bo 3)."),
    (3, "you and Bo tied on 14 points, on CRESCENDO calls too (0 each), in the last round too (3 each))."),
])
def test_a_crescendo_tie_said_past_the_calls(last: int, said: str) -> None:
    client, session = crescendo_client()
    over = replace(session.view(), turn=None, round=3, rounds_played=3, over=True, totals=(14, 14),
                   tie_keys=((14, 0, last), (14, 0, 3)))
    session.view = lambda: over  # type: ignore[method-assign]
    session.pending.append(Note("over", "winners: you" if last > 3 else "winners: you, Bo"))
    text = screen(client, width=200)
    assert said in text and ("You win" in text if last > 3 else "You and Bo share the win" in text)


@pytest.mark.parametrize("game", ["crisp", "crescendo"])
def test_once_every_card_is_face_up_the_legend_of_hidden_cards_is_gone(game: str) -> None:
    # The game over's table read "[ · ] seen, hidden again  [ ? ] unseen" over rows all face up.
    if game == "crisp":
        client, session = crisp_client()
    else:
        client, session = crescendo_client()
    face = "AS" if game == "crisp" else 50
    faces = tuple(tuple(face if f is None else f for f in row) for row in session.view().known)
    over = replace(session.view(), turn=None, rounds_played=1, round=1, over=True, known=faces)
    session.snaps.append(over)
    session.view = lambda: over  # type: ignore[method-assign]
    client.panel_round = 0
    client.rounds_seen = 1
    text = screen(client, width=100)
    assert "player" in text or "name" in text  # the heading stays
    assert "unseen" not in text and "hidden again" not in text and "you know it" not in text


def test_a_small_terminal_drops_the_legend_before_the_piles_and_whose_turn_it_is() -> None:
    names = tuple(f"p{i}" for i in range(6))
    session = RefereeSession("crescendo", names, list(CRESCENDO_DECK), dealer=5)
    client = TableClient(session)
    text = screen(client, width=60, height=20)
    assert len(text.splitlines()) <= 20
    assert "Reserve:" in text and "You are to play" in text  # the discard's top and whose turn
    assert "6 p5" in text  # every seat still shows
    client, _ = crisp_client(names=names + ("p6", "p7"))
    text = screen(client, width=40, height=18)
    assert "Discard pile:" in text and "You are to play" in text


def test_the_number_key_says_what_a_claim_is_against() -> None:
    client, session = crescendo_client()
    client.key("p")
    session.others(0.0)
    client.key("d")
    client.key("x")  # 18 goes face up: the NUMBER window opens
    assert "1-8 NUMBER: claim a card of yours is within 2 of 18 (1.9 s)" in screen(client, now=0.1)


def test_whose_card_lists_the_seats_in_their_order() -> None:
    session = RefereeSession("crescendo", ("you", "Bo", "Ada"), list(CRESCENDO_DECK), dealer=2)
    client = TableClient(session)
    client.key("p")
    session.others(0.0)
    client.absorb(0.0)
    client.key("s")  # the Reserve's top shows SWAP
    client.key("1")
    assert "whose card? 2 Bo  3 Ada" in screen(client)


def test_the_leave_question_stands_alone_under_the_keys() -> None:
    client, _ = crisp_client()
    client.key("z")  # a key that does nothing leaves a line in the status
    client.key("Q")
    lines = screen(client).splitlines()
    assert "Leave the table?" in lines[-1] and "does nothing" not in screen(client)


def test_the_first_screen_says_the_dealt_cards_hide_soon() -> None:
    client, _ = crisp_client()
    text = screen(client)
    assert text.splitlines()[-1] == "Your left and right cards hide in 5 s: remember them (m keeps them shown)."
    client.key("d")
    assert "remember them" not in screen(client)  # said once
    client, _ = crescendo_client()
    assert "Each back shows its card's range: sort your face-down row from low to high." in screen(client)


def test_the_hint_about_the_dealt_cards_goes_when_they_hide_or_the_memory_aid_keeps_them() -> None:
    client, _ = crisp_client()
    screen(client, now=0.0)  # the dealt cards show from now
    assert screen(client, now=1.2).splitlines()[-1].startswith("Your left and right cards hide in 4 s")
    text = screen(client, now=PEEK_S)  # hidden now: no key was pressed, and the hint no longer holds
    assert "(A♠)" not in text and "hide in" not in text
    client, session = crisp_client()
    session.set_aid(True)
    assert "hide in" not in screen(client)
    client, _ = crisp_client()
    assert screen(client, width=40).splitlines()[-1] == "Cards L and R hide in 5 s (m: keep them)"


def test_two_missing_seats_are_one_line_with_each_clock_by_its_name() -> None:
    client, session = crisp_client(names=("you", "Bo", "Cy"))
    session.stalled = Stall(missing=(("Bo", 23.4), ("Cy", 12.0)))
    text = screen(client)
    assert text.count("missing") == 1 and "voted gone in" not in text
    assert ("Bo and Cy are missing (link lost): each is voted gone unless back in time: Bo in 24 s, Cy in 12 s."
            in " ".join(text.split()))


def test_a_turns_clock_beside_a_missing_seats_says_whose_it_is() -> None:
    session = RefereeSession("crisp", ("you", "Bo", "Cy"), DECK, {"draw_seconds": 30}, dealer=2)
    client = TableClient(session)
    client.key("d")
    session.busy = lambda: True  # type: ignore[method-assign]
    session.stalled = Stall(missing=(("Bo", 20.0),))
    text = screen(client, now=3.0)
    assert "your draw: 27 s left" in text and "Bo is missing (link lost): voted gone in 20 s" in text
    assert " Your move is on its way … It waits on Bo, missing (see above)." in text
    session.busy = lambda: False  # type: ignore[method-assign]
    client.key("x")  # at the engine's 0 s: Bo's turn opens 2 s later
    assert "Bo's turn starts in 1.5 s" in screen(client, now=0.5)


def test_a_word_about_an_earlier_key_goes_once_the_turn_moves_on() -> None:
    client, session = crisp_client()
    client.key("d")
    client.key("x")
    client.key("d")
    assert client.status[1] == "It is Bo's turn."
    session.others(2.5)
    session.others(4.5)  # Bo played; our turn is open
    text = screen(client, now=4.5)
    assert "d draw" in text and "It is Bo's turn." not in text


def test_the_log_never_starts_with_the_tail_of_a_cut_line() -> None:
    client, _ = crisp_client()
    client.log.extend([("", "A long line " + "and more words " * 14 + "the end."), ("", "Short one.")])
    text = screen(client, height=12)  # three lines for the log: the long item's three, or the short one alone
    assert "Short one." in text and "the end." not in text and "more words" not in text


def test_in_40_columns_the_reveal_says_how_a_score_came_about_under_its_row_not_cut() -> None:
    lines = screen(called_by_keys_and_revealed(), now=3.0, width=40).splitlines()
    row = next(i for i, line in enumerate(lines) if line.startswith(" you "))
    assert lines[row].endswith("round +4") and lines[row + 1] == "    cards +9, called crisp, lowest -5"
    assert "Scores" in "\n".join(lines) and all(len(line) <= 40 for line in lines)


def test_in_40_columns_the_heading_names_the_column_and_the_game_over_keys_flow() -> None:
    client, session = crisp_client()
    assert " name score" in screen(client, width=40)
    assert " name pts pl" in screen(crescendo_client()[0], width=40)
    over = replace(session.view(), turn=None, rounds_played=1, over=True)
    session.snaps.append(over)
    session.view = lambda: over  # type: ignore[method-assign]
    client.again = True
    lines = screen(client, width=40).splitlines()
    assert lines[-2:] == [" Enter back to the table", " n new game (same bots)  Q quit"]


def test_in_40_columns_the_crescendo_legend_and_a_number_claim_wrap_whole() -> None:
    client, session = number_window_client()
    text = screen(client, now=0.1, width=40, height=40)
    words = " ".join(text.split())
    assert all(len(line) <= 40 for line in text.splitlines())
    assert "its back's range and action (P peek, S swap, L lock)" in words
    assert "NUMBER: claim a card of yours is within 2 of 18 (1.9 s)" in words


def test_in_40_columns_a_crescendo_reveal_keeps_each_round_score_under_its_row() -> None:
    session = RefereeSession("crescendo", ("you", "Bo"), list(CRESCENDO_DECK), dealer=1)
    client = TableClient(session)
    faces = ((23, 80, 6, 93, 40, 5, 69, 98), (30, 41, 22, 97, 50, 51, 52, 53))
    over = replace(session.view(), turn=None, rounds_played=1, over=True, known=faces)
    session.snaps.append(over)
    session.view = lambda: over  # type: ignore[method-assign]
    lines = screen(client, width=40).splitlines()
    you = next(i for i, line in enumerate(lines) if line.startswith(" you "))
    assert lines[you + 1].startswith("    round ") and all(len(line) <= 40 for line in lines)
    assert "↓ lower than the card before it" in "\n".join(lines)  # the legend whole, on a line of its own


@pytest.mark.parametrize("width", [80, 40])
@pytest.mark.parametrize("seats", [2, 3, 4, 5, 6])
def test_our_mark_never_runs_into_a_two_digit_negative_total(width: int, seats: int) -> None:
    # Crescendo's score column read "Tess*-14": our `*` ran into the minus of the total.
    names = tuple(f"p{i}" for i in range(seats))
    session = RefereeSession("crescendo", names, list(CRESCENDO_DECK), dealer=seats - 1)
    scored = replace(session.view(), totals=(-14, -22, 7, 0, -9, 12)[:seats])
    session.view = lambda: scored  # type: ignore[method-assign]
    text = screen(TableClient(session), width=width)
    lines = text.splitlines()
    assert len(lines) <= 24 and max(map(len, lines)) <= width
    assert "*-" not in text and "* -14" in text
    head = next(line for line in lines if " pts " in line)
    ours, theirs = (next(line for line in lines if line[1:4] == f"{i} p") for i in (1, 2))
    assert ours[head.index("pts") + 2] == "4" and theirs[head.index("pts") + 2] == "2"  # under their heading
    if width == 80:  # a whole row on one line, as before
        assert len(seat_rows(text)["p0"]) == len(scored.known[0]) == (8 if seats < 5 else 7)


def test_the_leave_question_of_a_lobby_bot_game_fits_80_columns_and_wraps_whole_in_40() -> None:
    session = RefereeSession("crisp", ("you", "Bo", "Cy"), DECK, dealer=2)
    client = TableClient(session, back_to_lobby=True, against_bots=True)
    client.key("Q")
    asked = "Leave the table? The bots leave with you.  y back to the lobby  n stay"
    assert f" {asked}" in screen(client).splitlines()  # one line of its own at 80 columns
    narrow = screen(client, width=40).splitlines()
    assert all(len(line) <= 40 for line in narrow) and " y back to the lobby" in "\n".join(narrow)
    assert " ".join(asked.split()) in " ".join(" ".join(narrow).split())


@pytest.mark.parametrize("width", [80, 40])
def test_the_reserve_and_its_top_back_stay_on_one_line(width: int) -> None:
    # In 40 columns "Reserve: 87 (top back 11-20, action" ended a line and "LOCK)" began the next.
    client, session = crescendo_client()
    top = session.view().reserve_top
    assert top is not None
    back = f"{top.low}-{top.high}, {'action ' if width == 80 else ''}{top.action.upper()})"
    reserve = next(line for line in screen(client, width=width).splitlines() if "Reserve:" in line)
    assert f"(top back {back}" in reserve


def test_in_40_by_18_the_log_keeps_its_last_lines_before_the_legend() -> None:
    # At 40x20 with three seats the legend took every line of the log: a blind swap of our card went unsaid.
    # (Since the header keeps to two lines in 40 columns, 40x20 has room for both: 18 lines are as short.)
    client, session = crisp_client(names=("you", "Bo", "Cy"))
    client.key("d")
    client.key("x")
    text = screen(client, width=40, height=18)
    assert "You discarded 9♦." in text and "seen, hidden again" not in text
    assert "seen, hidden again" in screen(client, width=40, height=40)  # with room, the legend is back


def test_in_40_columns_the_scores_of_a_long_game_keep_the_total_and_add_up() -> None:
    # After seven Crisp rounds at 40 columns the Scores showed R2 to R5 and cut R6, R7 and the total off.
    session = RefereeSession("crisp", ("you", "Bo"), DECK, dealer=1)
    client = TableClient(session)
    totals = [(10 * i, 5 * i) for i in range(1, 8)]
    session.snaps.extend(replace(session.view(), turn=None, rounds_played=i + 1, totals=t) for i, t in enumerate(totals))
    last = session.snaps[-1]
    session.view = lambda: last  # type: ignore[method-assign]
    lines = screen(client, width=40).splitlines()
    head = next(line for line in lines if line.rstrip().endswith("total"))
    assert head.split() == ["R1-5", "R6", "R7", "total"] and all(len(line) <= 40 for line in lines)
    assert next(line for line in lines if line.startswith(" you ") and "70" in line).split()[1:] == ["50", "10", "10", "70"]


@pytest.mark.parametrize("game", ["crisp", "crescendo"])
@pytest.mark.parametrize("totals", [(0, 0), (105, -2), (-14, 7)])
def test_in_40_columns_our_mark_never_touches_a_four_letter_name(game: str, totals: tuple[int, int]) -> None:
    # In 40 columns the name column is 4 letters wide: our row read "Tess*    0", the `*` glued to the name.
    deck = DECK if game == "crisp" else list(CRESCENDO_DECK)
    session = RefereeSession(game, ("Tess", "Bart"), deck, dealer=1)
    scored = replace(session.view(), totals=totals)
    session.view = lambda: scored  # type: ignore[method-assign]
    lines = screen(TableClient(session), width=40).splitlines()
    ours = next(line for line in lines if line[1:].startswith("1 Tess"))
    assert ours.split()[1:4] == ["Tess", "*", str(totals[0])] and all(len(line) <= 40 for line in lines)
    head = next(line for line in lines if line.startswith("   name"))
    column = "score" if game == "crisp" else "pts"
    end = head.index(column) + len(column)
    assert ours[end - 1] == str(totals[0])[-1] and ours[end - len(str(totals[0])) - 1] == " "  # under its heading


@pytest.mark.parametrize("width", [80, 40])
def test_a_long_crescendo_row_goes_on_under_itself_in_the_reveal_never_cut(width: int) -> None:
    # In 40 columns a row grown by wrong NUMBER claims read "45 52 80 65↓ 60↓ 66 20↓ 95 4": its last cards were cut.
    session = RefereeSession("crescendo", ("you", "Bo"), list(CRESCENDO_DECK), dealer=1)
    client = TableClient(session)
    grown = (67, 99, 25, 55, 62, 97, 81, 60, 7, 100, 3, 58, 12, 90, 44, 71, 70, 98, 1, 33, 85, 86, 20, 64)
    long = grown[:24 if width == 80 else 12]
    over = replace(session.view(), turn=None, rounds_played=1, over=True, known=(long, (30, 41, 22, 97, 50, 51, 52)))
    session.snaps.append(over)
    session.view = lambda: over  # type: ignore[method-assign]
    lines = screen(client, width=width).splitlines()
    assert all(len(line) <= width for line in lines)
    you = next(i for i, line in enumerate(lines) if line.startswith(" you "))
    rows = [line[12:].split("round")[0] for line in lines[you:you + 3] if not line.startswith("    round")]
    assert " ".join(" ".join(rows).split()) == revealed_words("crescendo", long)  # every card in order, marks kept
    assert len(rows) == 2 and "Scores" in "\n".join(lines)


def test_in_40_columns_the_rules_screen_keeps_its_keys_and_our_turns_call_whole() -> None:
    # In 40 columns the rules' key line read "↑↓ PgUp PgDn scroll   Esc back to the t": our turn's call was cut off.
    session = RefereeSession("crisp", ("you", "Bo"), DECK, {"draw_seconds": 30}, dealer=0)
    client = TableClient(session, rules=rules_text)
    client.key("?")
    session.others(0.5)
    lines = screen(client, 3.5, width=40).splitlines()
    assert len(lines) <= 24 and all(len(line) <= 40 for line in lines)
    assert "Esc back to the table" in "\n".join(lines[-2:]) and "Your turn (29 s left)" in "\n".join(lines[-2:])
    assert lines[0].strip() == "Rules of Crisp" and lines[1].strip()  # the text starts right under the title


def test_the_reveal_says_how_long_our_timed_draw_has_left_when_our_turn_came_behind_it() -> None:
    # The reveal hides the table's clock: it said "Your turn in round 2:" while the 30 s of our draw ran out unseen.
    session = RefereeSession("crisp", ("you", "Bo"), DECK, {"draw_seconds": 30}, dealer=1)
    session.engine.queue_deck(crisp_deck(["2S", "AS", "4S", "3S", "6S", "5S"]))
    client = TableClient(session)
    now = call_crisp_and_end_the_round(session)
    view = session.view()
    assert view.round == 2 and view.turn == 0 and isinstance(view, CrispView) and view.draw_until is not None
    left = view.draw_until - (now + 4.0)
    assert 10 < left < 30
    assert f"Your turn in round 2 ({math.ceil(left)} s left): Enter back to the table" in screen(client, now + 4.0)


def drawn_with_twelve_cards() -> tuple[TableClient, RefereeSession]:
    """A Crescendo client that has drawn, its row grown to 12 cards (by wrong NUMBER claims)."""
    client, session = crescendo_client()
    client.key("p")
    session.others(0.0)
    client.key("d")
    drawn = session.view()
    row = (*drawn.known[0], *(None,) * 4)
    grown = replace(drawn, legal=(Move("you", "discard"), *(Move("you", "replace", pos=i) for i in range(12))),
                    known=(row, drawn.known[1]), backs=(drawn.backs[0] * 2, drawn.backs[1]),
                    locked=((False,) * 12, drawn.locked[1]))
    session.view = lambda: grown  # type: ignore[method-assign]
    return client, session


def test_a_row_of_more_than_nine_cards_is_offered_in_order() -> None:
    # A Crescendo row grown by wrong NUMBER claims was offered as "1  2  11  12  3  4 ...": sorted as text.
    client, session = drawn_with_twelve_cards()
    client.key("1")  # 1, 10, 11 or 12: the chooser waits for the next digit
    assert "which of your cards? 1  2  3  4  5  6  7  8  9  10  11  12 " in screen(client)


def test_past_nine_cards_the_keys_say_so_and_a_first_digit_says_what_it_waits_for() -> None:
    # A row of 12 showed "1-9 swap it in", and "1" waited for a second digit with nothing but "[1]" to say so.
    client, session = drawn_with_twelve_cards()
    assert "1-12 swap it in at that position" in screen(client)
    client.key("1")
    assert "12 [1…] Enter takes 1, or type its next digit Esc cancel" in " ".join(screen(client).split())
    client.key("enter")
    assert session.played[-1] == Move("you", "replace", pos=0)


def test_a_digit_before_the_draw_says_draw_first() -> None:
    # In Crescendo a digit on our turn before drawing said only "That is not open now."
    client, session = crescendo_client()
    client.key("p")
    session.others(0.0)
    for k in ("3", "x"):
        client.key(k)
        assert client.status[1] == ("Draw first: press d (or t to take the top discard); "
                                    "then a digit swaps the drawn card in, x discards it.")
    assert client.chooser is None and session.played == [Move("you", "setup_pass")]


def test_a_digit_that_is_no_choice_leaves_the_other_keys_open() -> None:
    # "4" with three cards asked "which of your cards?" and shut x behind "Type one of the numbers shown".
    client, session = crisp_client(crisp_deck(["AS", "2S", "3S", "4S", "5S", "6S", "7S"]))  # we draw 7♠
    client.key("d")
    client.key("4")
    assert client.status[1] == "4 is not one of the choices: 1, 2, 3."
    assert "which of your cards" not in screen(client) and "x discard it" in screen(client)
    client.key("x")
    assert session.played[-1] == Move("you", "discard")


def test_in_40_columns_a_crescendo_row_that_goes_on_says_which_cards_each_line_holds() -> None:
    # The heading numbers three cards; the lines under them held cards 4 to 8 with nothing to tell their numbers.
    client, session = crescendo_client()
    lines = screen(client, width=40).splitlines()
    assert all(len(line) <= 40 for line in lines)
    ours = next(i for i, line in enumerate(lines) if line.startswith("▶1 you"))
    backs = [back_word(b) for b in session.view().backs[0]]
    assert lines[ours + 1].split() == ["cards", "4-6", *backs[3:6]]
    assert lines[ours + 2].split() == ["cards", "7-8", *backs[6:8]]
    # A row of 8 takes three lines either way: the short form ("4-7:") is kept for where it saves one (six seats).


def test_a_crisp_call_says_whose_turn_begun_before_it_is_final_and_nothing_when_none_had_begun() -> None:
    # Every call read "Everyone else has one final turn (a turn taken since Bo's counts)", a riddle when none had.
    client, session = crisp_client(names=("you", "Bo", "Cy"))
    client.key("d")
    client.key("x")
    session.others(2.5)  # Bo begins and ends his turn while our crisp window still runs
    client.key("c")
    assert "You called CRISP! Everyone else has one final turn, and the turn Bo began before the call is Bo's." \
        in " ".join(screen(client, 2.5).split())
    client, session = crisp_client(names=("you", "Bo", "Cy"))
    client.key("d")
    client.key("x")
    client.key("c")
    assert "You called CRISP! Everyone else has one final turn. " in " ".join(screen(client).split()) + " "


@pytest.mark.parametrize("seats", [5, 6])
def test_seats_that_do_not_fit_go_whole_and_are_named_ours_always_shown(seats: int) -> None:
    # At 40x24 six Crescendo seats took 18 lines: the fifth showed 3 of its 7 cards, the sixth (maybe ours) nothing.
    names = ("Bo", "Cy", "Di", "Ed", "Flo", "you")[-seats:]
    session = RefereeSession("crescendo", names, list(CRESCENDO_DECK), dealer=seats - 1)
    session.me = seats - 1  # ours is the last seat
    client = TableClient(session)
    lines = screen(client, width=40, height=18).splitlines()
    assert len(lines) <= 18 and all(len(line) <= 40 for line in lines)
    starts = {line.split()[1]: i for i, line in enumerate(lines) if line[1:2].isdigit()}
    assert "you" in starts
    for name, i in starts.items():  # each seat shown shows its whole row: 7 cards, on two lines
        assert lines[i + 1].startswith("   4-7: ") and len(lines[i + 1].split()) == 5
    note = next(line for line in lines if line.startswith(" +"))
    left = [n for n in names if n not in starts]
    assert left and note.startswith(f" +{len(left)} more seat{'s' if len(left) > 1 else ''}: {', '.join(left)}")


def test_in_40_columns_the_header_keeps_to_a_line_each_for_the_rows() -> None:
    # "Crisp · round 1 · lowest total wins · game ends at 100" and the keys with our name took four lines.
    client, _ = crisp_client()
    lines = screen(client, width=40).splitlines()
    assert lines[0] == " Crisp · round 1 · game ends at 100" and lines[1] == "? rules  m memory aid: off  Q quit"
    assert lines[2].startswith("   name score")
    lines = screen(crescendo_client()[0], width=40).splitlines()
    assert lines[0] == " Crescendo · round 1 of 3" and lines[2].startswith("   name pts")
    wide = screen(client, width=80).splitlines()
    assert wide[0].strip() == "Crisp · round 1 · lowest total wins · game ends at 100" and "you: you" in wide[1]


@pytest.mark.parametrize("key,said", [("enter", "Enter"), ("pagedown", "PgDn"), (" ", "Space")])
def test_a_key_that_does_nothing_is_named_as_its_keycap(key: str, said: str) -> None:
    # Enter at the table read "The key 'enter' does nothing here.": the program's name for it, not the keycap's.
    client, _ = crisp_client()
    client.key(key)
    assert client.status[1] == f"{said} does nothing here. The keys open now are at the bottom."


def test_a_log_item_longer_than_the_room_left_says_it_goes_on() -> None:
    # At game over in 40 columns the log's last line read "played: the most points wins; a tie": cut, and not said.
    client, _ = crisp_client()
    long = "Game over: Bo wins (three rounds played: the most points wins; a tie goes to the points of CRESCENDO calls)."
    client.log.append(("", long))
    for height in range(8, 24):
        lines = screen(client, width=40, height=height).splitlines()
        shown = [line for line in lines if line and (line.startswith("Game over") or line in long)]
        if shown and "calls)." not in shown[-1]:
            assert shown[-1].endswith(" …") and len(shown[-1]) <= 40
            break
    else:
        raise AssertionError("no height left the item cut")


@pytest.mark.parametrize("width", [80, 40])
def test_a_pile_count_never_touches_the_seen_mark_of_the_first_card(width: int) -> None:
    # Our first card seen and hidden again read "0·1-10P": the pile count and the card as one token.
    client, session = crescendo_client()
    client.key("l")
    client.key("1")
    screen(client, now=1.0, width=width)
    lines = screen(client, now=1.0 + PEEK_S, width=width).splitlines()
    assert all(len(line) <= width for line in lines)
    ours = next(line for line in lines if line.startswith("▶1 you") or line.startswith(" 1 you"))
    assert ours.split()[1:5] == ["you", "*", "0", "0"]
    assert ours.split()[5] == back_word(session.view().backs[0][0]) + "·"
    head = next(line for line in lines if " pts " in line)
    assert ours[head.index(" 1 ") + 1] == "1" and ours[head.index(" 1 ")] == " "  # the card under its number


@pytest.mark.parametrize("width", [80, 40])
def test_a_91_100_back_never_touches_the_seen_mark_of_the_card_after_it(width: int) -> None:
    # "91-100P" filled its 8-column cell to the next card's mark: a seen card after it read "91-100P·61-70L".
    top = [91, 95, 92, 96] + list(range(1, 17))  # we hold 91, 92, then 1, 3, ...; Bo 95, 96, 2, 4, ...
    deck = top + [c for c in CRESCENDO_DECK if c not in top]
    session = RefereeSession("crescendo", ("you", "Bo"), deck, dealer=1)
    client = TableClient(session)
    client.key("l")
    client.key("2")
    screen(client, now=1.0, width=width)
    text = screen(client, now=1.0 + PEEK_S, width=width)
    assert all(len(line) <= width for line in text.splitlines())
    assert seat_rows(text)["you"][:2] == ["91+P", "91+" + session.view().backs[0][1].action[0].upper() + "·"]
    assert seat_rows(text)["Bo"][:2] == [back_word(b) for b in session.view().backs[1][:2]]
    assert "91+ means 91-100" in text  # the legend says what the short range is


@pytest.mark.parametrize("players", [("you", "Bo", "Cy"), ("you", "Bo", "Cy", "Di")])
def test_in_40_columns_crescendos_legend_in_fewer_words_keeps_the_91_100_range(players: tuple[str, ...]) -> None:
    # At 40x24 with three seats the legend took its two-line form and "91+ 91-100", on its third line, went: the
    # rows showed "91+" backs that nothing on screen explained.
    top = [91, 95, 92, 96] + list(range(1, 21))
    deck = top + [c for c in CRESCENDO_DECK if c not in top]
    shown = {}
    for height in range(16, 41):
        client = TableClient(RefereeSession("crescendo", players, deck, dealer=len(players) - 1))
        shown[height] = text = screen(client, width=40, height=height)
        assert all(len(line) <= 40 for line in text.splitlines())
        assert "91+" in text
        if "P peek" in text:  # whenever a legend is shown, the short range is in it
            assert "91+ 91-100" in text or "91+ means 91-100" in text, (height, text)
    assert "P peek" in shown[24] and "91+ 91-100" in shown[24]
    assert "you know it" in shown[40] and "[66] locked" in shown[40]  # with room, the legend in full


def test_a_rounds_score_in_40_columns_breaks_between_its_parts_never_inside_one() -> None:
    # At 40 columns the reveal read "round +7 called, in order +6, pile" over "+1": a part cut from its points.
    client, session = crescendo_client()
    view = session.view()
    ended = replace(view, turn=None, rounds_played=1, totals=(7, 0), revealed=((14, 46, 60, 77, 82, 92, 98),
                                                                             (11, 27, 41, 55, 80, 83, 38, 51)),
                    scored=((("called, in order", 6), ("pile", 1)), (("1 out of order", -1), ("passed", 1))))
    session.snaps.append(ended)
    session.view = lambda: ended  # type: ignore[method-assign]
    lines = [line.strip() for line in screen(client, width=40).splitlines()]
    assert "round +7  called, in order +6," in lines and "pile +1" in lines
    assert "round +0  1 out of order -1," in lines and "passed +1" in lines


def test_a_known_or_locked_joker_never_touches_the_seen_mark_of_the_card_after_it() -> None:
    # "[Joker]" filled its 8 columns: the next card seen and hidden again read "[Joker]·1-10S", one token.
    client, session = crescendo_client()
    client.key("l")
    client.key("2")
    screen(client, now=1.0)
    view = session.view()
    for locked in (False, True):
        known = (("J1",) + view.known[0][1:],) + view.known[1:]
        marks = ((locked,) + view.locked[0][1:],) + view.locked[1:]
        fake = replace(view, known=known, locked=marks)
        session.view = lambda: fake  # type: ignore[method-assign]
        row = seat_rows(screen(client, now=1.0 + PEEK_S))["you"]
        assert row[:2] == ["[Joker]" if locked else "(Joker)", back_word(view.backs[0][1]) + "·"]


@pytest.mark.parametrize("width", [60, 40])
def test_the_setup_line_keeps_to_one_line_beside_whose_turn_it_is(width: int) -> None:
    # In 40 columns "setup: each player may look at one card or swap two" took two lines under "You are to play".
    client, _ = crescendo_client()
    lines = screen(client, width=width).splitlines()
    turn = next(i for i, line in enumerate(lines) if "You are to play" in line)
    if width == 40:
        assert lines[turn:turn + 2] == [" You are to play", " setup: look at a card or swap two"]
    else:
        assert lines[turn] == " You are to play   setup: look at a card or swap two"
    assert "setup: each player may look at one card or swap two" in screen(client, width=80)


def test_a_short_terminal_keeps_the_logs_last_line_before_the_other_seats_rows() -> None:
    # At 80x12 five Crisp seats and the legend on their heading took every line left: the log was not shown at all.
    client, session = crisp_client(names=("you", "Bo", "Cy", "Di", "Ed"))
    client.key("d")
    lines = screen(client, width=80, height=12).splitlines()
    assert len(lines) <= 12 and "You drew from the draw pile." in lines
    assert lines[3].startswith("▶1 you")  # our row stays
    assert any(line.startswith(" +") and "more seats" in line for line in lines)  # the others left out are named
    lines = screen(client, width=80, height=10).splitlines()  # the shortest: our row, the log's last line, the keys
    assert lines[3].startswith("▶1 you") and lines[4].startswith(" +4 more seats")
    assert "You drew from the draw pile." in lines and " k King: 2 more draws" in lines


def test_six_crescendo_seats_fit_40_by_24_every_card_shown_with_the_logs_last_lines() -> None:
    # At 40x24 a row of 7 took three lines ("cards 4-6", "card 7"): two of six seats were left out, and the log.
    names = ("you", "Bo", "Cy", "Di", "Ed", "Flo")
    session = RefereeSession("crescendo", names, list(CRESCENDO_DECK), dealer=5)
    client = TableClient(session)
    lines = screen(client, width=40).splitlines()
    assert len(lines) <= 24 and all(len(line) <= 40 for line in lines)
    view = session.view()
    for seat, name in enumerate(names):
        i = next(i for i, line in enumerate(lines) if line[1:].startswith(f"{seat + 1} {name} "))
        shown = lines[i].split()[-3:] + lines[i + 1].split()[1:]
        assert lines[i + 1].startswith("   4-7: ") and shown == [back_word(b) for b in view.backs[seat]]
    assert "— Round 1: Flo deals —" in lines and not any("more seat" in line for line in lines)


@pytest.mark.parametrize("game", ["crisp", "crescendo"])
@pytest.mark.parametrize("width,height", [(30, 12), (20, 8), (39, 24), (80, 9), (8, 3), (1, 1), (0, 0)])
def test_a_terminal_too_small_says_the_size_it_needs_and_nothing_cut(game: str, width: int, height: int) -> None:
    # At 30x12 a Crisp table read "+4 more seats" with no row at all, and its title on three lines; at 20x8 a
    # Crescendo table showed the keys and no card.
    deck = DECK if game == "crisp" else list(CRESCENDO_DECK)
    session = RefereeSession(game, ("you", "Bo", "Cy", "Di"), deck, dealer=3)
    client = TableClient(session)
    for asked in ("", "Q"):
        if asked:
            client.key(asked)
        lines = screen(client, width=width, height=height).splitlines()
        assert len(lines) <= height and all(len(line) <= width for line in lines)
        said = " ".join(" ".join(lines).split())
        if width >= 20 and height >= 8:
            assert said.startswith(f"Terminal too small: need at least 40x10 (now {width}x{height}).")
            assert said.endswith("Leave the table? y yes, n stay." if asked else "Your turn.")
    assert client.key("y") == "leave"  # the keys still work


def test_a_short_crescendo_table_says_why_no_row_shows_rather_than_a_heading_over_nothing() -> None:
    session = RefereeSession("crescendo", ("you", "Bo", "Cy", "Di", "Ed", "Flo"), list(CRESCENDO_DECK), dealer=5)
    client = TableClient(session)
    client.key("p")
    session.others(0.0)
    client.key("d")
    lines = screen(client, width=40, height=10).splitlines()
    assert lines[2] == " The rows need a taller terminal." and not any(" pts " in line for line in lines)
    # A line more, and our own row shows, without its heading and before the log's line: the player chooses in it.
    lines = screen(client, width=40, height=11).splitlines()
    assert lines[2].startswith("▶1 you") and lines[3].startswith("   4-7:") and not any(" pts " in x for x in lines)


@pytest.mark.parametrize("game", ["crisp", "crescendo"])
def test_in_40_columns_the_title_keeps_to_one_line_while_the_next_round_shuffles(game: str) -> None:
    # Behind a round's reveal the title read "Crisp · round 2 (shuffling) · lowest" and "total wins · game ends at 50".
    deck = DECK if game == "crisp" else list(CRESCENDO_DECK)
    session = RefereeSession(game, ("you", "Bo"), deck, {"limit": 50} if game == "crisp" else {}, dealer=1)
    session.shuffling = Progress(2, 2, 1, 2)
    lines = screen(TableClient(session), width=40).splitlines()
    assert lines[0].strip() == ("Crisp · round 2 (shuffling)" if game == "crisp"
                                else "Crescendo · round 2 of 3 (shuffling)")
    assert lines[1].startswith("? rules")


def test_in_40_by_24_a_reveal_of_six_seats_cuts_no_round_score_to_a_stray_letter() -> None:
    # Six Crescendo seats' reveal at 40x24 ended each row in "rou": the round score cut, with no lines to spare.
    names = ("Me", "Ada", "Cy", "Ed", "Bo", "Di")
    session = RefereeSession("crescendo", names, list(CRESCENDO_DECK), dealer=5)
    rows = ((43, 22, 64, 30, 85, 81, 35), (41, 59, 5, 25, 67, 84), (37, 52, 51, 62, 66, 71, 93),
            (31, 50, 61, 89, 4, 92), (3, 15, 60, 65, 88), (100, 19, 28, 55, 97, 2, 78))
    over = replace(session.view(), turn=None, rounds_played=1, known=rows, totals=(-2, 0, 0, 1, 7, -1))
    session.snaps.append(over)
    session.view = lambda: over  # type: ignore[method-assign]
    lines = screen(TableClient(session), width=40).splitlines()
    assert len(lines) <= 24 and all(len(line) <= 40 for line in lines)
    for name, row in zip(names, rows):
        line = next(line for line in lines if line.startswith(f" {name} ") and "R1" not in line)
        assert line.split()[1:len(row) + 1] == revealed_words("crescendo", row).split()
        assert line.split()[len(row) + 1:] in ([], ["round", line.split()[-1]])  # the score whole, or not at all
    assert lines[-1] == " Enter back to the table"


def test_a_crescendo_reveal_shows_each_joker_where_it_stood_in_its_row() -> None:
    # Jokers leave a row as it is scored, and the reveal drew the rows after that: a row a card short of the one
    # just on the table, with nothing said.
    client, session = crescendo_client()
    ended = replace(session.view(), turn=None, rounds_played=1, totals=(-1, 3), known=((1, 5, 3), (2, 4, 6)),
                    revealed=((1, "J2", 5, 3), (2, 4, 6)), scored=((("1 out of order", -1),), (("in order", 3),)))
    session.snaps.append(ended)
    session.view = lambda: ended  # type: ignore[method-assign]
    text = screen(client)
    row = next(line for line in text.splitlines() if line.startswith(" you "))
    assert "1 Joker 5 3↓" in row
    assert "a Joker counts for nothing" in text
    # A round with no Joker says nothing of them.
    plain_end = replace(ended, revealed=ended.known)
    client, session = crescendo_client()
    session.snaps.append(plain_end)
    session.view = lambda: plain_end  # type: ignore[method-assign]
    assert "Joker" not in screen(client)


def test_a_crescendo_result_keeps_the_rows_as_revealed_jokers_in_them() -> None:
    # The rules' reveal: a Joker leaves its row for the discard pile, "one fewer card to consider".
    data = load(SCENARIOS / "crescendo" / "reveal-jokers-leave-locks-stay.json")
    engine = build(data)
    for raw in data["moves"]:
        move = parse_move(engine, raw, 0)
        assert isinstance(move, Move)
        engine.apply(move)
    [result] = engine.results
    ann = engine.seat("ann")
    assert "J3" in result.revealed[ann] and "J3" not in result.rows[ann]
    assert [c for c in result.revealed[ann] if isinstance(c, int)] == list(result.rows[ann])
    assert engine.view("ann").revealed == result.revealed == engine.view("bob").revealed


def test_two_cards_swapped_unseen_are_chosen_in_either_order() -> None:
    client, session = crescendo_client()
    client.key("s")
    client.key("8")  # the last card first: it pairs with any other
    assert "which other of your cards? 1  2  3  4  5  6  7\n" in screen(client)
    client.key("4")
    assert session.played == [Move("you", "setup_swap", pos=3, pos2=7)]


def test_once_crescendo_is_called_the_turn_line_counts_the_final_turns_not_when_it_opens() -> None:
    session = RefereeSession("crescendo", ("you", "Bo", "Cy"), list(CRESCENDO_DECK), dealer=2)
    client = TableClient(session)
    client.key("p")
    now = 0.0
    session.others(now)  # setup over: our first turn
    while not any(m.action == "crescendo" for m in session.view().legal):
        session.play(Move("you", "draw", source="reserve"))
        session.play(Move("you", "discard"))
        while session.view().turn != 0 or session.view().window_until is not None:  # each window is waited out
            now += 5.0
            session.others(now)
    assert "turn 10 (CRESCENDO from turn 10)" in screen(client, now)
    session.play(Move("you", "crescendo"))
    text = screen(client, now)
    assert "Bo is to play   final turns left: 2" in text and "CRESCENDO from" not in text
    session.play(Move("Bo", "pass"))
    assert "Cy is to play   final turns left: 1" in screen(client, now)


def test_in_40_by_24_four_crescendo_seats_keep_a_short_legend() -> None:
    # At 40x24 four Crescendo seats took 12 lines and the legend (5 lines in 40 columns) was dropped whole: what
    # "81-90P" meant was nowhere on screen. Now it is said in fewer words, and the piles share a line to make room.
    session = RefereeSession("crescendo", ("you", "Ada", "Cy", "Bo"), list(CRESCENDO_DECK), dealer=3)
    client = TableClient(session)
    lines = screen(client, width=40, height=24).splitlines()
    assert len(lines) <= 24 and all(len(line) <= 40 for line in lines)
    assert " 81-90P: range, P peek S swap L lock" in lines
    assert " (52) known  81-90P· seen  [66] locked" in lines
    assert any(line.startswith("Reserve: ") and "Discard: " in line for line in lines)
    assert all(any(line[1:].startswith(f"{i + 1} {name}") for line in lines) for i, name in enumerate(session.names))
    assert "You are to play" in "\n".join(lines) and "— Round 1: Bo deals —" in lines


def test_in_40_by_24_four_crescendo_seats_keep_the_legend_through_a_turn() -> None:
    # Drawing a card took the legend away (the card drawn took a line of its own, and so did "Nothing to do right now:
    # wait for the others." after it): it came and went with every turn.
    session = RefereeSession("crescendo", ("you", "Ada", "Cy", "Bo"), list(CRESCENDO_DECK), dealer=3)
    client = TableClient(session)
    client.key("p")
    session.others(1.0)
    for key in ("", "d", "x"):
        if key:
            client.key(key)
        lines = screen(client, now=1.0, width=40, height=24).splitlines()
        assert len(lines) <= 24 and " 81-90P: range, P peek S swap L lock" in lines, (key, lines)
        if key == "d":
            assert "Reserve: 70  Discard: 33  You drew: 34" in lines  # the top back's action is not ours to take
    ada = replace(session.view(), turn=1, legal=(), window_until=None)  # Ada's turn begun: nothing open to us
    session.view = lambda: ada  # type: ignore[method-assign]
    lines = screen(client, now=4.0, width=40, height=24).splitlines()
    assert " Nothing to do: wait for the others." in lines and " 81-90P: range, P peek S swap L lock" in lines


def test_in_40_columns_a_question_breaks_between_its_answers_never_inside_one() -> None:
    # A Queen at 40 columns read "Queen: blind swap: whose card? 2 Ada 3" over "Cy 4 Di 5 Bo  Esc cancel": the 3 ended
    # one line and its name began the next.
    deck = crisp_deck(["AS", "2S", "3S", "4S", "5S", "6S", "7S", "8S", "9S", "AH", "2H", "3H", "4H", "5H", "6H", "QH"])
    client, session = crisp_client(deck, names=("you", "Ada", "Cy", "Di", "Bo"))
    client.key("d")
    client.key("q")
    client.key("1")
    lines = [line.strip() for line in screen(client, width=40).splitlines()[-3:]]
    answers = [f"{i} {name}" for i, name in ((2, "Ada"), (3, "Cy"), (4, "Di"), (5, "Bo"))]
    assert all(any(a in line for line in lines) for a in answers), lines
    assert any(line.startswith("Queen: blind swap: whose card? 2 Ada") for line in lines)
    assert "Queen: blind swap: whose card? 2 Ada  3 Cy  4 Di  5 Bo  Esc cancel" in screen(client)  # 80: as before


def test_the_banners_countdowns_round_up_as_the_draws_do() -> None:
    # With 0.3 s left the banner read "voted gone in 0 s" and "blamed in 0 s", the seat not yet voted out or blamed.
    stall = Stall(owed=("Bo",), waited=14.7, blamed_in=0.3, missing=(("Cy", 0.3),))
    assert stall_words(stall) == [" Cy is missing (link lost): voted gone in 1 s unless Cy comes back. ",
                                  " Waiting on Bo: blamed in 1 s unless Bo sends what the table needs. "]
    two = Stall(missing=(("Cy", 0.3), ("Di", 12.2)))
    assert "each is voted gone unless back in time: Cy in 1 s, Di in 13 s." in stall_words(two)[0]


def test_at_game_over_enter_shows_the_last_reveal_and_the_scores_again() -> None:
    # Once the final reveal was closed the scores round by round were gone for good: Enter read "Enter does nothing
    # here." Now the keys say "Enter the scores", and it opens the last reveal again.
    client, session = crisp_client()
    faces = tuple(tuple("AS" if f is None else f for f in row) for row in session.view().known)
    over = replace(session.view(), turn=None, rounds_played=1, round=1, over=True, known=faces)
    session.snaps.append(over)
    session.view = lambda: over  # type: ignore[method-assign]
    client.absorb(0.0)
    assert "Round 1 revealed" in screen(client)
    client.key("enter")
    text = screen(client)
    assert "Round 1 revealed" not in text and "The game is over. Q quit  Enter the scores" in text
    assert client.key("enter") is None and "Round 1 revealed" in screen(client) and "Scores" in screen(client)


def test_a_number_claim_against_a_joker_is_said_to_be_always_wrong() -> None:
    # A Joker discarded opened the window as the rules allow: "NUMBER: claim a card of yours is within 2 of Joker".
    client, session = number_window_client()
    joker = replace(session.view(), discard=("J1",) + tuple(session.view().discard[1:]))
    session.view = lambda: joker  # type: ignore[method-assign]
    text = screen(client, now=0.1)
    assert "1-8 NUMBER: a claim against a Joker is always wrong (1.9 s)" in text and "within 2 of Joker" not in text


def test_the_tables_rules_scroll_to_their_end_in_keys_not_in_drawing() -> None:
    # Drawing the rules moved their top back to the last page (state changed in the render path). The keys stop
    # there instead, at the size the app gives them: up after paging past the end moves one line up at once.
    client, _ = crisp_client()
    client.rules, client.size = rules_text, (80, 24)
    client.key("?")
    for _ in range(50):
        client.key("pagedown")
    assert client.pager.top < 100  # stopped at the last page by the keys, not 50 pages past it
    top = client.pager.top
    last = screen(client).splitlines()
    screen(client, width=40, height=10)
    assert client.pager.top == top  # drawing, at any size, changes nothing
    client.key("up")
    up = screen(client).splitlines()
    assert up[2:-2] == last[1:-3] and up[1] != last[1]  # one line up from the last page


def test_a_seat_voted_out_while_it_was_cut_off_reads_that_the_others_went_on_without_it() -> None:
    # The lobby's "Last game" read "Every other seat voted us gone: …", the seat's own words.
    client, session = crisp_client()
    session.finished = lambda: True  # type: ignore[method-assign]
    session.pending.append(Note("over", "every other seat voted us gone: the table goes on without us"))
    text = screen(client, width=120)
    assert "Game over. Every other seat voted you gone: the table goes on without you." in text
    assert client.winners == "Every other seat voted you gone: the table goes on without you."


def test_the_crisp_legend_takes_two_lines_in_40_columns() -> None:
    # It took three: "(7♥) you know it", "[ · ] seen, hidden again" and "[ ? ] unseen" each on a line of its own.
    text = screen(crisp_client()[0], width=40, height=40)
    legend = [line for line in text.splitlines() if any(w in line for w in ("you know it", "hidden again", "unseen"))]
    assert len(legend) == 2 and all(len(line) <= 40 for line in legend), legend


@pytest.mark.parametrize("bots", [True, False])
def test_the_starting_screen_is_wrapped_and_names_bots_only_at_a_bots_table(bots: bool) -> None:
    # In 40 columns it read "Starting the table: bot peers are gettin", and a table of people said bots too.
    class Starting(RefereeSession):
        def view(self) -> None:  # type: ignore[override]
            return None

    client = TableClient(Starting("crisp", ("you", "Bo"), DECK), against_bots=bots, back_to_lobby=not bots)
    text = plain(client.lines(40, 24, 0.0))
    said = " ".join(line.strip() for line in text.splitlines()[2:5])
    assert ("bot peers are getting ready …" in said) == bots and ("linking to every seat …" in said) != bots, text
    assert all(len(line) <= 40 for line in text.splitlines())
    assert ("Q quit" if bots else "Q back to the lobby") in text


def test_at_40_by_10_crescendo_says_its_rows_need_a_taller_terminal() -> None:
    # Two players' rows of 8 take three lines each in 40 columns: at 40x10 the screen showed no row and said nothing,
    # and asked the player to look at a card they could not see.
    client, _ = crescendo_client()
    text = screen(client, width=40, height=10)
    assert "The rows need a taller terminal." in text and "l look at a card" in text, text


def test_a_crisp_row_that_fits_alone_shows_rather_than_a_note_that_it_has_no_room() -> None:
    # At 40x10 with three seats, a card drawn: "The rows need a taller terminal." over a log line and a blank one,
    # where our one-line row fits.
    client, _ = crisp_client(names=("you", "Bo", "Cy"))
    client.key("d")
    lines = screen(client, width=40, height=10).splitlines()
    assert any(line.startswith("▶1 you") for line in lines) and "taller terminal" not in "\n".join(lines), lines
