"""The table's one interface to the games: what differs between Crisp and Crescendo, asked of the game."""

from __future__ import annotations

import pytest

from p2pcards.errors import LocalError
from p2pcards.games.base import Move
from p2pcards.games.crescendo import CrescendoGame, CrescendoOptions
from p2pcards.games.crisp import CrispGame
from p2pcards.table.rules import CrescendoRules, Rules, rules_for

PLAYERS = ("ann", "bob", "cy")


def test_crisp_has_no_ties_and_never_reshuffles() -> None:
    rules = rules_for(CrispGame(PLAYERS))
    assert type(rules) is Rules and rules.tie_window == 0.0
    assert not rules.ties(Move("ann", "number", pos=0)) and not rules.ties(Move("ann", "crisp"))
    assert rules.winner([Move("ann", "crisp")]) == Move("ann", "crisp")
    with pytest.raises(LocalError):
        rules.winner([Move("ann", "crisp"), Move("bob", "crisp")])
    with pytest.raises(LocalError):
        rules.reshuffle_deck()


def test_crescendo_ties_number_claims_within_its_window() -> None:
    rules = rules_for(CrescendoGame(PLAYERS, CrescendoOptions(number_tie_ms=250), auto_reshuffle=False))
    assert isinstance(rules, CrescendoRules) and rules.tie_window == 0.25
    assert rules.ties(Move("ann", "number", pos=0)) and not rules.ties(Move("ann", "draw", source="reserve"))
    assert rules.winner([Move("ann", "lock", pos=0)]) == Move("ann", "lock", pos=0)
