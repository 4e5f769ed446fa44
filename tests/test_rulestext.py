"""The rules as text: every option, every move and special action the engines know, the table's numbers."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from p2pcards.cards import CRESCENDO_DECK, crescendo_back
from p2pcards.errors import InputError
from p2pcards.games import crescendo, crisp
from p2pcards.rulestext import WIDTH, rules_text

# Each move of an engine, and words the rules must use for it.
CRISP_WORDS = {
    "draw": "Draw the top card of the draw pile",
    "replace": "Swap: put the drawn card in place",
    "discard": "Discard: put the drawn card",
    "jack": "Jack: look once at your own middle card",
    "queen": "Queen: swap any one of your cards",
    "king": "King: must be played",
    "crisp": 'call "crisp"',
}
CRESCENDO_WORDS = {
    "setup_look": "look at one of their own cards",
    "setup_swap": "swap the places of two of their own cards",
    "setup_pass": "or neither",
    "draw": "A. Draw",
    "replace": "put it in place of one of your cards",
    "discard": "put it face up onto the common discard pile",
    "peek": "Peek: look at one face-down card",
    "exchange": "Swap: exchange one of your face-down cards",
    "lock": "Lock: turn one of your face-down cards face up",
    "crescendo": "Call CRESCENDO",
    "pass": "or a pass, which earns 1 point",
    "number": "may call NUMBER",
    "number_tie": "count as simultaneous",
}


def flat(text: str) -> str:
    """The text with its line breaks and indents folded to single spaces."""
    return re.sub(r"\s+", " ", text)


def test_every_crisp_move_and_special_card_is_explained() -> None:
    moves = {m for ms in crisp.TURN_MOVES.values() for m in ms} | {"crisp"}
    assert set(CRISP_WORDS) == moves  # a new move needs its words here and in the rules
    assert set(crisp.SPECIAL_RANK) <= moves
    text = flat(rules_text("crisp"))
    for move, words in CRISP_WORDS.items():
        assert words in text, move


def test_every_crescendo_move_and_special_action_is_explained() -> None:
    assert set(CRESCENDO_WORDS) == crescendo.ALL_MOVES
    text = flat(rules_text("crescendo"))
    for move, words in CRESCENDO_WORDS.items():
        assert words in text, move
    for action in crescendo.SPECIAL_ACTIONS.values():
        assert f"{action.capitalize()}:" in text


@pytest.mark.parametrize("game, options", [("crisp", crisp.CrispOptions()), ("crescendo", crescendo.CrescendoOptions())])
def test_every_option_is_named_with_its_value(game: str, options: crisp.CrispOptions | crescendo.CrescendoOptions) -> None:
    text = rules_text(game)
    for name in options.to_dict():
        assert re.search(rf"^\s+- {name} = ", text, re.M), name


def test_crisp_numbers_come_from_the_table_options() -> None:
    text = flat(rules_text("crisp", {"limit": 50, "draw_seconds": 45, "crisp_window_s": 4.5, "next_start_s": 1.5,
                                     "discard_draw": True}))
    assert "until 4.5 seconds later" in text
    assert "may begin 1.5 seconds after your turn ends" in text
    assert "stays open for the whole 4.5 seconds" in text
    assert "reaches 50 or more" in text
    assert "Each draw has 45 seconds" in text
    assert "may take the top card of the discard pile" in text
    default = flat(rules_text("crisp"))
    assert "until 3 seconds later" in default and "may begin 2 seconds after" in default
    assert "no time limit per draw" in default and "every draw comes from the draw pile" in default


def test_crisp_window_no_longer_than_the_next_start_does_not_claim_overlap() -> None:
    text = flat(rules_text("crisp", {"crisp_window_s": 1, "next_start_s": 2}))
    assert "until 1 second later" in text and "Your window ends before the next player may begin" in text
    assert "stays open for the whole" not in text
    zero = flat(rules_text("crisp", {"crisp_window_s": 0}))
    assert "you must call at once" in zero and "stays open for the whole" not in zero


def test_crescendo_numbers_come_from_the_table_options() -> None:
    text = flat(rules_text("crescendo", {"number_window_s": 1.5, "number_tie_ms": 250}))
    assert "The window lasts 1.5 seconds" in text
    assert "within 250 ms of each other" in text
    zero = flat(rules_text("crescendo", {"number_window_s": 0}))
    assert "the next player may begin at once, and the window closes as soon as they do" in zero


def test_crescendo_backs_table_gives_every_card_its_back() -> None:
    text = rules_text("crescendo")
    rows = {}
    header = None
    for line in text.splitlines():
        fields = line.split()
        if fields[:1] == ["back"]:
            header = [f.lower() for f in fields[1:]]
        elif header and fields and re.fullmatch(r"\d+-\d+", fields[0]):
            rows[fields[0]] = line
    assert header == ["peek", "swap", "lock"] and len(rows) == 10
    start = text.index("    back ")
    columns = [text.index(name.capitalize(), start) - start for name in header]
    for card in CRESCENDO_DECK:
        back = crescendo_back(card)
        line = rows[f"{back.low}-{back.high}"]
        cells = [line[a:b].split() for a, b in zip(columns, columns[1:] + [len(line)])]
        mark = f"{card}*" if isinstance(card, str) else str(card)
        assert mark in cells[header.index(back.action)], (card, back)
    assert sum(len(line[columns[0]:].split()) for line in rows.values()) == len(CRESCENDO_DECK)


@pytest.mark.parametrize("game, options", [
    ("crisp", {}), ("crisp", {"draw_seconds": 60, "discard_draw": True, "crisp_window_s": 0}),
    ("crescendo", {}), ("crescendo", {"number_window_s": 0, "number_tie_ms": 0}),
])
def test_lines_fit_the_terminal(game: str, options: dict[str, object]) -> None:
    lines = rules_text(game, options).splitlines()
    assert len(lines) > 40
    assert max(len(line) for line in lines) <= WIDTH <= 80


@pytest.mark.parametrize("game", ["crisp", "crescendo"])
def test_both_games_say_a_card_looked_at_hides_again_unless_the_memory_aid_is_on(game: str) -> None:
    """The rulings' "Memory": both games are memory games, and the client hides a card looked at after a few seconds."""
    text = flat(rules_text(game))
    assert "It is a memory game: a card you look at is shown to you for a few seconds only" in text
    assert "unless you turn on a memory aid (the table tells everyone who uses one)" in text


