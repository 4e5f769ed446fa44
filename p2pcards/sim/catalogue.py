"""The cheat catalogue of `p2pcards sim --cheat KIND`: what each cheat does, the games it fits, and what honest peers must do.

Each cheat is set up by arguments to `run_table` (a cheating bot, a modified peer, a tap on the
network or a rewrite of the cheater's own frames, signed again with its own key) and comes with
its expected outcome (`Expect`):

- "rejected": every honest peer rejects the move with blame on the cheater and the game goes on;
- "void": every honest peer stops with the round void, its first fault blaming the cheater;
- "void-claim": the same, but a peer that the first report reaches before it sees the fault itself
  (a lie in a box sealed to another seat: protocol.md §14, step 4) may blame no one, naming the
  cheater as the reporter's word only; at least one honest peer blames the cheater by its own check;
- "dropped": the frame proves nothing about anyone (it does not verify), so every honest peer
  drops it with a note, blames no one, and the game goes on;
- "ignored": a frame already taken, seen again: nothing changes and the game goes on.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal

from ..bots.base import View
from ..crypto import deck as dk
from ..crypto import group
from ..crypto.encoding import Value
from ..crypto.envelope import Envelope, parse
from ..errors import MalformedMessage
from ..games.base import Move
from ..games.crescendo import ROUNDS as CRESCENDO_ROUNDS
from ..games.crescendo import CrescendoView
from ..table.config import TableConfig
from ..table.outputs import Note
from ..table.peer import Output, TablePeer
from .cheaters import (
    CheatBot,
    CheatingPeer,
    EquivocationTap,
    LyingSharePeer,
    ReplayTap,
    Run,
    WithholdingPeer,
    discard_drawn_king,
    draw_from_pile,
    forge_signature,
    out_of_turn_draw,
    replace_with_drawn_king,
    reseal,
    withhold_private_to,
    withhold_public,
    wrong_special,
)
from .memnet import MemNet
from .outcome import Outcome

Expect = Literal["rejected", "void", "void-claim", "dropped", "ignored"]
Rig = Callable[[int, int], dict[str, Any]]  # (cheating seat, players) -> run_table's keyword arguments
BOTH = ("crisp", "crescendo")
SMALL_ORDER = bytes.fromhex("ec" + "ff" * 30 + "7f")  # (0, -1): the point of order 2 of edwards25519


# ---------------------------------------------------------------- a modified client's own frames


Change = Callable[["Rewriter", Envelope, bytes], "list[bytes] | None"]


class Rewriter:
    """A modified client: `change` rewrites the cheater's frames of type `mtype` (at most `limit` times).

    It sees every frame sent at the table (it keeps the passes: a cheat may need the deck its pass
    shuffles); `change(rewriter, envelope, frame)` returns the frames to send instead, or None when
    this frame gives the cheat no chance.
    """

    def __init__(self, peers: Sequence[TablePeer], seat: int, mtype: str, change: Change, limit: int = 1) -> None:
        self.peers = peers
        self.seat = seat
        self.mtype = mtype
        self.change = change
        self.limit = limit
        self.fired = 0
        self.passes: dict[tuple[int, int, int], dk.EncryptedDeck] = {}  # (round, deck, stage) -> pass

    @property
    def cheater(self) -> TablePeer:
        """The cheating seat's peer."""
        return self.peers[self.seat]

    def __call__(self, sender: int, frame: bytes) -> list[bytes]:
        try:
            env = parse(frame).envelope
        except MalformedMessage:
            return [frame]
        if env.type == "pass":
            try:
                d = dk.EncryptedDeck.from_wire(dict(env.body))
                self.passes[(env.round, d.deck, d.stage)] = d
            except MalformedMessage:
                pass
        if sender != self.seat or env.type != self.mtype or self.fired >= self.limit:
            return [frame]
        out = self.change(self, env, frame)
        if out is None:
            return [frame]
        self.fired += 1
        return out

    def resealed(self, frame: bytes, body: dict[str, Value]) -> list[bytes]:
        """The frame with another body, signed by the cheater for the same place in its chain."""
        return [reseal(self.cheater.identity, frame, body=body)]


def _rewrite(mtype: str, change: Change) -> Rig:
    return lambda seat, players: {
        "rewrite": lambda net, peers: Rewriter(peers, seat, mtype, change)}


def _pass_of(env: Envelope) -> dk.EncryptedDeck | None:
    d = dk.EncryptedDeck.from_wire(dict(env.body))
    return d if d.deck == 0 else None


