"""The rules half of the round audit: replay a round with every face known and name the first illegal move."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from ..errors import IllegalMove
from .base import Handle, Move, RoundInput
from .crescendo import CrescendoGame
from .crisp import CrispGame

Game = CrispGame | CrescendoGame


@dataclass(frozen=True, slots=True)
class RulesFault:
    """The first input of a round that the rules did not allow, once every face is known."""

    index: int
    player: str
    move: Move | None
    reason: str

    def __str__(self) -> str:
        return f"input {self.index} ({self.move or 'claims'}): {self.reason}"


def apply_input(game: Game, item: RoundInput) -> None:
    """Feed one recorded input to an engine; IllegalMove when the rules refuse it."""
    if item.kind == "tick":
        game.tick(item.time, item.wait)
    elif item.kind == "reshuffle":
        assert isinstance(game, CrescendoGame)
        game.reshuffle(item.backs)
    elif item.kind == "tie":
        assert isinstance(game, CrescendoGame)
        game.number_tie(item.claims, now=item.time)
    else:
        assert item.move is not None
        game.apply(item.move, now=item.time)


def check_round(game: Game, faces: Mapping[Handle, object], inputs: Sequence[RoundInput] | None = None,
                round_no: int | None = None, start: float | None = None) -> RulesFault | None:
    """Replay round `round_no` of `game` (default: its current round) on a referee engine that knows `faces`."""
    round_no = game.round_no if round_no is None else round_no
    inputs = game.inputs if inputs is None else inputs
    start = game.round_start if start is None else start
    referee: Game
    if isinstance(game, CrispGame):
        referee = CrispGame(game.players, game.options, game.first_dealer)
    else:
        # Fresh cards of a reshuffle come as recorded inputs; `faces` holds their handles too.
        referee = CrescendoGame(game.players, game.options, game.first_dealer, auto_reshuffle=False)
    referee.round_no = round_no - 1
    referee.clock = start
    referee.deal(faces, start)  # type: ignore[arg-type]
    for i, item in enumerate(inputs):
        try:
            apply_input(referee, item)
        except IllegalMove as exc:
            player = item.move.player if item.move else (item.claims[0][0] if item.claims else "")
            return RulesFault(i, player, item.move, str(exc))
    return None
