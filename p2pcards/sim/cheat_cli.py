"""`p2pcards sim … --cheat KIND`: one seat cheats, and the honest peers say what they caught."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..errors import InputError
from .cheaters import (
    CheatBot,
    CheatingPeer,
    LyingSharePeer,
    Run,
    WithholdingPeer,
    discard_drawn_king,
    out_of_turn_draw,
    replace_with_drawn_king,
    run_table,
    withhold_private_to,
    withhold_public,
    wrong_special,
)

# kind -> (what the seat does, how to run it): each returns the finished run.
Runner = Callable[[str, int, dict[str, Any], int, int], Run]


def _bot(cheat: Any, **peer: Any) -> Runner:
    """A cheating bot on a client that sends what it is told without asking its own engine."""
    def go(game: str, players: int, options: dict[str, Any], seed: int, seat: int) -> Run:
        return run_table(game, players, options, seed, seat=seat, cheat=cheat, out_of_turn_chance=0.01,
                         peer_class=CheatingPeer, peer_kwargs=peer, timeout=5.0)
    return go


def _peer(cls: type, kwargs: Callable[[int, int], dict[str, Any]]) -> Runner:
    """A modified peer in the cheating seat; `kwargs(seat, players)` configures it."""
    def go(game: str, players: int, options: dict[str, Any], seed: int, seat: int) -> Run:
        return run_table(game, players, options, seed, seat=seat, peer_class=cls,
                         peer_kwargs=kwargs(seat, players), timeout=5.0)
    return go


CHEATS: dict[str, tuple[str, Runner]] = {
    "out-of-turn": ("draws when it is not its turn", _bot(out_of_turn_draw)),
    "discard-king": ("Crisp: discards a drawn King instead of playing it", _bot(discard_drawn_king)),
    "king-swap": ("Crisp: swaps a drawn King into its hand (only the audit can see it)",
                  _bot(replace_with_drawn_king, lax=True)),
    "wrong-special": ("Crescendo: a special action the Reserve's top card does not show", _bot(wrong_special)),
    "lying-share": ("sends decryption shares whose proofs do not hold",
                    _peer(LyingSharePeer, lambda seat, n: {"lie": "share"})),
    "withhold-public": ("keeps its shares of public cards to itself",
                        _peer(WithholdingPeer, lambda seat, n: {"withhold": withhold_public})),
    "withhold-private": ("keeps its shares of the next seat's private looks to itself",
                         _peer(WithholdingPeer, lambda seat, n: {"withhold": withhold_private_to((seat + 1) % n)})),
}


def run_cheat(kind: str, game: str, players: int, options: dict[str, Any], seed: int, seat: int) -> int:
    """Play with one cheating seat and print what every honest peer caught; 0 when all caught it alike."""
    if kind not in CHEATS:
        raise InputError(f"unknown cheat {kind!r}: one of {', '.join(CHEATS)}")
    if not 0 <= seat < players:
        raise InputError(f"--cheater must be a seat from 0 to {players - 1}")
    what, runner = CHEATS[kind]
    for attempt in range(seed, seed + 30):  # a cheat may need a chance (a drawn King) a given deal lacks
        run = runner(game, players, options, attempt, seat)
        bot = run.bots[seat]
        if not isinstance(bot, CheatBot) or bot.fired:
            break
    else:
        print(f"the cheat had no chance in 30 games from seed {seed}: is it one for {game}?")
        return 1
    name = run.peers[seat].names[seat]
    print(f"{name} (seat {seat}) cheats: {what} (seed {attempt})")
    verdicts = set()
    for peer in run.honest([seat]):
        caught = [n for n in peer.notes if n.blame is not None and n.kind in ("rejected", "fault", "audit")]
        state = "finished" if peer.finished else f"stopped: {peer.stopped}" if peer.stopped else "still waiting"
        print(f"\n  {peer.names[peer.me]}: {state}")
        for note in caught[:4]:
            print(f"    {note.kind:>8}  [{note.blame}] {note.detail}")
        verdicts.add((bool(peer.finished), bool(peer.stopped), tuple(n.blame for n in caught[:1])))
    agreed = len(verdicts) == 1 and all(v[2] == (name,) for v in verdicts)
    print(f"\nevery honest peer blamed {name} first and ended alike: {'yes' if agreed else 'NO'}")
    return 0 if agreed else 1


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """--cheat and --cheater for `p2pcards sim`."""
    parser.add_argument("--cheat", choices=sorted(CHEATS), help="one seat cheats this way (see p2pcards/sim/cheaters.py)")
    parser.add_argument("--cheater", type=int, default=1, help="the cheating seat (default 1)")
