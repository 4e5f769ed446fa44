"""Nobody learns what they should not (issue 4, item 2).

After EVERY frame the in-memory network delivers, for every peer Y (see `KnowledgeCheck`):

1. Cryptographically open to Y: the cards of Y's round for which Y holds a decryption share
   from every other seat (every share Y has received, whoever it was meant for; Y adds its
   own). This set must lie within what the rules entitle Y to at that instant:
   - every card some peer's engine says Y has seen (`know.seen[Y]`) or that is face up
     (`know.public`) — the engine furthest along the one agreed log knows the most, and
     knowledge never shrinks within a round;
   - plus the cards the next ordered move turns face up (`public_before` of the head of a
     peer's log, once its engine stands where that move applies): a table reveals those
     faces before it applies the move, because the engine needs them to apply it.
2. The faces Y's engine holds must lie within what Y can decrypt.

The games below play every move of both games that moves knowledge: Crisp's side-card looks,
draws, Jacks, Queens (side cards both owners have seen), Kings, forfeits and the round-end
reveal; Crescendo's setup looks and swaps, draws, peeks, swaps, locks, right and wrong
NUMBER claims (the penalty card), ties, reshuffles and the round-end reveal, with the matrix of
test_games.py (the test that shows it is there, so that one test worker plays each game once).
test_games.py makes the same checks on its whole-game matrix.
"""

from __future__ import annotations

import pytest
from table_harness import SHOWOFF, Played, Spec, assert_learned_by_decryption, assert_no_leak, params, play


# Beyond 2-seat Crisp, these take long (104 cards, every pass proven): slow (test_games.py
# checks knowledge on a 2-seat Crescendo game in the default run).
@pytest.fixture(scope="session", params=params(SHOWOFF[:1]) + [
    pytest.param(spec, id=str(spec), marks=pytest.mark.slow) for spec in SHOWOFF[1:]])
def played(request: pytest.FixtureRequest) -> Played:
    spec: Spec = request.param
    return play(spec)


def test_no_peer_can_decrypt_or_knows_more_than_the_rules_allow(played: Played) -> None:
    assert_no_leak(played)


def test_each_peer_learns_its_own_cards_by_decryption(played: Played) -> None:
    assert_learned_by_decryption(played)
