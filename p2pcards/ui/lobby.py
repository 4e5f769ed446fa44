"""The lobby: who you are, the tables announced on the LAN (live), a new table, a table's lobby, or bots at once.

Tables come from a `TableDirectory`: anything that lists table ads and can wait for the list
to change. `LanDirectory` (zeroconf, through the network layer's `Discovery`) is one; tests use
their own too. `Lan` opens and joins tables as `NetTable`s; the one seated with us is the
lobby's answer, which the table screen then plays. A game the client crashed out of (ui/comeback.py)
is offered first: one key goes back into it, another discards it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from ..crypto.identity import Identity
from ..errors import InputError, P2PCardsError
from ..files import numbered
from ..games.crisp import DRAW_SECONDS_CHOICES, LIMIT_CHOICES
from ..table.config import SEATS
from ..net.botpeer import _address
from ..net.discovery import Discovery
from ..net.discovery import TableAd as NetAd
from ..net.store import Lock, clear
from .client import MIN_SIZE, Line, Rules, RulesPager, TableClient, fit, flow, key_words, too_small, wrap, wrap_line
from .comeback import Saved, find
from .session import NetTable, TableSession, wait_changed
from .words import and_words

CLEAR = "c-u"  # Ctrl-U empties the field being typed in, as in a shell


@dataclass(frozen=True, slots=True)
class TableAd:
    """One table announced on the LAN: its key, name, game, options, seats, and its host with fingerprint."""

    key: str
    name: str
    game: str
    options: Mapping[str, object]
    taken: int
    seats: int
    host: str
    fingerprint: str


class TableDirectory(Protocol):
    """The tables announced on the LAN right now, and a way to wait until that list changes."""

    def tables(self) -> Sequence[TableAd]:
        """Every table announced now, in a stable order."""

    async def changed(self, timeout: float) -> None:
        """Return when a table appeared, changed or vanished, or after `timeout` seconds."""


@dataclass(frozen=True, slots=True)
class BotGame:
    """The lobby's answer: play `game` against `bots` bots."""

    game: str
    bots: int


@dataclass
class NewTable:
    """The table a host is about to open: its name, game, options and how many seats it offers."""

    name: str
    game: str = "crisp"
    limit: int = 100
    draw_seconds: int | None = None
    discard_draw: bool = False
    seats: int = 4

    def options(self) -> dict[str, object]:
        """The host options of the game, as the table takes them."""
        if self.game != "crisp":
            return {}
        return {"limit": self.limit, "draw_seconds": self.draw_seconds, "discard_draw": self.discard_draw}


class Room(Protocol):
    """A table's lobby that we host or joined: who is in it, and whether it can be seated."""

    table_name: str
    game: str
    options: Mapping[str, Any]
    offered: int | None  # the seats the table offers, the host's among them (None: not known)

    @property
    def is_host(self) -> bool:
        """True when we opened this table."""

    @property
    def port(self) -> int:
        """The TCP port our links listen on."""

    @property
    def addresses(self) -> Sequence[str]:
        """Where guests without multicast reach us: our IPv4 addresses but loopback (empty: not known)."""

    def lobby_players(self) -> list[tuple[str, str]]:
        """Everyone in the lobby with their fingerprints, the host first."""

    def can_seat(self) -> str | None:
        """Why the table cannot be seated now, or None."""

    def take_off(self, fpr: str) -> None:
        """Host: take the guest whose fingerprint is `fpr` off the table, for good; InputError when no guest has."""

    def offer(self, seats: int) -> None:
        """Host: offer `seats` seats (ours among them) from now on; InputError when the game cannot seat that many, or
        more have joined already."""


T = TypeVar("T")


def options_words(options: Mapping[str, object]) -> str:
    """A table's options in words, in one order for host and guests: `limit 50, 30 s per draw, discard draws`; a game
    without any (Crescendo's host sets none): `no options`."""
    out = [f"limit {options['limit']}"] if "limit" in options else []
    if "draw_seconds" in options:
        seconds = options["draw_seconds"]
        out.append("no time limit per draw" if not isinstance(seconds, (int, float)) else f"{seconds:g} s per draw")
    if "discard_draw" in options:
        out.append("discard draws" if options["discard_draw"] else "no discard draws")
    out += [f"{k} {v}" for k, v in options.items() if k not in ("limit", "draw_seconds", "discard_draw")]
    return ", ".join(out) or "no options"  # Crescendo has none a host may set ("default options" was cut to "default …")


def address_ad(host: str, port: int) -> TableAd:
    """The lobby's entry for a host given by address: its game, seats and options show on joining."""
    return TableAd(f"{host}:{port}", f"{host}:{port}", "?", {}, 0, 0, "(given by address)", "(shown on joining)")


def said(exc: Exception) -> str:
    """An error's words as a sentence of the status line."""
    text = str(exc)
    return f"{text[:1].upper()}{text[1:]}."


def clip(words: str, room: int) -> str:
    """`words` in `room` characters: whole words, then "…" for the rest (never a word cut in two)."""
    if len(words) <= room:
        return words
    cut = words[:room - 1]
    cut = cut[:cut.rindex(" ")] if " " in cut else cut
    return cut.rstrip(" ,") + " …"


def seats_words(taken: int, offered: int | None) -> str:
    """How full a table's lobby is, in the table list's words: `2 of 4 seats taken: waiting for 2 more`, `4 of 4 seats
    taken: the table is full`; `offered` None (a host that does not announce its table): what is known of it."""
    if offered is None:
        return f"{taken} {'seat' if taken == 1 else 'seats'} taken; how many the host offers is not known here"
    free = offered - taken
    return f"{taken} of {offered} seats taken: " + (f"waiting for {free} more" if free > 0 else "the table is full")


