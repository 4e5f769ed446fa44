"""The lobby: who you are, the tables announced on the LAN (live), and a game against bots at once.

Tables come from a `TableDirectory`: anything that lists table ads and can wait for the list
to change. The zeroconf browser of the network layer is one; tests use their own.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Protocol

from prompt_toolkit.input import Input
from prompt_toolkit.output import Output

from ..crypto.identity import Identity
from ..errors import InputError
from ..table.config import SEATS
from .client import Line, fit, wrap

Rules = Callable[[str, dict[str, object]], str]


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
class LobbyClient:
    """The lobby screen's state: keys in, a choice out, lines to draw."""

    identity: Identity | None  # None on the first run: the lobby asks for a name first
    directory: TableDirectory
    rules: Rules | None = None
    make_identity: Callable[[str], Identity] | None = None
    typed: str = ""
    joinable: bool = False  # True once the network layer can seat us at a LAN table
    selected: int = 0
    asking: str | None = None  # "game", then "bots"
    game: str = "crisp"
    status: tuple[str, str] = ("", "")
    choice: BotGame | None = None
    rules_for: str | None = None
    rules_top: int = 0
    seen: list[str] = field(default_factory=list)

    def key(self, k: str) -> str | None:
        """Handle one key; returns "done" when the lobby has a choice, "quit" when the player leaves."""
        if self.rules_for is not None:
            if k in ("escape", "?", "q", "Q", "enter"):
                self.rules_for = None
            elif k in ("down", " ", "pagedown"):
                self.rules_top += 1 if k == "down" else 10
            elif k in ("up", "pageup"):
                self.rules_top = max(0, self.rules_top - (1 if k == "up" else 10))
            return None
        if k in ("c-c", "c-q") or (k == "Q" and self.identity is not None):
            return "quit"
        if self.identity is None:
            self._name_key(k)
            return None
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
        if k == "b":
            self.asking = "game"
            self.status = ("", "")
        elif k == "down" and tables:
            self.selected = min(self.selected + 1, len(tables) - 1)
        elif k == "up":
            self.selected = max(0, self.selected - 1)
        elif k == "?":
            self.rules_for = tables[self.selected].game if tables else "crisp"
            self.rules_top = 0
        elif k in ("enter", "n"):
            if not self.joinable:
                self.status = ("class:warn", "Joining and hosting LAN tables needs the network layer, which this "
                                             "build does not have yet. Press b to play against bots.")
        else:
            self.status = ("class:warn", f"The key {k!r} does nothing here.")
        return None

    def _name_key(self, k: str) -> None:
        if k == "backspace":
            self.typed = self.typed[:-1]
        elif k == "enter":
            assert self.make_identity is not None
            try:
                self.identity = self.make_identity(self.typed)
                self.status = ("", f"Welcome, {self.identity.name}.")
            except InputError as exc:
                self.status = ("class:warn", str(exc))
        elif len(k) == 1:
            self.typed = (self.typed + k)[:32]
        return None

    def lines(self, width: int, height: int) -> list[Line]:
        """The whole lobby screen."""
        if self.identity is None:
            return fit([[("class:title", " p2pcards: welcome ")], [],
                        [("", " Your name, as the other players will see it: "), ("class:known", self.typed + "▏")],
                        [("class:dim", " Type it, then Enter. A key of your own is made for you too.")], [],
                        [self.status] if self.status[1] else []], width, height)
        if self.rules_for is not None:
            text = self.rules(self.rules_for, {}) if self.rules else "The rules text is not part of this build yet."
            body = wrap(text, width - 2)[self.rules_top: self.rules_top + height - 2]
            return fit([[("class:title", f" Rules of {self.rules_for.capitalize()} ")]] +
                        [[("", " " + t)] for t in body] + [[("class:key", " Esc"), ("", " back")]], width, height)
        me = self.identity
        out: list[Line] = [
            [("class:title", " p2pcards lobby ")],
            [("", " You are "), ("class:me", me.name), ("", "   fingerprint "), ("class:known", me.fingerprint)],
            [("class:dim", " Compare fingerprints aloud with the people at your table.")],
            [],
            [("class:title", " Tables on this network ")],
        ]
        tables = list(self.directory.tables())
        self.selected = min(self.selected, max(0, len(tables) - 1))
        if not tables:
            out.append([("class:dim", " No table announced on this network yet.")])
        for i, ad in enumerate(tables):
            opts = ", ".join(f"{k} {v}" for k, v in ad.options.items()) or "default options"
            mark = "▶" if i == self.selected else " "
            out.append([("class:turn" if i == self.selected else "", f"{mark} {ad.name[:16]:<16}"),
                        ("", f" {ad.game:<9} seats {ad.taken}/{ad.seats}  {opts[:18]:<18} "),
                        ("class:dim", f"host {ad.host[:10]} {ad.fingerprint[:11]}")])
        out.append([])
        if self.asking == "game":
            out.append([("class:key", " Play against bots: "), ("", "1 Crisp   2 Crescendo   Esc back")])
        elif self.asking == "bots":
            low, high = SEATS[self.game]
            out.append([("class:key", f" {self.game.capitalize()} against how many bots? "),
                        ("", f"{low - 1}-{high - 1}   Esc back")])
        else:
            out.append([("class:key", " b"), ("", " play against bots  "), ("class:key", "↑↓ Enter"),
                        ("", " join a table  "), ("class:key", "n"), ("", " new table  "),
                        ("class:key", "?"), ("", " rules  "), ("class:key", "Q"), ("", " quit")])
        out.append([self.status] if self.status[1] else [])
        return fit(out, width, height)


async def run_lobby_app(lobby: LobbyClient, input: Input | None = None, output: Output | None = None) -> BotGame | None:
    """Show the lobby until the player chooses a game (returned) or quits (None)."""
    from .app import build_screen

    result: list[BotGame | None] = []

    def on_key(k: str) -> None:
        what = lobby.key(k)
        if what is not None:
            result.append(lobby.choice if what == "done" else None)
            app.exit(result=0)
        app.invalidate()

    app = build_screen(lobby.lines, on_key, input, output)

    async def follow() -> None:
        while True:
            await lobby.directory.changed(1.0)
            app.invalidate()

    task = asyncio.get_running_loop().create_task(follow())
    try:
        await app.run_async()
    finally:
        task.cancel()
    return result[0] if result else None


class NoDirectory:
    """The directory of a build without LAN discovery: no tables, ever."""

    def tables(self) -> Sequence[TableAd]:
        """No tables."""
        return ()

    async def changed(self, timeout: float) -> None:
        """Nothing ever changes."""
        await asyncio.sleep(timeout)


async def run_lobby(name: str | None, rules: Rules | None, clock: Callable[[], float] = time.time) -> int:
    """`p2pcards play` without --bots: the lobby, then the table it leads to."""
    from ..crypto.identity import KEY_FILE, data_dir, load_or_create, set_name
    from .app import run_table
    from .session import BotTable

    def make(typed: str) -> Identity:
        set_name(typed)
        return load_or_create()

    if name is not None:
        set_name(name)
    first_run = name is None and not (data_dir() / KEY_FILE).exists()
    lobby = LobbyClient(None if first_run else load_or_create(), NoDirectory(), rules, make_identity=make)
    choice = await run_lobby_app(lobby)
    if choice is None or lobby.identity is None:
        return 0
    return await run_table(BotTable(choice.game, choice.bots, {}, lobby.identity), rules, clock=clock)
