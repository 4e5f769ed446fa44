"""The two timing rulings at their edges, as legal moves and views (the scenarios pin what `apply` does):
Crisp's crisp windows overlap; Crescendo's next player may begin exactly at the NUMBER window's end."""

from __future__ import annotations

import copy
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK
from p2pcards.errors import IllegalMove
from p2pcards.games.base import Move
from p2pcards.games.crescendo import CrescendoGame, CrescendoOptions
from p2pcards.games.crisp import CrispGame, CrispOptions

# A deck whose top cards are all low numbers: every draw below is a plain card that may be discarded.
CRISP = [c for c in CRISP_DECK if c[:-1] not in ("J", "Q", "K")] + [c for c in CRISP_DECK if c[:-1] in ("J", "Q", "K")]


def crisp(players: int, window: float, start: float) -> CrispGame:
    game = CrispGame([f"p{i}" for i in range(players)], CrispOptions(crisp_window_s=window, next_start_s=start))
    game.queue_deck(CRISP)
    return game


def turn(game: CrispGame, player: str, at: float) -> None:
    game.apply(Move(player, "draw", source="pile"), now=at)
    game.apply(Move(player, "discard"))


def can_call(game: CrispGame, player: str) -> bool:
    return Move(player, "crisp") in game.legal_moves(player)


def test_crisp_window_stays_open_through_the_next_turns_and_shows_its_end() -> None:
    game = crisp(4, window=4, start=0.5)  # p1 plays first (p0 deals)
    turn(game, "p1", 0.0)
    turn(game, "p2", 0.5)
    turn(game, "p3", 1.0)
    game.tick(3.999)
    assert can_call(game, "p1") and can_call(game, "p2") and can_call(game, "p3")
    assert [game.view(p).call_until for p in ("p0", "p1", "p2", "p3")] == [None, 4.0, 4.5, 5.0]
    game.tick(4.0)
    assert can_call(game, "p1")  # exactly at the end: still in time
    game.tick(4.001)
    assert not can_call(game, "p1") and game.view("p1").call_until is None
    assert can_call(game, "p2")


def test_crisp_late_call_counts_the_turns_ended_since_as_final_turns() -> None:
    game = crisp(4, window=4, start=0.5)
    turn(game, "p1", 0.0)
    turn(game, "p2", 0.5)
    turn(game, "p3", 1.0)
    game.apply(Move("p1", "crisp"), now=2.0)
    assert game.view("p0").final_turns_left == 1  # p2 and p3 have had theirs: p0's is the last
    assert not can_call(game, "p2") and not can_call(game, "p3")  # one call per round closes every window
    turn(game, "p0", 2.0)
    assert game.r is not None and game.r.ended and game.results[0].caller == 1


def test_crisp_window_closes_when_its_owner_begins_again() -> None:
    game = crisp(2, window=3, start=1)
    turn(game, "p1", 0.0)
    turn(game, "p0", 1.0)
    game.tick(2.0)
    assert can_call(game, "p1")  # p1's own turn is open but not begun
    game.apply(Move("p1", "draw", source="pile"), now=2.0)
    assert not can_call(game, "p1")


def crescendo_after_a_discard(window: float) -> CrescendoGame:
    game = CrescendoGame(["p0", "p1"], CrescendoOptions(number_window_s=window))
    game.queue_deck(list(CRESCENDO_DECK))
    for p in ("p1", "p0"):
        game.apply(Move(p, "setup_pass"))
    game.apply(Move("p1", "draw", source="reserve"))
    game.apply(Move("p1", "discard"))  # at 0: the NUMBER window runs to 2 s
    return game


def test_crescendo_every_view_says_setup_while_any_setup_choice_is_open() -> None:
    game = CrescendoGame(["p0", "p1", "p2"], CrescendoOptions())
    game.queue_deck(list(CRESCENDO_DECK))
    first = next(p for p in game.players if game.legal_moves(p))
    others = [p for p in game.players if p != first]
    assert all(game.view(p).setup for p in game.players)  # `phase` tells only the chooser
    assert game.view(first).phase == "setup" and all(game.view(p).phase is None for p in others)
    for _ in game.players:
        chooser = next(p for p in game.players if game.legal_moves(p))
        game.apply(Move(chooser, "setup_pass"))
    assert not any(game.view(p).setup for p in game.players)


def actions(game: CrescendoGame, player: str) -> set[str]:
    return {m.action for m in game.legal_moves(player)}