def start_words(room: Room, taken: int) -> str:
    """What starts the game, said to the host or to a guest of a table's lobby with `taken` seats taken: the host's
    key and nothing else (not a full table, not a clock), and from how many players on."""
    low = SEATS[room.game][0]
    full = room.offered is not None and taken >= room.offered
    if room.is_host:
        if taken < low:
            return f"Press s to start the game once {low} or more are seated: it never starts by itself, even when full."
        if full:
            return "The table is full: press s to start the game."
        return f"Press s to start the game now with these {taken}, or wait for more: it never starts by itself."
    if taken < low:
        return f"The host starts the game once {low} or more are seated: it never starts by itself, even when full."
    if full:
        return "The table is full: the game starts when the host starts it."
    return f"The host may start the game now with these {taken}, or wait for more: it never starts by itself."


def left_words(room: Room) -> str:
    """What Esc in a table's lobby did, in the status line: a host closed its table, a guest left it."""
    return f"You closed {room.table_name}." if room.is_host else f"You left {room.table_name}."


def trouble_words(why: str) -> str:
    """Why we are out of a table's lobby, as a sentence: a host that closed its table says goodbye with `quit`."""
    return "the host closed the table." if why == "the host said goodbye: quit" else why.rstrip(".") + "."


def _cycle(values: Sequence[T], now: T) -> T:
    """The value after `now` in `values`, round and round."""
    return values[(list(values).index(now) + 1) % len(values)] if now in values else values[0]


