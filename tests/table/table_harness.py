"""Shared harness for whole games between TablePeers over MemNet: deterministic tables, bots,
a per-round recorder, a referee that replays every round with every face known, and the
knowledge check (what each peer can decrypt against what the rules entitle it to know).

Nothing here changes how a peer behaves: the harness only reads peer state from the
network's `on_deliver` hook (after every delivered frame) and after the game.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest


from p2pcards.bots.base import Bot, RandomBot, View
from p2pcards.games.audit import apply_input
from p2pcards.sim.table_game import make_table
from p2pcards.bots.crescendo_bot import CrescendoBot
from p2pcards.bots.crisp_bot import CrispBot
from p2pcards.crypto import deck as dk
from p2pcards.games.base import Handle, Move, RoundInput
from p2pcards.games.crescendo import CrescendoGame
from p2pcards.games.crisp import CrispGame
from p2pcards.sim.memnet import LinkModel, MemNet
from p2pcards.table.peer import TablePeer

Game = CrispGame | CrescendoGame
Deliver = Callable[[MemNet, int], None]

# A network that reorders: each frame takes 5 to 65 ms, so frames from different senders
# (and often from one sender) overtake each other.
REORDERING = LinkModel(delay=0.005, jitter=0.060)


# ---------------------------------------------------------------- bots


class Dawdler:
    """Wraps a bot; now and then it lets its turn run out instead of moving (Crisp's time per draw).

    At each decision point of its own turn (a round, a turn opening, a phase, draws left) it
    decides once, with probability `chance`, to sit still until the table moves on without it.
    """

    def __init__(self, inner: Bot, rng: random.Random, chance: float) -> None:
        self.inner = inner
        self.rng = rng
        self.chance = chance
        self.decided: dict[tuple[object, ...], bool] = {}

    def choose(self, view: View) -> Move | None:
        if view.turn == view.me and view.phase is not None:
            point = (view.round, getattr(view, "opens_at", None), getattr(view, "turn_number", None),
                     view.phase, getattr(view, "draws_left", None))
            if point not in self.decided:
                self.decided[point] = self.rng.random() < self.chance
            if self.decided[point]:
                return None
        return self.inner.choose(view)


class Showoff:
    """A random bot that makes the moves that move knowledge whenever it may.

    Crisp: a Queen swapping two side cards (both already seen by their owners), a Jack, a King;
    it calls crisp only after six turns of its own in a round, so rounds last long enough for them.
    Crescendo: a peek, a swap, a lock, a NUMBER claim. Otherwise a uniformly random legal move.
    """

    PREFERRED = ("queen", "peek", "exchange", "jack", "lock", "number", "king")

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.turns: set[tuple[int, float]] = set()

    def choose(self, view: View) -> Move | None:
        if view.turn == view.me and view.phase is not None:
            self.turns.add((view.round, getattr(view, "opens_at", float(getattr(view, "turn_number", 0)))))
        mine = sum(1 for rnd, _ in self.turns if rnd == view.round)
        legal = [m for m in view.legal if m.action != "crisp" or mine >= 6]
        for action in self.PREFERRED:
            moves = [m for m in legal if m.action == action]
            sides = [m for m in moves if m.pos != 1 and m.target_pos != 1]  # Crisp's side cards, seen by their owners
            if sides and action == "queen":
                moves = sides
            if moves and self.rng.random() < 0.9:
                return self.rng.choice(moves)
        in_turn = [m for m in legal if m.action not in ("crisp", "number")]
        out = [m for m in legal if m.action in ("crisp", "number")]
        if out and self.rng.random() < 0.3:
            return self.rng.choice(out)
        return self.rng.choice(in_turn) if in_turn else None


def random_bots(players: int, rng: random.Random, out_of_turn: float = 0.1) -> list[Bot]:
    """Uniformly random legal moves; out-of-turn calls (crisp, NUMBER) now and then."""
    return [RandomBot(random.Random(rng.random()), out_of_turn) for _ in range(players)]


def good_bots(game: str, players: int) -> list[Bot]:
    """The strategy bots of each game."""
    return [CrispBot() if game == "crisp" else CrescendoBot() for _ in range(players)]


# ---------------------------------------------------------------- tables


def make_peers(game: str, players: int, options: Mapping[str, Any], rng: random.Random) -> list[TablePeer]:
    """A table whose every secret (identity keys, table id, round seeds) comes from `rng`: reproducible."""
    return make_table(game, players, options, rng)


def make_net(game: str, players: int, options: Mapping[str, Any], seed: int,
             bots: Callable[[random.Random], Sequence[Bot]] | None = None,
             link: LinkModel = REORDERING, think: float = 0.05) -> MemNet:
    """Peers and bots on a reordering in-memory network, not yet started."""
    rng = random.Random(seed)
    peers = make_peers(game, players, options, rng)
    chosen = list(bots(rng)) if bots is not None else random_bots(players, rng)
    return MemNet(peers, chosen, random.Random(rng.random()), link, think=think)


def chain(*hooks: Deliver) -> Deliver:
    """Several on_deliver hooks, in order."""
    def run(net: MemNet, receiver: int) -> None:
        for hook in hooks:
            hook(net, receiver)
    return run


# ---------------------------------------------------------------- recording rounds


@dataclass
class SeatRound:
    """One peer's record of one round: its round state object and its engine's inputs."""

    rs: Any  # the peer's round state (kept alive by this reference after the peer moves on)
    inputs: list[RoundInput] | None = None  # the engine's input list of this round (same object)
    start: float | None = None


@dataclass
class Recorder:
    """Keeps every peer's round state of every round: a peer only holds its current round's.

    A peer replaces `rs` and its engine's `inputs` list with new objects when a round begins,
    so holding references to the old ones keeps each round complete after the peer moved on.
    Every delivered frame is a chance to look (a round spans many deliveries).
    """

    seats: dict[int, dict[int, SeatRound]] = field(default_factory=dict)  # round -> seat -> record

    def __call__(self, net: MemNet, receiver: int) -> None:
        for seat, peer in enumerate(net.peers):
            self.observe(seat, peer)

    def observe(self, seat: int, peer: TablePeer) -> None:
        rs = peer.rs
        if rs is not None:
            rec = self.seats.setdefault(rs.number, {}).setdefault(seat, SeatRound(rs))
            assert rec.rs is rs, f"seat {seat} replaced its state of round {rs.number}"
        game = peer.game
        if game.round_no:
            kept = self.seats.get(game.round_no, {}).get(seat)
            if kept is not None and kept.inputs is None:
                kept.inputs, kept.start = game.inputs, game.round_start

    def rounds(self) -> list[int]:
        return sorted(self.seats)


def round_faces(rs: Any, n: int) -> dict[Handle, object]:
    """Every face of a round from the crypto audit of the openings the peers exchanged, by handle."""
    decks = rs.decks
    records = [dk.DeckRecord(d, decks.cards[d][0], decks.cards[d][1], tuple(chain_[1:]))
               for d, chain_ in sorted(decks.chains.items())]
    report = dk.audit(rs.ctx, [decks.anns[s] for s in range(n)], [rs.settlement.openings[s] for s in range(n)],
                      decks.book, records, rs.reveals.reveals)
    assert report.verified, f"round {rs.number}: crypto audit failed: {report}"
    return {h: report.faces[d][pos] for h, (d, pos) in decks.loc.items()}


def referee_replay(referee: Game, faces: Mapping[Handle, object], inputs: Sequence[RoundInput],
                   start: float) -> None:
    """Play one round on the referee engine (every face known) from a peer's recorded inputs.

    Like `check_round`, but on one engine that carries totals from round to round, so the
    referee's scores, totals and winners can be compared with the peers' at every round.
    """
    referee.deal(faces, start)  # type: ignore[arg-type]
    for item in inputs:
        apply_input(referee, item)  # IllegalMove: an honest table let a bad move through


def new_referee(peer: TablePeer) -> Game:
    """A fresh engine of the table's game that will be shown every face."""
    game = peer.game
    if isinstance(game, CrispGame):
        return CrispGame(game.players, game.options, game.first_dealer)
    return CrescendoGame(game.players, game.options, game.first_dealer, auto_reshuffle=False)


# ---------------------------------------------------------------- knowledge


def decryptable(peer: TablePeer) -> set[Handle | tuple[str, int, int]]:
    """The cards of the peer's current round it can decrypt with what it holds right now.

    A card at (deck, position) is open to seat Y when Y holds a decryption share of it from
    every other seat: Y adds its own share and removes the mask. Every share Y received
    counts, whatever its recipient (all frames are broadcast), and so do shares Y holds but
    has not verified yet (`Reveals.early`, waiting for their deck): bytes in hand are knowledge.
    A decryptable position with no handle is reported as ("unmapped", deck, position).
    """
    rs = peer.rs
    if rs is None:
        return set()
    shares = rs.reveals.shares
    early: dict[tuple[int, int], set[int]] = {}
    for seat, rv, _ in rs.reveals.early:
        for pos in rv.positions:
            early.setdefault((rv.deck, pos), set()).add(seat)
    others = set(range(peer.n)) - {peer.me}
    opened = [where for where, got in shares.items() if others <= got.keys()]
    opened += [where for where, seats in early.items() if others <= seats | shares.get(where, {}).keys()]
    if not opened:
        return set()
    handle_at = {where: h for h, where in rs.decks.loc.items()}
    return {handle_at.get(where, ("unmapped", *where)) for where in opened}


def about_to_turn_up(peer: TablePeer) -> set[Handle]:
    """The cards the peer's next ordered entry turns face up, which it reveals before applying it.

    A move in the log whose cards go face up (a discard, a replace, a Crescendo lock or NUMBER
    claim, the Reserve's top card after a special action) is applied only once their faces
    are known, so the peer publishes its shares of them first. Only the head of the peer's
    queue counts, and only once the engine's clock has reached the entry's time (then the
    engine is exactly in the state the peer reveals from; before that the peer reveals nothing).
    A move the rules already refuse reveals nothing.
    """
    rs, game = peer.rs, peer.game
    if rs is None or not rs.log.entries or rs.number != game.round_no or game.r is None:
        return set()
    e = rs.log.entries[0]
    if e.kind not in ("move", "tie") or game.clock < e.time or any(ref not in rs.log.moves for ref in e.refs):
        return set()
    moves = [rs.log.moves[ref] for ref in e.refs]
    first = moves[0]
    if e.kind == "tie":
        window = getattr(game.r, "window", None)
        if window is None:
            return set()
        order = [(window.seat + k) % peer.n for k in range(peer.n)]
        first = min(moves, key=lambda m: order.index(peer.seat_of[m.player]))
    return set(game.needs(first).faces)


def entitled(peers: Sequence[TablePeer], round_no: int, seat: int) -> set[Handle]:
    """What the rules let `seat` know of round `round_no` at this instant.

    The log is one sequence every peer applies in the same order, so the engine that has
    applied the most of it knows the most: a card is entitled to Y when some peer's engine in
    this round (one that has dealt it and not the next) says Y has seen it (`know.seen[Y]`:
    Crisp's side cards, draws, Jacks, Queens; Crescendo's setup looks, draws, peeks, swaps)
    or that it is face up (`know.public`: discards, locks, claims, the round-end reveal), or
    when it is a card the next move in some peer's log turns face up (`about_to_turn_up`).
    Knowledge never shrinks within a round, so the union over peers is the most advanced one.
    """
    return _entitled(peers, round_no, seat, [about_to_turn_up(peer) for peer in peers])


def _entitled(peers: Sequence[TablePeer], round_no: int, seat: int, turning: Sequence[set[Handle]]) -> set[Handle]:
    """`entitled`, given each peer's `about_to_turn_up` (the same for every seat, so worked out once)."""
    out: set[Handle] = set()
    for peer, up in zip(peers, turning):
        game = peer.game
        if game.round_no != round_no or game.r is None:
            continue
        out |= game.know.seen[seat] | game.know.public | up
    return out


@dataclass
class Leak:
    """One instant at which a peer could decrypt, or had been shown, more than it may know."""

    frames: int
    receiver: int
    seat: int
    round: int
    what: str
    handles: list[object]

    def __str__(self) -> str:
        return (f"after frame {self.frames} (delivered to p{self.receiver}): p{self.seat} in round {self.round} "
                f"{self.what}: {self.handles}")


@dataclass
class KnowledgeCheck:
    """The knowledge harness: after every delivered frame, for every peer Y,

    1. what Y can decrypt ⊆ what the rules entitle Y to (`entitled`), and
    2. the faces Y's engine knows ⊆ what Y can decrypt (an engine is shown only decrypted faces).

    It records every breach (the first few in detail) and never stops the game, so one test
    shows how far a leak spreads. `checks` counts the instants checked.
    """

    leaks: list[Leak] = field(default_factory=list)
    checks: int = 0
    frames: int = 0
    keep: int = 20

    def __call__(self, net: MemNet, receiver: int) -> None:
        self.frames += 1
        self.check(net.peers, receiver)

    def check(self, peers: Sequence[TablePeer], receiver: int = -1) -> None:
        turning = [about_to_turn_up(peer) for peer in peers]
        for y, peer in enumerate(peers):
            rs = peer.rs
            if rs is None:
                continue
            self.checks += 1
            opened = decryptable(peer)
            allowed = _entitled(peers, rs.number, y, turning)
            extra = opened - allowed
            if extra:
                self._leak(receiver, y, rs.number, "can decrypt cards it is not entitled to", extra)
            if peer.game.round_no == rs.number:
                shown = set(peer.game.faces.known) - opened
                if shown:
                    self._leak(receiver, y, rs.number, "engine knows faces it cannot decrypt", shown)

    def _leak(self, receiver: int, seat: int, rnd: int, what: str, handles: set[Any]) -> None:
        if len(self.leaks) < self.keep:
            self.leaks.append(Leak(self.frames, receiver, seat, rnd, what, sorted(handles, key=str)))
        else:
            self.leaks.append(Leak(self.frames, receiver, seat, rnd, what, []))

    def report(self) -> str:
        shown = "\n".join(str(leak) for leak in self.leaks[:self.keep])
        return f"{len(self.leaks)} breaches in {self.checks} checks; first ones:\n{shown}"


# ---------------------------------------------------------------- events


def event_kinds(net: MemNet) -> set[str]:
    """Every kind of engine event any peer saw (a peer's engine logs the whole game)."""
    return {e.kind for p in net.peers for e in p.game.events}


def move_actions(recorder: Recorder) -> set[str]:
    """Every move action and input kind the recorded rounds contain (seat 0's engine)."""
    out: set[str] = set()
    for rnd in recorder.rounds():
        rec = recorder.seats[rnd].get(0)
        if rec is None or rec.inputs is None:
            continue
        for item in rec.inputs:
            out.add(item.move.action if item.move is not None else item.kind)
    return out


# ---------------------------------------------------------------- one played game, shared by the tests


@dataclass(frozen=True)
class Spec:
    """One game to play: which game, how many seats, its options, which bots and the seed."""

    game: str
    players: int
    options: tuple[tuple[str, Any], ...] = ()
    bots: str = "random"  # random | good | showoff | dawdle (random bots that sometimes let the time run out)
    seed: int = 1

    def __str__(self) -> str:
        opts = ",".join(f"{k}={v}" for k, v in self.options)
        return f"{self.game}-{self.players}-{self.bots}-{opts or 'defaults'}-s{self.seed}"


@dataclass
class Played:
    """A finished game, with its per-round record and its knowledge check."""

    spec: Spec
    net: MemNet
    recorder: Recorder
    knowledge: KnowledgeCheck


def _bots(spec: Spec) -> Callable[[random.Random], Sequence[Bot]]:
    def make(rng: random.Random) -> Sequence[Bot]:
        if spec.bots == "good":
            return good_bots(spec.game, spec.players)
        if spec.bots == "showoff":
            return [Showoff(random.Random(rng.random())) for _ in range(spec.players)]
        bots = random_bots(spec.players, rng)
        if spec.bots == "dawdle":
            return [Dawdler(b, random.Random(rng.random()), 0.15) for b in bots]
        return bots
    return make


_PLAYED: dict[Spec, Played] = {}
SLOW_SEATS = {"crisp": 4, "crescendo": 3}  # whole games from this many seats up take tens of seconds
# (every pass proven and checked by every other seat; Crescendo's deck is twice Crisp's): `pytest -m slow`


def params(specs: Sequence[Spec]) -> list[Any]:
    """Fixture params for whole games, the largest tables marked slow."""
    return [pytest.param(spec, id=str(spec), marks=[pytest.mark.slow] if spec.players >= SLOW_SEATS[spec.game] else [])
            for spec in specs]


def assert_no_leak(played: Played) -> None:
    """Nobody could decrypt, or knew, more than the rules allow, at any delivered frame."""
    check = played.knowledge
    # Every delivered frame was followed by a check of every peer that has a round going.
    assert check.frames > 0 and check.checks >= check.frames
    assert not check.leaks, check.report()


def assert_learned_by_decryption(played: Played) -> None:
    """The check is not vacuous: at the end every peer's engine holds faces, all decrypted by itself."""
    for peer in played.net.peers:
        assert peer.game.faces.known, f"{peer.names[peer.me]} was shown no face"


def play(spec: Spec) -> Played:
    """Play `spec` to its end once per test session (both test modules read the same game)."""
    if spec not in _PLAYED:
        # Dawdlers wait out a whole time per draw: they look again less often (a slower hand).
        think = 0.25 if spec.bots == "dawdle" else 0.05
        net = make_net(spec.game, spec.players, dict(spec.options), spec.seed, _bots(spec), think=think)
        recorder, knowledge = Recorder(), KnowledgeCheck()
        net.on_deliver = chain(recorder, knowledge)
        net.start()
        net.run(until=3600.0)  # an hour of table time: every game here ends within minutes
        for seat, peer in enumerate(net.peers):
            recorder.observe(seat, peer)
        knowledge.check(net.peers)
        _PLAYED[spec] = Played(spec, net, recorder, knowledge)
    return _PLAYED[spec]


# Bots that make the knowledge-moving moves whenever they may, on 2 to 4 seats.
SHOWOFF: list[Spec] = [
    Spec("crisp", 2, (("limit", 60),), "showoff"),
    Spec("crisp", 3, (("limit", 60),), "showoff"),
    Spec("crisp", 4, (("limit", 40), ("discard_draw", True)), "showoff", 2),
    Spec("crescendo", 2, (("number_window_s", 0.5),), "showoff"),
    Spec("crescendo", 3, (("number_window_s", 0),), "showoff"),
]