def test_crescendo_next_player_may_begin_exactly_at_the_window_end_and_claims_stay_open_till_then() -> None:
    game = crescendo_after_a_discard(2)
    assert game.view("p0").window_until == 2.0
    game.tick(1.999)
    assert actions(game, "p0") == {"number"}
    game.tick(2.0)
    assert {"number", "draw"} <= actions(game, "p0") and "number" in actions(game, "p1")
    game.apply(Move("p0", "draw", source="reserve"))
    assert "number" not in actions(game, "p1") and game.view("p1").window_until is None


def test_crescendo_window_closes_once_past_its_end_with_no_one_beginning() -> None:
    game = crescendo_after_a_discard(2)
    game.tick(2.001)
    assert "number" not in actions(game, "p0") | actions(game, "p1")
    assert "draw" in actions(game, "p0")


def test_crescendo_zero_window_lets_the_next_player_begin_at_once() -> None:
    game = crescendo_after_a_discard(0)
    assert {"number", "draw"} <= actions(game, "p0")


# ---------------------------------------------------------------- the crisp windows a view shows


def calls_accepted(game: CrispGame) -> set[int]:
    """The seats whose crisp call `check` accepts now."""
    out = set()
    for seat, player in enumerate(game.players):
        try:
            game.check(Move(player, "crisp"))
        except IllegalMove:
            continue
        out.add(seat)
    return out


def shown_windows(game: CrispGame) -> list[tuple[int, float]]:
    """The open crisp windows as every player's view shows them (the same for all)."""
    views = [[(w.seat, w.deadline) for w in game.view(p).windows] for p in game.players]
    assert all(v == views[0] for v in views)
    return views[0]


def probe_windows(game: CrispGame) -> None:
    """At the clock, at each shown window's end and just after it: the views' windows are the calls `check` takes."""
    shown = shown_windows(game)
    assert [seat for seat, _ in shown] == list(dict.fromkeys(seat for seat, _ in shown))  # one per seat
    assert calls_accepted(game) == {seat for seat, _ in shown}
    for seat, until in shown:
        for at in (until, until + 0.001):
            twin = copy.deepcopy(game)
            events = twin.tick(at)
            assert calls_accepted(twin) == {s for s, _ in shown_windows(twin)}
            timed_out = any(e.kind == "timeout" and e.player == game.players[seat] for e in events)
            # A window lasts to its end inclusive, unless its owner's own next turn timed out before.
            assert (seat in calls_accepted(twin)) == (at == until and not timed_out)


CRISP_TABLES = (st.integers(2, 5), st.sampled_from([0.0, 3.0, 4.0]), st.sampled_from([0.0, 0.5, 2.0]),
                st.sampled_from([None, 1.0, 30.0]), st.integers(0, 2**32 - 1))


@settings(max_examples=5, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*CRISP_TABLES)
def test_the_views_crisp_windows_are_the_calls_check_accepts(players: int, window: float, start: float,
                                                             draw: float | None, seed: int) -> None:
    crisp_windows_are_the_calls_check_accepts(players, window, start, draw, seed)


@pytest.mark.slow  # the same, at length
@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(*CRISP_TABLES)
def test_the_views_crisp_windows_are_the_calls_check_accepts_long_run(players: int, window: float, start: float,
                                                                      draw: float | None, seed: int) -> None:
    crisp_windows_are_the_calls_check_accepts(players, window, start, draw, seed)


def crisp_windows_are_the_calls_check_accepts(players: int, window: float, start: float, draw: float | None,
                                             seed: int) -> None:
    """A Crisp game played at random: after every step, the windows each view shows are the calls `check` accepts."""
    rng = random.Random(seed)
    names = [f"p{i}" for i in range(players)]
    game = CrispGame(names, CrispOptions(crisp_window_s=window, next_start_s=start, draw_seconds=draw),
                     dealer=rng.randrange(players))
    deck = list(CRISP_DECK)
    rng.shuffle(deck)
    game.queue_deck(deck)
    game.tick(rng.choice([0.0, 50.0]))  # a round that starts late shows no window either (none is open)
    for _ in range(60):
        if game.r is None or game.r.ended:
            break
        probe_windows(game)
        # Time passes (time-outs too, when draws are timed), then someone may move.
        game.tick(game.clock + rng.choice([0.0, 0.0, 0.3, 1.0, 3.0]))
        moves = [m for p in names for m in game.legal_moves(p) if m.action != "crisp" or rng.random() < 0.02]
        if moves and game.r is not None and not game.r.ended:
            game.apply(rng.choice(moves))
