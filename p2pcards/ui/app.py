"""The prompt_toolkit shell around the table screen: one full-screen Application on the running asyncio loop."""

from __future__ import annotations

import asyncio
import os
import time
from collections.abc import Callable

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import ColorDepth, Output
from prompt_toolkit.styles import Style

from ..cli import hung_up
from ..errors import P2PCardsError
from .client import Line, Rules, TableClient
from .session import TableSession

STYLE = Style.from_dict({
    "title": "reverse bold",
    "key": "bold",
    "turn": "reverse bold",
    "me": "bold underline",
    "red": "fg:ansired",
    "known": "bold",
    "locked": "bold underline",
    "up": "bold",
    "back": "",
    "dim": "fg:ansibrightblack",
    "aid": "italic",
    "warn": "bold fg:ansiyellow",
    "good": "bold fg:ansigreen",
})
# Key names as the client knows them.
KEY_NAMES = {Keys.ControlM: "enter", Keys.ControlJ: "enter", Keys.ControlH: "backspace", Keys.Escape: "escape",
             Keys.Up: "up", Keys.Down: "down", Keys.PageUp: "pageup", Keys.PageDown: "pagedown",
             Keys.ControlC: "c-c", Keys.ControlQ: "c-q", Keys.ControlU: "c-u"}


def color_depth() -> ColorDepth | None:
    """Monochrome when NO_COLOR is set (https://no-color.org), else the terminal's own depth."""
    return ColorDepth.DEPTH_1_BIT if os.environ.get("NO_COLOR") else None


def to_text(lines: list[Line]) -> StyleAndTextTuples:
    """Screen lines as one formatted text."""
    out: StyleAndTextTuples = []
    for i, line in enumerate(lines):
        if i:
            out.append(("", "\n"))
        out.extend(line)
    return out


def build_screen(lines: Callable[[int, int], list[Line]], on_key: Callable[[str], None],
                 input: Input | None = None, output: Output | None = None) -> Application[int]:
    """A full-screen Application drawing `lines(width, height)`, sending every key by name to `on_key`."""
    kb = KeyBindings()

    @kb.add(Keys.Any)
    @kb.add(Keys.ControlC)
    @kb.add(Keys.ControlQ)
    @kb.add(Keys.ControlU)
    @kb.add(Keys.ControlM)
    @kb.add(Keys.ControlH)
    @kb.add(Keys.Escape)
    @kb.add(Keys.Up)
    @kb.add(Keys.Down)
    @kb.add(Keys.PageUp)
    @kb.add(Keys.PageDown)
    def _key(event: KeyPressEvent) -> None:
        key = event.key_sequence[0].key
        name = KEY_NAMES.get(key) if isinstance(key, Keys) else None
        if name is None:
            name = event.data if len(event.data) == 1 and event.data.isprintable() else ""
        if name:
            on_key(name)

    def text() -> StyleAndTextTuples:
        size = app.output.get_size()
        return to_text(lines(size.columns, size.rows))

    app: Application[int] = Application(
        layout=Layout(Window(FormattedTextControl(text, focusable=True, show_cursor=False), wrap_lines=False)),
        key_bindings=kb, style=STYLE, full_screen=True, input=input, output=output,
        color_depth=color_depth(), mouse_support=False)
    app.ttimeoutlen = 0.05  # Esc alone is a key here: do not wait half a second for an escape sequence
    return app


async def run_table(session: TableSession, rules: Rules | None = None, input: Input | None = None,
                    output: Output | None = None, clock: Callable[[], float] = time.time,
                    client: TableClient | None = None) -> int:
    """Start `session` and play it on a full-screen table screen until the player leaves (how they left:
    `client.outcome`); returns 0."""
    client = client or TableClient(session, rules)
    leaving: list[asyncio.Task[None]] = []

    def on_key(k: str) -> None:
        size = app.output.get_size()
        client.size = (size.columns, size.rows)
        client.absorb(clock())
        if client.key(k) is not None and not leaving:  # how: client.outcome
            client.status = ("class:warn", "Leaving the table …")
            leaving.append(asyncio.get_running_loop().create_task(_leave()))
        app.invalidate()

    async def _leave() -> None:
        try:
            await session.leave()
        except P2PCardsError as exc:  # e.g. the transcript could not be saved: said on the way out, no hung screen
            app.exit(exception=exc)
            return
        app.exit(result=0)

    async def feed() -> None:
        try:
            await session.start()
        except (P2PCardsError, OSError, asyncio.TimeoutError) as exc:
            client.error = f"The table could not start: {exc}. Press Q to quit."
        while True:
            client.absorb(clock())
            app.invalidate()
            await session.changed(0.2)

    app = build_screen(lambda w, h: client.lines(w, h, clock()), on_key, input, output)
    task: asyncio.Task[None] | None = None

    def _started() -> None:
        nonlocal task
        task = asyncio.get_running_loop().create_task(feed())

    try:
        return await app.run_async(pre_run=_started)
    finally:
        if task is not None:
            task.cancel()
        if not leaving:
            await (session.hang_up() if hung_up() else session.leave())
