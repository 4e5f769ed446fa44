"""Each round's score comes with its parts in the rules' words (what the client's reveal prints): they add up to
the score, and each view of the round's end carries them for every seat."""

from __future__ import annotations

import random

import pytest

from p2pcards.bots.base import RandomBot, play_game
from p2pcards.games.crescendo import CrescendoGame
from p2pcards.games.crisp import CrispGame

NAMES = ["ann", "bob", "cat", "dan"]


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("make", [lambda: CrispGame(NAMES, dealer=0), lambda: CrescendoGame(NAMES[:3])],
                         ids=["crisp", "crescendo"])
def test_a_rounds_parts_add_up_to_each_seats_score(make: object, seed: int) -> None:
    game = make()  # type: ignore[operator]
    play_game(game, [RandomBot(random.Random(seed * 10 + k)) for k in range(game.n)], random.Random(seed))
    assert game.over and game.results
    for result in game.results:
        assert [sum(points for _, points in parts) for parts in result.parts] == list(result.scores)
        words = [what for parts in result.parts for what, _ in parts]
        assert all(words) and (result.caller is None) == (not any("call" in w for w in words))
    assert game.view(game.players[0]).scored == game.results[-1].parts


@pytest.mark.parametrize("seed", range(6))
def test_a_crescendo_game_overs_tie_keys_are_what_its_winners_were_picked_by(seed: int) -> None:
    game = CrescendoGame(("a", "b", "c"))
    record = play_game(game, [RandomBot(random.Random(seed * 10 + i)) for i in range(3)], random.Random(seed))
    keys = game.view("b").tie_keys  # total, CRESCENDO call points, last round: the rulebook's order
    assert [k[0] for k in keys] == list(record.totals) and [k[2] for k in keys] == list(game.results[-1].scores)
    assert [k[1] for k in keys] == [sum(r.call_points[s] for r in game.results) for s in range(3)]
    assert tuple(s for s, k in enumerate(keys) if k == max(keys)) == tuple(record.winners)
    assert game.view("a").tie_keys == keys