@dataclass
class LobbyClient:
    """The lobby screen's state: keys in, a choice or a request for the network out, lines to draw."""

    identity: Identity | None  # None on the first run: the lobby asks for a name first
    directory: TableDirectory
    rules: Rules | None = None
    make_identity: Callable[[str], Identity] | None = None
    typed: str = ""
    joinable: bool = False  # True when the lobby can reach the network (host and join LAN tables)
    selected: int = 0
    cursor: str | None = None  # the key of the table under the cursor: it stays on it as other tables come and go
    listed: tuple[str, ...] = ()  # the tables' keys when tables_changed last looked
    asking: str | None = None  # "game", then "bots"; "tname", then "tgame", then "topts" for a new table; or "addr"
    game: str = "crisp"
    status: tuple[str, str] = ("", "")
    choice: BotGame | None = None
    new: NewTable | None = None
    room: Room | None = None  # the table we host or joined, until it is seated
    pager: RulesPager = field(default_factory=RulesPager)  # the rules of the table under the cursor, or ours
    size: tuple[int, int] | None = None  # the screen's columns and lines when the last key came (the app's to set)
    seen: list[str] = field(default_factory=list)
    comeback: Saved | None = None  # a game we crashed out of, offered before anything else
    host_options: Mapping[str, Any] = field(default_factory=dict)  # Crisp options given on the command line
    address: str = ""  # the HOST:PORT being typed (asking "addr")
    typed_after: str = ""  # what the field held when it opened (the host given, and ":")
    reach: tuple[str, int] | None = None  # the host to join by address, once typed
    # The room and its players when room_changed last looked: a change is news for the status line ("Ann joined.").
    room_was: tuple[Room, tuple[tuple[str, str], ...]] | None = None
    # The host pressed x: the players as they were then, numbered on the screen until the next key says whom.
    taking_off: tuple[tuple[str, str], ...] | None = None
    taken_off: set[str] = field(default_factory=set)  # fingerprints: their going is no news ("Bob left.")

    def key(self, k: str) -> str | None:
        """Handle one key; returns "done" (a bot game chosen), "quit", or a request for the network:
        "join" (the selected table), "reach" (the host at `reach`), "host" (`new`), "start" (seat `room`),
        "leave" (leave `room`), "resume" (go back into `comeback`) or "discard" (clear it)."""
        if self.pager.key(k, self.size):  # Ctrl-C closes the rules and quits, as from the list
            return None
        if k in ("c-c", "c-q"):
            return "leave" if self.room is not None else "quit"
        if self.identity is None:
            self._name_key(k)
            return None
        if self.comeback is not None:
            if k in ("enter", "r", "d", "Q"):
                return {"enter": "resume", "r": "resume", "d": "discard", "Q": "quit"}[k]
            self.status = ("class:warn", "Press Enter to go back into your game, d to discard it, or Q to quit.")
            return None
        if self.room is not None:
            return self._room_key(k, self.room)
        if self.asking in ("tname", "tgame", "topts"):
            return self._new_key(k)
        if self.new is not None and k != "Q":  # opening: its screen stays up, so the list's keys would act unseen
            self.status = ("", f"Opening {self.new.name} … a moment.")
            return None
        if self.asking == "addr":
            return self._address_key(k)
        if k == "Q":
            return "quit"
        if self.asking == "game":
            if k in ("1", "2"):
                self.game = "crisp" if k == "1" else "crescendo"
                self.asking = "bots"
            elif k == "escape":
                self.asking = None
            else:
                self.status = ("class:warn", "Press 1 for Crisp or 2 for Crescendo (Esc: back).")
            return None
        if self.asking == "bots":
            low, high = SEATS[self.game]
            if k.isdigit() and low - 1 <= int(k) <= high - 1:
                self.choice = BotGame(self.game, int(k))
                return "done"
            if k == "escape":
                self.asking = None
                return None
            self.status = ("class:warn", f"{self.game.capitalize()} takes {low - 1} to {high - 1} bots: press a digit.")
            return None
        tables = self.directory.tables()
        self.selected = self._cursor(tables)
        self.status = ("", "")
        if k == "b":
            self.asking = "game"
        elif k in ("down", "up") and tables:
            self.selected = min(self.selected + 1, len(tables) - 1) if k == "down" else max(0, self.selected - 1)
            self.cursor = tables[self.selected].key
        elif k == "?":
            ad = tables[self.selected] if tables and tables[self.selected].game in SEATS else None
            self.pager.open(self.rules, *((ad.game, ad.options) if ad is not None else ("crisp", {})))
        elif k == "enter":
            if not self.joinable:
                self.status = ("class:warn", "This lobby has no network. Press b to play against bots.")
            elif not tables:
                self.status = ("class:warn", "No table to join yet: press n to open one.")
            elif tables[self.selected].seats and tables[self.selected].taken >= tables[self.selected].seats:
                self.status = ("class:warn", f"{tables[self.selected].name} has no free seat.")
            else:
                self.status = ("", f"Joining {tables[self.selected].name} …")
                return "join"
        elif k == "a" and self.joinable:
            # A host given by address opens its next table on a new port: its host is typed already.
            given = [ad.key for ad in tables if ad.game not in SEATS]
            self.address = self.typed_after = given[0].rpartition(":")[0] + ":" if given else ""
            self.asking = "addr"
        elif k == "n":
            if not self.joinable:
                self.status = ("class:warn", "This lobby has no network. Press b to play against bots.")
            else:
                self.new = NewTable(f"{self.identity.name}'s table", **self.host_options)
                self.asking = "tname"
        else:
            self.status = ("class:warn", f"{key_words(k)} does nothing here.")
        return None

    def back(self, winners: str, recorded: str | None = None) -> None:
        """Back from a table: the lobby's list again, saying how the last game ended (`winners`, empty: we left) and
        where its transcript was saved (`recorded`), if it was."""
        self.room, self.new, self.choice, self.comeback, self.asking = None, None, None, None, None
        kept = f" Its transcript is saved in {recorded}." if recorded else ""
        self.status = ("", f"Back in the lobby. Last game: {winners}{kept}" if winners
                       else f"Back in the lobby: you left the table.{kept}")

    def selected_table(self) -> TableAd | None:
        """The table the cursor is on."""
        tables = self.directory.tables()
        return tables[self._cursor(tables)] if tables else None

    def tables_changed(self) -> None:
        """The list of tables changed (called where that is handled, never by drawing): the cursor stays on the
        table it was on, wherever that table is listed now (a table listed above it moved it onto another)."""
        tables = self.directory.tables()
        if self.cursor is None and self.listed:
            self.cursor = self.listed[min(self.selected, len(self.listed) - 1)]
        self.selected = self._cursor(tables)
        self.listed = tuple(ad.key for ad in tables)

    def _cursor(self, tables: Sequence[TableAd]) -> int:
        """The cursor's place in `tables`: on its table while that is listed, else where it was (the last place
        when the list has shrunk)."""
        keys = [ad.key for ad in tables]
        return keys.index(self.cursor) if self.cursor in keys else min(self.selected, max(0, len(tables) - 1))

    def _address_key(self, k: str) -> str | None:
        if k == "escape":
            self.asking = None
        elif k == "backspace":
            self.address = self.address[:-1]
        elif k == CLEAR:
            self.address = ""
        elif k == "enter":
            typed = self.address.strip()
            # A whole HOST:PORT typed after the host already there ("10.0.0.2:10.0.0.7:41873") is that address.
            after = typed[len(self.typed_after):] if self.typed_after and typed.startswith(self.typed_after) else ""
            whole = after if ":" in after else ""
            try:
                self.reach = _address(whole or typed)
            except InputError:
                self.status = ("class:warn", "Type the host's address as HOST:PORT, as its lobby shows it.")
                return None
            self.asking = None
            self.status = ("", f"Joining {self.reach[0]}:{self.reach[1]} …")
            return "reach"
        elif len(k) == 1 and not k.isspace():
            self.address = (self.address + k)[:80]
        return None

    def _new_key(self, k: str) -> str | None:
        new = self.new
        assert new is not None
        if k == "escape":
            self.asking, self.new = None, None
            return None
        if self.asking == "tname":
            if k == "backspace":
                new.name = new.name[:-1]
            elif k == CLEAR:
                new.name = ""
            elif k == "enter":
                if new.name.strip():
                    self.asking = "tgame"
                else:
                    self.status = ("class:warn", "A table needs a name.")
            elif len(k) == 1:
                new.name = (new.name + k)[:40]
            return None
        if self.asking == "tgame":
            if k in ("1", "2"):
                new.game = "crisp" if k == "1" else "crescendo"
                new.seats = min(new.seats, SEATS[new.game][1])
                self.asking = "topts"
            else:
                self.status = ("class:warn", "Press 1 for Crisp or 2 for Crescendo (Esc: back).")
            return None
        low, high = SEATS[new.game]
        crisp = new.game == "crisp"
        if k == "+":
            new.seats = min(high, new.seats + 1)
        elif k == "-":
            new.seats = max(low, new.seats - 1)
        elif k == "l" and crisp:
            new.limit = _cycle(LIMIT_CHOICES, new.limit)
        elif k == "t" and crisp:
            new.draw_seconds = _cycle(DRAW_SECONDS_CHOICES, new.draw_seconds)
        elif k == "p" and crisp:
            new.discard_draw = not new.discard_draw
        elif k == "enter":
            self.status = ("", f"Opening {new.name} …")
            self.asking = None
            return "host"
        else:
            self.status = ("class:warn", f"{key_words(k)} does nothing here.")
        return None

    def _room_key(self, k: str, room: Room) -> str | None:
        if self.taking_off is not None:
            self._take_off_key(k, room, self.taking_off)
            return None
        if k == "x" and room.is_host:
            players = tuple(room.lobby_players())
            if len(players) < 2:
                self.status = ("class:warn", "No guest to take off the table.")
            else:
                self.taking_off = players
                numbers = "2" if len(players) == 2 else f"2 to {len(players)}"
                self.status = ("class:warn", f"Take whom off the table, for good? Press their number ({numbers});"
                                             " any other key: no one.")
            return None
        if k in ("+", "-") and room.is_host:
            self._offer_key(k, room)
            return None
        if k == "s":
            why = room.can_seat()
            if why is None:
                return "start"
            self.status = ("class:warn", why + ".")
        elif k in ("escape", "Q"):
            return "leave"
        elif k == "?":
            self.pager.open(self.rules, room.game, room.options)
        else:
            self.status = ("class:warn", f"{key_words(k)} does nothing here.")
        return None

    def _offer_key(self, k: str, room: Room) -> None:
        seats = (room.offered or SEATS[room.game][1]) + (1 if k == "+" else -1)
        try:
            room.offer(seats)
        except InputError as exc:
            self.status = ("class:warn", said(exc))
            return
        self.status = ("", f"The table offers {seats} seats now.")

    def _take_off_key(self, k: str, room: Room, players: tuple[tuple[str, str], ...]) -> None:
        self.taking_off = None
        if not (k.isdigit() and 2 <= int(k) <= len(players)):
            self.status = ("", "No one was taken off the table.")
            return
        name, fpr = players[int(k) - 1]
        try:
            room.take_off(fpr)
        except InputError:
            self.status = ("class:warn", f"{name} is no longer in the lobby.")
            return
        self.taken_off.add(fpr)
        self.status = ("", f"{name} was taken off the table and cannot join it again.")

    def _name_key(self, k: str) -> None:
        if k == "backspace":
            self.typed = self.typed[:-1]
        elif k == CLEAR:
            self.typed = ""
        elif k == "enter" and not self.typed.strip():
            self.status = ("class:warn", "Type a name first, then Enter.")
        elif k == "enter":
            assert self.make_identity is not None
            try:
                self.identity = self.make_identity(self.typed)
                self.status = ("", f"Welcome, {self.identity.name}.")
            except InputError as exc:
                self.status = ("class:warn", said(exc))
        elif len(k) == 1:
            self.typed = (self.typed + k)[:32]
        return None

    def lines(self, width: int, height: int) -> list[Line]:
        """The whole lobby screen."""
        if width < MIN_SIZE[0] or height < MIN_SIZE[1]:  # a fingerprint cut short is worse than none
            return too_small(width, height)
        if self.identity is None:
            ask, field = ("", " Your name, as the other players will see it: "), ("class:known", self.typed + "▏")
            # In 40 columns the question and its hint were cut, and the name typed was past the edge: unseen.
            asked = [[ask, field]] if len(ask[1]) + len(field[1]) <= width else [
                *wrap_line([(ask[0], ask[1].rstrip())], width), [("", "  "), field]]
            return fit([[("class:title", " p2pcards: welcome ")], [], *asked,
                        *wrap_line([("class:dim", " Type it, then Enter. A key of your own is made for you too.")],
                                   width),
                        [], *(wrap_line([self.status], width) if self.status[1] else [[]])], width, height)
        if self.pager.shown:
            return self.pager.lines(width, height)
        me = self.identity
        who: list[Line] = [[("", " You are "), ("class:me", me.name), ("", "   fingerprint "),
                            ("class:known", me.fingerprint)]]
        if sum(len(t) for _, t in who[0]) > width:  # the fingerprint is read aloud: never cut, on a line of its own
            who = [[("", " You are "), ("class:me", me.name), ("", ", fingerprint")], [("class:known", f"  {me.fingerprint}")]]
        out: list[Line] = [[("class:title", " p2pcards lobby ")], *who,
                           *wrap_line([("class:dim", " Compare fingerprints aloud with the people at your table.")], width),
                           []]
        # Wrapped: a reason from the network is long ("You are out of … : your join was refused: …"), and was cut.
        said = wrap_line([self.status], width) if self.status[1] else [[]]
        if self.comeback is not None:
            out += self._comeback_lines(self.comeback, width)
        elif self.room is not None:
            room = self._room_lines(self.room, width, height - len(said))
            # A table of 8 in 40 columns is taller than the screen: who we are is said in our own row already.
            out = (out if len(out) + len(room) + len(said) <= height else []) + room
        elif self.new is not None:
            out += self._new_lines(self.new)
        else:
            out += self._table_lines(width)
        return fit(out + said, width, height)

    def _comeback_lines(self, saved: Saved, width: int) -> list[Line]:
        """The game to come back into, its words wrapped to `width` (in 40 columns they were cut: "with Bob (ta")."""
        said: list[Line] = [[("", " " + saved.summary())],
                            [("class:dim", " Your client stopped mid-game. The others wait a short while for your seat,"
                                           " then go on without it.")]]
        if saved.late():
            said.append([("class:warn", " It may be too late: they have likely gone on without you already.")])
        keys: list[Line] = [[("class:key", "Enter"), ("", " go back into the game")],
                            [("class:key", "d"), ("", " discard it")], [("class:key", "Q"), ("", " quit (keep it for later)")]]
        return ([[("class:title", " Your game is not over ")]] + [w for line in said for w in wrap_line(line, width)]
                + [[]] + flow(keys, width, lead=" "))

    def _table_lines(self, width: int) -> list[Line]:
        out: list[Line] = [[("class:title", " Tables on this network ")]]
        tables = list(self.directory.tables())
        selected = self._cursor(tables)
        if not tables:
            out.append([("class:dim", " No table announced on this network yet.")])
        for i, ad in enumerate(tables):
            mark = "▶" if i == selected else " "
            name = ("class:turn" if i == selected else "", f"{mark} {ad.name[:22 if ad.game not in SEATS else 16]:<16}")
            if ad.game not in SEATS:  # a host given by address: its game, seats and options show on joining
                about = "a host given by address: its table shows when you join"
                out += ([[name, ("class:dim", f"  {about}")]] if len(name[1]) + 2 + len(about) <= width else
                        [[name]] + [[("class:dim", f"    {t}")] for t in wrap(about, width - 4)])
                continue
            # The seats in words: "seats 2/8" read as well for two free as for two taken.
            taken = f"{ad.taken} of {ad.seats} seats taken"
            seats = ("", f" {ad.game:<9} {taken}  ")
            host = ("class:dim", f"host {ad.host[:10]} {ad.fingerprint[:11]}")
            # The options take what the rest of the row leaves, the host at the row's end; short of room they go
            # under the row, whole; in 40 columns the game goes with them, and who hosts under the name and seats.
            room = width - len(name[1]) - len(seats[1]) - 1 - len(host[1])
            if room >= 12:
                out.append([name, seats, ("", f"{clip(options_words(ad.options), room):<{room}} "), host])
                continue
            if len(name[1]) + len(seats[1]) + len(host[1]) <= width:  # no room for the options: the host after the seats
                out.append([name, seats, host])
                said = options_words(ad.options)
            else:
                out += [[name, ("", f" {taken}")], [("", "    "), host]]
                said = f"{ad.game.capitalize()}: {options_words(ad.options)}"
            out += [[("", f"    {t}")] for t in wrap(said, width - 4)]
        out.append([])
        if self.asking == "addr":
            out.append([("", " Join the host at "), ("class:known", self.address + "▏")])
            out += flow([[("class:key", "Enter"), ("", " join")], [("class:key", "Esc"), ("", " back")],
                         [("class:key", "Ctrl-U"), ("", " clear")],
                         [("class:dim", "(HOST:PORT, as the host's lobby shows it)")]], width, lead=" ")
        elif self.asking == "game":
            out += flow([[("class:key", "Play against bots:")], [("", "1 Crisp")], [("", "2 Crescendo")],
                         [("", "Esc back")]], width, gap="   ", lead=" ")
        elif self.asking == "bots":
            low, high = SEATS[self.game]
            out += flow([[("class:key", f"{self.game.capitalize()} against how many bots?")],
                         [("", f"{low - 1}-{high - 1}")], [("", "Esc back")]], width, gap="   ", lead=" ")
        else:  # only the keys open now
            keys: list[Line] = [[("class:key", "b"), ("", " play against bots")]]
            if self.joinable:
                keys += [[("class:key", "↑↓ Enter"), ("", " join a table")]] if tables else []
                keys += [[("class:key", "a"), ("", " join by address")], [("class:key", "n"), ("", " new table")]]
            out += flow(keys + [[("class:key", "?"), ("", " rules")], [("class:key", "Q"), ("", " quit")]], width,
                        lead=" ")
        return out

    def _new_lines(self, new: NewTable) -> list[Line]:
        out: list[Line] = [[("class:title", " A new table ")],
                           [("", " Name: "), ("class:known", new.name + ("▏" if self.asking == "tname" else ""))]]
        if self.asking == "tname":
            # The field starts filled ("Ann's table"): what is typed goes after it, so the key that empties it is said.
            return out + [[], [("class:key", " Enter"), ("", " next  "), ("class:key", "Ctrl-U"), ("", " clear  "),
                               ("class:key", "Esc"), ("", " back")]]
        if self.asking == "tgame":
            return out + [[], [("class:key", " Game: "), ("", "1 Crisp   2 Crescendo   Esc back")]]
        low, high = SEATS[new.game]
        out += [[("", " Game: "), ("class:known", new.game.capitalize())],
                [("class:key", " + -"), ("", f" seats offered: {new.seats} ({low} to {high})")]]
        if new.game == "crisp":
            draw = "no limit" if new.draw_seconds is None else f"{new.draw_seconds} s"
            out += [[("class:key", " l"), ("", f"   game ends at: {new.limit} points")],
                    [("class:key", " t"), ("", f"   time per draw: {draw}")],
                    [("class:key", " p"), ("", f"   draw from the discard pile: {'yes' if new.discard_draw else 'no'}")]]
        else:
            out.append([("class:dim", " Crescendo has no options a host may set.")])
        return out + [[], [("class:key", " Enter"), ("", " open the table  "), ("class:key", "Esc"), ("", " back")]]

    def room_changed(self) -> None:
        """Who came or went in our table's lobby since this was last called, said in the status line: the word of a
        moment before ("den is open.", "You joined den.") gives way to what is true now. Called where the room's
        changes are handled, never by drawing (the first call for a room only notes who is in it)."""
        room = self.room
        if self.room_was is None or self.room_was[0] is not room:  # another table (or none): nobody to take off
            self.taking_off, self.taken_off = None, set()
        if room is None:
            self.room_was = None
            return
        players = room.lobby_players()
        was = self.room_was[1] if self.room_was is not None and self.room_was[0] is room else None
        self.room_was = (room, tuple(players))
        if was is None or tuple(players) == was:
            return
        mine = None if self.identity is None else self.identity.fingerprint
        # The players are in join order: one listed before us joined before we did, and is no news to us (a guest
        # read "Bob joined." when the host's word of Bob, there all along, came in after its own join).
        ours = next((i for i, (_, fpr) in enumerate(players) if fpr == mine), len(players))
        came = [name for i, (name, fpr) in enumerate(players) if fpr not in {f for _, f in was} and i > ours]
        went = [name for name, fpr in was if fpr not in {f for _, f in players} | self.taken_off and fpr != mine]
        news = [f"{and_words(names)} {verb}" for names, verb in ((came, "joined"), (went, "left")) if names]
        if news:
            self.status = ("", "; ".join(news) + ".")

    def _room_lines(self, room: Room, width: int, height: int) -> list[Line]:
        """A table's lobby in `height` lines at most where it can be: its seats, how to start and the keys stay whole,
        and the players that do not fit are counted after those that do, in seat order."""
        opts = options_words(room.options)
        players = room.lobby_players()
        # Wrapped: in 40 columns the options read "limit 100, no time limit per draw, no d".
        top: list[Line] = [*wrap_line([("class:title", f" {room.table_name} · {room.game.capitalize()} ")], width),
                           *wrap_line([("class:dim", f" {opts}")], width),
                           *wrap_line([("class:good", f" {seats_words(len(players), room.offered)}.")], width),
                           [("", f" Players ({len(players)}), in seat order:")]]
        me = self.identity
        rows: list[list[Line]] = []
        # Names in a column as wide as the longest where 20 columns would push the fingerprints past the edge: in 40
        # columns a short name and its fingerprint then share a line, and a table of 8 fits a screen of 24 lines.
        wide = 2 + 20 + 1 + max((len(fpr) for _, fpr in players), default=0) + len(" (host) (you)") <= width
        column = 20 if wide else max((len(name[:20]) for name, _ in players), default=0)
        numbers = {fpr: i + 1 for i, (_, fpr) in enumerate(self.taking_off or ()) if i > 0}  # whom x may take off
        for i, (name, fpr) in enumerate(players):
            tag = " (host)" if i == 0 else ""
            mine = me is not None and fpr == me.fingerprint
            lead = f"{numbers[fpr]} " if fpr in numbers else "  "
            row: Line = [("class:me" if mine else "", f"{lead}{name[:20]:<{column}}"), ("class:known", f" {fpr}"),
                         ("class:dim", tag + (" (you)" if mine else ""))]
            # Fingerprints are compared aloud: in a narrow terminal each goes whole under its name.
            rows.append([row] if sum(len(t) for _, t in row) <= width else [
                [row[0], row[2]], [("class:known", f"    {fpr}")]])
        bottom: list[Line] = [[]]
        if room.is_host and (room.offered is None or len(players) < room.offered):  # a full table takes no one more
            where = " or ".join(f"--peer {a}:{room.port}" for a in room.addresses[:3]) or f"--peer ADDRESS:{room.port}"
            bottom += wrap_line([("class:dim", f" Guests without multicast join with {where}")], width)
        bottom += wrap_line([("", f" {start_words(room, len(players))}")], width)
        keys: list[Line] = [[("class:key", "s"), ("", " start the game")], [("class:key", "Esc"), ("", " close the table")]] \
            if room.is_host else [[("class:key", "Esc"), ("", " leave")]]
        if room.is_host:
            keys.append([("class:key", "+ -"), ("", " seats offered")])
        if room.is_host and len(players) > 1:
            keys.append([("class:key", "x"), ("", " take a guest off")])
        bottom += flow(keys + [[("class:key", "?"), ("", " rules")]], width, lead=" ")
        room_for = height - len(top) - len(bottom)
        if sum(map(len, rows)) > room_for:
            bottom, room_for = bottom[1:], room_for + 1  # the blank line goes first
        if sum(map(len, rows)) > room_for:
            shown = list(itertools.accumulate(map(len, rows)))
            fits = sum(1 for used in shown if used <= room_for - 1)  # a line counts the players not shown
            rows = rows[:fits] + [[[("class:dim", f"  … {len(rows) - fits} more: make the terminal taller")]]]
        return top + [line for row in rows for line in row] + bottom


