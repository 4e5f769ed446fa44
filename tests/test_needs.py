"""What a move waits for is data (issue 8): `needs(move)` names the faces to reveal and a reshuffle due.

A table asks `needs` before it applies a move; nothing it meets in normal play is an exception.
"""

from __future__ import annotations

import random

import pytest

from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK
from p2pcards.errors import LocalError
from p2pcards.games.base import Move, Needs
from p2pcards.games.crescendo import CrescendoGame, deck_faces, near
from p2pcards.games.crisp import CrispGame


def empty_reserve(game: CrescendoGame) -> None:
    """Play draws and discards until the Reserve is empty and a NUMBER window is open."""
    rng = random.Random(3)
    r = game.r
    assert r is not None
    while r.reserve or r.window is None:
        moves = [m for m in game.legal_moves(game.players[r.turn])
                 if m.action in ("setup_pass", "discard") or m.action == "draw" and m.source == "reserve"]
        if not moves:
            game.tick(game.clock + 5.0, wait=True)
            continue
        game.apply(rng.choice(moves))


def test_a_wrong_claim_on_an_empty_reserve_needs_its_faces_then_a_reshuffle() -> None:
    game = CrescendoGame(["ann", "bob"], auto_reshuffle=False)
    game.deal(deck_faces(CRESCENDO_DECK), 0.0)
    empty_reserve(game)
    r = game.r
    assert r is not None and len(r.discard) >= 2
    claimant = next(s for s in range(2) if s != r.window.seat)  # type: ignore[union-attr]
    row, top = r.rows[claimant], r.discard[-1]
    pos = next(i for i, h in enumerate(row) if not near(game.faces.known[h], game.faces.known[top]))
    claim = Move(game.players[claimant], "number", pos=pos)
    known = dict(game.faces.known)
    del game.faces.known[row[pos]], game.faces.known[top]  # as on a table: neither card shown yet

    assert game.needs(claim) == Needs((row[pos], top))  # the faces first: whether it is wrong is unknown
    game.learn(row[pos], known[row[pos]])
    game.learn(top, known[top])
    assert game.needs(claim) == Needs((row[pos], top), reshuffle=True)  # wrong: its penalty card waits
    with pytest.raises(LocalError):
        game.apply(claim)  # a caller that skips `needs` is a bug of ours, not a move refused

    cards = game.reshuffle_cards()
    game.reshuffle([game.backs[h] for h in cards], {i: known[h] for i, h in enumerate(cards) if h in known})
    assert game.needs(claim) == Needs((row[pos], top))
    size = len(row)
    game.apply(claim)
    assert len(r.rows[claimant]) == size + 1  # the penalty card came from the new Reserve


def test_a_draw_from_an_empty_reserve_needs_a_reshuffle_and_no_face() -> None:
    game = CrescendoGame(["ann", "bob"], auto_reshuffle=False)
    game.deal(deck_faces(CRESCENDO_DECK), 0.0)
    empty_reserve(game)
    r = game.r
    assert r is not None
    game.tick(r.window.deadline + 1.0, wait=True)  # type: ignore[union-attr]
    draw = Move(game.players[r.turn], "draw", source="reserve")
    game.check(draw)  # not refused: the reshuffled Reserve will serve it
    assert game.needs(draw) == Needs(reshuffle=True)
    assert game.needs(Move(game.players[1 - r.turn], "draw")) == Needs()  # refused whatever happens


def test_crisp_needs_the_cards_a_move_turns_up_and_nothing_for_a_refused_move() -> None:
    game = CrispGame(["ann", "bob", "cy"])
    game.queue_deck(list(CRISP_DECK))
    r = game.r
    assert r is not None and r.turn is not None
    turn = r.turn
    player = game.players[turn]
    game.apply(Move(player, "draw"))
    assert r.drawn is not None
    assert game.needs(Move(player, "replace", pos=1)) == Needs((r.hands[turn][1],))
    assert game.needs(Move(player, "discard")) == Needs((r.drawn,))
    assert game.needs(Move(player, "replace", pos=3)) == Needs()  # no such slot
    other = game.players[(turn + 1) % 3]
    assert game.needs(Move(other, "discard")) == Needs()  # not their turn
    assert game.public_before(Move(player, "discard")) == [r.drawn]
