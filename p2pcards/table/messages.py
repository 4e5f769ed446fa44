"""The table's message types, their bodies, and the wire form of a move."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from ..crypto.encoding import Value
from ..errors import MalformedMessage
from ..games.base import Move

# type -> the body's keys. Every body is a map with exactly these keys (see protocol.md).
BODIES: Final[Mapping[str, frozenset[str]]] = {
    "table": frozenset({"game", "options", "name", "nonce"}),
    "join": frozenset({"name", "nonce"}),
    "seats": frozenset({"config"}),
    "left": frozenset({"key"}),
    "ready": frozenset({"config"}),
    "key": frozenset({"seat", "public", "proof", "commitment"}),
    "pass": frozenset({"deck", "stage", "cts", "tags", "input", "proof"}),
    "move": frozenset({"m"}),
    "order": frozenset({"i", "t", "k", "refs", "frames", "why"}),
    "shares": frozenset({"reveals"}),
    "private": frozenset({"to", "box"}),
    "open": frozenset({"seat", "seed"}),
    "result": frozenset({"round", "scores", "totals", "over", "log", "audit", "at", "blame"}),
    "leave": frozenset({"why"}),
    "fault": frozenset({"blame", "why", "stall", "evidence"}),
    "aid": frozenset({"on"}),
    "gone": frozenset({"seat"}),
    "out": frozenset({"seats"}),
}
MOVE_KEYS: Final = {"a": "action", "p": "pos", "q": "pos2", "t": "target", "u": "target_pos", "s": "source"}
MAX_REASON: Final = 200  # bytes of UTF-8
MAX_EVIDENCE: Final = 2  # frames a fault report carries


def reason(text: str) -> str:
    """`text` cut to MAX_REASON bytes of UTF-8, at a character boundary."""
    return text.encode("utf-8", "replace")[:MAX_REASON].decode("utf-8", "ignore")


def check_body(mtype: str, body: Mapping[str, Value]) -> None:
    """MalformedMessage unless `body` has exactly the keys of its type (deeper checks where it is used)."""
    keys = BODIES.get(mtype)
    if keys is None:
        raise MalformedMessage(f"unknown message type {mtype!r}")
    if set(body) != keys:
        raise MalformedMessage(f"a {mtype} body has exactly: {', '.join(sorted(keys))}")


def move_to_wire(move: Move, seat_of: Mapping[str, int]) -> dict[str, Value]:
    """A move as a compact map; the player is the message's sender, targets are seat numbers."""
    out: dict[str, Value] = {"a": move.action}
    if move.pos is not None:
        out["p"] = move.pos
    if move.pos2 is not None:
        out["q"] = move.pos2
    if move.target is not None:
        out["t"] = seat_of[move.target]
    if move.target_pos is not None:
        out["u"] = move.target_pos
    if move.source is not None:
        out["s"] = move.source
    return out


def move_from_wire(v: Value, player: str, names: tuple[str, ...]) -> Move:
    """Parse a move map sent by `player`; MalformedMessage on a bad shape (legality is the engine's)."""
    if not isinstance(v, dict) or not set(v) <= set(MOVE_KEYS) or "a" not in v:
        raise MalformedMessage("bad move")
    action = v["a"]
    if not isinstance(action, str) or not 1 <= len(action.encode("utf-8")) <= 20:
        raise MalformedMessage("bad move action")
    ints: dict[str, int | None] = {}
    for key in ("p", "q", "u"):
        x = v.get(key)
        if x is not None and (type(x) is not int or not 0 <= x < 256):
            raise MalformedMessage("bad move position")
        ints[key] = x
    target = v.get("t")
    if target is not None and (type(target) is not int or not 0 <= target < len(names)):
        raise MalformedMessage("bad move target")
    source = v.get("s")
    if source is not None and source not in ("pile", "discard", "reserve"):
        raise MalformedMessage("bad move source")
    return Move(player, action, pos=ints["p"], target=None if target is None else names[target],
                target_pos=ints["u"], pos2=ints["q"], source=source)
