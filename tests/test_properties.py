"""Property tests over random legal play (issue 2, item 6), for every player count and option.

Every property is checked after every step (a move or a wait) against the independent model
of tests/property_model.py, which replays the public events by the rules:

1. no card is ever lost or duplicated (and each card is where the rules put it);
2. a view never shows a face its player has not seen, and shows every face they have seen;
3. scores follow the formulas; the game ends by the limit (Crisp) or after three rounds
   (Crescendo), with the right winners;
4. every game ends within a bound of steps, and afterwards every move is rejected;
5. a rejected move changes nothing (deep snapshot before == after);
6. the legal moves are exactly the accepted moves.

All randomness comes from hypothesis (a seed, the player count, the options, the first deck),
so the tests are reproducible and run the same under `derandomize`.
"""

from __future__ import annotations

import copy
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis import strategies as st

from p2pcards.bots.base import OUT_OF_TURN, RandomBot, play_game
from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK
from p2pcards.errors import IllegalMove
from p2pcards.games.base import Move
from p2pcards.games.crescendo import CrescendoGame, CrescendoOptions
from p2pcards.games.crisp import CrispGame, CrispOptions

from property_model import model_for  # tests/ is on sys.path (pytest rootdir-less prepend mode)

NAMES = ("ann", "bob", "cy", "dee", "eve", "fay", "gus", "hal")
Game = CrispGame | CrescendoGame

# Whole games are too big to shrink usefully: a failure reports its example (seed, options, deck) as drawn.
SETTINGS = dict(deadline=None, phases=(Phase.explicit, Phase.reuse, Phase.generate),
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

# ---------------------------------------------------------------- strategies

crisp_options = st.builds(
    CrispOptions,
    limit=st.one_of(st.sampled_from([50, 100, 150]), st.integers(1, 200)),
    discard_draw=st.booleans(),
    draw_seconds=st.sampled_from([None, 30, 45, 60]),
    crisp_window_s=st.sampled_from([0.0, 3.0]),
    next_start_s=st.sampled_from([0.0, 2.0]),
)
crescendo_options = st.builds(CrescendoOptions, number_window_s=st.sampled_from([0.0, 2.0]))


@st.composite
def crisp_games(draw: Any) -> tuple[CrispGame, list[str], int]:
    n = draw(st.integers(2, 8))
    game = CrispGame(NAMES[:n], draw(crisp_options), dealer=draw(st.integers(0, n - 1)))
    return game, list(draw(st.permutations(CRISP_DECK))), draw(st.integers(0, 2**32 - 1))


@st.composite
def crescendo_games(draw: Any) -> tuple[CrescendoGame, list[Any], int]:
    n = draw(st.integers(2, 6))
    game = CrescendoGame(NAMES[:n], draw(crescendo_options), dealer=draw(st.integers(0, n - 1)))
    return game, list(draw(st.permutations(CRESCENDO_DECK))), draw(st.integers(0, 2**32 - 1))


# ---------------------------------------------------------------- moves


def canonical(game: Game, m: Move) -> Move:
    """The move with only the fields its action uses (the engine ignores the rest)."""
    a = m.action
    if isinstance(game, CrispGame):
        if a == "draw":
            return Move(m.player, a, source=m.source or "pile")
        if a == "replace":
            return Move(m.player, a, pos=m.pos)
        if a == "queen":
            return Move(m.player, a, pos=m.pos, target=m.target, target_pos=m.target_pos)
        return Move(m.player, a)
    if a == "draw":
        return Move(m.player, a, source=m.source or "reserve")
    if a in ("replace", "lock", "number", "setup_look"):
        return Move(m.player, a, pos=m.pos)
    if a == "setup_swap":
        lo, hi = sorted((m.pos, m.pos2), key=lambda x: (x is None, x))  # type: ignore[arg-type]
        return Move(m.player, a, pos=lo, pos2=hi)
    if a == "peek":
        return Move(m.player, a, pos=m.pos, target=m.target)
    if a == "exchange":
        return Move(m.player, a, pos=m.pos, target=m.target, target_pos=m.target_pos)
    return Move(m.player, a)


CRISP_ACTIONS = ("draw", "replace", "discard", "jack", "queen", "king", "crisp", "pass", "number", "fold")
CRESCENDO_ACTIONS = ("setup_look", "setup_swap", "setup_pass", "draw", "replace", "discard", "peek", "exchange",
                     "lock", "crescendo", "pass", "number", "number_tie", "crisp", "fold")


def random_move(game: Game, rng: random.Random) -> Move:
    """A random move, usually illegal: any player (or a stranger), any action, any fields."""
    players = list(game.players) + ["zed"]
    crisp = isinstance(game, CrispGame)
    big = 3 if crisp else 10
    pos = lambda: rng.choice([None, -1, True, *range(big + 1)])  # noqa: E731
    return Move(
        rng.choice(players),
        rng.choice(CRISP_ACTIONS if crisp else CRESCENDO_ACTIONS),
        pos=pos(),
        target=rng.choice(players + [None]),
        target_pos=pos(),
        pos2=pos(),
        source=rng.choice([None, "pile", "discard", "reserve", "hand"]),
    )


def random_canonical_move(game: Game, rng: random.Random) -> Move:
    """A random well-formed move (only the fields its action uses)."""
    players = list(game.players)
    crisp = isinstance(game, CrispGame)
    big = 2 if crisp else 9
    m = Move(rng.choice(players),
             rng.choice(CRISP_ACTIONS[:7] if crisp else CRESCENDO_ACTIONS[:12]),
             pos=rng.randint(0, big), target=rng.choice(players), target_pos=rng.randint(0, big),
             pos2=rng.randint(0, big), source=rng.choice(["pile", "discard"] if crisp else ["reserve", "discard"]))
    return canonical(game, m)


# ---------------------------------------------------------------- snapshots


ATOMS = (type(None), bool, int, float, str)


def freeze(x: Any, depth: int = 0) -> Any:
    """A deep, comparable picture of any engine object (frozen dataclasses compare as they are)."""
    if depth > 60:
        raise RecursionError("snapshot too deep")
    if isinstance(x, ATOMS):
        return (type(x).__name__, x)
    params = getattr(type(x), "__dataclass_params__", None)
    if params is not None and params.frozen:
        return x  # Event, Move, Window, Back, options: immutable, compared field by field
    if isinstance(x, (list, tuple, dict, set, frozenset)):
        try:  # fast path: a container of immutable values is its own picture
            return (type(x).__name__, frozenset(x.items()) if isinstance(x, dict) else
                    frozenset(x) if isinstance(x, (set, frozenset)) else tuple(x), hash(tuple(x)))
        except TypeError:
            pass
    if isinstance(x, dict):
        return ("dict", tuple(sorted(((repr(k), freeze(v, depth + 1)) for k, v in x.items()), key=lambda kv: kv[0])))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(freeze(v, depth + 1) for v in x))
    if isinstance(x, (set, frozenset)):
        return ("set", tuple(sorted(repr(v) for v in x)))
    names: list[str] = []
    for cls in type(x).__mro__:
        names += [s for s in getattr(cls, "__slots__", ()) if s not in names]
    state = dict(getattr(x, "__dict__", {}))
    for s in names:
        if hasattr(x, s):
            state[s] = getattr(x, s)
    return (type(x).__name__, freeze(state, depth + 1))


