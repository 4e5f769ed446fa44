"""What happened, in plain words: events, refusals, faults with blame."""

from __future__ import annotations

from p2pcards.games.base import Move
import pytest

from p2pcards.errors import IllegalMove
from p2pcards.cards import CRESCENDO_DECK
from p2pcards.games.crescendo import NUMBER_SHUT, NUMBER_TAKEN, CrescendoGame
from p2pcards.table.outputs import Cut
from p2pcards.table.peer import Note
from p2pcards.ui.words import card_word, event_words, note_words, revealed_words, score_why, winners_words

NAMES = ("Mary Ann", "Bo", "Cy")


def test_cards_carry_their_suit_as_a_symbol_not_a_colour() -> None:
    assert card_word("10H", "crisp") == "10♥" and card_word("QS", "crisp") == "Q♠"
    assert card_word("J3", "crescendo") == "Joker" and card_word(47, "crescendo") == "47"
    assert card_word(None, "crisp") == "a card"


def test_events_name_players_even_with_spaces_in_their_names() -> None:
    assert event_words("Bo queen left Mary Ann middle", NAMES, "crisp", "Cy") == \
        "Bo used a Queen: their left ⇄ Mary Ann's middle (blind)."
    assert event_words("Mary Ann replace right 7H", NAMES, "crisp", "Mary Ann") == \
        "You swapped the drawn card into your right; 7♥ went to the discard pile."
    assert event_words("Cy peek Bo 0", NAMES, "crescendo", "Bo") == "Cy peeked at your card 1."
    assert event_words("Cy number_wrong 15 18", NAMES, "crescendo", "Bo") == \
        "Cy called NUMBER: 15 against 18, wrong: 15 goes back in its place (everyone saw it), and a penalty card goes " \
        "in just to its right."
    assert event_words("window_closed", NAMES, "crescendo", "Bo") is None
    assert event_words("Bo deal 2", NAMES, "crisp", "Bo") == "— Round 2: you deal —"
    assert event_words("Cy deal 2", NAMES, "crisp", "Bo") == "— Round 2: Cy deals —"
    assert event_words("Cy exchange 6 Bo 2", NAMES, "crescendo", "Bo") == \
        "Cy used Swap: their card 7 ⇄ your card 3 (blind; you see the card you got)."
    # Crisp's Queen: each side sees its new card in a left or right slot, not in the middle.
    assert event_words("Bo queen left Cy middle", NAMES, "crisp", "Bo") == \
        "You used a Queen: your left ⇄ Cy's middle (blind; you see the card you got)."
    assert event_words("Bo queen left Cy middle", NAMES, "crisp", "Cy") == "Bo used a Queen: their left ⇄ your middle (blind)."
    assert event_words("Bo queen middle Cy right", NAMES, "crisp", "Cy") == \
        "Bo used a Queen: their middle ⇄ your right (blind; you see the card you got)."
    assert event_words("Bo queen middle Cy right", NAMES, "crisp", "Bo") == "You used a Queen: your middle ⇄ Cy's right (blind)."


def test_a_crisp_call_says_which_turns_begun_before_it_are_final() -> None:
    """A late call (as the next player starts) leaves fewer final turns: the words say whose turn already counts,
    and say nothing of it when no turn had begun (it read "(a turn taken since Cy's counts)" every time)."""
    assert event_words("Cy crisp", NAMES, "crisp", "Bo") == "Cy called CRISP! Everyone else has one final turn."
    assert event_words("Cy crisp", NAMES, "crisp", "Bo", ("Bo",)) == \
        "Cy called CRISP! Everyone else has one final turn, and the turn you began before the call is yours."
    assert event_words("Bo crisp", NAMES, "crisp", "Bo", ("Mary Ann",)) == \
        "You called CRISP! Everyone else has one final turn, and the turn Mary Ann began before the call is Mary Ann's."


