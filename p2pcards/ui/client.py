"""The table screen's state and logic, apart from prompt_toolkit: keys in, moves out, lines of text to draw.

`TableClient.key(k)` takes one key press; `TableClient.lines(width, height, now)` is the whole
screen as lines of (style, text) fragments. Both are plain calls, so the screen can be tested
and captured without a terminal.
"""

from __future__ import annotations

import math
import re
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace

from ..errors import IllegalMove, LocalError
from ..games.base import Move
from ..games.crescendo import CrescendoView
from ..games.crisp import CrispView
from ..table.config import SEATS
from ..table.outputs import Cut
from ..table.peer import Note
from .keys import (DIGIT_ACTIONS, KEYS, LABELS, Chooser, action_id, canonical, key_of, label_number, prompt_parts,
                   why_not)
from .session import Stall, TableSession
from .words import (AWAY_WORDS, DOWN, RED_SUITS, TOP_RANGE, TurnsSince, back_word, card_word, crescendo_tie_words,
                    dealt_round, goes_on, note_words, revealed_words, score_why, stopped_words, winners_words, yours)

View = CrispView | CrescendoView
Rules = Callable[[str, dict[str, object], int], str]  # game, the table's options, the columns to fill
Fragment = tuple[str, str]
Line = list[Fragment]
PEEK_S = 5.0  # how long a card you look at stays on screen without the memory aid
LOG_KEEP = 200
# Crescendo's n is NUMBER until the game ends, then a new game: a NUMBER key pressed as the last window closed must not
# sweep the final scores away into a new game.
AGAIN_AFTER_S = 1.5
MIN_SIZE = (40, 10)  # columns and lines the table needs: a Crisp row is 40 columns, the keys and turn 10 lines
LOG_MIN = 2  # lines of the log kept on a small screen before the legend
LOG_LAST = 1  # lines of the log kept before the other seats' rows (ours stays before it)
AID_TAG = "memory aid on"
AID_STYLE = "class:aid"
# Columns of a Crescendo card: a space, then at most 7 characters ("[Joker]"), a back's 6 at most and its mark (seen,
# hidden again) after it: every card begins with a space, so no two touch ("[Joker]·1-10S" read as one).
CELL = 8
SEEN_MARK = "·"
SHORT_HELD = 7  # columns of "10-13:", which cards a Crescendo row's further line holds, in its short form
# A key without a letter, as its keycap says it (the app names it "enter", "pageup" ...).
KEY_WORDS = {"enter": "Enter", "backspace": "Backspace", "up": "↑", "down": "↓", "pageup": "PgUp", "pagedown": "PgDn",
             " ": "Space", "c-u": "Ctrl-U", "escape": "Esc"}
# Under the keys when the table first shows: what a newcomer needs before the first move ({left}: seconds), in one
# line, the shorter words where the longer do not fit (none where neither does: the table keeps its rows).
FIRST_HINT = {
    "crisp": ("Your left and right cards hide in {left} s: remember them (m keeps them shown).",
              "Cards L and R hide in {left} s (m: keep them)"),
    "crescendo": ("Each back shows its card's range: sort your face-down row from low to high.",
                  "Sort your row from low to high."),
}


def key_words(k: str) -> str:
    """A key as a sentence names it: its keycap ("Esc"), or "The key 'x'" (never the app's own name, 'escape')."""
    return KEY_WORDS.get(k, f"The key {k!r}")


def tenths(seconds: float) -> str:
    """A countdown's time left, in tenths of a second rounded up: "0.1" until the moment it ends, never a
    "0.0" that is still open."""
    return f"{math.ceil(max(0.0, seconds) * 10 - 1e-9) / 10:.1f}"


def seconds_left(seconds: float) -> str:
    """A draw's time left in whole seconds rounded up, as `tenths` rounds: "1" until the moment it runs out, never a
    "0" with time still on it."""
    return str(math.ceil(max(0.0, seconds) - 1e-9))


