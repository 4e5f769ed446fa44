"""The prompt_toolkit shell around the table screen: one full-screen Application on the running asyncio loop."""

from __future__ import annotations

import asyncio
import errno
import os
import signal
import sys
import time
from collections.abc import Awaitable, Callable
from types import TracebackType
from typing import TypeVar

from prompt_toolkit.application import Application
from prompt_toolkit.formatted_text import StyleAndTextTuples
from prompt_toolkit.input import Input
from prompt_toolkit.key_binding import KeyBindings, KeyPressEvent
from prompt_toolkit.keys import Keys
from prompt_toolkit.layout import Layout, Window
from prompt_toolkit.layout.controls import FormattedTextControl
from prompt_toolkit.output import ColorDepth, Output
from prompt_toolkit.output.vt100 import Vt100_Output
from prompt_toolkit.styles import Style

from ..cli import hung_up
from ..errors import P2PCardsError, Terminated
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


T = TypeVar("T")
GONE = (errno.EIO, errno.EPIPE, errno.ENXIO)  # what writing to a terminal that closed raises


class TerminalOutput(Vt100_Output):
    """The terminal's output, which draws nothing once the terminal is gone (closed: EIO), rather than raise from the
    screen's last redraw while the client says its goodbyes."""

    def flush(self) -> None:
        """Write what is buffered, unless the terminal closed."""
        try:
            super().flush()
        except OSError as exc:
            if exc.errno not in GONE:
                raise


class Signals:
    """SIGTERM, and SIGHUP (the terminal closed), for the client's life: the screen on show (`showing`) exits as
    when the player leaves, and the client cleans up as on any way out (the table's leave or hang-up, goodbyes, bots,
    mDNS goodbyes); the caller then ends the command with `Terminated` (exit status 128 + the signal). Raised by
    the handler at whatever line ran, it cut goodbyes short, and the screen's last redraw on a closed terminal
    printed a traceback. A signal ignored (nohup) is left so."""

    def __init__(self) -> None:
        self.showing: Application[int] | None = None
        self.came: int | None = None  # the first signal that came
        self._taken: dict[signal.Signals, object] = {}

    def __enter__(self) -> Signals:
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGHUP):
            previous = signal.getsignal(sig)
            if previous != signal.SIG_IGN:
                loop.add_signal_handler(sig, self._stop, sig)
                self._taken[sig] = previous
        return self

    def _stop(self, sig: signal.Signals) -> None:
        Terminated.signalled.append(sig)  # (what `hung_up` reads)
        self.came = sig if self.came is None else self.came
        app = self.showing
        if app is not None and app.is_running and not app.future.done():  # type: ignore[union-attr]
            app.exit(result=0)

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        loop = asyncio.get_running_loop()
        for sig, previous in self._taken.items():
            loop.remove_signal_handler(sig)
            if previous is not None:  # None: a handler set outside Python, which we cannot put back
                signal.signal(sig, previous)  # type: ignore[arg-type]

    def end(self) -> None:
        """Terminated, once the client cleaned up after a signal that came."""
        if self.came is not None:
            raise Terminated(self.came)


SIGNALS: list[Signals] = []  # the client's, while it runs: each screen it shows is the one a signal exits


async def with_signals(coro: Awaitable[T], signals: Signals) -> T:
    """Await `coro` with SIGTERM and SIGHUP taken over by `signals`."""
    SIGNALS.append(signals)
    try:
        with signals:
            return await coro
    finally:
        SIGNALS.remove(signals)


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

    if output is None and sys.stdout.isatty():
        output = TerminalOutput.from_pty(sys.stdout, term=os.environ.get("TERM"))
    app: Application[int] = Application(
        layout=Layout(Window(FormattedTextControl(text, focusable=True, show_cursor=False), wrap_lines=False)),
        key_bindings=kb, style=STYLE, full_screen=True, input=input, output=output,
        color_depth=color_depth(), mouse_support=False)
    app.ttimeoutlen = 0.05  # Esc alone is a key here: do not wait half a second for an escape sequence
    for signals in SIGNALS:
        signals.showing = app
    return app


async def show(app: Application[int], pre_run: Callable[[], None] | None = None) -> bool:
    """Run `app` until it exits (at once after SIGTERM or SIGHUP); True when the terminal closed under it."""
    if any(signals.came is not None for signals in SIGNALS):
        return False
    try:
        await app.run_async(pre_run=pre_run)
    except EOFError:  # its input ended: no key will come again
        return True
    return False


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

    closed = False
    try:
        closed = await show(app, _started)
        return 0
    finally:
        if task is not None:
            task.cancel()
        if not leaving:  # a terminal closed is a hang-up, whichever came first: its input's end or SIGHUP
            await (session.hang_up() if hung_up() or closed else session.leave())
