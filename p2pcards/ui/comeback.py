"""Coming back after the client crashed: where it journals its seat at a LAN table, and what it finds there.

The client journals its seat (net/store.py, protocol.md §14.10) in one per-user directory:
$P2PCARDS_HOME/state when that is set (beside the identity), else $XDG_STATE_HOME/p2pcards or
~/.local/state/p2pcards (or `play --state DIR`). The directory is the user's alone (mode 0700):
it holds the seat's round secrets (the `node` file names the key it signs with, which stays in the
user's identity key file). One client at a time uses it
(`Lock`). On start, `find` says whether an unfinished game is there to go back into, or why what
is there was cleared (another identity's, unreadable, or left too long ago).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final


from ..crypto.identity import APP, HOME_ENV, Identity, data_dir, fingerprint
from ..errors import InputError, LocalError, MalformedMessage
from ..net.seat import GONE_AFTER_S
from ..net.store import NodeState, clear, read_owner

STALE_S: Final = 600.0  # a journal untouched this long is of a table long over: the others went on without us


def default_state_dir(env: Mapping[str, str] | None = None) -> Path:
    """Where the client journals its seat: $P2PCARDS_HOME/state, else the XDG state directory's p2pcards."""
    env = os.environ if env is None else env
    if env.get(HOME_ENV) or sys.platform in ("win32", "darwin"):
        return data_dir(env) / "state"
    xdg = env.get("XDG_STATE_HOME")
    # As for $XDG_DATA_HOME, a relative $XDG_STATE_HOME is invalid and must be ignored.
    return (Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "state") / APP


@dataclass(frozen=True)
class Saved:
    """An unfinished game journaled in `directory`: our seat at its table, and how long ago it was last written."""

    directory: Path
    node: NodeState
    age: float

    def summary(self) -> str:
        """One line for the player: the game, who else sat there (at the table that went on without a seat, if
        one did: who left is not named), how long ago."""
        cfg = self.node.config
        names, seat = going_on(self.directory, cfg.names, self.node.seat)
        others = [n for i, n in enumerate(names) if i != seat]
        return (f"You were playing {cfg.game.capitalize()} with {', '.join(others)} "
                f"(table {cfg.table.hex()[:8]}) {_ago(self.age)} ago.")

    def late(self) -> bool:
        """True when the others have most likely voted our seat gone by now (protocol.md §14.9)."""
        return self.age > GONE_AFTER_S


def _ago(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.0f} h"


def going_on(directory: Path, names: tuple[str, ...], seat: int) -> tuple[tuple[str, ...], int]:
    """The players and our seat at the last table we sat at: the innermost store within `directory` (each table
    that went on without a seat is journaled within the one before, SeatStore.successor); `names` and `seat`
    (the first table's) when there is none or it cannot be read."""
    here = directory
    while True:
        within = [p for p in here.iterdir() if p.is_dir() and (p / "table").is_file()]
        if not within:
            break
        here = max(within, key=lambda p: (p / "table").stat().st_mtime)
    if here == directory:
        return names, seat
    try:
        cfg, at = read_owner(here / "table")
    except (ValueError, MalformedMessage, InputError, OSError):
        return names, seat
    return cfg.names, at


def last_written(directory: Path) -> float:
    """When the seat last wrote its state: the newest `node` or `journal` in `directory` and in the stores of
    the tables that went on without a seat, each within the one before (SeatStore.successor); 0 for none."""
    return max((p.stat().st_mtime for p in directory.rglob("*") if p.name in ("node", "journal") and p.is_file()),
               default=0.0)


def find(directory: Path, identity: Identity, now: float | None = None) -> tuple[Saved | None, str | None]:
    """The unfinished game journaled in `directory` to offer going back into; else None and, when something
    was there, why it was cleared (a journal of another identity, one that cannot be read, or one too old)."""
    now = time.time() if now is None else now
    try:
        node = NodeState.load(directory)
    except LocalError as exc:
        clear(directory)
        return None, f"The saved game could not be read and was cleared: {exc}."
    if node is None:
        clear(directory)  # a seat that crashed before its state was written: nothing to come back to
        return None, None
    public = node.public
    if public != identity.public:
        clear(directory)
        return None, (f"The saved game in {directory} was {node.config.names[node.seat]}'s, another identity "
                      f"(fingerprint {fingerprint(public)}), not yours: it was cleared.")
    written = last_written(directory)
    saved = Saved(directory, node, max(0.0, now - written))
    if saved.age > STALE_S:
        clear(directory)
        return None, f"{saved.summary()} That table is long over without you: the saved game was cleared."
    return saved, None