def test_the_memory_aid_and_missing_peers_in_plain_words() -> None:
    assert note_words(Note("aid", "Bo turned the memory aid on"), NAMES, "crisp", "Cy") == \
        ("class:dim", "Bo turned the memory aid on.")
    assert note_words(Note("aid", "Mary Ann turned the memory aid off"), NAMES, "crisp", "Mary Ann") == \
        ("class:dim", "You turned the memory aid off.")
    # The network's "end of stream" was the player's to decode: it is said as what happened.
    assert note_words(Note("missing", "Bo is missing: end of stream", "Bo"), NAMES, "crisp", "Cy") == \
        ("class:warn", "Bo is missing: the connection closed.")
    assert note_words(Note("missing", "Bo is missing: no heartbeat", "Bo"), NAMES, "crisp", "Cy") == \
        ("class:warn", "Bo is missing: nothing heard for a while.")
    # The time before the vote is the banner's, counting down: the log does not keep a second, frozen clock.
    assert note_words(Note("missing", "Bo is missing: end of stream; it is voted gone in 30 s unless it is back", "Bo"),
                      NAMES, "crisp", "Cy") == ("class:warn", "Bo is missing: the connection closed.")
    assert note_words(Note("back", "Bo is back", "Bo"), NAMES, "crisp", "Cy") == ("class:good", "Bo is back.")


def test_a_seat_cut_off_hears_of_its_own_network_as_yours() -> None:
    cut = Note("missing", "every other seat went missing at once (Bo, Cy): it looks like our own network was lost, "
                          "not that they all left; unless one is back in time, we leave the table",
               cut=Cut.NETWORK_LOST)
    assert note_words(cut, NAMES, "crisp", "Mary Ann") == (
        "class:warn", "Every other seat went missing at once (Bo, Cy): it looks like your own network was lost, not "
                      "that they all left; unless one is back in time, you leave the table.")
    away = Note("missing", "no other seat was back since we came back (Bo, Cy): they most likely went on without us "
                           "while we were away, or our own network is lost; unless one is back in time, we leave "
                           "the table", cut=Cut.AWAY_TOO_LONG)
    assert note_words(away, NAMES, "crisp", "Mary Ann") == (
        "class:warn", "No other seat was back since you came back (Bo, Cy): they most likely went on without you "
                      "while you were away, or your own network is lost; unless one is back in time, you leave the table.")


def test_refusals_and_faults_say_who_is_blamed() -> None:
    refused = note_words(Note("rejected", "Bo crisp: Bo's crisp window closed at 12.5 s", "Bo"), NAMES, "crisp", "Cy")
    assert refused == ("class:warn", "Move refused: Bo crisp: Bo's crisp window closed at 12.5 s (Bo is blamed).")
    fault = note_words(Note("fault", "Cy sent nothing owed for 15 s", "Cy"), NAMES, "crisp", "Bo")
    assert fault is not None and "FAULT" in fault[1] and "(Cy is blamed)" in fault[1] and "void" in fault[1]


def test_notes_of_a_seat_voted_out_keep_names_as_spelled_and_say_the_game_goes_on() -> None:
    names = ("root", "Ada", "Bo")
    assert note_words(Note("missing", "root votes Ada gone", None), names, "crisp", "root") == \
        ("class:warn", "You vote Ada gone.")
    assert note_words(Note("missing", "root votes Ada gone", None), names, "crisp", "Bo") == \
        ("class:warn", "root votes Ada gone.")
    assert note_words(Note("void", "root is out: round 2 is void"), names, "crisp", "Bo") == \
        ("class:warn", "root is out: round 2 is void.")
    on = note_words(Note("over", "the table goes on without Ada from round 1"), names, "crisp", "root")
    assert on == ("class:warn", "The table goes on without Ada from round 1.")
    assert note_words(Note("over", "too few seats remain without Ada: the game ends"), names, "crisp", "root") == \
        ("class:good", "Game over. Too few seats remain without Ada: the game ends.")


