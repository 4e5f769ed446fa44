"""What the table asks of a game, through one interface: the table never looks at which game it runs.

The differences the table meets are few: how close NUMBER claims tie (Crescendo; Crisp has no
ties), whether a deal carries public backs, how tied claims are applied, and Crescendo's
reshuffle of its discard pile into a fresh deck. `rules_for` picks the adapter for an engine.
"""

from __future__ import annotations

from collections.abc import Sequence

from ..crypto.deck import EncryptedDeck
from ..errors import LocalError
from ..games.base import Handle, Move
from ..games.crescendo import CrescendoGame
from .config import Game, parse_back


class Rules:
    """The table's view of a game engine (Crisp's: no ties, no backs, no reshuffle)."""

    def __init__(self, game: Game) -> None:
        self.game = game

    @property
    def tie_window(self) -> float:
        """Seconds within which out-of-turn claims of different players tie (0: claims never tie)."""
        return 0.0

    def ties(self, move: Move) -> bool:
        """True when `move` is a claim that may tie with others (the orderer waits `tie_window` for them)."""
        return False

    def deal(self, time: float, deck: EncryptedDeck) -> None:
        """Deal the round from its fully shuffled deck (faces still hidden) at `time`."""
        self.game.deal({}, time)

    def winner(self, moves: Sequence[Move]) -> Move:
        """The move of a tie entry that the rules apply (a single move entry: that move)."""
        if len(moves) != 1:
            raise LocalError("this game has no ties")
        return moves[0]

    def apply(self, moves: Sequence[Move], time: float) -> None:
        """Apply one move, or tied claims, at `time`; IllegalMove when the rules refuse it."""
        self.game.apply(self.winner(moves), now=time)

    def next_revealed(self) -> list[Handle]:
        """The cards likely revealed next (the pile's top, the card drawn): worth making our shares of ahead."""
        return self.game.next_revealed()

    def reshuffle_deck(self) -> tuple[tuple[str | int, ...], tuple[str, ...]]:
        """The faces and public tags of the cards a reshuffle due takes (never due in this game)."""
        raise LocalError("this game never reshuffles")

    def reshuffled(self, deck: EncryptedDeck) -> list[Handle]:
        """The engine's handles of a freshly shuffled deck, position by position."""
        raise LocalError("this game never reshuffles")


class CrescendoRules(Rules):
    """Crescendo: NUMBER claims tie, cards have public backs, and an empty Reserve is reshuffled."""

    game: CrescendoGame

    def __init__(self, game: CrescendoGame) -> None:
        super().__init__(game)

    @property
    def tie_window(self) -> float:
        """The NUMBER tie window in seconds."""
        return self.game.options.number_tie_ms / 1000

    def ties(self, move: Move) -> bool:
        """NUMBER claims may tie."""
        return move.action == "number"

    def deal(self, time: float, deck: EncryptedDeck) -> None:
        """Deal with the backs the deck's public tags show."""
        tags = deck.tags
        assert tags is not None
        self.game.deal({}, time, {k: parse_back(tag) for k, tag in enumerate(tags)})

    def winner(self, moves: Sequence[Move]) -> Move:
        """The claim tie order resolves."""
        if len(moves) == 1:
            return moves[0]
        return self.game.tie_winner(self._claims(moves))

    def apply(self, moves: Sequence[Move], time: float) -> None:
        """Apply one move, or resolve tied claims."""
        if len(moves) == 1:
            self.game.apply(moves[0], now=time)
        else:
            self.game.number_tie(self._claims(moves), now=time)

    def reshuffle_deck(self) -> tuple[tuple[str | int, ...], tuple[str, ...]]:
        """The discard pile but its top, face up: its faces and backs."""
        handles = self.game.reshuffle_cards()
        return (tuple(self.game.faces.need(h) for h in handles), tuple(str(self.game.backs[h]) for h in handles))

    def reshuffled(self, deck: EncryptedDeck) -> list[Handle]:
        """The fresh Reserve's handles, from the shuffled deck's public backs."""
        assert deck.tags is not None
        return self.game.reshuffle([parse_back(t) for t in deck.tags])

    @staticmethod
    def _claims(moves: Sequence[Move]) -> list[tuple[str, int]]:
        return [(m.player, m.pos if m.pos is not None else -1) for m in moves]


def rules_for(game: Game) -> Rules:
    """The adapter for `game`'s engine."""
    return CrescendoRules(game) if isinstance(game, CrescendoGame) else Rules(game)