def test_bad_game_or_option_is_an_input_error() -> None:
    with pytest.raises(InputError, match="unknown game"):
        rules_text("poker")
    with pytest.raises(InputError, match="unknown Crisp option"):
        rules_text("crisp", {"number_window_s": 2})
    with pytest.raises(InputError, match="crisp_window_s"):
        rules_text("crisp", {"crisp_window_s": -1})


def test_docs_rules_md_is_what_p2pcards_rules_prints() -> None:
    """docs/rules.md, the rules for implementers, is the commands' text with the default options."""
    text = (Path(__file__).parent.parent / "docs" / "rules.md").read_text(encoding="utf-8")
    for game in ("crisp", "crescendo"):
        assert "```text\n" + rules_text(game).rstrip("\n") + "\n```" in text, f"regenerate docs/rules.md ({game})"


def test_crisp_face_cards_join_a_hand_from_the_discard_pile_only_where_the_table_allows_it() -> None:
    plain = flat(rules_text("crisp"))
    assert "dealt to you or received in a Queen swap." in plain and "taken from the discard pile" not in plain
    assert "received in a Queen swap, or taken from the discard pile." in flat(rules_text("crisp", {"discard_draw": True}))


@pytest.mark.parametrize("game", ["crisp", "crescendo"])
def test_both_games_say_who_deals_the_round_dealt_again_when_a_player_leaves(game: str) -> None:
    # The text said only that the host deals round 1 and the dealer moves on: a player voted out (protocol.md
    # §14.9) leaves a void round, dealt again by its dealer or the next seat, which no rule a player read told.
    text = " ".join(rules_text(game).split())
    assert "If a player leaves" in text
    assert "dealt again to those who remain, by the same dealer or, when the dealer is the one who left" in text
    assert "running totals are those from before it" in text


def test_the_time_per_draw_says_when_a_turn_opens() -> None:
    # "counted from ... when your turn opens" left a player to guess when that is (a round's first turn at the
    # deal, the others once the next-start delay is over).
    text = flat(rules_text("crisp", {"draw_seconds": 30, "next_start_s": 1.5}))
    assert "when your turn opens (a round's first turn at the deal, any other 1.5 seconds after the turn before it ended)" in text