def twin_of(game: Game) -> Game:
    """copy.deepcopy of the game, without its (write-only, ever-growing) event history."""
    events = game.events
    game.events = []
    # Immutable values (card backs, logged moves) need no copying: seed the memo with them.
    shared: list[Any] = [*getattr(game, "backs", {}).values(), *getattr(game, "log", ()), *getattr(game, "inputs", ())]
    memo = {id(x): x for x in shared}
    try:
        return copy.deepcopy(game, memo)
    finally:
        game.events = events


def legal_set(game: Game, player: str) -> set[Move]:
    return {canonical(game, m) for m in game.legal_moves(player)}


def check_illegal_changes_nothing(game: Game, rng: random.Random, model: Any, tries: int) -> None:
    """Properties 5 and 6b: rejected moves change nothing; a move accepted must have been legal."""
    for k in range(tries):
        m = random_move(game, rng) if k % 2 == 0 else random_canonical_move(game, rng)
        legal = legal_set(game, m.player) if m.player in game.players else set()
        before = freeze(game)
        try:
            game.apply(m)
        except IllegalMove:
            after = freeze(game)
            assert after == before, f"the rejected move {m} changed the state"
            assert canonical(game, m) not in legal or not _well_formed(m), \
                f"{m} is in legal_moves({m.player}) but was rejected"
            continue
        assert canonical(game, m) in legal, f"{m} was accepted but is not in legal_moves({m.player}): {sorted(map(str, legal))}"
        model.sync(game)


def _well_formed(m: Move) -> bool:
    """False when a position is a bool (equal to 0/1 as a Move, yet rightly refused by the engine)."""
    return not any(isinstance(v, bool) for v in (m.pos, m.pos2, m.target_pos))


def check_legal_accepted(game: Game, rng: random.Random, limit: int) -> None:
    """Property 6a: every listed legal move is accepted by a deep copy of the game."""
    for p in game.players:
        moves = game.legal_moves(p)
        if len(moves) > limit:
            moves = rng.sample(moves, limit)
        for m in moves:
            twin = twin_of(game)
            try:
                twin.apply(m)
            except IllegalMove as e:
                raise AssertionError(f"legal_moves({p}) lists {m}, but applying it fails: {e}") from None