def test_a_frame_of_another_table_is_dropped_unseen_and_another_dropped_frame_quietly_not_as_a_move_refused() -> None:
    table = "b18f01f515d34d9a149af5cbd414893c0ee0eb832948bc6d52b69c151d8fa1a3"
    note = Note("rejected", f"message dropped: message for table {table} (more like it are dropped unnoted)")
    assert note_words(note, NAMES, "crisp", "Bo") is None  # the table before one that went on: nothing to read
    note = Note("rejected", "message dropped: a frame in our name that we did not sign")
    assert note_words(note, NAMES, "crisp", "Bo") == \
        ("class:dim", "Message dropped: a frame in our name that we did not sign.")


def test_a_forfeit_names_the_card_when_known_and_says_you_on_our_own_screen() -> None:
    # At a LAN table the forfeited card's face is revealed after the event: it comes as `?`.
    assert event_words("Bo forfeit_draw ?", NAMES, "crisp", "Cy") == \
        "The top card of the draw pile was drawn and discarded for Bo."
    assert event_words("Bo forfeit_draw 5S", NAMES, "crisp", "Bo") == \
        "The top card of the draw pile (5♠) was drawn and discarded for you."
    assert event_words("Bo forfeit_discard ?", NAMES, "crisp", "Bo") == "Your drawn card was discarded unused."
    assert event_words("Mary Ann forfeit_discard KH", NAMES, "crisp", "Bo") == \
        "Mary Ann's drawn card (K♥) was discarded unused."


def test_a_rounds_score_says_how_it_came_about() -> None:
    assert revealed_words("crescendo", [29, 9, 77, 96, 87]) == "29 9↓ 77 96 87↓"
    assert revealed_words("crescendo", [40, "J1", 30, 35]) == "40 Joker 30↓ 35"  # as the engine counts: Jokers left out
    assert revealed_words("crescendo", [40, None, 30]) == "40 ? 30"  # a face unknown: nothing marked
    # The same minus sign as the round score and the totals beside it ("round -4", not "round -4 … −5").
    assert score_why((("called", -3), ("2 out of order", -2))) == "called -3, 2 out of order -2"
    assert score_why((("in order", 3),)) == "in order +3"
    assert score_why((("cards", 16), ("called crisp, lowest", -5))) == "cards +16, called crisp, lowest -5"
    assert score_why((("cards", 9),)) == ""  # nothing beyond the cards' total
    missed = (("cards", 9), ("called crisp, not the lowest", 5))
    assert score_why(missed, [9, 14]) == "cards +9, called crisp, tied for the lowest +5"
    assert score_why(missed, [8, 14]) == "cards +9, called crisp, not the lowest +5"
    assert score_why(()) == ""  # a round that ended before a crash


def test_the_winners_in_a_sentence() -> None:
    assert winners_words("winners: Bo", NAMES, "Cy") == "Bo wins"
    assert winners_words("winners: Cy", NAMES, "Cy") == "You win"
    assert winners_words("winners: Mary Ann, Bo", NAMES, "Cy") == "Mary Ann and Bo share the win"
    assert winners_words("winners: Mary Ann, Bo, Cy", NAMES, "Cy") == "You, Mary Ann and Bo share the win"
    assert winners_words("too few seats remain without Bo: the game ends", NAMES, "Cy") is None
    assert note_words(Note("over", "winners: Bo, Cy"), NAMES, "crisp", "Bo") == \
        ("class:good", "Game over: You and Cy share the win.")


def test_a_player_voted_out_reads_you_not_the_seats_us() -> None:
    # Cat, her laptop asleep for 45 s, read "Game over. Every other seat voted us gone: the table goes on without us."
    note = Note("over", "every other seat voted us gone: the table goes on without us")
    assert note_words(note, ("Ann", "Bob", "Cat"), "crescendo", "Cat") == (
        "class:good", "Game over. Every other seat voted you gone: the table goes on without you.")
    two = Note("over", "Ann voted us and Bob gone: too few seats remain, the game ends")
    assert note_words(two, ("Ann", "Bob", "Cat"), "crisp", "Cat")[1] == (  # type: ignore[index]
        "Game over. Ann voted you and Bob gone: too few seats remain, the game ends.")


