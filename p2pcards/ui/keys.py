"""Keys to moves, as data: which key offers which moves, the fields a move is chosen by, and why a key is shut.

What is legal always comes from the engine's own list in the view; this module only names
keys and explains, in plain words, why a key that offers no legal move now does nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from ..games.base import Move
from ..games.crescendo import CrescendoView
from ..games.crisp import CrispView
from .words import card_word, slot_name

View = CrispView | CrescendoView


def action_id(move: Move) -> str:
    """A move's action with its source (`draw:pile`), the unit keys are bound to."""
    return f"{move.action}:{move.source}" if move.source else move.action


# key -> the action ids it offers (at most one of them is ever legal at a time).
KEYS: dict[str, dict[str, tuple[str, ...]]] = {
    "crisp": {
        "d": ("draw:pile",), "t": ("draw:discard",), "x": ("discard",), "j": ("jack",),
        "q": ("queen",), "k": ("king",), "c": ("crisp",),
    },
    "crescendo": {
        "d": ("draw:reserve",), "t": ("draw:discard",), "x": ("discard",), "l": ("setup_look", "lock"),
        "s": ("setup_swap", "exchange"), "p": ("setup_pass", "pass", "peek"), "c": ("crescendo",),
        "n": ("number",),
    },
}
# Actions whose two positions make a pair, chosen in either order.
UNORDERED = ("setup_swap",)
# Digits choose a position at once for these actions (swap the drawn card in, or claim NUMBER).
DIGIT_ACTIONS = ("replace", "number")

LABELS: dict[str, str] = {
    "draw:pile": "draw", "draw:reserve": "draw", "draw:discard": "take {top}", "discard": "discard it",
    "replace": "swap it in", "jack": "Jack: peek at middle", "queen": "Queen: blind swap",
    "king": "King: 2 more draws", "crisp": "CALL CRISP", "setup_look": "look at a card",
    "setup_swap": "swap two cards unseen", "setup_pass": "keep the row", "peek": "PEEK at a card",
    "exchange": "SWAP with a player", "lock": "LOCK a card", "crescendo": "CALL CRESCENDO",
    "pass": "pass (+1)", "number": "NUMBER",
}
# The fields a move is chosen by, in the order the player is asked.
FIELDS: dict[str, tuple[str, ...]] = {
    "queen": ("pos", "target", "target_pos"), "exchange": ("pos", "target", "target_pos"),
    "peek": ("target", "pos"), "lock": ("pos",), "setup_look": ("pos",), "setup_swap": ("pos", "pos2"),
    "replace": ("pos",), "number": ("pos",),
}


def key_of(game: str, aid: str) -> str:
    """The key that offers action id `aid`."""
    if aid in DIGIT_ACTIONS:
        return "1-9"
    for key, aids in KEYS[game].items():
        if aid in aids:
            return key
    return "?"


@dataclass
class Chooser:
    """A move being chosen field by field among the legal moves of one action."""

    action: str
    candidates: list[Move]
    chosen: dict[str, object] = field(default_factory=dict)
    typed: str = ""

    def __post_init__(self) -> None:
        # Two cards swapped unseen are a pair, either first: the engine lists each pair once (first < second), but a
        # player who picks their 4th card then asks for their 1st must not be told "5 6 7 8" only.
        if self.action in UNORDERED:
            self.candidates = self.candidates + [replace(m, pos=m.pos2, pos2=m.pos) for m in self.candidates]

    def remaining(self) -> list[Move]:
        """The candidates that agree with every field chosen so far."""
        return [m for m in self.candidates if all(getattr(m, f) == v for f, v in self.chosen.items())]

    def next_field(self) -> str | None:
        """The next field to ask for (fields with one value left are taken at once), or None when done."""
        for f in FIELDS.get(self.action, ()):
            if f in self.chosen:
                continue
            values = {getattr(m, f) for m in self.remaining()}
            if len(values) == 1:
                self.chosen[f] = values.pop()
                continue
            return f
        return None

    def options(self, f: str) -> list[object]:
        """The values field `f` may still take, in order: positions by number (10 after 9, not after 1), names by
        name."""
        return sorted({getattr(m, f) for m in self.remaining()},
                      key=lambda v: (0, v, "") if isinstance(v, int) else (1, 0, str(v)))

    def move(self) -> Move | None:
        """The move once every field is chosen."""
        if self.next_field() is not None:
            return None
        left = self.remaining()
        if not left:
            return None
        return canonical(left[0])


def canonical(move: Move) -> Move:
    """A move as the engine lists it: a pair of positions chosen in either order, first the lower."""
    if move.action in UNORDERED and move.pos is not None and move.pos2 is not None and move.pos > move.pos2:
        return replace(move, pos=move.pos2, pos2=move.pos)
    return move


def label_number(f: str, value: object, players: Sequence[str]) -> int:
    """The number a player types for a field's value: seats and positions count from 1."""
    if f == "target":
        assert isinstance(value, str)
        return players.index(value) + 1
    assert isinstance(value, int)
    return value + 1