Choice = BotGame | TableSession | Saved


async def run_lobby_app(lobby: LobbyClient, input: Input | None = None, output: Output | None = None,
                        lan: Lan | None = None) -> Choice | None:
    """Show the lobby until the player chooses a bot game, a LAN table is seated with us (returned) or quits (None)."""
    from .app import build_screen, show

    result: list[Choice | None] = []
    busy: list[asyncio.Task[None]] = []

    def finish(choice: Choice | None) -> None:
        if not result:
            result.append(choice)
            app.exit(result=0)

    def act(coro: Any) -> None:
        if busy and not busy[-1].done():
            lobby.status = ("class:warn", "Wait: the last request is still on its way.")
            return
        busy.append(asyncio.get_running_loop().create_task(coro))

    async def host(new: NewTable) -> None:
        assert lan is not None and lobby.identity is not None
        try:
            lobby.room = await lan.host(lobby.identity, new)
            lobby.room_changed()
            lobby.status = ("class:good", f"{lobby.room.table_name} is open.")
        except (P2PCardsError, OSError) as exc:
            lobby.status = ("class:warn", f"Could not open the table: {exc}")
        lobby.new = None
        app.invalidate()

    async def join(ad: TableAd) -> None:
        assert lan is not None and lobby.identity is not None
        try:
            lobby.room = await lan.join(lobby.identity, ad)
            lobby.room_changed()
            lobby.status = ("class:good", f"You joined {lobby.room.table_name}.")
        except (P2PCardsError, OSError) as exc:
            lobby.status = ("class:warn", f"Could not join {ad.name}: {exc}")
        app.invalidate()

    async def reach(host: str, port: int) -> None:
        assert lan is not None and lobby.identity is not None
        try:
            lobby.room = await lan.reach(lobby.identity, host, port)
            lobby.room_changed()
            lobby.status = ("class:good", f"You joined {lobby.room.table_name}.")
        except (P2PCardsError, OSError) as exc:
            lobby.status = ("class:warn", f"Could not join {host}:{port}: {exc}")
        app.invalidate()

    async def leave(room: NetTable) -> None:
        await room.leave()

    def on_key(k: str) -> None:
        size = app.output.get_size()
        lobby.size = (size.columns, size.rows)
        what = lobby.key(k)
        room = lobby.room
        if what == "done":
            finish(lobby.choice)
        elif what == "resume":
            finish(lobby.comeback)
        elif what == "discard" and lobby.comeback is not None:
            clear(lobby.comeback.directory)
            lobby.comeback = None
            lobby.status = ("", "Your saved game was discarded: the others go on without you.")
        elif what == "quit":
            finish(None)
        elif what == "host" and lobby.new is not None:
            act(host(lobby.new))
        elif what == "join" and (ad := lobby.selected_table()) is not None:
            act(join(ad))
        elif what == "reach" and lobby.reach is not None:
            act(reach(*lobby.reach))
        elif what == "start" and isinstance(room, NetTable):
            room.seat_table()
            finish(room)
        elif what == "leave" and isinstance(room, NetTable):
            lobby.room = None
            lobby.status = ("", left_words(room))
            act(leave(room))
        app.invalidate()

    app = build_screen(lobby.lines, on_key, input, output)

    async def follow() -> None:
        while True:
            room = lobby.room
            if isinstance(room, NetTable):
                await room.lobby_changed(0.5)
                if lobby.room is not room:  # left meanwhile (Esc): how it ends is ours, not news to say
                    continue
                lobby.room_changed()
                if room.seated():
                    finish(room)
                elif (why := room.lobby_trouble()) is not None:
                    lobby.room = None
                    lobby.status = ("class:warn", f"You are out of {room.table_name}: {trouble_words(why)}")
                    act(leave(room))
            else:
                await lobby.directory.changed(0.5)
                lobby.tables_changed()
            app.invalidate()

    task = asyncio.get_running_loop().create_task(follow())
    try:
        await show(app)  # the terminal closed (its input ended) or a signal: as Q, with the goodbyes below
    finally:
        task.cancel()
        for t in busy:
            await asyncio.gather(t, return_exceptions=True)
    chosen = result[0] if result else None
    if isinstance(lobby.room, NetTable) and chosen is not lobby.room:
        await lobby.room.leave()  # quit from a table's lobby: say goodbye
    return chosen