def check_game_over(game: Game, rng: random.Random) -> None:
    """Property 4, second half: after the end nothing is legal and every move is rejected."""
    assert game.over
    before = freeze(game)
    for p in game.players:
        assert game.legal_moves(p) == [], f"{p} still has legal moves after the game is over"
    for _ in range(40):
        m = random_canonical_move(game, rng) if rng.random() < 0.5 else random_move(game, rng)
        try:
            game.apply(m)
        except IllegalMove:
            continue
        raise AssertionError(f"{m} was accepted after the game was over")
    game.tick(game.clock + 1000.0, wait=True)
    assert freeze(game) == before or game.over  # time passing after the end changes no card
    assert game.over and game.legal_moves(game.players[0]) == []


# ---------------------------------------------------------------- drivers


def fresh_deck(game: Game, rng: random.Random) -> list[Any]:
    deck = list(CRISP_DECK if isinstance(game, CrispGame) else CRESCENDO_DECK)
    rng.shuffle(deck)
    return deck


def drive(game: Game, first_deck: list[Any], seed: int, *, wait_chance: float, illegal_tries: int,
          legal_every: int, legal_limit: int, max_steps: int, crescendo_bias: float = 0.0) -> Any:
    """Random legal play with explicit waits (time-outs, forfeits, closing windows) and probes.

    Returns the model after checking the game to its end."""
    rng = random.Random(seed)
    chance = rng.choice([0.01, 0.05, 0.2, 0.5])  # 0.01: long Crisp rounds that turn the discard pile over
    bots = [RandomBot(random.Random(rng.random()), out_of_turn_chance=chance) for _ in game.players]
    model = model_for(game)
    game.queue_deck(first_deck)
    model.sync(game)
    steps = 0
    while not game.over:
        steps += 1
        assert steps <= max_steps, f"the game did not end within {max_steps} steps"
        if game.needs_deal:
            game.queue_deck(fresh_deck(game, rng))
            model.sync(game)
            continue
        if illegal_tries:
            check_illegal_changes_nothing(game, rng, model, illegal_tries)
            if game.over or game.needs_deal:
                continue
        if legal_every and steps % legal_every == 0:
            check_legal_accepted(game, rng, legal_limit)
        if rng.random() < wait_chance:
            wake = game.wake_time()
            if wake is not None and rng.random() < 0.8:
                target = wake + rng.choice([0.0, 0.0, 1e-3, 0.5])
            else:
                target = game.clock + rng.choice([0.0, 0.5, 2.0, 5.0, 61.0, 200.0])
            game.tick(max(target, game.clock), wait=rng.random() < 0.5)
            model.sync(game)
            continue
        move = _choose(game, bots, rng, crescendo_bias)
        if move is TIED:
            model.sync(game)
            continue
        if move is not None:
            game.apply(move)
            model.sync(game)
            continue
        wake = game.wake_time()
        assert wake is not None, "stuck: nobody can move and nothing is due"
        game.tick(max(wake, game.clock), wait=True)
        if wake <= game.clock and game.wake_time() == wake:
            game.tick(game.clock + 1e-3, wait=True)
        model.sync(game)
    model.sync(game)
    check_game_over(game, rng)
    return model


TIED = Move("-", "number_tie")  # the driver already resolved simultaneous claims itself


def _choose(game: Game, bots: list[RandomBot], rng: random.Random, crescendo_bias: float) -> Move | None:
    order = list(range(game.n))
    rng.shuffle(order)
    r = game.r
    assert r is not None
    # Now and then several NUMBER claims arrive together (Crescendo's tie rule).
    if isinstance(game, CrescendoGame) and r.window is not None and rng.random() < 0.05:
        claims = []
        for s in order:
            opts = [m for m in game.legal_moves(game.players[s]) if m.action == "number"]
            if opts and rng.random() < 0.6:
                claims.append((game.players[s], rng.choice(opts).pos))
        if len(claims) >= 2:
            game.number_tie(claims)
            return TIED
    for s in order:
        view = game.view(game.players[s])
        if any(m.action in OUT_OF_TURN for m in view.legal):
            m = bots[s].choose(view)
            if m is not None and m.action in OUT_OF_TURN:
                return m
    if r.turn is None:
        return None
    view = game.view(game.players[r.turn])
    in_turn = [m for m in view.legal if m.action not in OUT_OF_TURN]
    if not in_turn:
        return None
    calls = [m for m in in_turn if m.action == "crescendo"]
    if calls and rng.random() < crescendo_bias:
        return calls[0]
    return bots[r.turn].choose(view) if rng.random() < 0.9 else rng.choice(in_turn)


