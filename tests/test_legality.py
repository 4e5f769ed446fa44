"""One source of legality per game (issue 8): `legal_moves` and `check` agree.

At random states reached by legal play (waits, time-outs, reshuffles and hidden faces included),
for every player:

- every move `legal_moves` offers passes `check`, and is offered once;
- every move of a generated universe (each action with every field it uses: in range, out of
  range, a bool, None, a stranger, a pile that does not exist) that `check` accepts is offered
  by `legal_moves`. The one documented difference: while Crescendo's next card waits for a
  table's reshuffle, `check` does not refuse a special action (the reshuffled Reserve's top card
  will judge it), but `legal_moves` does not offer one, as nobody knows yet which is open.
"""

from __future__ import annotations

import copy
import random
from collections.abc import Iterator
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK
from p2pcards.errors import IllegalMove
from p2pcards.games.base import Move
from p2pcards.games.crescendo import SPECIAL_ACTIONS, CrescendoGame, CrescendoOptions
from p2pcards.games.crisp import CrispGame, CrispOptions

NAMES = ("ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal")
STRANGER = "zed"
Game = CrispGame | CrescendoGame
SETTINGS: Any = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow])

CRISP_ACTIONS = ("draw", "replace", "discard", "jack", "queen", "king", "crisp")
CRESCENDO_ACTIONS = ("setup_look", "setup_swap", "setup_pass", "draw", "replace", "discard", "peek", "exchange",
                     "lock", "crescendo", "pass", "number")
FOREIGN = ("fold", "number_tie", "pass", "crisp", "number")  # other games' moves, and none at all


# ---------------------------------------------------------------- the move universe


def universe(game: Game, player: str) -> Iterator[Move]:
    """Every move of `player` this test asks `check` about: each action with the fields it uses.

    Positions and players range over every seat's cards and one past the end, crossed with each
    other; a bad value (None, -1, a bool, a stranger, no player) is tried in one field at a time.
    """
    crisp = isinstance(game, CrispGame)
    r = game.r
    assert r is not None
    sizes = [3] * game.n if crisp else [len(row) for row in r.rows]  # type: ignore[union-attr]
    spots = {p: [*range(size + 1)] for p, size in zip(game.players, sizes)}
    bad: list[Any] = [None, -1, True]
    mine = spots[player]
    for action in dict.fromkeys((*(CRISP_ACTIONS if crisp else CRESCENDO_ACTIONS), *FOREIGN)):  # in a fixed order
        if action == "draw":
            yield from (Move(player, action, source=s) for s in ("pile", "discard", "reserve", "hand"))
        elif action in ("replace", "lock", "setup_look") or (action == "number" and not crisp):
            yield from (Move(player, action, pos=p) for p in bad + mine)
        elif action == "setup_swap":
            yield from (Move(player, action, pos=p, pos2=q) for p in mine for q in mine)
            yield from (Move(player, action, pos=p, pos2=q) for b in bad for p, q in ((b, 0), (0, b)))
        elif action == "peek":
            yield from (Move(player, action, pos=p, target=t) for t in game.players for p in spots[t])
            yield from (Move(player, action, pos=p, target=t) for t in (STRANGER, None) for p in (0, 1))
            yield from (Move(player, action, pos=b, target=player) for b in bad)
        elif action in ("queen", "exchange"):
            yield from (Move(player, action, pos=p, target=t, target_pos=q)
                        for p in mine for t in game.players for q in spots[t])
            for t in (STRANGER, None):
                yield Move(player, action, pos=0, target=t, target_pos=0)
            for t in game.players:
                for b in bad:
                    yield Move(player, action, pos=b, target=t, target_pos=0)
                    yield Move(player, action, pos=0, target=t, target_pos=b)
        else:
            yield Move(player, action)


def key(m: Move) -> tuple[Any, ...]:
    """A move as the rules read it: a setup swap's two positions in either order, bools apart from ints."""
    fields = [m.pos, m.pos2, m.target_pos]
    if m.action == "setup_swap" and isinstance(m.pos, int) and isinstance(m.pos2, int):
        fields[:2] = sorted(fields[:2])  # type: ignore[type-var]
    return (m.player, m.action, m.target, m.source, *((type(v).__name__, v) for v in fields))


def accepted(game: Game, m: Move) -> bool:
    try:
        game.check(m)
    except IllegalMove:
        return False
    return True


def assert_one_source(game: Game, rng: random.Random) -> None:
    """`legal_moves` offers exactly the moves of the universe that `check` accepts (see the module's note).

    The whole universe of the player on turn and of each player offered a move; 60 moves of it for
    each other player (who may only be refused), to keep the run short.
    """
    r = game.r
    assert r is not None
    on_turn = None if r.turn is None else game.players[r.turn]
    for player in game.players:
        legal = game.legal_moves(player)
        moves = list(universe(game, player))
        if not legal and player != on_turn:
            moves = rng.sample(moves, 60)
        offered = {key(m) for m in legal}
        assert len(offered) == len(legal), f"legal_moves({player}) offers a move twice: {list(map(str, legal))}"
        for m in legal:
            try:
                game.check(m)
            except IllegalMove as exc:
                raise AssertionError(f"legal_moves({player}) offers {m}, which check refuses: {exc}") from None
        for m in moves:
            if not accepted(game, m) or key(m) in offered:
                continue
            waits = isinstance(game, CrescendoGame) and m.action in SPECIAL_ACTIONS and game.needs(m).reshuffle
            assert waits, f"check accepts {m}, which legal_moves({player}) does not offer: {list(map(str, legal))}"
    assert accepted(game, Move(STRANGER, "draw")) is False


