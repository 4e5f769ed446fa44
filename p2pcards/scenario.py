"""`p2pcards scenario FILE`: play a scenario file on the referee engine and print the result as JSON."""

from __future__ import annotations

import argparse
import json
import math
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from .cards import parse_crescendo_card, parse_crisp_card
from .errors import IllegalMove, InputError
from .games.base import CRISP_SLOTS, Move, later
from .games.crescendo import CrescendoGame, CrescendoOptions
from .games.crisp import CrispGame, CrispOptions

Game = CrispGame | CrescendoGame

# do -> (required fields, optional fields), per game: the moves docs/scenarios.md defines.
CRISP_MOVES: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "draw": ((), ("from",)),
    "replace": (("slot",), ()),
    "discard": ((), ()),
    "jack": ((), ()),
    "queen": (("slot", "target", "target_slot"), ()),
    "king": ((), ()),
    "crisp": ((), ()),
}
CRESCENDO_MOVES: Mapping[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "setup_look": (("pos",), ()),
    "setup_swap": (("pos", "pos2"), ()),
    "setup_pass": ((), ()),
    "draw": ((), ("from",)),
    "replace": (("pos",), ()),
    "discard": ((), ()),
    "peek": (("target", "pos"), ()),
    "exchange": (("pos", "target", "target_pos"), ()),
    "lock": (("pos",), ()),
    "crescendo": ((), ()),
    "pass": ((), ()),
    "number": (("pos",), ()),
}


MAX_DIGITS = 15  # no count, position or time in a scenario needs more


def _integer(text: str) -> int:
    if len(text.lstrip("-")) > MAX_DIGITS:
        raise ValueError(f"the number {text[:20]}... is out of range")
    return int(text)


def _real(text: str) -> float:
    value = float(text)
    if not math.isfinite(value) or abs(value) >= 10 ** MAX_DIGITS:
        raise ValueError(f"the number {text[:20]} is out of range")
    return value


def _not_a_number(name: str) -> float:
    raise ValueError(f"{name} is not a number")


def load(path: str | Path) -> dict[str, Any]:
    """Read a scenario file; InputError with a one-line reason when it cannot be read or parsed."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError:
        raise InputError(f"{path} is not UTF-8 text") from None
    try:
        data = json.loads(text, parse_int=_integer, parse_float=_real, parse_constant=_not_a_number)
    except json.JSONDecodeError as exc:
        raise InputError(f"{path} is not valid JSON: {exc.msg} at line {exc.lineno} column {exc.colno}") from None
    except RecursionError:
        raise InputError(f"{path} is nested too deeply") from None
    except ValueError as exc:  # from the number hooks above
        raise InputError(f"{path}: {exc}") from None
    if not isinstance(data, dict):
        raise InputError("a scenario is a JSON object")
    return data


KIND_WORDS = {list: "a list", str: "a string", int: "a whole number", (int, float): "a number"}


def _field(obj: Mapping[str, Any], key: str, kind: type | tuple[type, ...], where: str = "") -> Any:
    """`obj[key]`, of `kind`; InputError naming the field (in `where`, a move) when it is missing or not one."""
    at = f"{where}: " if where else ""
    if key not in obj:
        raise InputError(f"{at}missing {key!r}")
    value = obj[key]
    if isinstance(value, bool) and kind is not bool or not isinstance(value, kind):
        raise InputError(f"{at}{key!r} must be {KIND_WORDS.get(kind, 'of another type')}, not {value!r:.40}")
    return value


def build(data: Mapping[str, Any]) -> Game:
    """The engine for a scenario, with every round's deck queued; InputError when the file is malformed."""
    game = _field(data, "game", str)
    if game not in ("crisp", "crescendo"):
        raise InputError(f"unknown game {game!r} (crisp or crescendo)")
    players = _field(data, "players", list)
    if not players or not all(isinstance(p, str) and p for p in players):
        raise InputError("players must be a list of names")
    dealer_name = data.get("dealer", players[0])
    if dealer_name not in players:
        raise InputError(f"unknown dealer {dealer_name!r}")
    options = data.get("options", {})
    if not isinstance(options, dict):
        raise InputError("options must be an object")
    decks = _field(data, "decks", list)
    if not decks or not all(isinstance(d, list) for d in decks):
        raise InputError("decks must be a non-empty list of decks")
    engine: Game
    if game == "crisp":
        engine = CrispGame(players, CrispOptions.from_dict(options), players.index(dealer_name))
        parsed = [[parse_crisp_card(c) for c in deck] for deck in decks]
        for deck in parsed:
            engine.queue_deck(deck)
    else:
        engine = CrescendoGame(players, CrescendoOptions.from_dict(options), players.index(dealer_name))
        parsed_c = [[parse_crescendo_card(c) for c in deck] for deck in decks]
        for deck_c in parsed_c:
            engine.queue_deck(deck_c)
    return engine


