"""Card names, values and decks for Crisp (52 cards) and Crescendo (104 cards with public backs)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from .errors import InputError

# ---------------------------------------------------------------- Crisp

CRISP_RANKS: Final = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
CRISP_SUITS: Final = ("S", "H", "D", "C")
CRISP_DECK: Final[tuple[str, ...]] = tuple(r + s for s in CRISP_SUITS for r in CRISP_RANKS)
_CRISP_SET: Final = frozenset(CRISP_DECK)


def crisp_rank(card: str) -> str:
    """The rank part of a Crisp card name (`10H` -> `10`)."""
    return card[:-1]


def crisp_value(card: str) -> int:
    """Points of a Crisp card in a hand: Ace 1, 2-9 face value, 10/J/Q/K 10."""
    rank = crisp_rank(card)
    if rank == "A":
        return 1
    if rank in ("J", "Q", "K"):
        return 10
    return int(rank)


def is_crisp_card(name: object) -> bool:
    """True when `name` is one of the 52 Crisp card names."""
    return isinstance(name, str) and name in _CRISP_SET


def parse_crisp_card(name: object) -> str:
    """Validate a Crisp card name; InputError otherwise."""
    if not is_crisp_card(name):
        raise InputError(f"not a Crisp card: {name!r}")
    assert isinstance(name, str)
    return name


# ---------------------------------------------------------------- Crescendo

CrescendoCard = int | str  # 1..100, or "J1".."J4"

JOKERS: Final = ("J1", "J2", "J3", "J4")
# The rulebook's table misprints 27 as 37; the deck has one 27 and one 37.
CRESCENDO_DECK: Final[tuple[CrescendoCard, ...]] = tuple(range(1, 101)) + JOKERS
_CRESCENDO_SET: Final = frozenset(CRESCENDO_DECK)

ACTIONS: Final = ("lock", "peek", "swap")  # indexed by number % 3


@dataclass(frozen=True, slots=True)
class Back:
    """The public back of a Crescendo card: a ten-range and a special action."""

    low: int
    high: int
    action: str

    def __str__(self) -> str:
        return f"{self.low}-{self.high} {self.action}"


_JOKER_BACKS: Final = {
    "J1": Back(11, 20, "peek"),
    "J2": Back(31, 40, "swap"),
    "J3": Back(61, 70, "lock"),
    "J4": Back(81, 90, "peek"),
}


def is_joker(card: CrescendoCard) -> bool:
    """True for the four Jokers."""
    return isinstance(card, str)


def crescendo_back(card: CrescendoCard) -> Back:
    """The back every player sees on `card` (docs/rules.md, "Card backs": range by tens, action by number mod 3)."""
    if isinstance(card, str):
        return _JOKER_BACKS[card]
    low = (card - 1) // 10 * 10 + 1
    return Back(low, low + 9, ACTIONS[card % 3])


def is_crescendo_card(card: object) -> bool:
    """True when `card` is one of the 104 Crescendo cards (bools are not numbers here)."""
    if isinstance(card, bool):
        return False
    return isinstance(card, (int, str)) and card in _CRESCENDO_SET


def parse_crescendo_card(card: object) -> CrescendoCard:
    """Validate a Crescendo card; InputError otherwise."""
    if not is_crescendo_card(card):
        raise InputError(f"not a Crescendo card: {card!r}")
    assert isinstance(card, (int, str))
    return card


def card_text(card: CrescendoCard | str) -> str:
    """Compact text form of any card, for logs."""
    return str(card)
