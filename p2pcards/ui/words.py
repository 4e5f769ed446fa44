"""Plain words for what happened at the table: cards, events and the table's notes as a person reads them."""

from __future__ import annotations

import re
from collections.abc import Sequence

from ..cards import Back
from ..games.base import CRISP_SLOTS
from ..games.crescendo import NUMBER_SHUT, NUMBER_TAKEN, out_of_order
from ..games.crisp import CALL_MISSED
from ..table.outputs import FAULT_BEFORE_RESTART, LEFT_BEFORE_RESTART, WE_LEFT, Cut
from ..table.peer import OUR_VOTE, Note

SUITS = {"S": "♠", "H": "♥", "D": "♦", "C": "♣"}
VERBS = {"votes": "vote", "is": "are", "was": "were", "has": "have"}  # a note's verb after "You"
TABLE_ID = re.compile(r"\b[0-9a-f]{64}\b")  # a table's id in a note: its first 8 digits are enough to tell it
# The network's vote time in a missing note: the log keeps it frozen, while the banner counts the same time down.
VOTE_IN = re.compile(r"; it is voted gone in [\d.]+ s unless it is back$")
RED_SUITS = frozenset("HD")
# Why the network layer says a link is gone, in a player's words ("Bob is missing: end of stream.").
LINK_WORDS = {"end of stream": "the connection closed", "no heartbeat": "nothing heard for a while",
              "no link since we came back": "no link since you came back"}
LINK_WHY = re.compile("|".join(map(re.escape, LINK_WORDS)))
# Cut off after coming back from the journal, with no seat back since (protocol.md §14.9), in a player's words.
AWAY_WORDS = ("No other seat was back since you came back: they most likely went on without you while you were away, "
              "or your network is lost.")


def yours(detail: str) -> str:
    """The table's words about our own seat ("voted us gone", "our network") as its player reads them ("you")."""
    return re.sub(r"\b(we|us)\b", "you", re.sub(r"\bour\b", "your", detail))


def card_word(card: object, game: str) -> str:
    """A card as printed on screen: 7♥, 10♠, 47, Joker; `?` and None for a face not known."""
    if card is None or card == "?":
        return "a card"
    text = str(card)
    if game == "crisp" and len(text) >= 2 and text[-1] in SUITS:
        return text[:-1] + SUITS[text[-1]]
    if game == "crescendo" and text.startswith("J"):
        return "Joker"
    return text


TOP_RANGE = "91+"  # the 91-100 back in a row: 6 characters at most, so that a seen mark never touches its neighbour


def back_word(back: Back) -> str:
    """A Crescendo card's public back, compact: its range and its action's initial (`81-90P`); the top range, whose
    "91-100" would fill a card's cell to the mark's column, as `91+P`."""
    span = TOP_RANGE if back.high >= 100 else f"{back.low}-{back.high}"
    return f"{span}{back.action[0].upper()}"


def _split_player(text: str, names: Sequence[str]) -> tuple[str | None, str]:
    """The player an event string begins with (names may hold spaces), and the rest."""
    for name in sorted(names, key=len, reverse=True):
        if text == name or text.startswith(name + " "):
            return name, text[len(name) + 1:]
    return None, text


def and_words(names: Sequence[str]) -> str:
    """Names as said: "Ada", "Ada and Bo", "Ada, Bo and Cy"."""
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} and {names[-1]}"


class TurnsSince:
    """Follows the turns of a round through its events, to tell who had begun a turn after a crisp caller's turn
    ended and before the call (those turns are their players' final ones)."""

    def __init__(self) -> None:
        self.turns: list[list[object]] = []  # [player, begun] for each turn opened this round, in order

    def follow(self, text: str, names: Sequence[str]) -> tuple[str, ...]:
        """Take one event; for a crisp call, the players who began a turn since the caller's ended."""
        who, rest = _split_player(text, names)
        kind = rest.partition(" ")[0]
        if kind == "deal":
            self.turns = []  # the round's first turn opens at the deal, with no turn event of its own
        elif kind == "turn" and who is not None:
            self.turns.append([who, False])
        elif kind == "crisp" and who is not None:
            # The call is for the caller's last turn that ended: never the one open now (the last opened).
            ended = [i for i, (name, _) in enumerate(self.turns[:-1]) if name == who]
            since = self.turns[ended[-1] + 1:] if ended else self.turns
            return tuple(str(name) for name, begun in since if begun)
        elif who is not None and self.turns and self.turns[-1][0] == who:
            self.turns[-1][1] = True
        return ()