def parse_move(game: Game, raw: object, index: int) -> Move | float | list[tuple[str, int]]:
    """A move from the file: a Move, a wait (seconds), or the claims of a number_tie."""
    where = f"move {index}"
    if not isinstance(raw, dict):
        raise InputError(f"{where} is not an object")
    do = raw.get("do")
    if do == "wait":
        seconds = _field(raw, "seconds", (int, float), where)
        if seconds < 0:
            raise InputError(f"{where}: cannot wait a negative time")
        return float(seconds)
    players = game.players
    if isinstance(game, CrescendoGame) and do == "number_tie":
        claims = _field(raw, "claims", list, where)
        out = []
        for c in claims:
            if not isinstance(c, dict):
                raise InputError(f"{where}: each claim is an object")
            by = _field(c, "by", str, where)
            if by not in players:
                raise InputError(f"{where}: unknown player {by!r}")
            out.append((by, _field(c, "pos", int, where)))
        return out
    table = CRISP_MOVES if isinstance(game, CrispGame) else CRESCENDO_MOVES
    if not isinstance(do, str) or do not in table:
        raise InputError(f"{where}: unknown move {do!r}")
    by = _field(raw, "by", str, where)
    if by not in players:
        raise InputError(f"{where}: unknown player {by!r}")
    required, optional = table[do]
    unknown = set(raw) - {"by", "do", *required, *optional}
    if unknown:
        raise InputError(f"{where}: unexpected field(s) {', '.join(sorted(unknown))}")
    args: dict[str, Any] = {}
    for key in required:
        if key in ("slot", "target_slot"):
            name = _field(raw, key, str, where)
            if name not in CRISP_SLOTS:
                raise InputError(f"{where}: {key} must be left, middle or right")
            args["target_pos" if key == "target_slot" else "pos"] = CRISP_SLOTS.index(name)
        elif key == "target":
            target = _field(raw, key, str, where)
            if target not in players:
                raise InputError(f"{where}: unknown player {target!r}")
            args["target"] = target
        else:
            args[key] = _field(raw, key, int, where)
    if "from" in raw:
        allowed = ("pile", "discard") if isinstance(game, CrispGame) else ("reserve", "discard")
        if raw["from"] not in allowed:
            raise InputError(f"{where}: from must be {' or '.join(allowed)}")
        args["source"] = raw["from"]
    return Move(by, do, **args)


def run_scenario(data: Mapping[str, Any]) -> dict[str, Any]:
    """Play a parsed scenario and return the result object docs/scenarios.md describes."""
    engine = build(data)
    moves = data.get("moves", [])
    if not isinstance(moves, list):
        raise InputError("moves must be a list")
    parsed = [parse_move(engine, m, i) for i, m in enumerate(moves)]
    rejected: list[dict[str, Any]] = []
    for i, move in enumerate(parsed):
        if isinstance(move, float):
            # On the table's millisecond grid, as its stamps are: 0.119 + 2 is 2.119, not a hair before it.
            engine.tick(later(engine.clock, move), wait=True)
            continue
        if engine.needs_deal and not engine.over:
            raise InputError(f"move {i} needs round {engine.round_no + 1}, whose deck the file does not give")
        try:
            if isinstance(move, list):
                assert isinstance(engine, CrescendoGame)
                engine.number_tie(move)
            else:
                engine.apply(move)
        except IllegalMove as exc:
            rejected.append({"move": i, "reason": str(exc)})
    return {
        "rejected": rejected,
        "rounds": rounds_output(engine),
        "totals": dict(zip(engine.players, engine.totals)),
        "over": engine.over,
        "winners": [engine.players[i] for i in engine.winners],
        "state": state_output(engine),
    }


def rounds_output(engine: Game) -> list[dict[str, Any]]:
    """Completed rounds: scores and caller, and for Crescendo incorrect cards and pile sizes."""
    names = engine.players
    out: list[dict[str, Any]] = []
    for res in engine.results:
        item: dict[str, Any] = {
            "scores": dict(zip(names, res.scores)),
            "caller": None if res.caller is None else names[res.caller],
        }
        if isinstance(engine, CrescendoGame):
            item["incorrect"] = dict(zip(names, res.incorrect))  # type: ignore[union-attr]
            item["piles"] = dict(zip(names, res.piles))  # type: ignore[union-attr]
        out.append(item)
    return out


def state_output(engine: Game) -> dict[str, Any]:
    """The table after the last move, as the referee sees it."""
    r = engine.r
    if r is None:
        return {"round": 0, "turn": None, "clock": engine.clock}
    names = engine.players
    rows = r.hands if isinstance(engine, CrispGame) else r.rows  # type: ignore[union-attr]
    face = engine.faces.need
    # While a window is open the next player is due; nobody is while Crescendo's last window runs out.
    turn = None if engine.phase() is None or r.turn is None else names[r.turn]
    state: dict[str, Any] = {
        "round": engine.round_no,
        "turn": turn,
        "clock": engine.clock,
        "hands": {names[i]: [face(h) for h in row] for i, row in enumerate(rows)},
        "known": {
            names[p]: {names[q]: [engine.face_for(p, h) for h in row] for q, row in enumerate(rows)}
            for p in range(engine.n)
        },
        "drawn": None if r.drawn is None else face(r.drawn),
        "discard": [face(h) for h in reversed(r.discard)],
    }
    if isinstance(engine, CrispGame):
        state["draw_pile"] = len(r.draw_pile)  # type: ignore[union-attr]
    else:
        assert isinstance(engine, CrescendoGame) and engine.r is not None
        cr = engine.r
        state["draw_pile"] = len(cr.reserve)
        state["locked"] = {names[i]: list(lk) for i, lk in enumerate(cr.locked)}
        state["piles"] = {names[i]: len(p) for i, p in enumerate(cr.piles)}
        state["backs"] = {names[i]: [str(engine.backs[h]) for h in row] for i, row in enumerate(cr.rows)}
    return state


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`scenario FILE`."""
    parser.add_argument("file", help="a scenario file, in the format docs/scenarios.md describes")


def run(args: argparse.Namespace) -> int:
    """Play the file and print one JSON object; a malformed file raises InputError (exit status 2)."""
    result = run_scenario(load(args.file))
    json.dump(result, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0