def substitute_card(rw: Rewriter, env: Envelope, frame: bytes) -> list[bytes] | None:
    """One card of the pass turned into another (its ciphertext moved by the difference of two card points)."""
    d = _pass_of(env)
    if d is None:
        return None
    cards = rw.cheater.cfg.cards()
    table = rw.cheater.cfg.context
    shift = group.sub(dk.card_point(table, env.round, cards[1]), dk.card_point(table, env.round, cards[0]))
    c2 = (group.add(d.c2[0], shift),) + d.c2[1:]
    return rw.resealed(frame, dataclasses.replace(d, c2=c2).to_wire())


def duplicate_card(rw: Rewriter, env: Envelope, frame: bytes) -> list[bytes] | None:
    """The pass's first card twice (its second card gone)."""
    d = _pass_of(env)
    if d is None:
        return None
    return rw.resealed(frame, dataclasses.replace(d, c1=d.c1[:1] * 2 + d.c1[2:], c2=d.c2[:1] * 2 + d.c2[2:]).to_wire())


def mark_card(rw: Rewriter, env: Envelope, frame: bytes) -> list[bytes] | None:
    """One card of the input passed on as it came, not re-masked: the cheater can follow it to its place."""
    d = _pass_of(env)
    prev = None if d is None else rw.passes.get((env.round, 0, d.stage - 1))
    if d is None or prev is None:
        return None  # seat 0 shuffles the public starting deck: nothing to mark in a frame
    return rw.resealed(frame, dataclasses.replace(d, c1=prev.c1[:1] + d.c1[1:], c2=prev.c2[:1] + d.c2[1:]).to_wire())


def second_pass(rw: Rewriter, env: Envelope, frame: bytes) -> list[bytes] | None:
    """A second pass, well proven but from another seed, sent right after the real one for the same place."""
    d = _pass_of(env)
    peer = rw.cheater
    rs = peer.rs
    if d is None or rs is None or rs.decks.keys is None:
        return None
    prev = rw.passes.get((env.round, 0, d.stage - 1)) or rs.decks.chains[0][0]
    other = dk.round_secret(rs.decks.ctx, peer.me, hashlib.blake2b(rs.decks.secret.seed, digest_size=32).digest())
    again = dk.shuffle_pass(rs.decks.ctx, rs.decks.keys, other, prev)
    return [frame, peer.outbox.seal(env.round, "pass", again.to_wire()).frame]


def small_order_key(rw: Rewriter, env: Envelope, frame: bytes) -> list[bytes] | None:
    """The round key with a point of order 2 added (its proof left as it was)."""
    body = dict(env.body)
    public = body.get("public")
    if not isinstance(public, bytes):
        return None
    body["public"] = group.add(public, SMALL_ORDER)
    return rw.resealed(frame, body)


def other_opening(rw: Rewriter, env: Envelope, frame: bytes) -> list[bytes] | None:
    """The commitment opened with another seed than the one committed to."""
    body = dict(env.body)
    seed = body.get("seed")
    if not isinstance(seed, bytes):
        return None
    body["seed"] = hashlib.blake2b(seed, digest_size=len(seed)).digest()
    return rw.resealed(frame, body)


def far_stamp(rw: Rewriter, env: Envelope, frame: bytes) -> list[bytes] | None:
    """The orderer stamps a move five seconds after the truth."""
    body = dict(env.body)
    if body.get("k") != "move" or not isinstance(body.get("t"), int):
        return None
    t = body["t"]
    assert isinstance(t, int)
    body["t"] = t + 5000
    return rw.resealed(frame, body)


# ---------------------------------------------------------------- cheating peers and bots


class EarlyTicker(TablePeer):
    """An orderer that orders the tick of the next deadline (a time-out, a window's close) as soon as it sees one."""

    def __init__(self, config: TableConfig, identity: Any, **peer_args: Any) -> None:
        super().__init__(config, identity, **peer_args)
        self.fired = 0

    def tick(self, now: float) -> list[Output]:
        """Claim the deadline at once, when it is more than the tolerance away; then as an honest peer."""
        self.now = max(self.now, now)
        rs = self.rs
        if not self.fired and self.stopped is None and rs is not None and self.me == rs.orderer \
                and rs.log_open() and not rs.log.inbox:
            due = self.game.wake_time()
            if due is not None and due > self.now + self.tolerance + 0.25:
                self.fired += 1
                rs.order("tick", (), due + 0.001)
        return super().tick(now)


