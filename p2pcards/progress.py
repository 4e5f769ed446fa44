"""A one-line progress display for long commands: drawn in place on a terminal, absent when piped.

Standard library only, plus `game_progress`, which reads how far a game is from its engine.
"""

from __future__ import annotations

import shutil
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import TracebackType
from typing import TextIO

from .games.crescendo import ROUNDS, CrescendoGame
from .games.crisp import CrispGame

WIDTH = 24  # characters of the bar
EVERY = 0.1  # seconds between redraws


class Progress:
    """A status line (`label [####----]  40%  note`) redrawn at most every 0.1 s.

    It draws only when `out` (stdout by default) is a terminal, so piped or redirected output
    stays exactly what it would be without it. `print` puts a line of output above the bar.
    """

    def __init__(self, label: str, total: float | None = None, out: TextIO | None = None) -> None:
        self.label = label
        self.total = total
        self.out = out if out is not None else sys.stdout
        self.enabled = self.out.isatty()
        self.start = time.monotonic()
        self._next = 0.0
        self._line = ""
        self._lock = threading.Lock()

    def update(self, done: float | None = None, note: str = "", force: bool = False) -> None:
        """Show `done` out of the total (or only the elapsed time when there is no total) and a note."""
        if not self.enabled:
            return
        now = time.monotonic()
        if now < self._next and not force:
            return
        self._next = now + EVERY
        parts = [self.label]
        if self.total and done is not None:
            share = min(max(done / self.total, 0.0), 1.0)
            filled = round(share * WIDTH)
            parts.append(f"[{'#' * filled}{'-' * (WIDTH - filled)}] {share:4.0%}")
        parts.append(f"{now - self.start:4.0f} s")
        if note:
            parts.append(note)
        self._draw("  ".join(parts))

    def print(self, line: str) -> None:
        """Print one line of output, above the status line when there is one."""
        with self._lock:
            if self._line:
                self.out.write("\r\x1b[K")
            print(line, file=self.out)
            if self._line:
                self.out.write(self._line)
            self.out.flush()

    def clear(self) -> None:
        """Erase the status line."""
        with self._lock:
            if self._line:
                self.out.write("\r\x1b[K")
                self.out.flush()
                self._line = ""

    def _draw(self, line: str) -> None:
        line = line[: shutil.get_terminal_size().columns - 1]  # a wrapped line could not be redrawn in place
        with self._lock:
            self._line = line
            self.out.write(f"\r\x1b[K{line}")
            self.out.flush()

    @contextmanager
    def ticking(self, note: Callable[[], str] = lambda: "") -> Iterator[None]:
        """Redraw every second from a thread while the block runs (for work that reports nothing itself)."""
        done = threading.Event()

        def tick() -> None:
            while not done.wait(1.0):
                self.update(note=note(), force=True)

        thread = threading.Thread(target=tick, daemon=True)
        if self.enabled:
            self.update(note=note(), force=True)
            thread.start()
        try:
            yield
        finally:
            done.set()
            if self.enabled:
                thread.join()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, kind: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        self.clear()


def game_progress(game: CrispGame | CrescendoGame) -> tuple[float, str]:
    """How far a game is, from 0 to 1, and a note: Crisp by the highest total against the limit, Crescendo by rounds."""
    if isinstance(game, CrispGame):
        limit = game.options.limit
        return max(game.totals) / limit, f"round {max(game.round_no, 1)}, highest total {max(game.totals)} of {limit}"
    return len(game.results) / ROUNDS, f"round {max(game.round_no, 1)} of {ROUNDS}"