def dealt_round(note: Note, names: Sequence[str]) -> int | None:
    """The round a deal event note deals ("Bo deal 2": 2); None for another note."""
    who, rest = _split_player(note.detail, names) if note.kind == "event" else (None, "")
    kind, _, tail = rest.partition(" ")
    return int(tail) if who is not None and kind == "deal" and tail.isdigit() else None


def _slot(token: str, game: str) -> str:
    """A position word: Crisp's slot names stay, Crescendo's 0-based positions are counted from 1."""
    if game == "crescendo" and token.lstrip("-").isdigit():
        return f"card {int(token) + 1}"
    return token


def event_words(text: str, names: Sequence[str], game: str, me: str, begun: Sequence[str] = ()) -> str | None:
    """One engine event (its compact text form) in plain words; None for events not worth a line. `begun`: for a
    crisp call, the players who began a turn after the caller's ended and before the call (`TurnsSince`)."""
    who, rest = _split_player(text, names)
    kind, _, tail = rest.partition(" ")
    args = tail.split(" ") if tail else []
    p = "You" if who == me else (who or "")
    their = "your" if who == me else "their"

    def c(i: int) -> str:
        return card_word(args[i] if i < len(args) else None, game)

    if kind == "deal":
        return f"— Round {args[0] if args else ''}: {'you deal' if who == me else f'{who} deals'} —"
    if kind == "draw":
        if args and args[0] == "discard":
            return f"{p} took the top discard."
        return f"{p} drew from the {'Reserve' if game == 'crescendo' else 'draw pile'}."
    if kind == "replace":
        return f"{p} swapped the drawn card into {their} {_slot(args[0], game)}; {c(1)} went to the discard pile."
    if kind == "discard":
        return f"{p} discarded {c(0)}."
    if kind == "jack":
        return f"{p} used a Jack to peek at {their} middle card."
    if kind == "king":
        return f"{p} used a King: two extra draws."
    if kind in ("queen", "exchange"):
        target, after = _split_player(tail.partition(" ")[2], names)
        tpos = after.split(" ")[0] if after else "?"
        card = "a Queen" if kind == "queen" else "Swap"  # a card, as "used a Jack"; Crescendo's special action by name
        tname = "your" if target == me else f"{target}'s"
        # Crescendo's Swap lets its target look at the card received; Crisp's Queen lets each side
        # look at its new card when it lands in a left or right slot, never in the middle.
        got = (tpos if target == me else None) if kind == "exchange" else \
            (args[0] if who == me else tpos if target == me else None)
        seen = "; you see the card you got" if got is not None and got != "middle" else ""
        return f"{p} used {card}: {their} {_slot(args[0], game)} ⇄ {tname} {_slot(tpos, game)} (blind{seen})."
    if kind == "peek":
        target, after = _split_player(tail, names)
        tname = "your" if target == me else ("their own" if target == who else f"{target}'s")
        return f"{p} peeked at {tname} {_slot(after.split(' ')[0] if after else '?', game)}."
    if kind == "lock":
        return f"{p} locked {their} {_slot(args[0], game)}: {c(1)}, face up and safe from Swap."
    if kind == "crisp":
        # A call may come late, as the next player starts: a turn begun since the caller's is that player's final one.
        late = [("you", "yours") if n == me else (n, f"{n}'s") for n in begun]
        said = "" if not late else (f", and the turn {late[0][0]} began before the call is {late[0][1]}" if len(late) == 1
                                    else f", and the turns {and_words([n for n, _ in late])} began before the call are theirs")
        return f"{p} called CRISP! Everyone else has one final turn{said}."
    if kind == "crescendo":
        return f"{p} called CRESCENDO! Everyone else has one final turn."
    if kind == "turn":
        return None
    if kind == "timeout":
        return f"{p} ran out of time: the rest of the turn is forfeit."
    if kind in ("forfeit_draw", "forfeit_discard"):
        # At a LAN table the card's face is revealed just after the event, and the session waits for it; it comes
        # as `?` only when the table stopped before the face did.
        face = f" ({c(0)})" if args and args[0] != "?" else ""
        if kind == "forfeit_draw":
            return f"The top card of the draw pile{face} was drawn and discarded for {'you' if who == me else who}."
        whose = "Your" if who == me else f"{who}'s"
        return f"{whose} drawn card{face} was discarded unused."
    if kind == "turnover":
        return f"The discard pile was turned over into a new draw pile ({args[0] if args else '?'} cards)."
    if kind == "reshuffle":
        return f"The discard pile was reshuffled into a new Reserve ({args[0] if args else '?'} cards)."
    if kind == "setup_look":
        return f"{p} looked at {their} {_slot(args[0], game)}."
    if kind == "setup_swap":
        return f"{p} swapped {their} {_slot(args[0], game)} and {_slot(args[1], game)} unseen."
    if kind == "setup_pass":
        return f"{p} kept {their} row as dealt."
    if kind == "pass":
        return f"{p} passed (+1 point)."
    if kind == "number_right":
        return f"{p} called NUMBER: {c(0)} against {c(1)}, right! The card goes to {their} own pile."
    if kind == "number_wrong":
        return (f"{p} called NUMBER: {c(0)} against {c(1)}, wrong: {c(0)} goes back in its place (everyone saw it), "
                f"and a penalty card goes in just to its right.")
    if kind == "withdrawn":
        return f"{p} called NUMBER too late: someone else was first."
    if kind == "reveal_all":
        return "Every card is turned face up."
    if kind == "round_end":
        scores = ", ".join(f"{n} {s}" for n, s in zip(names, args))
        return f"Round over. Scores this round: {scores}."
    if kind == "game_over":
        return None  # the `over` note says it
    if kind in ("window_closed", "window_open"):
        return None
    return text


