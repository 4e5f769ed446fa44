"""The bot interface and a driver that plays whole games on the referee engine."""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from ..cards import CRESCENDO_DECK, CRISP_DECK, CrescendoCard, crescendo_back
from ..games.base import Move, later
from ..games.crescendo import CrescendoGame, CrescendoView
from ..games.crisp import CrispGame, CrispView

Game = CrispGame | CrescendoGame
View = CrispView | CrescendoView

# Out-of-turn moves: offered to every bot before the player due moves.
OUT_OF_TURN = frozenset({"crisp", "number"})


class Bot(Protocol):
    """A player: given only its own view, a move to make now, or None to let time pass."""

    def choose(self, view: View) -> Move | None:
        """The move to make now, or None."""
        ...


class RandomBot:
    """Plays a uniformly random legal move on its turn; takes out-of-turn chances now and then."""

    def __init__(self, rng: random.Random, out_of_turn_chance: float = 0.1) -> None:
        self.rng = rng
        self.chance = out_of_turn_chance

    def choose(self, view: View) -> Move | None:
        """A random legal move (out-of-turn moves only with `out_of_turn_chance`)."""
        in_turn = [m for m in view.legal if m.action not in OUT_OF_TURN]
        out = [m for m in view.legal if m.action in OUT_OF_TURN]
        if out and self.rng.random() < self.chance:
            return self.rng.choice(out)
        if in_turn:
            return self.rng.choice(in_turn)
        return None


@dataclass
class GameRecord:
    """The outcome of one driven game."""

    totals: tuple[int, ...]
    winners: tuple[int, ...]
    rounds: int
    moves: int


def shuffled_deck(game: Game, rng: random.Random) -> list[object]:
    """A simulation deck (not secret: the referee's test decks, never a real table's)."""
    deck: list[object] = list(CRISP_DECK if isinstance(game, CrispGame) else CRESCENDO_DECK)
    rng.shuffle(deck)
    return deck


def play_game(
    game: Game,
    bots: Sequence[Bot],
    rng: random.Random,
    max_moves: int = 20000,
    on_move: Callable[[Game, Move], None] | None = None,
    trace: list[tuple[str, object]] | None = None,
) -> GameRecord:
    """Drive `game` to its end with one bot per seat; each bot sees only its own view.

    `trace`, when given, receives every input the engine got (`deck`, `move`, `tick`, and `reshuffle`
    when a Crescendo engine in table mode waits for its empty Reserve to be shuffled afresh: the
    driver shuffles it with `rng`) so the game can be replayed on a fresh engine with `replay`.
    """
    moves = 0
    idle = 0
    while not game.over:
        if game.needs_deal:
            deck = shuffled_deck(game, rng)
            if trace is not None:
                trace.append(("deck", deck))
            game.queue_deck(deck)
            continue
        acted = False
        r = game.r
        assert r is not None
        # Out-of-turn chances first (only while a window is open), from a random seat so nobody is always first.
        seats: list[int] = []
        if isinstance(game, CrispGame):
            assert game.r is not None
            seats = [w.seat for w in game.r.windows]
        elif game.r is not None and game.r.window is not None:
            start = rng.randrange(game.n)
            seats = [(start + k) % game.n for k in range(game.n)]
        for seat in seats:
            view = game.view(game.players[seat])
            if not any(m.action in OUT_OF_TURN for m in view.legal):
                continue
            move = bots[seat].choose(view)
            if move is not None:
                _reshuffle_if_needed(game, move, rng, trace)
                if trace is not None:
                    trace.append(("move", move))
                game.apply(move)
                moves += 1
                acted = True
                if on_move:
                    on_move(game, move)
                break
        if acted:
            continue
        if r.turn is not None and game.phase() is not None:
            view = game.view(game.players[r.turn])
            move = bots[r.turn].choose(view) if any(m.action not in OUT_OF_TURN for m in view.legal) else None
            if move is not None:
                _reshuffle_if_needed(game, move, rng, trace)
                if trace is not None:
                    trace.append(("move", move))
                game.apply(move)
                moves += 1
                idle = 0
                if on_move:
                    on_move(game, move)
                if moves >= max_moves:
                    raise RuntimeError(f"game did not end within {max_moves} moves")
                continue
        wake = game.wake_time()
        idle += 1
        if wake is None or idle > 1000:
            raise RuntimeError("the game is stuck: nobody can move and nothing is due")
        target = max(wake, game.clock)
        if wake <= game.clock and game.wake_time() == wake:
            target = later(game.clock, 0.001)  # a millisecond on, on the grid the stamps keep
        if trace is not None:
            trace.append(("tick", target))
        game.tick(target, wait=True)
    return GameRecord(tuple(game.totals), tuple(game.winners), len(game.results), moves)


def _reshuffle_if_needed(game: Game, move: Move, rng: random.Random, trace: list[tuple[str, object]] | None) -> None:
    """Shuffle Crescendo's empty Reserve afresh with `rng` when `move` needs it (an engine in table mode)."""
    if not isinstance(game, CrescendoGame) or not game.needs(move).reshuffle:
        return
    taken = [game.faces.need(h) for h in game.reshuffle_cards()]  # bottom card first
    reserve = rng.sample(taken, len(taken))  # top first
    if trace is not None:
        trace.append(("reshuffle", (tuple(taken), tuple(reserve))))
    game.reshuffle([crescendo_back(c) for c in reserve], dict(enumerate(reserve)))


def replay(game: Game, trace: Sequence[tuple[str, object]]) -> None:
    """Feed a recorded trace to a fresh engine (the same inputs give the same game)."""
    for kind, value in trace:
        if kind == "deck":
            game.queue_deck(value)  # type: ignore[arg-type]
        elif kind == "move":
            game.apply(value)  # type: ignore[arg-type]
        elif kind == "reshuffle":
            assert isinstance(game, CrescendoGame) and isinstance(value, tuple)
            reserve: tuple[CrescendoCard, ...] = value[1]
            game.reshuffle([crescendo_back(c) for c in reserve], dict(enumerate(reserve)))
        else:
            game.tick(value, wait=True)  # type: ignore[arg-type]
