"""Engines that see only some faces: provisional moves, and the audit that names the first illegal one."""

from __future__ import annotations

import random

from p2pcards.bots.base import RandomBot, play_game
from p2pcards.cards import CRISP_DECK
from p2pcards.games.audit import check_round
from p2pcards.games.base import Move
from p2pcards.games.crescendo import CrescendoGame
from p2pcards.games.crisp import CrispGame, CrispOptions, deck_faces

OPTS = CrispOptions(crisp_window_s=0, next_start_s=0)


def deck_with_top(*top: str) -> list[str]:
    """A full deck whose first cards are `top`, the rest in the standard order."""
    return list(top) + [c for c in CRISP_DECK if c not in top]


def peer_of(referee: CrispGame, seat: int) -> CrispGame:
    """A peer engine for `seat` at the same table, shown only what that seat may see."""
    peer = CrispGame(referee.players, referee.options, referee.first_dealer)
    assert referee.r is not None
    peer.deal({}, referee.clock)
    sync_faces(referee, peer, seat)
    return peer


def sync_faces(referee: CrispGame, peer: CrispGame, seat: int) -> None:
    """Reveal to `peer` the faces that the table protocol would: public cards and the seat's own."""
    for h, face in referee.faces.known.items():
        if referee.know.knows(seat, h):
            peer.learn(h, face)


def test_drawn_king_swapped_in_is_provisional_then_named_by_the_audit() -> None:
    # 2 players: bob (seat 1) goes first, and the first card of the draw pile (index 6) is a King.
    deck = deck_with_top("2H", "3H", "4H", "5H", "6H", "7H", "KS")
    referee = CrispGame(["ann", "bob"], OPTS)
    referee.deal(deck_faces(deck), 0.0)
    ann = peer_of(referee, 0)
    move_draw = Move("bob", "draw")
    ann.apply(move_draw)
    cheat = Move("bob", "replace", pos=0)
    # Ann cannot see bob's drawn card: the move is accepted, provisionally.
    ann.apply(cheat)
    assert [p.move for p in ann.provisional] == [cheat]
    # The referee (every face known) refuses it outright.
    referee.apply(move_draw)
    try:
        referee.apply(cheat)
    except Exception as exc:
        assert "King" in str(exc)
    else:
        raise AssertionError("the referee accepted a King swapped into a hand")
    fault = check_round(ann, deck_faces(deck))
    assert fault is not None
    assert fault.player == "bob" and fault.move == cheat
    assert "Jack, Queen or King" in fault.reason


class RoundOver(Exception):
    """Raised by the mirror to stop the driver after the first round."""


def test_honest_rounds_pass_the_audit_from_every_peer() -> None:
    rng = random.Random(7)
    for n in (2, 3, 5, 8):
        referee = CrispGame([f"p{i}" for i in range(n)], CrispOptions(discard_draw=True, crisp_window_s=1, next_start_s=0.5))
        deck = list(CRISP_DECK)
        rng.shuffle(deck)
        faces = deck_faces(deck)
        referee.deal(faces, 0.0)
        peers = [peer_of(referee, s) for s in range(n)]

        def mirror(game: object, move: Move) -> None:
            assert referee.r is not None
            for s, peer in enumerate(peers):
                if referee.r.ended:  # the round's end reveals every card before scoring
                    for h, face in faces.items():
                        peer.learn(h, face)
                peer.apply(move, now=referee.clock)
                sync_faces(referee, peer, s)
                assert peer.view(peer.players[s]).known == referee.view(peer.players[s]).known
            if referee.r.ended:
                raise RoundOver

        try:
            play_game(referee, [RandomBot(rng) for _ in range(n)], rng, on_move=mirror, max_moves=2000)
        except RoundOver:
            pass
        for peer in peers:
            assert peer.r is not None and peer.r.ended
            assert peer.totals == referee.totals
            assert check_round(peer, faces, round_no=1, start=0.0) is None


def test_peer_views_hide_what_the_referee_knows() -> None:
    deck = deck_with_top("2H", "3H", "4H", "5H", "6H", "7H", "8H")
    referee = CrispGame(["ann", "bob"], OPTS)
    referee.deal(deck_faces(deck), 0.0)
    ann = peer_of(referee, 0)
    view = ann.view("ann")
    # ann (seat 0) was dealt the 2nd, 4th and 6th cards: left 3H, middle 5H (unseen), right 7H.
    assert view.known[0] == ("3H", None, "7H")
    assert view.known[1] == (None, None, None)


def test_crescendo_audit_names_the_first_illegal_input() -> None:
    deck: list[int | str] = list(range(1, 101)) + ["J1", "J2", "J3", "J4"]
    game = CrescendoGame(["ann", "bob"])
    from p2pcards.games.crescendo import deck_faces as cdeck

    game.deal(cdeck(deck), 0.0)
    for name in ("bob", "ann"):
        game.apply(Move(name, "setup_pass"))
    game.apply(Move("bob", "draw"))
    game.apply(Move("bob", "discard"))
    # A tampered record: ann "locks" although the Reserve's top card shows another action.
    from p2pcards.games.base import RoundInput

    tampered = list(game.inputs) + [RoundInput("move", game.clock + 5, Move("ann", "lock", pos=0))]
    top = game.reserve_top_back()
    assert top is not None and top.action != "lock"
    fault = check_round(game, cdeck(deck), tampered)
    assert fault is not None and fault.index == len(tampered) - 1 and fault.player == "ann"