DOWN = "↓"  # a Crescendo card lower than the card just before it, in a round's reveal


def revealed_words(game: str, row: Sequence[object]) -> str:
    """A revealed row as printed in a round's reveal: Crescendo's cards out of order marked with DOWN."""
    # Marked as the engine counts them: Jokers left out, each number against the number before it.
    numbers = [(i, f) for i, f in enumerate(row) if isinstance(f, int)]
    down = {numbers[j][0] for j in out_of_order([f for _, f in numbers])} \
        if game == "crescendo" and None not in row else set()
    return " ".join("?" if f is None else card_word(f, game) + (DOWN if i in down else "") for i, f in enumerate(row))


def score_why(parts: Sequence[tuple[str, int]], others: Sequence[int] = ()) -> str:
    """How a seat's round score came about, from the engine's parts of it; "" when there is nothing to say beyond
    the cards' total (or nothing is known: a round that ended before a crash). `others`: the other seats' card totals
    in Crisp, so that a caller who tied for the lowest is told so, not "not the lowest" beside a total as low."""
    if len(parts) < 2 and not (parts and parts[0][0] != "cards"):
        return ""
    cards = dict(parts).get("cards")
    tied = cards is not None and bool(others) and cards == min(others)
    return ", ".join(f"{'called crisp, tied for the lowest' if what == CALL_MISSED and tied else what} "
                     f"{'+' if points >= 0 else '-'}{abs(points)}" for what, points in parts)


