"""Whole games between TablePeers over a reordering in-memory network (issue 4, item 3).

Every peer finishes, agrees with every other on each round's log, result, the totals and the
winners, and all of it equals a referee's: each round is rebuilt on an engine that is shown
every face (from the crypto audit of the openings the peers exchanged) and fed the round's
inputs, and the referee's scores must be the ones the peers signed.
"""

from __future__ import annotations

import pytest
from table_harness import (SHOWOFF, Played, Spec, assert_learned_by_decryption, assert_no_leak, event_kinds, move_actions,
                           new_referee, params, play, referee_replay, round_faces)

CRISP_SHORT = (("limit", 30),)
CRISP_TIMED = (("limit", 30), ("draw_seconds", 30))  # dawdlers let turns run out: forfeits
CRISP_ALL = (("limit", 30), ("discard_draw", True), ("draw_seconds", 30))

GAMES: list[Spec] = [
    Spec("crisp", 2, CRISP_TIMED, "dawdle", 2),  # a seed whose dawdler forfeits both a draw and a discard
    Spec("crisp", 3, (("limit", 30), ("discard_draw", True))),
    Spec("crisp", 4, CRISP_SHORT, "good"),
    Spec("crisp", 5, CRISP_ALL, "dawdle", 4),  # a seed whose dawdlers let turns run out
    Spec("crisp", 6, (("limit", 30), ("discard_draw", True)), "good"),
    Spec("crisp", 8, CRISP_SHORT),
    Spec("crescendo", 2, (("number_window_s", 0),)),
    Spec("crescendo", 3, (("number_window_s", 0.5),)),
    Spec("crescendo", 4, (), "good"),
    Spec("crescendo", 5, (("number_window_s", 0.5),), "good"),
    Spec("crescendo", 6, (("number_window_s", 0),)),
]


@pytest.fixture(scope="session", params=params(GAMES))
def played(request: pytest.FixtureRequest) -> Played:
    spec: Spec = request.param
    return play(spec)


def test_every_peer_finishes_the_game_without_a_fault(played: Played) -> None:
    for peer in played.net.peers:
        assert peer.stopped is None, f"{peer.names[peer.me]} stopped: {peer.stopped}"
        assert peer.faults == [], f"{peer.names[peer.me]}: {peer.faults}"
        assert peer.finished, f"{peer.names[peer.me]} did not finish (round {peer.round})"
        assert peer.game.over


def test_every_round_has_one_log_and_one_signed_result(played: Played) -> None:
    rounds = played.recorder.rounds()
    n = played.spec.players
    assert rounds == list(range(1, len(rounds) + 1)) and rounds
    for rnd in rounds:
        seats = played.recorder.seats[rnd]
        assert sorted(seats) == list(range(n)), f"round {rnd}: not every seat played it"
        hashes = {seats[s].rs.log_hash for s in range(n)}
        assert len(hashes) == 1, f"round {rnd}: the peers applied different logs"
        results = [seats[s].rs.result for s in range(n)]
        assert results[0] is not None and all(r == results[0] for r in results), f"round {rnd}: results differ"
        assert results[0].log == seats[0].rs.log_hash
        assert results[0].blame is None and results[0].audit == "verified"
        for s in range(n):  # every peer holds every seat's signed result, all the same
            assert seats[s].rs.results == {k: results[0] for k in range(n)}
        inputs = [seats[s].inputs for s in range(n)]
        assert all(i == inputs[0] for i in inputs), f"round {rnd}: the engines got different inputs"


def test_every_peer_ends_with_the_same_totals_and_winners(played: Played) -> None:
    peers = played.net.peers
    assert len({tuple(p.game.totals) for p in peers}) == 1
    assert len({tuple(p.game.winners) for p in peers}) == 1
    assert len({tuple(r.scores for r in p.game.results) for p in peers}) == 1


def test_the_result_is_the_referees(played: Played) -> None:
    """Each round replayed by a referee shown every face gives the scores, totals and winners the peers signed."""
    peer = played.net.peers[0]
    referee = new_referee(peer)
    for rnd in played.recorder.rounds():
        record = played.recorder.seats[rnd][0]
        assert record.inputs is not None and record.start is not None
        faces = round_faces(record.rs, played.spec.players)
        assert len(set(faces.values())) == len(faces) or played.spec.game == "crescendo"
        referee_replay(referee, faces, record.inputs, record.start)
        assert referee.round_no == rnd and referee.r is not None and referee.r.ended and not referee.awaiting
        signed = record.rs.result
        assert list(referee.results[-1].scores) == list(signed.scores), f"round {rnd}"
        assert list(referee.totals) == list(signed.totals), f"round {rnd}"
        assert referee.over == signed.over
    assert referee.over
    assert referee.totals == peer.game.totals
    assert referee.winners == peer.game.winners


def test_no_peer_can_decrypt_or_knows_more_than_the_rules_allow(played: Played) -> None:
    """As in test_knowledge.py, on this matrix."""
    assert_no_leak(played)


def test_each_peer_learns_its_own_cards_by_decryption(played: Played) -> None:
    """As in test_knowledge.py, on this matrix."""
    assert_learned_by_decryption(played)


@pytest.mark.slow  # it needs every game of the matrix, the slow ones too
def test_the_games_cover_the_timed_and_optional_rules() -> None:
    """Forfeits (both kinds), draws from the discard pile, NUMBER claims, several rounds: the matrix plays them."""
    kinds: set[str] = set()
    actions: set[str] = set()
    for spec in GAMES:
        got = play(spec)
        kinds |= event_kinds(got.net)
        actions |= move_actions(got.recorder)
        if spec.bots == "dawdle":
            assert "timeout" in event_kinds(got.net), f"{spec}: nobody let a turn run out"
    assert {"forfeit_draw", "forfeit_discard", "queen", "jack", "king", "crisp"} <= kinds
    assert {"peek", "exchange", "lock", "number_right", "number_wrong", "crescendo", "setup_look"} <= kinds
    assert {"tick", "tie", "draw", "replace", "discard"} <= actions
    draws = {item.move.source for spec in GAMES for rec in play(spec).recorder.seats.values() if rec[0].inputs
             for item in rec[0].inputs if item.move is not None and item.move.action == "draw"}
    assert "discard" in draws, "nobody drew from the discard pile"
    assert any(p.net.peers[0].round >= 2 for p in map(play, GAMES))


@pytest.mark.slow  # it needs every game of both matrices, the slow ones too
def test_the_knowledge_games_play_every_knowledge_moving_move() -> None:
    kinds: set[str] = set()
    for spec in SHOWOFF + GAMES:
        kinds |= event_kinds(play(spec).net)
    crisp = {"draw", "jack", "queen", "king", "discard", "replace", "forfeit_draw", "forfeit_discard", "reveal_all"}
    crescendo = {"setup_look", "setup_swap", "peek", "exchange", "lock", "number_right", "number_wrong",
                 "withdrawn", "reshuffle"}
    assert crisp | crescendo <= kinds, f"never played: {sorted((crisp | crescendo) - kinds)}"