class NoDirectory:
    """The directory of a lobby without a network: no tables, ever."""

    def tables(self) -> Sequence[TableAd]:
        """No tables."""
        return ()

    async def changed(self, timeout: float) -> None:
        """Nothing ever changes."""
        await asyncio.sleep(timeout)


class LanDirectory:
    """The tables zeroconf finds on the LAN, kept current by `follow` (a task of the lobby)."""

    def __init__(self, disco: Discovery) -> None:
        self.disco = disco
        self.ads: dict[str, NetAd] = {}
        self._tables: list[TableAd] = []
        self._event = asyncio.Event()

    async def follow(self) -> None:
        """Read every snapshot the browser yields, for as long as the lobby lives."""
        async for snapshot in self.disco.tables():
            # A table is its id and its host's key: a stranger's own table under the same id is another entry.
            self.ads = {f"{ad.table.hex()} {ad.key.hex()}": ad for ad in snapshot}
            self._tables = [TableAd(key, ad.name, ad.game, ad.opts, ad.taken, ad.taken + ad.free, ad.host,
                                    ad.fingerprint) for key, ad in self.ads.items()]
            self._event.set()

    def tables(self) -> Sequence[TableAd]:
        """The tables announced now, sorted by name."""
        return list(self._tables)

    async def changed(self, timeout: float) -> None:
        """Return when a table appeared, changed or vanished, or after `timeout` seconds."""
        await wait_changed(self._event, timeout)