def winners_words(detail: str, names: Sequence[str], me: str) -> str | None:
    """The table's `winners: A, B` note as a sentence without its stop ("Ada wins", "You and Bo share the win");
    None for another ending."""
    if not detail.startswith("winners: "):
        return None
    rest, won = detail[len("winners: "):], []
    while rest:
        name = next((n for n in sorted(names, key=len, reverse=True)
                     if rest == n or rest.startswith(n + ", ")), rest.split(", ")[0])
        won.append(name)
        rest = rest[len(name) + 2:]
    said = ["you"] * (me in won) + [n for n in won if n != me]
    if len(said) == 1:
        return "You win" if said == ["you"] else f"{said[0]} wins"
    text = ", ".join(said[:-1]) + " and " + said[-1] + " share the win"
    return text[:1].upper() + text[1:]


CRESCENDO_RULE = "three rounds played: the most points wins"
CRESCENDO_TIE_RULE = CRESCENDO_RULE + "; a tie goes to the points of CRESCENDO calls, then the last round"


def crescendo_tie_words(keys: Sequence[tuple[int, int, int]], names: Sequence[str], me: int) -> str:
    """Why a Crescendo game was won as it was: the rule, and for tied totals which tie-break decided (CRESCENDO calls,
    then the last round) with the numbers that did; `keys`: the engine's (total, call points, last round) per seat
    (`CrescendoView.tie_keys`), and without them the tie-break said as a rule."""
    totals = [k[0] for k in keys]
    best = max(totals, default=0)
    tied = [s for s, t in enumerate(totals) if t == best]
    if not keys:
        return CRESCENDO_TIE_RULE
    if len(tied) < 2:
        return CRESCENDO_RULE

    def who(seat: int) -> str:
        return "you" if seat == me else names[seat]

    said, first = f"three rounds played; {and_words([who(s) for s in tied])} tied on {best} points", len(tied)
    went = "the tie went to"
    for what, on, at in (("CRESCENDO calls", "on", 1), ("the last round", "in", 2)):
        scores = {s: keys[s][at] for s in tied}
        top = max(scores.values())
        if len(set(scores.values())) == 1:  # no tie-break there: said as a tie too
            said += f", {on} {what} too" if len(tied) == first else f"; {and_words([who(s) for s in tied])} tied {on} {what}"
            said += f" ({top} each)"
            continue
        said += f"; {went} {what}: " + ", ".join(f"{who(s)} {p}" for s, p in scores.items())
        went, tied = "then", [s for s in tied if scores[s] == top]
        if len(tied) < 2:
            break
    return said


def stopped_words(detail: str, gave_up: Cut | None = None) -> str:
    """Why the table stopped, as the table says it (`Peer.stopped`; `gave_up`: how we were cut off when we gave it
    up, `Peer.gave_up`), in a sentence a player reads: our own seat's doing said as the player's ("we left before the
    restart": you had left it before the program restarted)."""
    if gave_up is Cut.AWAY_TOO_LONG:
        return f"{AWAY_WORDS} The game did not finish here."
    if gave_up is not None:
        return ("Your network seems to have been lost: every other seat went missing at once, and none came back in "
                "time. The others most likely went on without you; the game did not finish here.")
    if detail.startswith(LEFT_BEFORE_RESTART):
        return "The table stopped before the program restarted: you had left it."
    if detail.startswith(WE_LEFT):
        return "You left the table."
    if detail.startswith(FAULT_BEFORE_RESTART):
        why = detail.partition(": ")[2]
        return f"The table stopped before the program restarted: it reported a fault{f' ({why})' if why else ''}."
    return f"The table stopped: {detail}."


def goes_on(note: Note) -> bool:
    """True for the note that the table goes on without seats voted out (protocol.md §14.9): not a game over."""
    return note.kind == "over" and note.detail.startswith("the table goes on") and not note.detail.endswith(" us")


def _sentence(text: str, names: Sequence[str], me: str) -> str:
    """A note as a sentence: a player's name it starts with kept as spelled (ours as You), else a capital."""
    who, rest = _split_player(text, names)
    if who is None:
        return text[:1].upper() + text[1:] + "."
    if who == me:
        verb, _, tail = rest.partition(" ")
        return f"You {VERBS.get(verb, verb)} {tail}." if tail else f"You {VERBS.get(verb, verb)}."
    return f"{who} {rest}."