def claim_unheld(view: View) -> Move | None:
    """Crescendo: a NUMBER claim on a place past the end of its own row."""
    if not isinstance(view, CrescendoView) or not view.window_open or view.over:
        return None
    return Move(view.players[view.me], "number", pos=len(view.backs[view.me]) + 1)


class ForgeTap:
    """Once the next seat has moved, hands every other peer that move altered under its old signature."""

    def __init__(self, net: MemNet, seat: int, victim: int) -> None:
        self.net = net
        self.seat = seat
        self.victim = victim
        self.fired: list[bytes] = []

    def __call__(self, sender: int, receiver: int, frame: bytes) -> bytes | None:
        if not self.fired and sender == self.victim:
            try:
                env = parse(frame).envelope
            except MalformedMessage:
                return frame
            if env.type == "move":
                self.fired = [forge_signature(frame, {"m": {"a": "pass"}}), forge_signature(frame)]
                for r in range(len(self.net.peers)):
                    if r != self.seat:
                        for forged in self.fired:
                            self.net.inject(r, forged, at=self.net.now + 0.001)
        return frame


class Chatter:
    """The staller's chatter: a fresh signed move every `every` seconds of the table's clock while it withholds."""

    def __init__(self, seat: int, every: float = 0.7) -> None:
        self.seat = seat
        self.every = every
        self.sent = 0

    def __call__(self, net: MemNet) -> None:
        peer = net.peers[self.seat]
        others = [p for p in net.peers if p is not peer]  # none in a seat process (over tcp): it sees only its own
        if peer.stopped is not None or peer.finished or (others and all(p.stopped for p in others)):
            return
        if peer.rs is not None:
            self.sent += 1
            net.send_as(self.seat, peer.send_move(Move(peer.names[peer.me], "draw", source="pile")))
        net.call_at(net.now + self.every, self)


def _other_move(body: dict[str, Value]) -> dict[str, Value]:
    m = body.get("m")
    return {"m": {"a": "pass"}} if isinstance(m, dict) and m.get("a") != "pass" else {"m": {"a": "draw"}}


def _bot(cheat: Callable[[View], Move | None], limit: int = 1,
         seek: Callable[[View], Move | None] | None = None, **peer: Any) -> Rig:
    """A cheating bot on a client that sends what it is told without asking its own engine (at most `limit` times);
    until then it plays `seek`'s honest move when there is one (one that brings its chance sooner)."""
    return lambda seat, players: {"cheat": cheat, "cheat_limit": limit, "cheat_seek": seek,
                                  "peer_class": CheatingPeer, "peer_kwargs": peer}


def _peer(cls: type[TablePeer], kwargs: Rig = lambda seat, players: {}) -> Rig:
    """A modified peer in the cheating seat; `kwargs(seat, players)` configures it."""
    return lambda seat, players: {"peer_class": cls, "peer_kwargs": kwargs(seat, players)}


def _equivocate(split: bool) -> Rig:
    def rig(seat: int, players: int) -> dict[str, Any]:
        others = [s for s in range(players) if s != seat]
        def tap(net: MemNet, peers: list[TablePeer]) -> EquivocationTap:
            return EquivocationTap(net, seat, peers[seat].identity, "move", _other_move,
                                   split=others[-1:] if split else (), both=() if split else others)
        return {"tap": tap}
    return rig


def _chatter(seat: int, players: int) -> dict[str, Any]:
    return {"peer_class": WithholdingPeer, "peer_kwargs": {"withhold": withhold_public},
            "setup": lambda net, peers: net.call_at(1.0, Chatter(seat))}


@dataclass(frozen=True)
class CheatKind:
    """One cheat of the catalogue."""

    name: str
    games: tuple[str, ...]
    what: str
    expect: Expect
    rig: Rig
    not_at: tuple[int, str] | None = None  # a seat that can never play it, and why
    chance: str = ""  # what gives it its chance, said when it had none
    orders: bool = False  # a cheat of the round's orderer: only a round its seat deals gives it its chance


# The orderer is the round's dealer, and a sim table's first round is dealt by seat 0: seat S deals round S + 1 first.
ORDERS: Final = ("its seat orders only the rounds it deals, seat S round S + 1 first: the game was over before; "
                 "a higher --limit gives it one")
CHEAT_LIMIT: Final = 30  # Crisp's limit at a cheating table (a round or two: a cheat needs one) when none is given


