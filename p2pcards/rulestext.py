"""The rules of Crisp and Crescendo as the players play them here, as plain text at most 78 columns wide.

`rules_text(game, options, width)` fills in the numbers of the table's options (the crisp window, the
NUMBER window, the time per draw, ...), so what a player reads is the game at their table, and fills
its paragraphs and lists to a narrower screen's width.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from .cards import ACTIONS, CRESCENDO_DECK, crescendo_back, is_joker
from .errors import InputError
from .games.crescendo import CrescendoOptions, cards_per_player
from .games.crisp import CrispOptions

WIDTH = 78


@dataclass(frozen=True, slots=True)
class Pre:
    """Lines already laid out (a table), printed as they are, indented; `narrower`: the same table laid out in
    fewer columns, widest first, for a width the lines do not fit (the last is taken when none fits)."""

    lines: tuple[str, ...]
    narrower: tuple[tuple[str, ...], ...] = ()

    def fitting(self, width: int) -> tuple[str, ...]:
        """The widest layout whose lines, indented, fit `width` columns."""
        layouts = (self.lines, *self.narrower)
        return next((ls for ls in layouts if max(map(len, ls), default=0) + PRE_INDENT <= width), layouts[-1])


PRE_INDENT = 4


# A section is a heading and its blocks; a block is a paragraph (str), a list of bullets, or a Pre.
Block = str | Sequence[str] | Pre
Section = tuple[str, Sequence[Block]]


def rules_text(game: str, options: Mapping[str, object] | None = None, width: int = WIDTH) -> str:
    """The rules of `game` ("crisp" or "crescendo") with these table options, its paragraphs and lists filled to
    `width` columns (at most WIDTH: a screen narrower than the text reads whole lines, not ragged halves of them);
    InputError on a bad game or option."""
    width = max(20, min(WIDTH, width))
    if game == "crisp":
        return _render("CRISP", _crisp(CrispOptions.from_dict(dict(options or {}))), width)
    if game == "crescendo":
        return _render("CRESCENDO", _crescendo(CrescendoOptions.from_dict(dict(options or {}))), width)
    raise InputError(f"unknown game {game!r} (crisp or crescendo)")


def _s(seconds: float) -> str:
    """Seconds as a person writes them: 3, 2.5, 0.25."""
    return f"{seconds:g}"


def _plural(x: float, word: str) -> str:
    return f"{_s(x)} {word}" if x == 1 else f"{_s(x)} {word}s"


# ---------------------------------------------------------------------- Crisp


def _crisp(o: CrispOptions) -> list[Section]:
    window, start = _plural(o.crisp_window_s, "second"), _plural(o.next_start_s, "second")
    when = f"you may call from the moment your turn ends until {window} later. "
    if o.crisp_window_s == 0:
        when = "at this table you must call at once, before any time passes. "
        overlap = f"The next player may begin {start} after your turn ends."
    elif o.crisp_window_s < o.next_start_s:
        overlap = f"Your window ends before the next player may begin, {start} after your turn ends."
    elif o.crisp_window_s == o.next_start_s:
        overlap = ("The next player may begin just as your window ends; a call at that same moment, after "
                   "they have begun, makes their turn the first of the final turns.")
    else:
        overlap = (f"The next player may begin {start} after your turn ends, and your window stays "
                   f"open for the whole {window} even if they have begun, or already finished, their "
                   "turn by then. A late call makes the turns that ended since yours the first of "
                   "the final turns, in order, and the turn under way (or due) the next one.")
    sections: list[Section] = [
        ("The game", [
            "A memory and bluffing game for 2 to 8 players with one 52-card deck (no jokers). "
            "Everyone holds three cards face down; over the rounds, the lowest total wins.",
        ]),
        ("Card values", [
            ["Ace: 1.", "2 to 9: their face value.", "10, Jack, Queen, King: 10."],
            "A Jack, Queen or King is worth 10 only once it is one of your three cards: dealt "
            "to you" + (", received in a Queen swap, or taken from the discard pile" if o.discard_draw
                        else " or received in a Queen swap")
            + ". Drawn from the draw pile it is a special card (below) and can never be swapped "
            "into your hand.",
        ]),
        ("The deal", [
            "The table's host (its first seat) deals the first round, and the dealer moves one seat "
            "to the left each round. Starting with the player to the "
            "dealer's left, everyone is dealt three cards face down, one at a time, three times "
            "round: your left, middle and right card. At the deal you look once at your left and "
            "right cards; your middle card stays unknown. The rest of the deck is the draw pile; "
            "the discard pile starts empty. The player to the dealer's left plays first, and play "
            "goes to the left.",
            "It is a memory game: a card you look at is shown to you for a few seconds only, "
            "unless you turn on a memory aid (the table tells everyone who uses one).",
        ]),
        ("Your turn", [
            "Draw the top card of the draw pile and look at it"
            + (", or take the top card of the discard pile (see below)" if o.discard_draw else "")
            + ". Then do one of these:",
            ["Swap: put the drawn card in place of one of your three cards; the card you take "
             "out goes face up onto the discard pile.",
             "Discard: put the drawn card face up onto the discard pile (never a King).",
             "Play a special card you drew: a Jack, Queen or King, below. It then goes face up "
             "onto the discard pile."],
            "If the draw pile is empty when you must draw, the discard pile is turned over as it "
            "lies, without shuffling, to become the new draw pile (everyone has seen those cards), "
            "and the discard pile starts again empty.",
        ]),
        ("Special cards", [
            ["Jack: look once at your own middle card. You may also discard it unused.",
             "Queen: swap any one of your cards with any one card of another player, blind. "
             "Whoever gets a card in a left or right slot may look at it once; a card landing "
             "in a middle slot is not looked at, though whoever saw it before still knows it. You may also "
             "discard it unused.",
             "King: must be played. You get two extra draws, each played like a normal draw "
             "(swap, discard or special card); a King drawn on an extra draw adds two more. "
             "Your turn ends when your last draw is played."],
        ]),
        ("Calling crisp", [
            "If you believe your total is the lowest at the table, call \"crisp\" right after "
            "your turn: " + when + overlap,
            ["Every other player then has exactly one final turn, in order from the caller's "
             "left. The caller may still be the target of a Queen.",
             "Only one player may call per round, and nobody may call during the final turns.",
             "Your window closes when you begin your own next turn, or when that turn times out.",
             "After the last final turn all cards are revealed and the round is scored."],
        ]),
        ("Scoring", [
            "Each player scores the total of their three cards. The caller takes 5 off when "
            "their total is strictly the lowest at the table, and adds 5 otherwise (a tie is not "
            "the lowest). Round scores add up to running totals.",
            f"The game ends after the round in which someone's running total reaches {o.limit} "
            "or more. The lowest running total wins; players who tie for it share the win.",
        ]),
    ]
    if o.draw_seconds is None:
        timing: list[Block] = ["There is no time limit per draw at this table."]
    else:
        timing = [
            f"Each draw has {_plural(o.draw_seconds, 'second')}, a King's extra draws included, "
            "counted from the moment the draw is due: when your turn opens (a round's first turn at the "
            f"deal, any other {start} after the turn before it ended), or when your previous "
            "draw of the turn was played. When the time runs out you forfeit the rest of your turn:",
            ["if you have not drawn yet, the top card of the draw pile is drawn and discarded "
             "for you;",
             "a drawn card not yet played is discarded unused (a Jack, Queen or King has no "
             "effect, and a King gives no extra draws);",
             "extra draws still owed are lost;",
             "the turn ends without a crisp call: it opens no crisp window."],
        ]
    sections.append(("Time per draw", timing))
    if o.discard_draw:
        sections.append(("Drawing from the discard pile", [
            "At this table each draw, a King's extra draws included, may take the top card of "
            "the discard pile instead of the draw pile. That card must be swapped into your "
            "hand: it cannot go straight back. A Jack, Queen or King taken this way has no "
            "effect and counts as a plain 10. When the discard pile is empty you draw from the "
            "draw pile.",
        ]))
    else:
        sections.append(("Drawing from the discard pile", [
            "Not at this table: every draw comes from the draw pile.",
        ]))
    sections.append(_leaving("The game then goes on to its limit as before."))
    sections.append(("Table options", [[
        f"limit = {o.limit}: the game ends at this many points (usual choices 50, 100, 150).",
        f"discard_draw = {'yes' if o.discard_draw else 'no'}: whether a draw may take the top of the discard pile.",
        f"draw_seconds = {'none' if o.draw_seconds is None else _s(o.draw_seconds)}: "
        "seconds per draw (usual choices 30, 45, 60 or none).",
        f"crisp_window_s = {_s(o.crisp_window_s)}: seconds after a turn to call crisp.",
        f"next_start_s = {_s(o.next_start_s)}: seconds after a turn before the next may begin.",
    ]]))
    return sections


# ---------------------------------------------------------------------- Crescendo


def _crescendo(o: CrescendoOptions) -> list[Section]:
    window = _plural(o.number_window_s, "second")
    if o.number_window_s == 0:
        timing = ("At this table the window has no time of its own: the next player may begin at "
                  "once, and the window closes as soon as they do.")
    else:
        timing = (f"The window lasts {window}. The next player may begin no earlier than its end "
                  "(exactly at the end is allowed). It closes when the next player begins or once "
                  "its time is past, whichever comes first: a claim exactly at the end is in time "
                  "unless the next player has already begun. A claim does not shorten the wait.")
    return [
        ("The game", [
            "Three rounds for 2 to 6 players. The deck has 104 cards: the numbers 1 to 100 and "
            "four Jokers. Try to get the cards of your row, which you cannot see, in ascending "
            "order from left to right. Over the three rounds, the most points wins.",
        ]),
        ("Card backs", [
            "Every card's back is public: it shows a range of ten numbers and a special action, "
            "and everyone sees the backs of every row and of the Reserve's top card. A number's "
            "back shows its own range; its action is Peek, Swap or Lock as in this table. The "
            "four Jokers wear backs that look like numbers' backs (marked *):",
            _backs_table(),
        ]),
        ("Setup", [
            "The table's host (its first seat) deals the first round, and the dealer moves one seat "
            "to the left each round. Starting with the player to the "
            f"dealer's left, cards are dealt face down one at a time: {cards_per_player(2)} each, "
            f"{cards_per_player(5)} with five or six players. Each card goes to the right end of "
            "its owner's row, and nobody may look at their own cards. The next card is turned "
            "face up to start the common discard pile; the rest is the Reserve.",
            "Before the first turn, in turn order, each player chooses one: look at one of their "
            "own cards; swap the places of two of their own cards without looking; or neither. "
            "The player to the dealer's left then takes the first turn, and play goes to the left.",
            "It is a memory game: a card you look at is shown to you for a few seconds only, "
            "unless you turn on a memory aid (the table tells everyone who uses one). That goes "
            "for the card you look at before the first turn, a Peek, a card you draw and keep, "
            "and a card a Swap gives you; a locked card stays face up for everyone.",
        ]),
        ("Your turn: one of A, B or C", [
            ["A. Draw: take the top card of the Reserve (and look at it) or the top card of "
             "the common discard pile. Either put it in place of one of your cards (face down; "
             "the card you take out goes face up onto the common discard pile), or put it face "
             "up onto the common discard pile.",
             "B. Special action: the one shown on the back of the Reserve's top card, and no "
             "other. Afterwards that card goes face up onto the common discard pile.",
             "C. Call CRESCENDO, when you think your row is in order: allowed from the first "
             "player's fourth turn of the round (turn number 3 x players + 1) on. It is your "
             "whole turn."],
        ]),
        ("Special actions", [
            ["Peek: look at one face-down card, yours or another player's.",
             "Swap: exchange one of your face-down cards with a face-down card of another "
             "player, without looking. The other player sees the card they receive; you see "
             "nothing.",
             "Lock: turn one of your face-down cards face up for good. Nobody can Swap it away, you "
             "included; you may still replace it with a drawn card, which comes in face down "
             "and unlocked."],
        ]),
        ("After a CRESCENDO call", [
            "Every other player has one final turn, in order from the caller's left: a draw "
            "(action A) or a pass, which earns 1 point. No special actions and no second call. "
            "A final turn that puts a card on the common discard pile opens a NUMBER window as "
            "usual; the call itself opens none. The round ends when the last final turn and its "
            "window are over.",
        ]),
        ("Calling NUMBER", [
            "When a turn ends by putting a card face up on the common discard pile, a NUMBER "
            "window opens. Anyone, the player who just played included, may call NUMBER with "
            "one card of their own row that they think is within 2 of the top discard. That "
            "card is turned face up:",
            ["within 2: it leaves your row for your own pile (1 point each at the end);",
             "further off: it goes back face down in its place, and the top card of the "
             "Reserve goes, unseen by anyone, into your row just to its right as a penalty;",
             "a claim against a Joker on top of the discard pile, or with a Joker from your "
             "row, is always wrong. A locked card used in a wrong claim stays locked."],
            "Only one claim per window is resolved: the first. Claims within "
            f"{_s(o.number_tie_ms)} ms of each other count as simultaneous, and the player whose "
            "turn just ended comes first, then the others in turn order to their left. The "
            "other claims are withdrawn without showing their cards; a claim naming a card its "
            "player does not have is dropped.",
            timing + " A CRESCENDO call or a pass opens no window: the next player begins at once.",
        ]),
        ("Empty Reserve", [
            "When a card is needed from the empty Reserve, the common discard pile except its top "
            "card is shuffled into a new Reserve. If there is nothing to shuffle, there are no "
            "Reserve draws, no special action, and a wrong NUMBER call brings no penalty card.",
        ]),
        ("Scoring", [
            "At the end of a round every card is revealed, the caller's row first, then the "
            "others in turn order, each from left to right; Jokers are removed as they appear. "
            "Going from left to right, a card is incorrect when it is lower than the card just "
            "before it (correct or not).",
            ["The caller: +6 with no incorrect card; otherwise -3 and -1 per incorrect card.",
             "Everyone else: +3 with no incorrect card; otherwise -1 per incorrect card.",
             "+1 for passing on the final turn; +1 for each card in your own pile."],
            "After three rounds the most points wins. A tie goes to the most points scored by "
            "CRESCENDO calls (the +6 and the minus results together), then to the most points in "
            "the last round; if it still stands, the tied players share the win.",
        ]),
        _leaving("The game still ends after the third round."),
        ("Table options", [[
            f"number_window_s = {_s(o.number_window_s)}: seconds the NUMBER window lasts.",
            f"number_tie_ms = {_s(o.number_tie_ms)}: claims this many milliseconds apart are simultaneous.",
        ]]),
    ]


def _leaving(after: str) -> Section:
    """What happens to the game when a player leaves it (protocol.md §14.9), the same in both games but for `after`."""
    return ("If a player leaves", [
        "A player who leaves the table, or whose connection stays lost until the countdown the others see runs "
        "out, is voted out, and the others play on without them. The round in which they are voted out does not "
        "count for anyone, even if it has just ended: it is dealt again to those who remain, by the same dealer "
        "or, when the dealer is the one who left, by "
        "the next player to the dealer's left, and the running totals are those from before it. " + after
        + " With only one player left, the game ends there.",
    ])


def _backs_table() -> Pre:
    """One line per range: the cards whose back shows each action (Jokers marked *)."""
    by: dict[tuple[int, int], dict[str, list[str]]] = {}
    for card in CRESCENDO_DECK:
        back = crescendo_back(card)
        cell = by.setdefault((back.low, back.high), {a: [] for a in ACTIONS})
        cell[back.action].append(f"{card}*" if is_joker(card) else str(card))
    columns = ("peek", "swap", "lock")
    ranges = [(f"{low}-{high}", cell) for (low, high), cell in sorted(by.items())]

    def table(w: int) -> tuple[str, ...]:  # one line per range, each action's cards in a column `w` wide
        lines = [f"{'back':<8}" + "".join(f"{c.capitalize():<{w}}" for c in columns).rstrip()]
        lines += [f"{span:<8}" + "".join(f"{' '.join(cell[c]):<{w}}" for c in columns).rstrip() for span, cell in ranges]
        return tuple(lines)

    # Narrower: the columns as wide as their longest cell, then one line per action under each range.
    tight = 2 + max(len(" ".join(cell[c])) for _, cell in ranges for c in columns)
    stacked = ("back    action: cards",) + tuple(
        f"{span if i == 0 else '':<8}{c.capitalize()}: {' '.join(cell[c])}" for span, cell in ranges
        for i, c in enumerate(columns))
    return Pre(table(22), (table(tight), stacked))


# ---------------------------------------------------------------------- layout


def _render(title: str, sections: Sequence[Section], width: int = WIDTH) -> str:
    out = [title, "=" * len(title)]
    for heading, blocks in sections:
        out += ["", heading, "-" * len(heading)]
        for k, block in enumerate(blocks):
            if k and isinstance(block, str):
                out.append("")  # paragraphs apart; a list or table stays with the paragraph it follows
            if isinstance(block, str):
                out += textwrap.wrap(block, width)
            elif isinstance(block, Pre):
                out += [" " * PRE_INDENT + line for line in block.fitting(width)]
            else:
                for item in block:
                    out += textwrap.wrap(item, width, initial_indent="  - ", subsequent_indent="    ")
    return "\n".join(out) + "\n"