def note_words(note: Note, names: Sequence[str], game: str, me: str, why_over: str = "",
               begun: Sequence[str] = ()) -> tuple[str, str] | None:
    """A table note as (style, plain words); None for notes a player need not read. `why_over`: why the game
    ended, said after who won; `begun`: as for `event_words`."""
    blame = f" ({note.blame} is blamed)" if note.blame else ""
    if note.kind == "event":
        words = event_words(note.detail, names, game, me, begun)
        return None if words is None else ("", words)
    if note.kind == "rejected":
        if note.detail.startswith("message dropped: message for table") and not note.blame:
            return None  # a frame of the table before one that went on, or of one to come: a player need not read it
        if note.detail.startswith(("message dropped", "frames of")):  # a frame, not a move: no one's move was refused
            text = TABLE_ID.sub(lambda m: m.group()[:8] + "…", note.detail)
            return ("class:dim", f"{text[:1].upper()}{text[1:]}{blame}.")
        if note.detail.endswith(f": {NUMBER_TAKEN}") and note.blame:
            # Lost a NUMBER race by more than the tie window: the rules withdraw it unrevealed, no one's fault.
            return ("class:dim", f"{'You' if note.blame == me else note.blame} called NUMBER too late: someone else "
                                 "was first.")
        if note.detail.endswith(f": {NUMBER_SHUT}") and note.detail.startswith(f"{note.blame} number "):
            # Ordered past its window (a slow link can hold an honest claim ~2 s): the rules refuse it, no one cheated.
            return ("class:dim", f"{'You' if note.blame == me else note.blame} called NUMBER too late: the window had "
                                 "closed.")
        return ("class:warn", f"Move refused: {note.detail}{blame}.")
    if note.kind == "fault":
        return ("class:warn", f"FAULT: {note.detail}{blame}. The round is void.")
    if note.kind == "audit":
        return ("class:warn", f"Audit: {note.detail}{blame}.")
    if note.kind == "void":
        return ("class:warn", _sentence(note.detail, names, me))
    if note.kind == "over":
        if goes_on(note):
            return ("class:warn", _sentence(note.detail, names, me))
        won = winners_words(note.detail, names, me)
        why = f" ({why_over})" if why_over else ""
        if won:
            return ("class:good", f"Game over: {won}{why}.")
        return ("class:good", f"Game over. {_sentence(yours(note.detail), names, me)}")  # voted out
    if note.kind == "missing":
        detail = LINK_WHY.sub(lambda m: LINK_WORDS[m.group(0)], VOTE_IN.sub("", note.detail))
        if note.blame and detail.endswith(OUR_VOTE):
            # Our own vote, in the words the others' votes are said in ("Ada votes Cy gone"): a player is not an "it".
            detail = detail[:-len(OUR_VOTE)] + f"you vote {note.blame} gone"
        elif note.cut is not None:
            detail = yours(detail)
        return ("class:warn", _sentence(detail, names, me))
    if note.kind == "back":
        return ("class:good", note.detail + ".")
    if note.kind == "aid":
        who, rest = _split_player(note.detail, names)
        return ("class:dim", f"{'You' if who == me else who} {rest}." if who else note.detail)
    if note.kind == "local":
        return ("class:warn", note.detail + ".")
    if note.kind == "round":
        if "verified" in note.detail:
            return ("class:good", note.detail.split(":")[0].capitalize() + ": every peer checked every move and card.")
        return ("class:title", f" {note.detail[:1].upper() + note.detail[1:]}: shuffling and dealing ")
    return ("", note.detail)


def slot_name(game: str, pos: int) -> str:
    """The name of a position in a row: left/middle/right in Crisp, 1.. in Crescendo."""
    return CRISP_SLOTS[pos] if game == "crisp" and 0 <= pos < 3 else str(pos + 1)