@dataclass
class TableClient:
    """One player's table screen: what they have seen, what they are choosing, what the log says."""

    session: TableSession
    rules: Rules | None = None
    log: deque[Fragment] = field(default_factory=lambda: deque(maxlen=LOG_KEEP))
    status: Fragment = ("", "")
    chooser: Chooser | None = None
    confirm_quit: str = ""  # the question asked before leaving mid-game: "leave" (Q) or "quit" (Ctrl-C)
    pager: RulesPager = field(default_factory=lambda: RulesPager("back to the table"))  # the rules, over the table
    size: tuple[int, int] | None = None  # the screen's columns and lines when the last key came (the app's to set)
    panel_round: int = 0  # the round whose reveal and scores are on screen (0: none)
    seen_at: dict[tuple[int, int, object], float] = field(default_factory=dict)  # (round, seat, face): first shown
    # A game taken up again after a crash: the faces its first view holds were seen before, and stay hidden.
    seen_before: bool = False
    resumed_after: int = 0  # taken up again: the rounds that ended before, whose reveal and scores we never had
    against_bots: bool = False  # our own bots' table: they leave with us
    rounds_seen: int = 0
    error: str | None = None
    winners: str = ""
    now: float = 0.0
    hinted: bool = False  # a key was pressed: the first-time hint under the keys is not shown again
    back_to_lobby: bool = False  # came through the lobby: leaving the table goes back there, Ctrl-C quits
    again: bool = False  # once the game is over, `n` asks for a new one (our own bots' table)
    outcome: str = ""  # how the player left: "leave" (Q), "quit" (Ctrl-C) or "again" (n at game over)
    # `n` after a game played with our memory aid on: the new game turns it on as soon as the table plays, saying so
    # (the player chose to play with it; every seat sees it all the same).
    aid_again: bool = False
    aid_at_end: bool = False  # our memory aid was on as we left: `n` carries it into the next game
    over_at: float | None = None  # when we first saw the game over
    turns: TurnsSince = field(default_factory=TurnsSince)  # who began a turn since whose: said with a late crisp call
    _moment: tuple[object, ...] = ()  # where the table stood (`_at`) when the status was last set or checked

    @property
    def memory_aid(self) -> bool:
        """True while our memory aid is on: the table has been told, so every player sees it."""
        return self.session.me in self.session.aided()

    def view(self) -> View | None:
        """The session's view; once the game ended without the engine's last round (too few seats remain after a
        vote), that view over, with no turn, move or window still open."""
        view = self.session.view()
        if view is not None and self.seen_before:
            self.seen_before = False
            # The session holds no reveal of the rounds that ended before: no panel opens for them.
            self.rounds_seen = self.resumed_after = view.rounds_played
            self.seen_at.update({(view.round, seat, face): -math.inf for seat, row in enumerate(view.known)
                                 for face in row if face is not None})
        if view is None or view.over or not self.session.finished():
            return view
        if isinstance(view, CrescendoView):
            return replace(view, over=True, turn=None, legal=(), window_open=False, window_until=None)
        return replace(view, over=True, turn=None, legal=(), windows=(), call_until=None, draw_until=None)

    # ------------------------------------------------------------ input

    def absorb(self, now: float) -> None:
        """Take the session's new notes into the log and follow the clock-driven parts of the view."""
        self.now = now
        view = self.view()
        if view is None:
            return
        if view.over and self.over_at is None:
            self.over_at = now
        if self.aid_again and not view.over and self.session.stopped() is None:
            try:
                self.session.set_aid(True)
            except LocalError:
                pass  # the table is not playing yet: at the next change
            else:
                self.aid_again = False
                self.status = ("", "Memory aid on, as in your last game (everyone sees it): m turns it off.")
        me = view.players[view.me]
        for note in self.session.take_notes():
            over = note.kind == "over" and not goes_on(note)
            begun = self.turns.follow(note.detail, view.players) if note.kind == "event" else ()
            words = note_words(note, view.players, self.session.game, me, self._why_over(view) if over else "", begun)
            if over:
                won = winners_words(note.detail, view.players, me)
                said = yours(note.detail)  # voted out
                self.winners = f"{won}." if won else said[:1].upper() + said[1:] + "."
            if words is not None:
                dealt = dealt_round(note, view.players)
                if dealt is not None and self.log and self.log[-1] == note_words(
                        Note("round", f"round {dealt} begins"), view.players, self.session.game, me):
                    self.log.pop()  # the shuffle it announced is done: who deals says the round began, in one line
                self.log.append(words)
        stopped = self.session.stopped()
        if stopped is not None and self.session.gave_up() is not None and not self.winners:  # said in the lobby after
            self.winners = "your network seemed lost, and the game did not finish for you."
        if self._at(view) != self._moment:
            # A word about a key pressed earlier ("wait a moment", "it is Bo's turn") is stale once the table moved on.
            self._moment = self._at(view)
            if self.status[0] == "class:warn" and not self.status[1].startswith("Leaving"):
                self.status = ("", "")
        if view.rounds_played > self.rounds_seen:
            self.rounds_seen = view.rounds_played
            self.panel_round = view.rounds_played
            self.chooser = None
        if self.chooser is not None:
            legal = set(view.legal)
            if not any(canonical(m) in legal for m in self.chooser.remaining()):
                self.chooser = None
                self.status = ("class:warn", "That choice is no longer open.")

    def _at(self, view: View) -> tuple[object, ...]:
        """Where the table stands, for a status line: the round, whose turn, the discards, our move, the keys open."""
        keys = tuple(sorted(map(action_id, view.legal)))
        return (view.round, view.turn, len(view.discard), self.session.busy(), keys)

    def _why_over(self, view: View) -> str:
        """Why the game ended and how it was won, from the last view's totals and options."""
        if isinstance(view, CrispView):
            limit = view.options.limit
            reached = [f"{'you' if seat == view.me else name} reached {view.totals[seat]}"
                       for seat, name in enumerate(view.players) if view.totals[seat] >= limit]
            return f"{', '.join(reached) or 'the limit was reached'}, the game ends at {limit}: the lowest total wins"
        return crescendo_tie_words(view.tie_keys, view.players, view.me)

    def key(self, k: str) -> str | None:
        """Handle one key press; returns how the player leaves the table, once they do (see `outcome`)."""
        self.hinted = True
        if (now := self.view()) is not None:
            self._moment = self._at(now)  # what this key's words are about
        if self.pager.shown and self.pager.key(k, self.size, self._turn_call()):
            return None  # (Ctrl-C closes the rules and leaves from the table: it asks first)
        if self.confirm_quit:
            asked, self.confirm_quit = self.confirm_quit, ""
            if k in ("y", "Y"):
                return self._leave(asked)
            self.status = ("", "Staying at the table.")
            return None
        if k in ("Q", "c-c", "c-q"):
            how = "leave" if k == "Q" or not self.back_to_lobby else "quit"
            if self._done():
                return self._leave(how)
            self.confirm_quit = how
            self.status = ("", "")  # the question stands alone: no word about an earlier key under it
            return None
        if k == "n" and self.again and self._done() and self.session.stopped() is None:
            if self.session.game == "crescendo" and self.now - (self.over_at or 0.0) < AGAIN_AFTER_S:
                self.status = ("class:warn", "The game has just ended: n for a new game works in a second.")
                return None
            return self._leave("again")
        if k == "?":
            self.pager.open(self.rules, self.session.game, self.session.options)
            return None
        if k == "m":
            self._toggle_aid()
            return None
        if self.panel_round:
            # A key meant for the table that lands just as a round ends must not sweep its reveal away unseen.
            if k in ("enter", " ", "escape"):
                self.panel_round = 0
            else:
                self.status = ("class:warn", "The round's reveal is on screen: Enter goes back to the table.")
            return None
        if k == "escape":
            if self.chooser is not None:
                self.chooser = None
                self.status = ("", "Cancelled.")
            return None
        view = self.view()
        if view is None:
            self.status = ("class:warn", "The table is still starting.")
            return None
        if k == "enter" and view.over and (rounds := len(self.session.round_views())):
            self.panel_round = rounds  # the last round's reveal and the scores, again
            return None
        if self.chooser is not None:
            self._choose(k, view)
            return None
        if k.isdigit():
            self._digit(k, view)
            return None
        aids = KEYS[self.session.game].get(k)
        if aids is None:
            self.status = ("class:warn", f"{key_words(k)} does nothing here. The keys open now are at the bottom.")
            return None
        moves = [m for m in view.legal if action_id(m) in aids]
        if not moves or self.session.busy():
            self.status = ("class:warn", why_not(view, aids, self.session.busy(), self.now))
            return None
        self._start(moves[0].action, moves, view)
        return None

    def _done(self) -> bool:
        """True when leaving costs nothing: the game is over, the table stopped, or it never started."""
        view = self.view()
        return view is None or view.over or self.session.stopped() is not None or self.session.finished()

    def _leave(self, how: str) -> str:
        """Keep how the player leaves, for the caller to follow, and say it."""
        self.outcome = how
        self.aid_at_end = self.memory_aid
        return how

    def _where(self) -> str:
        """What leaving with Q leads to, in a few words for the keys."""
        return "back to the lobby" if self.back_to_lobby else "quit"

    def _toggle_aid(self) -> None:
        """Turn our memory aid on or off, telling every seat (it is shown next to our name on every screen)."""
        view = self.view()
        if view is None or self.session.stopped() is not None:
            self.status = ("class:warn", "The memory aid can be turned on once the table is playing.")
            return
        if view.over:
            self.status = ("class:warn", "The game is over: the memory aid is for a game in play.")
            return
        try:
            self.session.set_aid(not self.memory_aid)
        except LocalError as exc:
            self.status = ("class:warn", f"Memory aid unchanged: {exc}.")
            return
        self.status = ("", "Memory aid on: cards you have seen stay shown. Everyone sees that you use it."
                       if self.memory_aid else "Memory aid off: cards you look at hide again after a few seconds.")

    def _digit(self, k: str, view: View) -> None:
        for action in DIGIT_ACTIONS:
            moves = [m for m in view.legal if m.action == action]
            if moves and not self.session.busy():
                self.chooser = ch = Chooser(action, moves)
                self._choose(k, view)
                if self.chooser is ch and not ch.chosen and not ch.typed:
                    self.chooser = None  # a digit that is no choice opens none: the other keys stay open
                return
        self.status = ("class:warn", why_not(view, DIGIT_ACTIONS[:1] if view.turn == view.me else DIGIT_ACTIONS[1:],
                                             self.session.busy(), self.now))

    def _start(self, action: str, moves: list[Move], view: View) -> None:
        self.chooser = Chooser(action, moves)
        self._advance(view)

    def _choose(self, k: str, view: View) -> None:
        ch = self.chooser
        assert ch is not None
        f = ch.next_field()
        if f is None:
            self._advance(view)
            return
        if k == "backspace":
            ch.typed = ch.typed[:-1]
            return
        if k == "enter" and ch.typed:
            self._pick(ch, f, ch.typed, view, final=True)
            return
        if not k.isdigit():
            self.status = ("class:warn", "Type one of the numbers shown, or Esc to cancel.")
            return
        self._pick(ch, f, ch.typed + k, view, final=False)

    def _pick(self, ch: Chooser, f: str, typed: str, view: View, final: bool) -> None:
        numbers = {label_number(f, v, view.players): v for v in ch.options(f)}
        n = int(typed)
        longer = any(str(x).startswith(typed) and str(x) != typed for x in numbers)
        if n in numbers and (final or not longer):
            ch.chosen[f] = numbers[n]
            ch.typed = ""
            self._advance(view)
        elif longer and not final:
            ch.typed = typed
        else:
            ch.typed = ""
            self.status = ("class:warn", f"{typed} is not one of the choices: {', '.join(map(str, sorted(numbers)))}.")

    def _advance(self, view: View) -> None:
        ch = self.chooser
        assert ch is not None
        f = ch.next_field()
        if f is not None:
            self.status = ("", "")
            return
        move = ch.move()
        self.chooser = None
        if move is not None:
            self._send(move)

    def _send(self, move: Move) -> None:
        try:
            self.session.play(move)
        except IllegalMove as exc:
            self.status = ("class:warn", f"Not sent: {exc}.")
            return
        self.status = ("", "")

    # ------------------------------------------------------------ output

    def lines(self, width: int, height: int, now: float) -> list[Line]:
        """The whole screen for a terminal of `width` x `height`."""
        self.now = now
        if width < MIN_SIZE[0] or height < MIN_SIZE[1]:
            return self._too_small(width, height)
        if self.pager.shown:
            return self.pager.lines(width, height, self._turn_call())
        view = self.view()
        if view is None:
            # Wrapped: in 40 columns it read "Starting the table: bot peers are gettin"; and only bots are bots.
            who = "bot peers are getting ready" if self.against_bots else "linking to every seat"
            text = self.error or f"Starting the table: {who} …"
            return fit([[("class:title", " p2pcards ")], [], *wrap_line([("", text)], width), [],
                         [("class:key", "Q"), ("", " " + self._where())]], width, height)
        top = self._header(view, width)
        bottom = [wrapped for line in self._footer(view, width) for wrapped in wrap_line(line, width)]
        # A terminal too small for everything keeps the keys and the status: the table and the log give way.
        room = height - len(top) - len(bottom)
        if self.panel_round and self.panel_round <= len(self.session.round_views()):
            middle = self._round_panel(view, width, room)
        else:
            middle = self._table(view, width, room)
        middle = middle[:max(0, room)]
        log = self._log_lines(room - len(middle), width) if room > len(middle) else []
        lines = top + middle + log + bottom
        return fit(lines[max(0, len(lines) - height):], width, height)

    def _too_small(self, width: int, height: int) -> list[Line]:
        """A terminal smaller than MIN_SIZE: what size the table needs, whether our turn came, and a question asked."""
        view = self.view()
        said = ("Leave the table? y yes, n stay." if self.confirm_quit
                else "Your turn." if view is not None and view.turn == view.me and not view.over else "")
        return too_small(width, height, said)

    def _header(self, view: View, width: int) -> list[Line]:
        game = self.session.game
        me = view.players[view.me]
        prog = self.session.progress()
        rnd = str(view.round if prog is None or view.over else prog.round)
        shuffling = " (shuffling)" if prog is not None and not view.over else ""
        if game == "crisp":
            assert isinstance(view, CrispView)
            infos = [f"Crisp · round {rnd}{shuffling} · lowest total wins · game ends at {view.options.limit}",
                     f"Crisp · round {rnd}{shuffling} · game ends at {view.options.limit}", f"Crisp · round {rnd}{shuffling}"]
        else:
            infos = [f"Crescendo · round {rnd} of 3{shuffling} · sort your row from low to high",
                     f"Crescendo · round {rnd} of 3{shuffling}"]
        # A narrow screen keeps the header to a line each, for the rows: the title's reminder goes (the first hint and
        # the rules say it), and our name (our row shows it, with our *).
        info = next((i for i in infos if len(i) + 2 <= width), infos[-1])
        aid = "ON" if self.memory_aid else "off"
        # Once the game is over, only what can still be done: the memory aid is for a game in play.
        aided: list[Line] = [] if view.over else [[("class:key", "m"), ("", f" memory aid: {aid}")]]
        keys = [[("class:key", "?"), ("", " rules")], *aided,
                [("class:key", "Q"), ("", " leave" if self.back_to_lobby else " quit")]]
        named = flow([*keys, [("", f" you: {me}")]], width, gap="  ")
        keys_lines = named if len(named) == 1 else flow(keys, width, gap="  ")
        return wrap_line([("class:title", f" {info} ")], width) + keys_lines

    def _cell_crisp(self, view: CrispView, seat: int, pos: int, ended: bool) -> Fragment:
        face = view.known[seat][pos] if seat < len(view.known) else None
        if face is None:
            return ("class:back", "[ ? ]")
        text = card_word(face, "crisp")
        style = "class:red" if face[-1] in RED_SUITS else ""
        if ended:
            return (style + " class:up", f" {text:<3} ")
        if not self._shown(view.round, seat, face):
            return ("class:back", "[ · ]")
        return (style + " class:known", f"({text})".ljust(5))

    def _cell_crescendo(self, view: CrescendoView, seat: int, pos: int, ended: bool) -> Fragment:
        """One card of a row, CELL columns: a space or the seen-and-hidden mark, then the card or its back."""
        face = view.known[seat][pos]
        if face is not None and ended:
            return ("class:up", f" {card_word(face, 'crescendo')[:CELL - 1]}".ljust(CELL))
        if face is not None and view.locked[seat][pos]:
            return ("class:locked", f" [{card_word(face, 'crescendo')[:CELL - 3]}]".ljust(CELL))
        if face is not None and self._shown(view.round, seat, face):
            return ("class:known", f" ({card_word(face, 'crescendo')[:CELL - 3]})".ljust(CELL))
        mark = "" if face is None else SEEN_MARK
        return ("class:back", f" {back_word(view.backs[seat][pos])}{mark}".ljust(CELL))

    def _shown(self, rnd: int, seat: int, face: object) -> bool:
        """A card this player saw stays on screen for PEEK_S seconds, or always with the memory aid (each round
        deals the same cards afresh: one seen in a round before is a new look)."""
        first = self.seen_at.setdefault((rnd, seat, face), self.now)
        return self.memory_aid or self.now - first < PEEK_S

    def _table(self, view: View, width: int, room: int) -> list[Line]:
        """The rows, their legend, the piles and whose turn it is, in `room` lines: short of room (the log keeping
        LOG_MIN lines), the legend goes first, then the last rows; the piles and the turn line stay."""
        ended = view.turn is None and view.round > 0 and view.rounds_played >= view.round
        short: list[Line] = []
        if isinstance(view, CrescendoView):
            head, seats, legend, short = self._crescendo_rows(view, width, ended)
        else:
            head, seats, legend = self._crisp_rows(view, width, ended)
        timers = self._timers(view, width)
        status = self._piles(view, width) + timers
        # The log keeps its last lines: what the others did (a blind swap of our card) matters more than the legend,
        # and its last line more than the other seats' rows (they are named); our own row stays before it. Short of
        # room, the legend is said in fewer words (two lines, then one) and the piles share a line, before it goes:
        # in 40 columns four Crescendo seats take 12 lines, and the whole legend 5.
        spare = room - min(LOG_MIN, len(self.log)) - len(head) - sum(map(len, seats))
        tight = self._piles(view, width, tight=True) + timers
        # Fewer words never drop a range a back in a row shows ("91+" short for 91-100): its line and those before it.
        least = 1 + max((i for i, line in enumerate(short) if ("class:back", TOP_RANGE) in line), default=0)
        two, one = short[:max(2, least)], short[:least]
        tries = [(legend, status), (short, status), (short, tight), (two, status), (two, tight), (one, status),
                 (one, tight)]
        legend, status = next(((lg, st) for lg, st in tries if lg and len(lg) + len(st) <= spare), ([], status))
        keep = min(LOG_LAST, len(self.log))
        rows = self._seats_that_fit(view, seats, room - len(status) - len(head) - keep, width)
        if not any(line is seats[view.me][0] for line in rows):  # our row before the log's lines
            rows = self._seats_that_fit(view, seats, room - len(status) - len(head), width)
        if not any(line is seats[view.me][0] for line in rows):
            # Not even our row fits under its heading: our row without it, else the note that says it has no room,
            # before the log's lines and the piles' second line (at 40x10 Crescendo showed no row and said nothing).
            if not rows and len(status) >= room and len(tight) < len(status):
                status = tight
            bare = self._seats_that_fit(view, seats, room - len(status), width)
            if not rows or any(line is seats[view.me][0] for line in bare):
                rows, head = bare, []
        if any(line is lines[0] for lines in seats for line in rows):  # a heading over no row says nothing
            rows = head + rows
        if isinstance(view, CrispView):  # Crisp's legend sits under the heading, Crescendo's under the rows
            return rows[:1] + legend + rows[1:] + status
        return rows + legend + status

    @staticmethod
    def _seats_that_fit(view: View, seats: list[list[Line]], room: int, width: int) -> list[Line]:
        """Every seat's lines, or those that fit `room` whole and a line naming the seats left out: ours always
        first among them, and none without ours (a row cut short showed a seat with too few cards, and one left out
        was not said); ours alone when it fills `room`; [] when not even the line fits."""
        if sum(map(len, seats)) <= room:
            return [line for lines in seats for line in lines]
        if len(seats[view.me]) == room:  # room for our row alone: it, rather than a note that it has no room
            return list(seats[view.me])
        shown: list[int] = []
        for seat in [view.me] + [s for s in range(len(seats)) if s != view.me]:
            if (seat == view.me or shown) and sum(len(seats[s]) for s in shown) + len(seats[seat]) <= room - 1:
                shown.append(seat)
        left = [view.players[s] for s in range(len(seats)) if s not in shown]
        n = len(left)
        seats_word = f" +{n} more seat{'s' if n > 1 else ''}"
        notes = ([f"{seats_word}: {', '.join(left)} (the terminal is too small)", f"{seats_word}: {', '.join(left)}",
                  seats_word] if shown else [" The rows need a taller terminal.", " No room for the rows."])
        note: Line = [("class:warn", next((t for t in notes if len(t) <= width), notes[-1]))]
        return [line for s in sorted(shown) for line in seats[s]] + ([note] if room > 0 else [])

    def _seat(self, view: View, seat: int, name_w: int, score_w: int) -> Line:
        """A row's start: the turn marker, seat number, name and running score (`*` marks ours): 5 + name_w + score_w
        columns. The `*` has a space on either side, so that it runs into neither a name as long as its column (at 40
        columns "Tess*") nor the longest total (`score_w` is one more than it: "Tess*-14")."""
        turn = view.turn == seat
        return [("class:turn" if turn else "", f"{'▶' if turn else ' '}{seat + 1}"),
                ("class:me" if seat == view.me else "", f" {view.players[seat][:name_w]:<{name_w}}"),
                ("", f" {'*' if seat == view.me else ' '}{view.totals[seat]:>{score_w}}")]

    @staticmethod
    def _score_w(view: View, least: int) -> int:
        """The score column after our `*`: the longest total and a space before it, at least `least` columns."""
        return max(least, 1 + max((len(str(t)) for t in view.totals), default=1))

    def _tags(self, view: View, seat: int, called: str) -> Line:
        """What is said next to a player's name: their call, and whether their memory aid is on (everyone sees it)."""
        tags: Line = [("class:warn", called)] if view.caller == seat else []
        return tags + [(AID_STYLE, AID_TAG)] if seat in self.session.aided() else tags

    def _crisp_rows(self, view: CrispView, width: int, ended: bool) -> tuple[list[Line], list[list[Line]], list[Line]]:
        """The heading, each seat's lines, and the legend's lines when it does not fit on the heading's line."""
        # Card states are told by their brackets, never by colour alone.
        cards = bool(view.round and view.known)
        # Names give way (down to 4 letters) so that the right card still shows in 40 columns.
        score_w = self._score_w(view, 4)  # with the `*` and a space before it, room for the heading's " score"
        name_w = max(4, min(8, width - 32 - score_w))
        head = f"{'':2} {'player' if name_w >= 6 else 'name':<{name_w}}{'score':>{score_w + 2}}"
        # Once every card is face up the legend's brackets are on no card: the heading alone.
        legend = "" if ended else "   (7♥) you know it  [ · ] seen, hidden again  [ ? ] unseen"
        rows: list[Line] = []
        under: list[Line] = []
        if cards and len(head + legend) <= width:
            rows = [[("class:dim", head + legend)]]
        elif cards:  # too narrow for one line: the legend flows under the heading, the two short keys on one line
            # (in 40 columns, in the heading's order, each of the three took a line of its own)
            keys = [[("class:dim", words)] for words in ("(7♥) you know it", "[ ? ] unseen", "[ · ] seen, hidden again")]
            rows, under = [[("class:dim", head)]], flow(keys, width, lead="   ")
        seats: list[list[Line]] = []
        for seat in range(len(view.players)):
            line = self._seat(view, seat, name_w, score_w)
            for pos in range(3 if cards else 0):
                line += [("class:dim", f"  {'LMR'[pos]} "), self._cell_crisp(view, seat, pos, ended)]
            seats.append(tagged(line, self._tags(view, seat, "called CRISP"), width))
        return rows, seats, under

    def _crescendo_rows(self, view: CrescendoView, width: int,
                        ended: bool) -> tuple[list[Line], list[list[Line]], list[Line], list[Line]]:
        """The heading, each seat's lines, the legend's lines, and the legend in fewer words (its most needed first)."""
        cards = bool(view.round and view.known)
        most = max((len(row) for row in view.known), default=0)
        score_w = self._score_w(view, 2)  # with the `*` and a space before it, room for the heading's " pts"
        # Names give way (down to 4 letters, 3 where that last letter is all the row lacks) so that a whole row fits
        # one line: 8 cards in 80 columns.
        spare = width - 9 - score_w - CELL * most
        name_w = min(8, spare) if spare >= 3 else 4
        # Marker and seat 2, name 1 + name_w, `*` 2, score score_w, pile 3 and a space.
        prefix = 9 + score_w + name_w
        per_line = max(1, (width - prefix) // CELL)
        named = "player" if name_w >= 6 else "name" if name_w >= 4 else ""  # three letters: the names speak for it
        head = (f"{'':2} {named:<{name_w}}{'pts':>{score_w + 2}}{'pl':>3} "
                + "".join(f" {i + 1:<{CELL - 1}}" for i in range(min(most, per_line))))
        rows: list[Line] = [[("class:dim", head)]] if cards else []
        # The heading numbers the first line's cards only: a line that goes on says which cards it holds, under the
        # first line's ("cards 4-6"), or from its start ("4-7:") where that takes the longest row fewer lines: in 40
        # columns a row of 7 takes two lines, not three, and six seats fit 24 lines.
        short = max(1, (width - SHORT_HELD) // CELL)
        beyond = max(0, most - per_line)
        more = short if -(-beyond // short) < -(-beyond // per_line) else per_line
        seats: list[list[Line]] = []
        for seat in range(len(view.players)):
            lines: list[Line] = []
            line = self._seat(view, seat, name_w, score_w) + [("", f"{view.piles[seat]:>3} " if cards else "")]
            size = len(view.known[seat]) if cards else 0
            for pos in range(size):
                if pos >= per_line and (pos - per_line) % more == 0:
                    lines.append(line)
                    last = min(size, pos + more)
                    if more > per_line:
                        held = f"{pos + 1}-{last}:" if last > pos + 1 else f"{pos + 1}:"
                        line = [("class:dim", f"{held:>{SHORT_HELD}}")]
                    else:
                        held = f"cards {pos + 1}-{last}" if last > pos + 1 else f"card {pos + 1}"
                        line = [("class:dim", f"{held:>{prefix - 2}}  ")]
                line.append(self._cell_crescendo(view, seat, pos, ended))
            seats.append(lines + tagged(line, self._tags(view, seat, "called CRESCENDO"), width))
        legend = [[("class:back", "81-90P"), ("", " unseen: its back's range and action (P peek, S swap, L lock)")],
                  [("class:known", "(52)"), ("", " you know it")],
                  [("class:back", "81-90P" + SEEN_MARK), ("", " seen, hidden again")],
                  [("class:locked", "[66]"), ("", " locked")], [("", "pl: own pile")]]
        brief = [[("class:back", "81-90P"), ("", ": range, P peek S swap L lock")],
                 [("class:known", "(52)"), ("", " known")],
                 [("class:back", "81-90P" + SEEN_MARK), ("", " seen")], [("class:locked", "[66]"), ("", " locked")],
                 [("", "pl pile")]]
        if any(style == "class:back" and TOP_RANGE in text for lines in seats for line in lines for style, text in line):
            legend.insert(1, [("class:back", TOP_RANGE), ("", " means 91-100")])
            brief.insert(1, [("class:back", TOP_RANGE), ("", " 91-100")])
        if not cards or ended:
            return rows, seats, [], []
        return rows, seats, flow(legend, width, lead="   "), flow(brief, width, lead=" ")

    def _piles(self, view: View, width: int, tight: bool = False) -> list[Line]:
        """The draw pile (Reserve) and the discard pile, and a card we drew; `tight`: Crescendo's Reserve in the
        fewest words, so that the Discard (and a card drawn) shares its line in 40 columns."""
        game = self.session.game
        if view.round == 0:
            return []
        top = card_word(view.discard[0], game) if view.discard else "empty"
        drawn: Line = []
        if isinstance(view, CrispView):
            groups: list[Line] = [[("", f"Draw pile: {len(view.draw_pile)} cards")],
                                  [("", "Discard pile: "), (_suit_style(view.discard[0] if view.discard else None), top),
                                   ("", f" ({len(view.discard)})")]]
            if view.drawn is not None:
                src = " from the discard pile" if view.drawn_from == "discard" else ""
                drawn = [("", f"You drew{src}: "), (_suit_style(view.drawn) + " class:known", card_word(view.drawn, game))]
                if view.draws_left:
                    drawn.append(("", f" ({view.draws_left} more draw{'s' if view.draws_left > 1 else ''} after)"))
        else:
            back = view.reserve_top
            reserve = f"Reserve: {view.reserve}"
            # Kept on one line: the shorter words where the longer do not fit; tight, none while we hold a drawn card
            # (the top back's action is not ours to take then), so that what we drew shares the line.
            if back is not None and not (tight and view.drawn is not None):
                long = f"{reserve} (top back {back.low}-{back.high}, action {back.action.upper()})"
                shorter = f"{reserve} (top back {back.low}-{back.high}, {back.action.upper()})"
                reserve = (f"{reserve} ({back.low}-{back.high} {back.action.upper()})" if tight
                           else long if len(long) < width else shorter)
            groups = [[("", reserve)], [("", "Discard: "), ("class:up", top)]]
            if view.drawn is not None:
                drawn = [("", "You drew: "), ("class:known", card_word(view.drawn, game))]
        return flow(groups + ([drawn] if drawn else []), width, gap="  " if tight else "   ")

    def _timers(self, view: View, width: int) -> list[Line]:
        """Whose turn it is and a countdown for every timed rule running now, read from the engine's view."""
        now = self.now
        parts: list[Line] = []
        players = view.players
        if view.turn is not None:
            who = "You" if view.turn == view.me else players[view.turn]
            parts.append([("class:turn", f"{who}{' are' if who == 'You' else ' is'} to play ")])
        if isinstance(view, CrispView) and view.turn is not None:
            if view.caller is not None:
                parts.append([("", f"final turns left: {view.final_turns_left}")])
            # Windows overlap: every one still open is shown, oldest first (a time-out opens none).
            windows = [w for w in view.windows if now <= w.deadline]
            if windows:
                each = ", ".join(f"{'yours' if w.seat == view.me else players[w.seat]} {tenths(w.deadline - now)} s"
                                 for w in windows)
                parts.append([("class:warn", f"crisp window{'s' if len(windows) > 1 else ''}: {each}")])
            # Every clock says whose it is: a banner of the network's own may count down beside it.
            whose = "your" if view.turn == view.me else f"{players[view.turn]}'s"
            if now < view.opens_at:
                parts.append([("", f"{whose} turn starts in {tenths(view.opens_at - now)} s")])
            elif view.draw_until is not None:
                left = view.draw_until - now
                parts.append([("class:warn" if left < 10 else "", f"{whose} draw: {seconds_left(left)} s left")])
        if isinstance(view, CrescendoView) and view.window_until is not None:
            parts.append([("class:warn", f"NUMBER window: {tenths(view.window_until - now)} s")])
        if isinstance(view, CrescendoView) and view.turn is not None:
            if view.caller is not None:  # CRESCENDO was called: what is left is the others' final turns, as in Crisp
                said = f"final turns left: {view.final_turns_left}"
            elif view.setup:  # on the line of whose turn it is, in the shorter words where the longer do not fit
                used = 1 + sum(len(t) + 2 for part in parts for _, t in part)
                words = ("setup: each player may look at one card or swap two",
                         "setup: each may look at a card or swap two", "setup: look at a card or swap two")
                said = next((w for w in words if used + len(w) <= width), words[-1])
            else:
                # A turn counts once begun (a draw); while the drawn card waits, that turn is still the one in play.
                number = view.turn_number if view.drawn_from is not None else view.turn_number + 1
                said = f"turn {number} (CRESCENDO from turn {3 * len(players) + 1})"
            parts.append([("", said)])
        return flow(parts, width, lead=" ")

    def _round_panel(self, view: View, width: int = 80, room: int = 24) -> list[Line]:
        game = self.session.game
        snap = self.session.round_views()[self.panel_round - 1]
        # Totals by name: a table that went on without a seat seats the others anew (protocol.md §14.9).
        history = [dict(zip(v.players, v.totals)) for v in self.session.round_views()]

        def total(i: int, name: str) -> int:
            """`name`'s running total after round i + 1 (0 before the first)."""
            return history[i].get(name, 0) if i >= 0 else 0

        # A Crescendo row as it was revealed, its Jokers in it: they leave it for the discard pile as it is scored.
        shown = snap.revealed if isinstance(snap, CrescendoView) and snap.revealed else snap.known
        jokers = any(card_word(f, game) == "Joker" for row in shown for f in row if f is not None)
        legend = [[("class:dim", f"{DOWN} lower than the card before it")]] if game == "crescendo" else []
        legend += [[("class:dim", "a Joker counts for nothing")]] if jokers else []
        out = flow([[("class:title", f" Round {self.panel_round} revealed ")], *legend], width, gap="  ")
        rows = [revealed_words(game, shown[seat] if seat < len(shown) else ()) for seat in range(len(snap.players))]
        # A long row (a Crescendo row grows with each wrong NUMBER) goes on under itself, its cards never cut.
        cards_room = max(8, width - 13)
        cards = [wrap(row, cards_room) or [""] for row in rows]
        cards_w = max([min(16, cards_room), *(len(line) for lines in cards for line in lines)])
        # A row is its name, cards, round score and how that came about; what does not fit the width goes under it
        # when the screen has the lines to spare (the scores below come first): never cut to a stray letter.
        heads: list[list[Line]] = []
        tails: list[str] = []
        held = [dict(parts).get("cards") for parts in snap.scored]  # each seat's cards' total, for a tie with it
        for seat, name in enumerate(snap.players):
            score = f"round {total(self.panel_round - 1, name) - total(self.panel_round - 2, name):+d}"
            others = [c for i, c in enumerate(held) if i != seat and c is not None]
            why = score_why(snap.scored[seat] if seat < len(snap.scored) else (), others)
            ours = "class:me" if seat == snap.me else ""
            lines: list[Line] = [[("", " " * 12) if i else (ours, f" {name[:10]:<10} "), ("", f"{line:<{cards_w}} ")]
                                 for i, line in enumerate(cards[seat])]
            start = lines[-1]
            if sum(len(t) for _, t in start) + len(score) <= width:
                start.append(("", score))
                score = ""
            heads.append(lines)
            tails.append("  ".join(t for t in (score, why) if t))
        under = [score_lines(tail, width - 4) if sum(len(t) for _, t in lines[-1]) + 2 + len(tail) > width else []
                 for lines, tail in zip(heads, tails)]
        spare = len(out) + sum(map(len, heads)) + sum(map(len, under)) + len(snap.players) + 2 <= room
        for lines, tail, below in zip(heads, tails, under):
            out += lines[:-1]
            start = lines[-1]
            if below and spare:
                out += [start] + [[("class:dim", f"    {t}")] for t in below]
            else:
                # Without the lines to spare, what fits whole: the round's score is in the Scores below too, and a
                # cut one read "rou" in 40 columns.
                used = sum(len(t) for _, t in start)
                said = next((t for t in (tail, tail.split("  ")[0]) if t and used + 2 + len(t) <= width), "")
                out.append(start + ([("class:dim", f"  {said}")] if said else []))
        # The last rounds that fit beside a name, a sum column and the total (at most six): in 40 columns the
        # total was cut off the screen.
        first = max(0, len(history) - max(1, min(6, (width - 25) // 6)), self.resumed_after)
        # The rounds before are one column, their sum (back after a crash, we never had each round's own scores),
        # so that every row still adds up to its total as on the other players' screens.
        before = first
        label = "R1" if before == 1 else f"R1-{before}"
        head = (" " * 12 + (f"{label:>6}" if before else "")
                + "".join(f"{'R' + str(i + 1):>6}" for i in range(first, len(history))) + "  total")
        # No blank lines: 8 seats' reveal and scores, with the winners, fit 24 rows with the keys.
        over = [("class:good", f"  Game over: {self.winners}")] if view.over else []
        if len(out) + 2 >= room and not over:  # not one score row fits: no "Scores" heading over nothing
            return out
        out += [[("class:title", " Scores "), *over], [("class:dim", head)]]
        for seat, name in enumerate(snap.players):
            per = (f"{total(before - 1, name):>6}" if before else "") + "".join(
                f"{total(i, name) - total(i - 1, name):>6}" for i in range(first, len(history)))
            out.append([("class:me" if seat == snap.me else "", f" {name[:10]:<10} "), ("", per),
                        ("class:known", f"{total(len(history) - 1, name):>7}")])
        return out

    def _log_lines(self, room: int, width: int) -> list[Line]:
        """The newest log items that fit whole in `room` lines (never the tail of one, cut from its start)."""
        lines: list[Line] = []
        for item in reversed(self.log):
            wrapped = wrap_line([item], width)
            if len(lines) + len(wrapped) > room:
                if not lines and room > 0:  # one item longer than the room: its start, rather than nothing,
                    lines = wrapped[:room]  # ending in "…" so that it is not taken for the whole
                    style, text = lines[-1][-1]
                    lines[-1] = lines[-1][:-1] + [(style, (text if len(text) + 2 <= width else
                                                           text[:max(0, width - 2)].rstrip()) + " …")]
                break
            lines[:0] = wrapped
        return lines + [[] for _ in range(room - len(lines))]

    def _footer(self, view: View, width: int) -> list[Line]:
        out: list[Line] = []
        stopped = self.session.stopped()
        stall = self.session.stall()
        prog = self.session.progress()
        if stopped is not None:  # once we are leaving, no key to leave by: the status says we are on our way
            words = stopped_words(stopped, self.session.gave_up())
            out.append([("class:warn", f" {words}{'' if self.outcome else ' Press Q to leave.'} ")])
        elif stall is not None:
            out += [[("class:warn", text)] for text in stall_words(stall)]
        elif prog is not None and not self.panel_round:
            dots = "·" * (1 + int(self.now * 2) % 3)
            out.append([("class:dim", f" Shuffling round {prog.round} by mental poker: keys {prog.keys}/{prog.seats}, "
                                      f"passes {min(prog.passes, prog.seats)}/{prog.seats}, then dealing {dots}")])
        if self.confirm_quit:
            others = [name for seat, name in enumerate(view.players) if seat != view.me]
            after = ("The bots leave with you." if self.against_bots
                     else f"The game ends for {others[0]} too." if len(others) < SEATS[self.session.game][0]
                     else "The others go on without you.")
            ask, answer = (("Leave the table and quit p2pcards?", "quit") if self.confirm_quit == "quit"
                           else ("Leave the table?", "back to the lobby") if self.back_to_lobby
                           else ("Leave the table?", "leave"))
            out += flow([[("class:warn", f"{ask} {after}")], [("class:key", "y"), ("", f" {answer}")],
                         [("class:key", "n"), ("", " stay")]], width, lead=" ")
        elif self.outcome:
            pass  # leaving (the status says so): the keys of a table we are leaving would be words for nothing
        elif stopped is not None:
            out += flow([[("class:key", "Q"), ("", " leave the table (the rounds before stand, signed by all)")]], width,
                        lead=" ")
        elif self.chooser is not None and (f := self.chooser.next_field()) is not None:
            question, answers = prompt_parts(self.chooser, f, view, self.session.game)
            # The question goes with its first answer; each answer is kept whole on a line.
            asked = [[("class:key", f"{question} {answers[0]}" if answers else question)]] + [
                [("class:key", a)] for a in answers[1:]]
            # A digit that begins a longer choice (1 of 10-12) waits: say for what, so that it is not taken for lost.
            typed = self.chooser.typed
            waits: list[Line] = []
            if typed:
                asked.append([("class:key", f"[{typed}…]")])
                if int(typed) in {label_number(f, v, view.players) for v in self.chooser.options(f)}:
                    waits = [[("class:key", "Enter"), ("", f" takes {typed}, or type its next digit")]]
            out += flow([*asked, *waits, [("", "Esc cancel")]], width, lead=" ")
        elif self.panel_round:
            # The next round goes on behind the reveal: say so when it waits on us.
            # With the time its draw has left: a timed draw runs out behind the reveal as behind the rules.
            ours: Line = [("class:warn", f"Your turn in round {view.round}{self._draw_left(view)}: ")] if (
                view.turn == view.me and view.round > self.panel_round) else []
            leave: list[Line] = [self._over_keys()] if view.over else []
            out += flow([[*ours, ("class:key", "Enter"), ("", " back to the table")], *leave], width, lead=" ")
        else:
            out += self._keys_line(view, width)
        hint = self._hint(view, width)
        if not self.status[1] and hint:
            out.append([("class:dim", hint)])
        else:
            out.append([self.status] if self.status[1] else [])
        return out

    def _hint(self, view: View, width: int) -> str:
        """The first-time hint under the keys, while it still holds: in Crisp, until the dealt cards hide (or the
        memory aid keeps them); either game, until the player's first key and at most for the first round."""
        if self.hinted or not view.round or view.rounds_played or view.over:
            return ""
        left = 0.0
        if isinstance(view, CrispView):
            # A card not yet drawn on screen is first shown now.
            shown = [self.seen_at.get((view.round, view.me, face), self.now)
                     for face in (view.known[view.me] if view.known else ()) if face]
            left = PEEK_S - (self.now - min(shown)) if shown and not self.memory_aid else 0.0
            if left <= 0:
                return ""
        words = [w.format(left=math.ceil(left)) for w in FIRST_HINT[self.session.game]]
        return next((w for w in words if len(w) <= width), "")

    def _keys_line(self, view: View, width: int) -> list[Line]:
        game = self.session.game
        if view.over:
            # The last reveal, closed, is where the game's scores round by round are: Enter shows it again.
            again: list[Line] = ([[("", " "), ("class:key", "Enter"), ("", " the scores")]]
                                 if self.session.round_views() else [])
            return flow([[("class:good", "The game is over.")], self._over_keys(), *again], width, gap=" ", lead=" ")
        if self.session.busy() and view.legal:
            stall = self.session.stall()
            missing = [name for name, _ in stall.missing] if stall is not None else []
            # Said, so that the turn's clock running on is not taken for a move of ours gone astray.
            held = f" It waits on {' and '.join(missing)}, missing (see above)." if missing else ""
            return flow([[("class:dim", " Your move is on its way …" + held)]], width)
        seen: dict[str, int] = {}
        for m in view.legal:
            seen[action_id(m)] = seen.get(action_id(m), 0) + 1
        if not seen:
            return flow([[("class:dim", self._waiting(view, width))]], width)
        top = card_word(view.discard[0], game) if view.discard else ""
        groups: list[Line] = []
        row = len(view.known[view.me]) if view.known else 0
        digits = f"1-{row}" if row > 1 else "1"  # past 9, two digits (the chooser asks for the second)
        for aid in seen:
            if aid == "replace":
                where = "left/middle/right" if game == "crisp" else "at that position"
                groups.append([("class:key", digits), ("", f" swap it in {where}")])
            elif aid == "number":
                until = view.window_until if isinstance(view, CrescendoView) else None
                secs = f" ({tenths(until - self.now)} s)" if until is not None else ""
                against = f" {top}" if top else " the top discard"
                # Open against a Joker too, as the rules allow, and always wrong: said, not left to be found out.
                claim = (f" NUMBER: a claim against a Joker is always wrong{secs}" if top == "Joker" else
                         f" NUMBER: claim a card of yours is within 2 of{against}{secs}")
                groups.append([("class:key", digits), ("class:warn", claim)])
            elif aid == "crisp" and isinstance(view, CrispView) and view.call_until is not None:
                left = view.call_until - self.now
                groups.append([("class:key", "c"), ("class:warn", f" CALL CRISP ({tenths(left)} s)")])
            else:
                groups.append([("class:key", key_of(game, aid)), ("", " " + LABELS[aid].format(top=top))])
        if isinstance(view, CrispView) and view.can_call:
            groups.append([("class:dim", "(crisp only if you think your total is the lowest)")])
        return flow(groups, width, lead=" ")

    def _over_keys(self) -> Line:
        """The keys once the game is over: another game where we can offer one, and where Q leads."""
        again: Line = [("class:key", "n"), ("", " new game (same bots)  ")] if self.again else []
        return again + [("class:key", "Q"), ("", " " + self._where())]

    def _waiting(self, view: View, width: int = 80) -> str:
        """Why no key is open: on our own turn, what it waits for (never "the others" while the screen says we play)."""
        if view.turn != view.me:  # one line in 40 columns: it took two, and the legend gave way for them
            words = " Nothing to do right now: wait for the others."
            return words if len(words) <= width else " Nothing to do: wait for the others."
        if isinstance(view, CrispView) and self.now < view.opens_at:
            return f" Your turn opens in {tenths(view.opens_at - self.now)} s (the last player may still call crisp)."
        if isinstance(view, CrescendoView) and view.window_until is not None:
            return f" Your turn begins when the NUMBER window closes ({tenths(view.window_until - self.now)} s)."
        return " Your turn is opening …"

    def _turn_call(self) -> Line:
        """While the rules hide the table: that our turn has come, with the time left when draws are timed."""
        view = self.view()
        if view is None or view.over or view.turn != view.me:
            return []
        return [("class:warn", f"Your turn{self._draw_left(view)}")]

    def _draw_left(self, view: View) -> str:
        """The time our turn's draw has left, when draws are timed (" (29 s left)"), for a screen that hides the
        table's own clock."""
        until = view.draw_until if isinstance(view, CrispView) else None
        return f" ({seconds_left(until - self.now)} s left)" if until is not None else ""


@dataclass
class RulesPager:
    """The rules of a game with a table's options on a full screen, scrolled by keys: the lobby's `?` and the table's
    (one pager, so that both read, scroll and stop at their end alike)."""

    back: str = "back"  # where Esc goes, as its key says it
    rules: Rules | None = None
    game: str | None = None  # the game whose rules are shown (None: the pager is closed)
    options: dict[str, object] = field(default_factory=dict)
    top: int = 0  # the first line shown

    @property
    def shown(self) -> bool:
        """True while the rules are on screen."""
        return self.game is not None

    def open(self, rules: Rules | None, game: str, options: Mapping[str, object]) -> None:
        """Show the rules of `game` with `options`, from their first line."""
        self.rules, self.game, self.options, self.top = rules, game, dict(options), 0

    def key(self, k: str, size: tuple[int, int] | None, call: Sequence[Fragment] = ()) -> bool:
        """Take a key while the rules are shown (True); Ctrl-C or Ctrl-Q closes them and is the caller's to act on
        (False), as is any key while they are not shown. `size`: the screen's, so that scrolling stops at the end;
        `call`: what is said beside the keys (as for `lines`)."""
        if not self.shown:
            return False
        if k in ("c-c", "c-q"):
            self.game = None
            return False
        page = 10 if size is None else max(1, self._layout(*size, call)[2] - 1)
        if k in ("?", "escape", "q", "Q", "enter"):
            self.game = None
        elif k in ("down", "j", " ", "pagedown"):
            self.top += 1 if k in ("down", "j") else page
            if size is not None:  # scrolling stops at the end: the next key up moves up at once
                wrapped, _, rows = self._layout(*size, call)
                self.top = min(self.top, max(0, len(wrapped) - rows))
        elif k in ("up", "k", "pageup"):
            self.top = max(0, self.top - (1 if k in ("up", "k") else page))
        return True

    def lines(self, width: int, height: int, call: Sequence[Fragment] = ()) -> list[Line]:
        """The rules' screen: the title, a page of the text, and the keys (with `call`, e.g. that our turn came)."""
        wrapped, keys, rows = self._layout(width, height, call)
        top = min(self.top, max(0, len(wrapped) - rows))  # past the end (a size the keys did not know): last page
        body = wrapped[top: top + rows]
        title = f" Rules of {(self.game or '').capitalize()} "
        return fit([[("class:title", title)]] + [[("", " " + t)] for t in body] + [[]] * (rows - len(body)) + keys,
                   width, height)

    def _layout(self, width: int, height: int, call: Sequence[Fragment]) -> tuple[list[str], list[Line], int]:
        """The rules wrapped to `width`, the keys under them, and how many lines of the rules a page shows."""
        if self.rules is None:
            text = ("The rules text is not part of this build yet.\n\n"
                    "The keys shown at the bottom of the table screen are always the moves open to you.")
        else:
            text = self.rules(self.game or "crisp", dict(self.options), width - 2)
        # The keys flow onto the lines they need: in 40 columns one line cut "back to the table" and our turn's call.
        keys = flow([[("class:key", "↑↓ PgUp PgDn"), ("", " scroll")], [("class:key", "Esc"), ("", f" {self.back}")],
                     *([list(call)] if call else [])], width, gap="   ", lead=" ")
        return wrap(text, width - 2), keys, max(1, height - 1 - len(keys))  # the title, the page, the keys


def too_small(width: int, height: int, said: str = "") -> list[Line]:
    """The screen of a terminal smaller than MIN_SIZE: the size needed, then `said`, wrapped and cut to fit."""
    text = [f"Terminal too small: need at least {MIN_SIZE[0]}x{MIN_SIZE[1]} (now {width}x{height}).", said]
    return fit([[("class:warn", t)] for words in text if words for t in wrap(words, max(1, width))], width, height)


def stall_words(stall: Stall) -> list[str]:
    """The banner for a table held up: the missing seats, each with the time before we vote it gone, in one line (each
    clock next to its seat's name), and the seats the protocol waits on with the one time before it blames them."""
    out = []
    if len(stall.missing) == 1:
        name, left = stall.missing[0]
        out.append(f" {name} is missing (link lost): voted gone in {seconds_left(left)} s unless {name} comes back. "
                   if left > 0 else f" {name} is missing (link lost) and voted gone. ")
    elif stall.missing:
        names = [name for name, _ in stall.missing]
        who = f"{', '.join(names[:-1])} and {names[-1]}"
        each = ", ".join(f"{name} in {seconds_left(left)} s" if left > 0 else f"{name} already"
                         for name, left in stall.missing)
        out.append(f" {who} are missing (link lost) and voted gone. " if all(t <= 0 for _, t in stall.missing) else
                   f" {who} are missing (link lost): each is voted gone unless back in time: {each}. ")
    if stall.cut is Cut.AWAY_TOO_LONG:
        out.append(f" {AWAY_WORDS} Q leaves. ")
    elif stall.cut is not None:
        out.append(" Every other seat went missing at once: your own network seems lost. The others most likely go on "
                   "without you; Q leaves. ")
    elif stall.alone and all(left <= 0 for _, left in stall.missing):
        out.append(" No other seat is linked: the table may have gone on without you. Q leaves. ")
    if stall.owed:
        who = " and ".join(stall.owed)
        out.append(f" Waiting on {who}: blamed in {seconds_left(stall.blamed_in)} s unless {who} sends what the table needs. ")
    return out


def tagged(line: Line, tags: Line, width: int) -> list[Line]:
    """A row with its tags at its end, or on a line of their own under the name when the row has no room."""
    if not tags:
        return [line]
    spaced: Line = [f for tag in tags for f in (("", "  "), tag)]
    if sum(len(t) for _, t in line + spaced) <= width:
        return [line + spaced]
    return [line, [("", " ")] + spaced]


def flow(groups: Sequence[Line], width: int, gap: str = "  ", lead: str = "") -> list[Line]:
    """Groups of fragments laid out left to right, `gap` apart, each kept whole on a line of at most `width`.

    Every line starts with `lead`; a group too long for a line alone is broken at spaces, its styles kept.
    """
    room = max(1, width - len(lead))
    pieces: list[Line] = []
    for group in groups:
        if len(group) == 1 and len(group[0][1]) > room:
            pieces += [[(group[0][0], t)] for t in wrap(group[0][1], room)]
        elif sum(len(t) for _, t in group) > room:
            pieces += broken(group, room)
        else:
            pieces.append(group)
    out: list[Line] = []
    line: Line = []
    used = 0
    for piece in pieces:
        size = sum(len(t) for _, t in piece)
        if line and used + len(gap) + size > width:
            out.append(line)
            line = []
        if line:
            line.append(("", gap))
            used += len(gap)
        else:
            line, used = ([("", lead)] if lead else []), len(lead)
        line += piece
        used += size
    return out + [line] if line else out


def broken(group: Line, room: int) -> list[Line]:
    """Fragments too long for one line, broken at spaces into lines of at most `room` columns, each keeping its style."""
    out: list[Line] = [[]]
    used = 0
    for style, text in group:
        for word in re.split(r"(?<= )", text):  # each word with the spaces after it
            if used and used + len(word.rstrip()) > room:
                out.append([])
                used, word = 0, word.lstrip()
            if word:
                out[-1].append((style, word))
                used += len(word)
    return out


def _suit_style(card: object) -> str:
    return "class:red" if isinstance(card, str) and card[-1:] in RED_SUITS else ""


POINTS_END = re.compile(r"(?<=\d), ")  # between two parts of a round's score ("called, in order +6, pile +1")


def score_lines(tail: str, width: int) -> list[str]:
    """A round's score and how it came about ("round +7  called, in order +6, pile +1") in lines of `width`, broken
    between its parts, never inside one ("pile" at a line's end and its "+1" under it), unless a part is too long."""
    lines: list[str] = []
    for chunk in tail.split("  "):
        items = POINTS_END.split(chunk)
        for i, item in enumerate(items):
            join = ", " if i else "  "
            comma = i + 1 < len(items)  # the line may have to end on this item's comma
            if lines and len(lines[-1]) + len(join) + len(item) + comma <= width:
                lines[-1] += join + item
            else:
                if lines and i:
                    lines[-1] += ","
                lines.append(item)
    return [piece for line in lines for piece in (wrap(line, width) if len(line) > width else [line])]


def wrap(text: str, width: int) -> list[str]:
    """Lines of at most `width` columns: longer lines are broken at spaces, keeping their indent."""
    out: list[str] = []
    for para in text.splitlines():
        if len(para.rstrip()) <= width:  # a line that fits stays as written (the rules' tables keep their columns)
            out.append(para.rstrip())
            continue
        line = ""
        indent = len(para) - len(para.lstrip())
        for word in para.split():
            if line and len(line) + 1 + len(word) > width:
                out.append(line)
                line = " " * indent + word
            else:
                line = (line + " " + word) if line else " " * indent + word
        out.append(line)
    return out


def wrap_line(line: Line, width: int) -> list[Line]:
    """A line of one fragment broken at spaces to `width` columns; other lines are left whole."""
    if len(line) != 1 or len(line[0][1]) <= width or width < 10:
        return [line]
    style, text = line[0]
    lead = " " if text.startswith(" ") else ""
    return [[(style, t)] for t in wrap(text, width - 1)] if not lead else \
        [[(style, lead + t.strip())] for t in wrap(text.strip(), width - 2)]


def fit(lines: Sequence[Line], width: int, height: int) -> list[Line]:
    """Cut every line to `width` columns and the screen to `height` lines."""
    out: list[Line] = []
    for line in list(lines)[:height]:
        left = width
        cut: Line = []
        for style, text in line:
            if left <= 0:
                break
            cut.append((style, text[:left]))
            left -= len(text[:left])
        out.append(cut)
    return out


def plain(lines: Sequence[Line]) -> str:
    """The screen as plain text, one line each (captures, tests)."""
    return "\n".join("".join(t for _, t in line).rstrip() for line in lines)