def cheat_limit(cheat: CheatKind, cheater: int) -> int:
    """Crisp's limit for `cheat` from seat `cheater` when none is given: CHEAT_LIMIT, or, for a cheat of the
    orderer, CHEAT_LIMIT for each round until its seat deals, so that the game reaches that round (at random bots
    a round scores about 20 at most, so CHEAT_LIMIT × (S + 1) lasts S + 1 rounds or more)."""
    return CHEAT_LIMIT * (cheater + 1) if cheat.orders else CHEAT_LIMIT


def never_deals(cheat: CheatKind, game: str, cheater: int) -> str | None:
    """Why `cheater` can never give `cheat` its chance in `game` (Crescendo's rounds are three, dealt by seats 0
    to 2), or None."""
    if cheat.orders and game == "crescendo" and cheater >= CRESCENDO_ROUNDS:
        return (f"a cheat of the round's orderer, and crescendo's {CRESCENDO_ROUNDS} rounds are dealt by seats 0 to "
                f"{CRESCENDO_ROUNDS - 1}: seat {cheater} never orders one")
    return None


def _kinds(*kinds: CheatKind) -> dict[str, CheatKind]:
    return {k.name: k for k in kinds}


CATALOGUE = _kinds(
    CheatKind("pass-substitute", BOTH, "a shuffle pass with one card turned into another", "void",
              _rewrite("pass", substitute_card)),
    CheatKind("pass-duplicate", BOTH, "a shuffle pass with one card twice, another gone", "void",
              _rewrite("pass", duplicate_card)),
    CheatKind("pass-mark", BOTH, "a shuffle pass that leaves a card unmasked, to follow it", "void",
              _rewrite("pass", mark_card),
              not_at=(0, "seat 0 shuffles first, from the public deck: it has nothing to leave unmasked")),
    CheatKind("two-passes", BOTH, "a second well-proven pass for its place in the shuffle", "void",
              _rewrite("pass", second_pass)),
    CheatKind("lying-share", BOTH, "decryption shares whose proofs do not hold", "void-claim",
              _peer(LyingSharePeer, lambda seat, n: {"lie": "share"})),
    CheatKind("withhold-public", BOTH, "keeps its shares of public cards to itself", "void",
              _peer(WithholdingPeer, lambda seat, n: {"withhold": withhold_public})),
    CheatKind("withhold-private", BOTH, "keeps the next seat's private box to itself", "void",
              _peer(WithholdingPeer, lambda seat, n: {"withhold": withhold_private_to((seat + 1) % n)})),
    CheatKind("replay", BOTH, "sends every frame it sees again, later", "ignored",
              lambda seat, n: {"tap": lambda net, peers: ReplayTap(net, ("ready", "key", "pass", "move", "order",
                                                                             "shares", "open"), limit=200)}),
    CheatKind("forged-signature", BOTH, "the next seat's move, altered under its old signature", "dropped",
              lambda seat, n: {"tap": lambda net, peers: ForgeTap(net, seat, (seat + 1) % n)}),
    CheatKind("equivocation", BOTH, "two signed moves for one place in its chain, both to everyone", "void",
              _equivocate(split=False)),
    CheatKind("split-view", BOTH, "two signed moves for one place, each to different peers", "void",
              _equivocate(split=True)),
    CheatKind("out-of-turn", BOTH, "draws when it is not its turn", "rejected", _bot(out_of_turn_draw)),
    CheatKind("king-swap", ("crisp",), "swaps a drawn King into its hand (illegal only with the faces: the audit)",
              "void", _bot(replace_with_drawn_king, seek=draw_from_pile, lax=True)),
    CheatKind("discard-king", ("crisp",), "discards a drawn King instead of using its special", "rejected",
              _bot(discard_drawn_king, seek=draw_from_pile)),
    CheatKind("wrong-special", ("crescendo",), "a special action the Reserve's top card does not show", "rejected",
              _bot(wrong_special)),
    CheatKind("number-unheld", ("crescendo",), "a NUMBER claim on a card its row does not hold", "rejected",
              # A claim that ties with a valid one is dropped unrevealed, not rejected (protocol.md §9.5):
              # the cheat tries again, so that one of its claims stands alone.
              _bot(claim_unheld, limit=3)),
    CheatKind("early-timeout", BOTH, "as orderer, ticks a deadline (a window's close) before it comes", "void",
              _peer(EarlyTicker), chance=ORDERS, orders=True),
    CheatKind("bad-stamp", BOTH, "as orderer, stamps a move five seconds after the truth", "void",
              _rewrite("order", far_stamp), chance=ORDERS, orders=True),
    CheatKind("other-opening", BOTH, "opens its seed commitment with another seed", "void",
              _rewrite("open", other_opening)),
    CheatKind("small-order-key", BOTH, "a round key with a small-order component", "void",
              _rewrite("key", small_order_key)),
    CheatKind("chatter-stall", BOTH, "withholds public shares while it sends a fresh move every 0.7 s", "void",
              _chatter),
)