def prompt_parts(ch: Chooser, f: str, view: View, game: str) -> tuple[str, list[str]]:
    """The question the chooser asks for field `f`, and each answer it accepts ("2 Bo"), apart: a narrow screen
    breaks the line between answers, never inside one (a "3" ended a line, its "Cy" began the next)."""
    me = view.players[view.me]
    values = ch.options(f)
    if f == "target":
        values.sort(key=lambda v: label_number(f, v, view.players))
        return (f"{LABELS[ch.action]}: whose card?",
                [f"{label_number(f, v, view.players)} {'you' if v == me else v}" for v in values])
    if f in ("pos", "pos2") and ch.action != "peek":
        whose = "your"
    else:
        t = ch.chosen.get("target")
        whose = "your" if t == me else f"{t}'s"
    positions = [v for v in values if isinstance(v, int)]
    other = " other" if f == "pos2" else ""
    return (f"{LABELS[ch.action]}: which{other} of {whose} cards?",
            [f"{v + 1} {slot_name(game, v)}" if game == "crisp" else str(v + 1) for v in positions])


def why_not(view: View, aids: Sequence[str], busy: bool, now: float) -> str:
    """Why a key's moves are not open now, in plain words (the engine's legal list decided that)."""
    aid = aids[0]
    if view.over:
        return "The game is over."
    if busy:
        return "Wait a moment: your last move is still on its way round the table."
    if view.turn is None:
        return "No round is being played right now."
    if isinstance(view, CrispView):
        return _why_not_crisp(view, aid, now)
    return _why_not_crescendo(view, aids)


def _why_not_crisp(view: CrispView, aid: str, now: float) -> str:
    players = view.players
    if aid == "crisp":
        if view.caller is not None:
            return f"{players[view.caller]} has already called crisp this round."
        return f"You can call crisp only in the {view.options.crisp_window_s:g} s right after your own turn."
    if view.turn != view.me:
        assert view.turn is not None
        return f"It is {players[view.turn]}'s turn."
    if view.phase == "draw_due":
        if aid.startswith("draw"):
            if aid == "draw:discard":
                if not view.options.discard_draw:
                    return "This table does not allow drawing from the discard pile."
                if not view.discard:
                    return "The discard pile is empty: draw from the draw pile."
            wait = view.opens_at - now
            if wait > 0:
                return f"Your turn opens in {wait:.1f} s (the last player may still call crisp)."
            return "Your turn is opening: try again in a moment."
        return "Draw first: press d."
    if view.phase == "drawn_discard":
        return "A card taken from the discard pile must be swapped into your hand: press 1, 2 or 3."
    drawn = card_word(view.drawn, "crisp")
    if aid.startswith("draw"):  # d pressed twice: the card drawn waits to be played
        return f"You drew {drawn} already: play it first (the keys below)."
    if aid == "replace":
        return f"A drawn Jack, Queen or King can never be swapped into your hand ({drawn})."
    if aid == "discard":
        return "A drawn King must be used: press k."
    want = {"jack": "Jack", "queen": "Queen", "king": "King"}.get(aid)
    if want is not None:
        return f"You drew {drawn}, not a {want}."
    return "That is not open now."


def _why_not_crescendo(view: CrescendoView, aids: Sequence[str]) -> str:
    players = view.players
    aid = aids[0]
    if aid == "number":
        if view.number_shut is None:
            return "Your row has no card left to claim NUMBER with."
        return view.number_shut[:1].upper() + view.number_shut[1:] + "."
    if view.turn != view.me:
        assert view.turn is not None
        return f"It is {players[view.turn]}'s {'setup choice' if view.round and view.phase == 'setup' else 'turn'}."
    if view.phase == "setup":
        return "First your setup choice: l look at a card, s swap two unseen, p keep the row."
    if view.window_open and view.phase in ("turn", "final"):
        return "Wait: the NUMBER window is open; your turn begins when it closes."
    if view.phase == "drawn":
        return "Swap the drawn card into your row (its position) or discard it (x)."
    if aid in ("replace", "discard"):  # a digit or x before the draw
        take = " (or t to take the top discard)" if any(m.action == "draw" and m.source == "discard"
                                                          for m in view.legal) else ""
        return f"Draw first: press d{take}; then a digit swaps the drawn card in, x discards it."
    if view.phase == "final":
        return "On a final turn you may only draw or pass."
    if "crescendo" in aids:
        earliest = 3 * len(players) + 1
        return f"CRESCENDO is open from turn {earliest} of the round (this is turn {view.turn_number + 1})."
    specials = {"peek", "exchange", "lock"}
    if specials & set(aids):
        top = view.reserve_top
        if top is None:
            return "The Reserve is empty: no special action is open."
        key = {"peek": "p", "swap": "s", "lock": "l"}[top.action]
        return f"The Reserve's top card shows {top.action.upper()}: that is the special action open now (press {key})."
    return "That is not open now."