def with_hidden_faces(game: Game, rng: random.Random) -> Game:
    """A copy of `game` that has not been shown some faces, as a table's engine is not (the drawn card's first)."""
    twin = copy.deepcopy(game)
    r = twin.r
    assert r is not None
    if r.drawn is not None:
        twin.faces.known.pop(r.drawn, None)
    for h in list(twin.faces.known):
        if rng.random() < 0.3:
            del twin.faces.known[h]
    return twin


# ---------------------------------------------------------------- reaching states


def play_and_probe(game: Game, seed: int, steps: int, every: int) -> None:
    """Random legal play for `steps` steps from a first deal, probing every `every` steps."""
    rng = random.Random(seed)
    crescendo = isinstance(game, CrescendoGame)
    for step in range(steps):
        if game.over:
            break
        if game.needs_deal:
            deck = list(CRESCENDO_DECK if crescendo else CRISP_DECK)
            rng.shuffle(deck)
            game.queue_deck(deck)
            continue
        r = game.r
        assert r is not None
        # Probe now and then, and more often while Crescendo's Reserve is empty (a reshuffle may be due).
        if step % every == 0 or (crescendo and not r.reserve and step % 8 == 0):  # type: ignore[union-attr]
            assert_one_source(game, rng)
            if not crescendo and r.drawn is not None:
                assert_one_source(with_hidden_faces(game, rng), rng)
        by_action: dict[str, list[Move]] = {}
        for p in game.players:
            for m in game.legal_moves(p):
                by_action.setdefault(m.action, []).append(m)
        for call in ("crisp", "crescendo"):  # calls that end the round: rarely, so that rounds run long
            if call in by_action and rng.random() > 0.03:
                del by_action[call]
        if not by_action or rng.random() < 0.1:
            wake = game.wake_time()
            later = game.clock + rng.choice([0.0, 0.5, 2.0, 61.0])
            game.tick(max(game.clock, wake if wake is not None and rng.random() < 0.7 else later), wait=True)
            continue
        move = rng.choice(by_action[rng.choice(sorted(by_action))])
        if isinstance(game, CrescendoGame) and game.needs(move).reshuffle:
            reshuffle(game, rng)
            assert not game.needs(move).reshuffle
        game.apply(move)


def reshuffle(game: CrescendoGame, rng: random.Random) -> None:
    """What a table does when the next card waits for it: the discard pile but its top, shuffled afresh."""
    cards = game.reshuffle_cards()
    rng.shuffle(cards)
    game.reshuffle([game.backs[h] for h in cards], {i: game.faces.known[h] for i, h in enumerate(cards)})


# ---------------------------------------------------------------- the properties

crisp_options = st.builds(
    CrispOptions,
    discard_draw=st.booleans(),
    draw_seconds=st.sampled_from([None, 30]),
    crisp_window_s=st.sampled_from([0.0, 3.0]),
    next_start_s=st.sampled_from([0.0, 2.0]),
)


@settings(max_examples=15, **SETTINGS)
@given(st.integers(2, 8), crisp_options, st.integers(0, 2**32 - 1), st.integers(0, 400))
def test_crisp_legal_moves_are_the_moves_check_accepts(n: int, options: CrispOptions, seed: int, steps: int) -> None:
    game = CrispGame(NAMES[:n], options, dealer=seed % n)
    play_and_probe(game, seed, steps, every=12)


@settings(max_examples=4, **SETTINGS)
@given(st.integers(2, 6), st.sampled_from([0.0, 2.0]), st.booleans(), st.integers(0, 2**32 - 1),
       st.integers(0, 700))
def test_crescendo_legal_moves_are_the_moves_check_accepts(n: int, window: float, table: bool, seed: int,
                                                           steps: int) -> None:
    crescendo_probe(n, window, table, seed, steps)


@pytest.mark.slow  # the long run
@settings(max_examples=40, **SETTINGS)
@given(st.integers(2, 6), st.sampled_from([0.0, 2.0]), st.booleans(), st.integers(0, 2**32 - 1),
       st.integers(0, 700))
def test_crescendo_legal_moves_are_the_moves_check_accepts_long_run(n: int, window: float, table: bool, seed: int,
                                                                    steps: int) -> None:
    crescendo_probe(n, window, table, seed, steps)


def crescendo_probe(n: int, window: float, table: bool, seed: int, steps: int) -> None:
    """A random Crescendo game probed along the way; `table`: the engine waits for reshuffles as a
    table's does (else it turns the discard pile over itself)."""
    game = CrescendoGame(NAMES[:n], CrescendoOptions(number_window_s=window), dealer=seed % n,
                         auto_reshuffle=not table)
    play_and_probe(game, seed, steps, every=25)


def test_a_special_action_waiting_for_a_reshuffle_is_not_refused_nor_offered() -> None:
    """The documented difference, reached on purpose: the Reserve runs out on a table's engine."""
    game = CrescendoGame(NAMES[:2], auto_reshuffle=False)
    deck = list(CRESCENDO_DECK)
    game.queue_deck(deck)
    rng = random.Random(7)
    r = game.r
    assert r is not None
    while r.reserve or game.phase() != "turn":
        moves = [m for m in game.legal_moves(game.players[r.turn])
                 if m.action in ("setup_pass", "draw", "discard")]
        if not moves:
            game.tick(game.clock + 5.0, wait=True)
            continue
        game.apply(rng.choice([m for m in moves if m.source != "discard"] or moves))
    if r.window is not None:
        game.tick(game.clock + 5.0, wait=True)
    player = game.players[r.turn]
    lock = Move(player, "lock", pos=0)
    game.check(lock)
    assert game.needs(lock).reshuffle
    assert lock not in game.legal_moves(player)
    assert Move(player, "draw", source="reserve") in game.legal_moves(player)
    assert_one_source(game, random.Random(1))