# ---------------------------------------------------------------- the tests


@settings(max_examples=5, **SETTINGS)
@given(crisp_games())
def test_crisp_play_game_invariants(case: tuple[CrispGame, list[str], int]) -> None:
    """RandomBot + play_game: properties 1-3 after every move and every wait, then 4."""
    game, deck, seed = case
    _play_game_checked(game, deck, seed, max_moves=20000)


@settings(max_examples=3, **SETTINGS)
@given(crescendo_games())
def test_crescendo_play_game_invariants(case: tuple[CrescendoGame, list[Any], int]) -> None:
    game, deck, seed = case
    _play_game_checked(game, deck, seed, max_moves=20000)


@pytest.mark.slow  # the long run of the two above
@settings(max_examples=120, **SETTINGS)
@given(crisp_games())
def test_crisp_play_game_invariants_long_run(case: tuple[CrispGame, list[str], int]) -> None:
    game, deck, seed = case
    _play_game_checked(game, deck, seed, max_moves=20000)


@pytest.mark.slow
@settings(max_examples=30, **SETTINGS)
@given(crescendo_games())
def test_crescendo_play_game_invariants_long_run(case: tuple[CrescendoGame, list[Any], int]) -> None:
    game, deck, seed = case
    _play_game_checked(game, deck, seed, max_moves=20000)


def _play_game_checked(game: Game, deck: list[Any], seed: int, max_moves: int) -> None:
    rng = random.Random(seed)
    model = model_for(game)
    game.queue_deck(deck)
    model.sync(game)
    # Waits inside play_game are checked too: the model is synced after every tick.
    real_tick = game.tick

    def tick(now: float, wait: bool = False) -> Any:
        out = real_tick(now, wait)
        model.sync(game)
        return out

    game.tick = tick  # type: ignore[method-assign]
    chance = rng.choice([0.01, 0.05, 0.2, 0.5])
    bots = [RandomBot(random.Random(rng.random()), out_of_turn_chance=chance) for _ in game.players]
    rec = play_game(game, bots, rng, max_moves=max_moves, on_move=lambda g, m: model.sync(g))
    del game.tick
    model.sync(game)
    assert game.over and rec.rounds == len(game.results) == model.rounds_checked
    if isinstance(game, CrescendoGame):
        assert rec.rounds == 3
    check_game_over(game, rng)


@pytest.mark.slow  # a wait, a probe of every move and the legal moves checked after every step
@settings(max_examples=50, **SETTINGS)
@given(crisp_games())
def test_crisp_waits_probes_and_legal_moves(case: tuple[CrispGame, list[str], int]) -> None:
    """Explicit waits (time-outs, forfeits), illegal probes (property 5/6) and legal moves on copies (6)."""
    game, deck, seed = case
    drive(game, deck, seed, wait_chance=0.15, illegal_tries=2, legal_every=3, legal_limit=12, max_steps=30000)


@pytest.mark.slow  # a wait, a probe of every move and the legal moves checked after every step
@settings(max_examples=20, **SETTINGS)
@given(crescendo_games())
def test_crescendo_waits_probes_and_legal_moves(case: tuple[CrescendoGame, list[Any], int]) -> None:
    game, deck, seed = case
    drive(game, deck, seed, wait_chance=0.15, illegal_tries=2, legal_every=6, legal_limit=8, max_steps=20000,
          crescendo_bias=0.05)


@settings(max_examples=30, **SETTINGS)
@given(st.integers(2, 8), st.permutations(CRISP_DECK), st.sampled_from([30, 45, 60]), st.sampled_from([0.0, 2.0]))
def test_crisp_event_log_in_order_through_a_long_wait(n: int, deck: list[str], draw_s: int, next_s: float) -> None:
    """The public event log tells the turns in the order they happened, also when one wait times out
    many turns: each `turnover` is logged when the draw pile has run out, not before."""
    game = CrispGame(NAMES[:n], CrispOptions(draw_seconds=draw_s, next_start_s=next_s))
    game.queue_deck(deck)
    game.tick(200.0 * draw_s)  # every turn forfeits: each one draws the top card and discards it
    pile, discard = 52 - 3 * n, 0
    for i, e in enumerate(game.events):
        if e.kind == "forfeit_draw":
            assert pile > 0, f"event {i}: a forfeit draw from an empty draw pile with no turnover logged first"
            pile, discard = pile - 1, discard + 1
        elif e.kind == "turnover":
            assert pile == 0, (f"event {i}: 'turnover' logged while {pile} cards are still in the draw pile "
                               f"(events so far: {[str(x) for x in game.events[:i + 1]][:6]}...)")
            pile, discard = discard, 0
