"""`p2pcards sim … --cheat KIND`: one seat cheats, and the honest peers say what they caught."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import Any

from ..cli import whole
from ..errors import InputError
from ..progress import Progress, game_progress
from ..table.peer import TablePeer
from .cheaters import (
    Cheat,
    CheatBot,
    CheatingPeer,
    LyingSharePeer,
    WithholdingPeer,
    discard_drawn_king,
    out_of_turn_draw,
    replace_with_drawn_king,
    run_table,
    withhold_private_to,
    withhold_public,
    wrong_special,
)
from .memnet import MemNet
from .transcript import Transcript, record

# seat, players -> how run_table sets up the cheating seat
Rig = Callable[[int, int], dict[str, Any]]


def _bot(cheat: Cheat, **peer: Any) -> Rig:
    """A cheating bot on a client that sends what it is told without asking its own engine."""
    return lambda seat, players: {"cheat": cheat, "out_of_turn_chance": 0.01, "peer_class": CheatingPeer,
                                  "peer_kwargs": peer}


def _peer(cls: type[TablePeer], kwargs: Rig) -> Rig:
    """A modified peer in the cheating seat; `kwargs(seat, players)` configures it."""
    return lambda seat, players: {"peer_class": cls, "peer_kwargs": kwargs(seat, players)}


BOTH = ("crisp", "crescendo")

# kind -> (the games it fits, what the seat does, how to set it up)
CHEATS: dict[str, tuple[tuple[str, ...], str, Rig]] = {
    "out-of-turn": (BOTH, "draws when it is not its turn", _bot(out_of_turn_draw)),
    "discard-king": (("crisp",), "discards a drawn King instead of playing it", _bot(discard_drawn_king)),
    "king-swap": (("crisp",), "swaps a drawn King into its hand (only the audit can see it)",
                  _bot(replace_with_drawn_king, lax=True)),
    "wrong-special": (("crescendo",), "a special action the Reserve's top card does not show", _bot(wrong_special)),
    "lying-share": (BOTH, "sends decryption shares whose proofs do not hold",
                    _peer(LyingSharePeer, lambda seat, n: {"lie": "share"})),
    "withhold-public": (BOTH, "keeps its shares of public cards to itself",
                        _peer(WithholdingPeer, lambda seat, n: {"withhold": withhold_public})),
    "withhold-private": (BOTH, "keeps its shares of the next seat's private looks to itself",
                         _peer(WithholdingPeer, lambda seat, n: {"withhold": withhold_private_to((seat + 1) % n)})),
}
TRIES = 30  # a cheat may need a chance (a drawn King) a given deal lacks: so many seeds are tried


def run_cheat(kind: str, game: str, players: int, options: dict[str, Any], seed: int, seat: int | None,
              record_to: str | None = None) -> int:
    """Play with one cheating seat and print what every honest peer caught; 0 when all caught it alike."""
    games, what, rig = CHEATS[kind]
    if game not in games:
        fits = ", ".join(k for k, (g, _, _) in CHEATS.items() if game in g)
        raise InputError(f"--cheat {kind} is a cheat at {' and '.join(games)}; at {game}: {fits}")
    seat = 1 if seat is None else seat
    if not 0 <= seat < players:
        raise InputError(f"--cheater: a seat from 0 to {players - 1}, not {seat}")
    with Progress(f"sim {game} --cheat {kind}", total=TRIES) as progress:
        for attempt in range(seed, seed + TRIES):
            tried = attempt - seed

            def show(net: MemNet, receiver: int) -> None:
                done, note = game_progress(net.peers[0].game)
                progress.update(tried + done, f"seed {attempt}, {note}")

            transcripts: list[Transcript] = []
            run = run_table(game, players, options, attempt, seat=seat, timeout=5.0,
                            prepare=lambda net, peers: transcripts.append(record(net, peers[0].cfg)),
                            setup=lambda net, peers: setattr(net, "on_deliver", show), **rig(seat, players))
            bot = run.bots[seat]
            if not isinstance(bot, CheatBot) or bot.fired:
                break
        else:
            progress.clear()
            print(f"the cheat had no chance in {TRIES} games from seed {seed}")
            return 1
    if record_to is not None:
        transcripts[0].save(record_to)
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
    parser.add_argument("--cheat", choices=list(CHEATS), metavar="KIND",
                        help="one seat cheats this way (at a table of random bots on the default links), and every "
                             "honest peer says what it caught; the cheats, and the games they fit, are listed below")
    parser.add_argument("--cheater", type=whole(0), default=None, help="with --cheat: the cheating seat (default 1)")
    width = max(map(len, CHEATS))
    parser.epilog = "cheats (--cheat KIND):\n" + "\n".join(
        f"  {kind:<{width}}  {' or '.join(games):<19}{what}" for kind, (games, what, _) in CHEATS.items())
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