def fired(run: Run, seat: int) -> bool:
    """Whether the cheat had its chance in this run (a drawn King, a window, a round it ordered…)."""
    return fired_in([run.bots[seat], run.peers[seat], run.net.tap, run.net.rewrite])


def turned_legal(moves: Sequence[Move], refused: Sequence[Move], notes: Sequence[Note]) -> bool:
    """Whether the cheating bot's `moves` were all `refused` by the cheater's own engine when sent, yet none was
    rejected where the log placed it (its own `notes`): a race (a move on its way, ordered first) made each legal,
    and the cheat had no chance. A move legal already when sent is a cheat that is no cheat, not a race."""
    return bool(moves) and all(m in refused and not any(n.kind == "rejected" and n.detail.startswith(f"{m}: ")
                                                        for n in notes) for m in moves)


def fired_in(parts: Sequence[object]) -> bool:
    """Whether any of a cheat's parts (its bot, its peer, a tap, a rewrite) had its chance."""
    for part in parts:
        if isinstance(part, CheatBot) and part.fired:
            peer = next((p for p in parts if isinstance(p, CheatingPeer)), None)
            if peer is not None and turned_legal(part.fired, peer.cheats, peer.notes):
                continue
            return True
        if isinstance(part, LyingSharePeer) and part.lies:
            return True
        if isinstance(part, WithholdingPeer) and part.withheld:
            return True
        if isinstance(part, EquivocationTap) and part.frames is not None:
            return True
        if isinstance(part, ReplayTap) and part.replayed:
            return True
        if isinstance(part, (Rewriter, EarlyTicker, ForgeTap)) and part.fired:
            return True
    return False


def cheat_moves(parts: Sequence[object]) -> list[str]:
    """The moves a cheat's bot played instead of the honest bot's, as text (`str(move)`), among a cheat's parts."""
    return [str(m) for part in parts if isinstance(part, CheatBot) for m in part.fired]


def judge(honest: Sequence[Outcome], name: str, expect: Expect, moves: Sequence[str] = (),
          restarted: Collection[str] = ()) -> str | None:
    """None when every honest peer did what `expect` says about the cheater `name`; else what went wrong.

    A peer `restarted` from its journal (--faults restart) holds no note of what came before, nor anything
    sent while it was down: it need not have noted the dropped frame or the rejected move, as long as
    another honest peer did.

    Random bots lose races (a claim after its window): the rules reject such moves with blame on
    their honest movers, so only faults and dropped frames must blame no one but the cheater. For
    the same reason a "rejected" cheat is caught only when one of its own `moves` (the cheating
    bot's, as text) is rejected with blame on the cheater: the cheater's random bot losing a race
    is no proof that the cheating move was refused.
    """
    for p in honest:
        who = p.name
        if expect in ("void", "void-claim"):
            if p.stopped is None or not p.faults:
                return f"{who} did not stop the table ({p.ended})"
            first = p.faults[0]
            claim = expect == "void-claim" and first.claim is not None and first.claim.blames == name
            if first.blame != name and not claim:
                return f"{who}'s first fault blames {first.blame or 'nobody'}, not {name}"
            continue
        if not p.finished or p.stopped is not None:
            return f"{who} did not finish: {p.ended}"
        dropped = [n for n in p.notes if n.kind == "rejected" and n.detail.startswith("message dropped")]
        if any(n.blame for n in dropped):
            return f"{who} blamed {[n.blame for n in dropped if n.blame]} for a frame it dropped"
        if who in restarted:
            continue
        if expect == "rejected" and not any(n.kind == "rejected" and n.blame == name and n.detail.startswith(f"{m}: ")
                                            for n in p.notes for m in moves):
            return f"{who} never rejected the cheating move of {name} ({'; '.join(moves) or 'none played'})"
        if expect == "dropped" and not dropped:
            return f"{who} never noted the dropped frame"
    if expect == "void-claim" and not any(p.faults[0].blame == name for p in honest):
        return f"no honest peer found the fault of {name} itself"
    if expect in ("rejected", "dropped") and all(p.name in restarted for p in honest):
        return f"every honest peer restarted ({', '.join(p.name for p in honest)}): none is left to show it noted it"
    return None
