"""Each piece of the good bots' reasoning: a given view, the move a strong player would make."""

from __future__ import annotations

import dataclasses

from p2pcards.bots.crescendo_bot import BACK_NUMBERS, CrescendoBot, Slot, known_slot
from p2pcards.bots.crisp_bot import CrispBot, unseen_pool
from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK, crescendo_back
from p2pcards.games.base import Move
from p2pcards.games.crescendo import CrescendoGame, CrescendoView
from p2pcards.games.crisp import CrispGame, CrispView

NAMES = ["ann", "bob", "cat"]


def crisp_view(**changes: object) -> CrispView:
    """Bob's view at his first turn of a three-seat game, with `changes` made to it."""
    game = CrispGame(NAMES)
    game.queue_deck(list(CRISP_DECK))
    view = game.view("bob")
    assert view.me == 1
    return dataclasses.replace(view, **changes)  # type: ignore[arg-type]


def crisp_resolve_moves(player: str, jack: bool = False, queen: bool = False) -> tuple[Move, ...]:
    """The moves open with a drawn card: replace a slot, discard, and a face card's effect."""
    moves = [Move(player, "replace", pos=p) for p in range(3)] + [Move(player, "discard")]
    if jack:
        moves.append(Move(player, "jack"))
    if queen:
        moves += [Move(player, "queen", pos=p, target=t, target_pos=q)
                  for p in range(3) for t in ("ann", "cat") for q in range(3)]
    return tuple(moves)


def last_turn_view(drawn: str, hand: tuple[str | None, ...], **kw: object) -> CrispView:
    """Bob's final turn after Ann's call, with `drawn` in hand."""
    legal = crisp_resolve_moves("bob", jack=drawn.startswith("J"), queen=drawn.startswith("Q"))
    fields: dict[str, object] = {"caller": 0, "final_turns_left": 2, **kw}
    return crisp_view(known=((None,) * 3, hand, (None,) * 3), drawn=drawn, drawn_from="pile",
                      phase="drawn_pile", can_call=False, legal=legal, **fields)


def test_crisp_last_turn_queens_the_caller() -> None:
    """After a call, a known 8 goes to the caller: their unseen cards are low (they called) and it may break the call."""
    view = last_turn_view("QH", ("8C", "4D", "3S"))
    move = CrispBot().choose(view)
    assert move == Move("bob", "queen", pos=0, target="ann", target_pos=move.target_pos if move else None)


def test_crisp_midround_keeps_its_queen_margin() -> None:
    """The same hand with nobody called yet: an 8 for an unseen card is too small a gamble."""
    view = last_turn_view("QH", ("8C", "4D", "3S"), caller=None, final_turns_left=0)
    assert CrispBot().choose(view) == Move("bob", "discard")


def test_crisp_last_turn_wastes_no_move_on_a_jack() -> None:
    """On a last turn knowing the middle card changes nothing: the Jack is discarded."""
    view = last_turn_view("JH", ("2C", None, "3S"))
    assert CrispBot().choose(view) == Move("bob", "discard")
    earlier = last_turn_view("JH", ("2C", None, "3S"), caller=None, final_turns_left=0)
    assert CrispBot().choose(earlier) == Move("bob", "jack")


def test_crisp_call_expects_the_others_to_improve_in_their_final_turns() -> None:
    """The chance of being lowest counts the turn each other player still gets after the call."""
    view = crisp_view(known=((None,) * 3, ("AS", None, "2S"), (None,) * 3))
    pool = unseen_pool(view)
    assert CrispBot().p_lowest(view, pool) < CrispBot(final_gain=0.0).p_lowest(view, pool)


def crescendo_view(mine: tuple[int, ...], top: int) -> CrescendoView:
    """Ann's view in a NUMBER window with her row known as `mine` and `top` on the common discard pile."""
    game = CrescendoGame(NAMES)
    game.queue_deck(list(CRESCENDO_DECK))
    view = game.view("ann")
    known = list(view.known)
    backs = list(view.backs)
    locked = list(view.locked)
    known[view.me] = mine
    backs[view.me] = tuple(crescendo_back(n) for n in mine)
    locked[view.me] = (False,) * len(mine)
    legal = tuple(Move("ann", "number", pos=p) for p in range(len(mine)))
    return dataclasses.replace(view, known=tuple(known), backs=tuple(backs), locked=tuple(locked), phase=None,
                               discard=(top,), window_open=True, legal=legal)


def test_crescendo_claims_the_card_most_out_of_order() -> None:
    """20 and 22 are both within 2 of 21: claiming 22 leaves 10 20 25 30 all in order, claiming 20 does not."""
    view = crescendo_view((10, 20, 25, 22, 30), top=21)
    assert CrescendoBot().choose(view) == Move("ann", "number", pos=3)


def test_crescendo_placement_keeps_a_row_that_can_still_be_in_order() -> None:
    """41 96 ? 74 with a 91 drawn (the ? from 91-100): 91 for the 74 may still give a row in order (+3), 91 for
    the 96 saves as much on average but leaves the 74 surely wrong."""
    back = crescendo_back(97)
    row = [known_slot(41), known_slot(96), Slot(None, 0.0, BACK_NUMBERS[back], back.low, back.high), known_slot(74)]
    gain, pos = CrescendoBot()._placements(None, row, known_slot(91))  # type: ignore[arg-type]
    assert pos == 3 and gain > 0