class PeerDirectory(NoDirectory):
    """Without multicast: the one host given by address (--peer), as one entry to join."""

    def __init__(self, host: str, port: int) -> None:
        self.entry = address_ad(host, port)

    def tables(self) -> Sequence[TableAd]:
        """The one host."""
        return (self.entry,)


class Lan:
    """The lobby's way to the network: one Discovery for the process (none with --peer), tables hosted and joined."""

    def __init__(self, interfaces: Sequence[str] | None = None, peer: tuple[str, int] | None = None,
                 record: str | None = None, state: Path | None = None, overwrite: bool = False) -> None:
        self.interfaces = interfaces
        self.peer = peer
        self.record = record  # where each table we sit at saves its transcript
        self.overwrite = overwrite  # over a file already there (--overwrite)
        self.state = state  # where the table we sit at journals our seat
        self.disco: Discovery | None = None
        self.directory: TableDirectory = PeerDirectory(*peer) if peer else NoDirectory()
        self._follow: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Lan:
        if self.peer is None:
            self.disco = Discovery(self.interfaces)
            await self.disco.__aenter__()
            directory = LanDirectory(self.disco)
            self.directory = directory
            self._follow = asyncio.get_running_loop().create_task(directory.follow())
        return self

    async def __aexit__(self, *exc: object) -> None:
        if self._follow is not None:
            self._follow.cancel()
            await asyncio.gather(self._follow, return_exceptions=True)
        if self.disco is not None:
            await self.disco.close()

    def _table(self, identity: Identity, game: str = "crisp", options: Mapping[str, Any] | None = None) -> NetTable:
        return NetTable(identity, game, dict(options or {}), interfaces=self.interfaces,
                        mdns=self.disco is not None, disco=self.disco, record=self.record, state=self.state,
                        overwrite=self.overwrite)

    async def host(self, identity: Identity, new: NewTable) -> NetTable:
        """Open `new` and announce it (unless there is no multicast)."""
        table = self._table(identity, new.game, new.options())
        try:
            await table.open()
            await table.host(new.name, new.seats)
        except BaseException:
            await table.leave()
            raise
        return table

    async def join(self, identity: Identity, ad: TableAd) -> NetTable:
        """Join the table `ad` (found by discovery, or the host given by address)."""
        if isinstance(self.directory, LanDirectory):
            where = self.directory.ads.get(ad.key)
            if where is None:
                raise P2PCardsError(f"{ad.name} is gone")
            return await self._join(identity, where)
        return await self._join(identity, [self.peer] if self.peer else [])

    async def reach(self, identity: Identity, host: str, port: int) -> NetTable:
        """Join the host at an address typed in the lobby; without multicast, the lobby's one entry from now on."""
        if isinstance(self.directory, PeerDirectory):
            self.peer = (host, port)
            self.directory.entry = address_ad(host, port)
        return await self._join(identity, [(host, port)])

    async def _join(self, identity: Identity, where: NetAd | list[tuple[str, int]]) -> NetTable:
        table = self._table(identity)
        try:
            await table.open()
            await table.join(where)
        except BaseException:
            await table.leave()
            raise
        return table