def test_our_own_vote_that_a_seat_is_gone_names_the_player() -> None:
    names = ("root", "Ada", "Bo")
    assert note_words(Note("missing", "Bo left the table (quit): we vote it gone", "Bo"), names, "crisp", "root") == \
        ("class:warn", "Bo left the table (quit): you vote Bo gone.")
    assert note_words(Note("missing", "Ada was missing for 30 s (end of stream): we vote it gone", "Ada"), names,
                      "crisp", "root") == ("class:warn",
                                           "Ada was missing for 30 s (the connection closed): you vote Ada gone.")


def test_a_number_claim_that_lost_the_race_reads_as_the_rules_say_withdrawn_not_refused_and_blamed() -> None:
    # Bo pressed n 150 ms after Cy, past the tie window: the table refuses the claim as the round's second, as a
    # rejected move naming its sender; the player read 'Move refused: … (Bo is blamed).' in red for being slower.
    late = Note("rejected", f"{Move('Bo', 'number', pos=3)}: {NUMBER_TAKEN}", "Bo")
    assert note_words(late, NAMES, "crescendo", "Cy") == ("class:dim", "Bo called NUMBER too late: someone else was first.")
    assert note_words(late, NAMES, "crescendo", "Bo") == ("class:dim", "You called NUMBER too late: someone else was "
                                                                        "first.")
    other = Note("rejected", f"{Move('Bo', 'number', pos=3)}: no such position: 3", "Bo")
    assert note_words(other, NAMES, "crescendo", "Cy") == ("class:warn", "Move refused: Bo number 3: no such position: "
                                                                         "3 (Bo is blamed).")


def test_a_number_claim_ordered_after_its_window_reads_as_late_not_as_blame() -> None:
    # Over a ~1 s link an honest claim can be ordered past the 2 s window: the table refuses it as the rules say, and
    # the player read 'Move refused: … (Bo is blamed).' in red, as if Bo had cheated.
    game = CrescendoGame(NAMES)
    game.queue_deck(list(CRESCENDO_DECK))
    with pytest.raises(IllegalMove) as refused:
        game.check(Move("Bo", "number", pos=0))  # no window open (in setup): the table's very words
    assert str(refused.value) == NUMBER_SHUT
    late = Note("rejected", f"{Move('Bo', 'number', pos=3)}: {refused.value}", "Bo")
    assert note_words(late, NAMES, "crescendo", "Cy") == ("class:dim", "Bo called NUMBER too late: the window had "
                                                                       "closed.")
    assert note_words(late, NAMES, "crescendo", "Bo") == ("class:dim", "You called NUMBER too late: the window had "
                                                                       "closed.")
    ann = Note("rejected", f"{Move('Mary Ann', 'number', pos=0)}: {NUMBER_SHUT}", "Mary Ann")
    assert note_words(ann, NAMES, "crescendo", "Bo") == ("class:dim", "Mary Ann called NUMBER too late: the window "
                                                                      "had closed.")
    # Any other move refused so is still a refusal with its blame.
    other = Note("rejected", f"{Move('Bo', 'draw', source='reserve')}: {NUMBER_SHUT}", "Bo")
    assert note_words(other, NAMES, "crescendo", "Cy")[0] == "class:warn"  # type: ignore[index]


def test_a_seat_missing_since_we_came_back_reads_as_the_players_own_coming_back() -> None:
    # Back from the journal, the log read "Hana is missing: no link since we came back." ("we": the program).
    note = Note("missing", "Hana is missing: no link since we came back; it is voted gone in 30.0 s unless it is back",
                "Hana")
    assert note_words(note, ("Hana", "Gus"), "crisp", "Gus") == (
        "class:warn", "Hana is missing: no link since you came back.")