async def run_lobby(name: str | None, rules: Rules | None, clock: Callable[[], float] = time.time,
                    interfaces: Sequence[str] | None = None, peer: tuple[str, int] | None = None,
                    record: str | None = None, state: Path | None = None,
                    input: Input | None = None, output: Output | None = None,
                    host_options: Mapping[str, Any] | None = None, overwrite: bool = False,
                    saved: list[str] | None = None) -> int:
    """`p2pcards play` without --bots: a game to come back into, or the lobby, then the table it leads to (its
    transcript saved to `record`, our seat journaled in `state`, which this client holds alone meanwhile); a new
    table starts from `host_options` (the Crisp options given on the command line); `overwrite`: the transcript may
    replace a file already there; `saved`: where each game's transcript was saved is added to it."""
    from ..crypto.identity import KEY_FILE, data_dir, load_or_create, set_name
    from .app import run_table

    def make(typed: str) -> Identity:
        set_name(typed)
        return load_or_create()

    if name is not None:
        set_name(name)
    first_run = name is None and not (data_dir() / KEY_FILE).exists()
    with Lock(state) if state is not None else contextlib.nullcontext():
        identity = None if first_run else load_or_create()
        comeback, why = (None, None)
        if state is not None:
            if identity is None:
                clear(state)  # no identity yet: nothing journaled there can be ours
            else:
                comeback, why = find(state, identity)
        async with Lan(interfaces, peer, record, state, overwrite) as lan:
            lobby = LobbyClient(identity, lan.directory, rules, make_identity=make, joinable=True,
                                host_options=dict(host_options or {}),
                                comeback=comeback, status=("class:warn", why) if why else ("", ""))
            for game in itertools.count(1):  # Q at a table comes back here; Ctrl-C there, or Q here, quits
                lan.record = None if record is None else numbered(record, game, overwrite)
                choice = await run_lobby_app(lobby, input, output, lan=lan)
                if choice is None or lobby.identity is None:
                    return 0
                session: TableSession
                if isinstance(choice, BotGame):  # no journal: the bots go with the client (session.py)
                    options = dict(host_options or {}) if choice.game == "crisp" else {}
                    session = NetTable(lobby.identity, choice.game, options, bots=choice.bots, record=lan.record,
                                       overwrite=overwrite)
                elif isinstance(choice, Saved):  # the seat keeps the name it sat down with, whatever --name says now
                    seated = Identity(lobby.identity.key, choice.node.config.names[choice.node.seat])
                    where = interfaces if interfaces is not None else choice.node.interfaces  # as it was, unless told
                    session = NetTable(seated, choice.node.config.game, interfaces=where, record=lan.record,
                                       state=state, saved=choice.node, overwrite=overwrite)
                else:
                    session = choice
                # No second look at the cards after a crash.
                client = TableClient(session, rules, seen_before=isinstance(choice, Saved), back_to_lobby=True,
                                     against_bots=isinstance(choice, BotGame))
                try:
                    await run_table(session, rules, input, output, clock=clock, client=client)
                finally:
                    recorded = session.recorded if isinstance(session, NetTable) else None
                    if recorded and saved is not None:
                        saved.append(recorded)
                if client.outcome != "leave":
                    return 0
                lobby.back(client.winners, recorded)
        return 0
