"""Cheaters and faults for simulated tables: modified peers, cheating bots, network taps and forged frames.

Every part here works on real `TablePeer`s over `MemNet` with real keys and real deck crypto:

- `CheatingPeer` is a modified client. Its `play` sends whatever its bot chose, legal or not;
  with `lax=True` its own Crisp engine also accepts its face-dependent illegal moves (so it
  stays in step with the honest peers, who accept them provisionally); with `clean_result=True`
  it signs a round result that blames nobody whatever its audit found.
- `LyingSharePeer` sends decryption shares that do not verify (a wrong share, a proof made for
  another position or for another recipient); `WithholdingPeer` keeps shares to itself. Each
  swaps one part of the table for a modified one (`LyingReveals`, `WithholdingReveals`,
  `CleanSettlement`) through `TablePeer.parts`; none reaches into the peer's private methods.
- `CheatBot` wraps an honest bot and, when a `Cheat` sees its chance in the bot's view, plays
  the cheating move instead (up to `limit` times). `out_of_turn_draw`, `discard_drawn_king`,
  `replace_with_drawn_king` and `wrong_special` are such cheats.
- Taps (`MemNet.tap`) and frame helpers: `reseal` (a second signed message for one place in a
  chain), `forge_signature`, `outsider_frame`, `garbage_frames`, `EquivocationTap`, `ReplayTap`.
"""

from __future__ import annotations

import dataclasses
import functools
import random
import secrets
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..bots.base import Bot, RandomBot, View
from ..cards import crisp_rank
from ..crypto import deck as dk
from ..crypto.encoding import Value, encode
from ..crypto.envelope import GENESIS, Envelope, Signed, parse, seal
from ..crypto.identity import Identity, generate
from ..errors import IllegalMove, MalformedMessage
from ..games.base import Move
from ..games.crescendo import CrescendoView
from ..games.crisp import CrispGame, CrispOptions, CrispView
from ..table.config import TableConfig
from ..table.bodies import RoundResult
from ..table.peer import Output, TablePeer
from ..table.reveals import Reveals
from ..table.round import Parts
from ..table.rules import rules_for
from ..table.settle import Settlement
from .memnet import LinkModel, MemNet, Rewrite
from .table_game import make_table

Cheat = Callable[[View], Move | None]
Tap = Callable[[int, int, bytes], bytes | None]  # as MemNet.tap: (sender, receiver, frame) -> frame or None


def seeded_draws(rng: random.Random) -> Callable[[], bytes]:
    """A `draw_seed` for TablePeer that makes its round secrets (so its shuffles) reproducible."""
    return lambda: rng.randbytes(32)


def seeded_identity(rng: random.Random, name: str) -> Identity:
    """An identity whose key comes from `rng` (reproducible simulations only)."""
    return Identity(Ed25519PrivateKey.from_private_bytes(rng.randbytes(32)), name)


def make_seeded_table(game: str, players: int, options: Mapping[str, Any] | None, seed: int,
                      **peer_args: Any) -> list[TablePeer]:
    """Like `table_game.make_table`, but the table id, the keys and every round secret come from `seed`."""
    return make_table(game, players, options, random.Random(f"table/{seed}"), **peer_args)


@dataclass
class Run:
    """A finished simulation: the network, its peers and bots."""

    net: MemNet
    peers: list[TablePeer]
    bots: list[Bot | None]

    def honest(self, cheaters: Sequence[int]) -> list[TablePeer]:
        """The peers not in `cheaters`."""
        return [p for i, p in enumerate(self.peers) if i not in cheaters]


def run_table(game: str, players: int, options: Mapping[str, Any] | None = None, seed: int = 1, *,
              seat: int | None = None, peer_class: type[TablePeer] | None = None,
              peer_kwargs: Mapping[str, Any] | None = None, cheat: Cheat | None = None, cheat_limit: int = 1,
              cheat_seek: Cheat | None = None, tap: Callable[[MemNet, list[TablePeer]], Tap] | None = None,
              rewrite: Callable[[MemNet, list[TablePeer]], Rewrite] | None = None,
              bots: Sequence[Bot | None] | None = None, link: LinkModel | None = None,
              setup: Callable[[MemNet, list[TablePeer]], None] | None = None,
              prepare: Callable[[MemNet, list[TablePeer]], None] | None = None,
              out_of_turn_chance: float = 0.05, until: float = 300.0, **peer_args: Any) -> Run:
    """Play a seeded table with random bots (or `bots`); `seat` may get a modified peer, a cheating bot or both.

    `tap` and `rewrite` make the network's tap and rewrite (MemNet); `prepare(net, peers)` runs
    before the peers start (a recorder), `setup` just after.
    """
    rng = random.Random(f"run/{seed}")
    peers = make_seeded_table(game, players, options, seed, **peer_args)
    randoms: list[Bot | None] = [RandomBot(random.Random(rng.random()), out_of_turn_chance) for _ in range(players)]
    bots = list(randoms if bots is None else bots)
    if seat is not None and peer_class is not None:
        replace_peer(peers, seat, peer_class, **dict(peer_kwargs or {}))
    if seat is not None and cheat is not None:
        inner = bots[seat]
        assert inner is not None
        bots[seat] = CheatBot(inner, cheat, cheat_limit, cheat_seek)
    net = MemNet(peers, bots, rng, link)
    if tap is not None:
        net.tap = tap(net, peers)
    if rewrite is not None:
        net.rewrite = rewrite(net, peers)
    if prepare is not None:
        prepare(net, peers)
    net.start()
    if setup is not None:
        setup(net, peers)
    net.run(until=until)
    return Run(net, peers, bots)


# ---------------------------------------------------------------- modified peers


class LaxCrispGame(CrispGame):
    """A Crisp engine that never refuses a move over a face it knows: it defers every such check to the audit."""

    def check(self, move: Move, record: bool = False, blind: bool = False) -> None:
        """Judge `move` as if no face were known: a face-dependent illegal move passes (recorded when `record`)."""
        super().check(move, record, blind=True)


class CleanSettlement(Settlement):
    """A settlement that signs every round result with no blame, whatever its audit found."""

    def audit(self, log_hash: bytes) -> RoundResult:
        """Our audit's result, with its verdict wiped clean."""
        return dataclasses.replace(super().audit(log_hash), blame=None, audit="verified")


class CheatingPeer(TablePeer):
    """A modified client: it sends the moves it is told to without asking its own engine first.

    `lax`: its Crisp engine accepts its own face-dependent illegal moves (it plays on in step
    with the honest peers instead of refusing its own move). `clean_result`: it signs every
    round result with no blame, whatever its audit found (`CleanSettlement`).
    """

    def __init__(self, config: TableConfig, identity: Identity, *, lax: bool = False,
                 clean_result: bool = False, **peer_args: Any) -> None:
        super().__init__(config, identity, **peer_args)
        self.lax = lax
        self.clean_result = clean_result
        self.cheats: list[Move] = []  # the moves it sent that its own honest engine would refuse
        if lax:
            if config.game != "crisp":
                raise ValueError("a lax engine is only built for Crisp")
            self.rules = rules_for(LaxCrispGame(config.names, CrispOptions.from_dict(config.options),
                                                config.first_dealer))
        if clean_result:
            self.parts = Parts(settlement=CleanSettlement)

    def play(self, move: Move, now: float) -> list[Output]:
        """Send `move` whatever the rules say (still only while a round is being played)."""
        self.now = max(self.now, now)
        if self.stopped is not None or self.rs is None or not self.rs.dealt or self.rs.log.entries:
            raise IllegalMove("the table is not ready for a move")
        try:
            self.game.check(move)
        except IllegalMove:
            self.cheats.append(move)
        return self.send_move(move)


LIES = ("share", "position", "recipient")


class LyingReveals(Reveals):
    """Reveals whose shares lie as `liar` says (from its `after`-th shares message on), counted on `liar`."""

    def __init__(self, *args: Any, liar: LyingSharePeer) -> None:
        super().__init__(*args)
        self.liar = liar

    def make_reveals(self, handles: list[int], recipient: int | None) -> list[dk.Reveal]:
        """Our true reveals, corrupted once the liar's honest messages are spent."""
        reveals = super().make_reveals(handles, recipient)
        self.liar.sent += 1
        if self.liar.sent <= self.liar.after:
            return reveals
        self.liar.lies += 1
        return [self._corrupt(self.decks.chains[rv.deck][-1], rv) for rv in reveals]

    def _corrupt(self, final: dk.EncryptedDeck, rv: dk.Reveal) -> dk.Reveal:
        decks = self.decks
        assert decks.keys is not None
        pos = rv.positions[0]
        other = (pos + 1) % len(final)
        if self.liar.lie == "share":
            shares = (dk.own_share(decks.secret, final, other),) + rv.shares[1:]
            return dataclasses.replace(rv, shares=shares)
        if self.liar.lie == "position":
            theirs = dk.make_reveal(decks.ctx, decks.keys, decks.secret, final, [other], rv.recipient)
            return dataclasses.replace(rv, shares=theirs.shares + rv.shares[1:], proofs=theirs.proofs + rv.proofs[1:])
        # recipient: a proof bound to some other seat than the one the reveal is for
        wrong = next(s for s in range(self.seats) if s != self.me and s != rv.recipient)
        theirs = dk.make_reveal(decks.ctx, decks.keys, decks.secret, final, list(rv.positions), wrong)
        return dataclasses.replace(rv, proofs=theirs.proofs)


class LyingSharePeer(TablePeer):
    """Sends decryption shares whose proofs do not hold for what they claim, from its `after`-th shares message on.

    `lie` is one of LIES: "share" (a wrong share under the right proof), "position" (the share
    and proof of another position, claimed for this one), "recipient" (a proof made for another
    recipient, claimed for the real one). Its rounds' reveals are `LyingReveals`.
    """

    def __init__(self, config: TableConfig, identity: Identity, *, lie: str = "share", after: int = 0,
                 **peer_args: Any) -> None:
        if lie not in LIES:
            raise ValueError(f"lie is one of {LIES}")
        super().__init__(config, identity, **peer_args)
        self.lie = lie
        self.after = after
        self.sent = 0
        self.lies = 0
        self.parts = Parts(reveals=functools.partial(LyingReveals, liar=self))


Withhold = Callable[[list[int], "int | None"], bool]


class WithholdingReveals(Reveals):
    """Reveals that keep to themselves the shares `holder.withhold` picks, noted in `holder.withheld`."""

    def __init__(self, *args: Any, holder: WithholdingPeer) -> None:
        super().__init__(*args)
        self.holder = holder

    def send_shares(self, handles: list[int], recipient: int | None) -> None:
        """Send our shares unless the holder withholds them."""
        if self.holder.withhold(handles, recipient):
            self.holder.withheld.append((list(handles), recipient))
            return
        super().send_shares(handles, recipient)


class WithholdingPeer(TablePeer):
    """Keeps to itself the shares `withhold(handles, recipient)` picks (recipient None: a public reveal)."""

    def __init__(self, config: TableConfig, identity: Identity, *, withhold: Withhold, **peer_args: Any) -> None:
        super().__init__(config, identity, **peer_args)
        self.withhold = withhold
        self.withheld: list[tuple[list[int], int | None]] = []
        self.parts = Parts(reveals=functools.partial(WithholdingReveals, holder=self))


def withhold_public(handles: list[int], recipient: int | None) -> bool:
    """Withhold every public reveal (the whole table waits on it)."""
    return recipient is None


def withhold_private_to(seat: int) -> Withhold:
    """Withhold every private reveal meant for `seat` (only that seat waits on it)."""
    return lambda handles, recipient: recipient == seat


def replace_peer(peers: list[TablePeer], seat: int, cls: type[TablePeer], **kwargs: Any) -> TablePeer:
    """Put a modified peer of class `cls` in `seat`, with the same config, identity and peer settings."""
    old = peers[seat]
    new = cls(old.cfg, old.identity, draw_seed=old.draw_seed, tolerance=old.tolerance,
              timeout=old.timeout, **kwargs)
    peers[seat] = new
    return new


# ---------------------------------------------------------------- cheating bots


class CheatBot:
    """An honest bot that plays `cheat`'s move instead whenever the cheat sees its chance (at most `limit` times)."""

    def __init__(self, inner: Bot, cheat: Cheat, limit: int = 1, seek: Cheat | None = None) -> None:
        self.inner = inner
        self.cheat = cheat
        self.limit = limit
        self.seek = seek  # an honest move that brings the cheat its chance sooner (draw from the pile, for a King)
        self.fired: list[Move] = []
        self._pending: Move | None = None

    def choose(self, view: View) -> Move | None:
        """The cheating move when there is a chance left; while it waits for one, `seek`'s move when it has one
        (and nothing out of our turn: no call that would end the round sooner); else the honest bot's move."""
        if len(self.fired) < self.limit:
            move = self.cheat(view)
            if move is not None:
                self.fired.append(move)
                return move
            if self.seek is not None:  # waiting for its chance: no call that would end the round sooner
                honest = self.seek(view)
                if honest is not None and honest in view.legal:
                    return honest
                if view.turn != view.me:
                    return None
        return self.inner.choose(view)


def _me(view: View) -> str:
    return view.players[view.me]


def out_of_turn_draw(view: View) -> Move | None:
    """Draw while another player's turn is under way (Crisp or Crescendo)."""
    if view.turn is None or view.turn == view.me or view.over:
        return None
    if isinstance(view, CrispView):
        return Move(_me(view), "draw", source="pile")
    return Move(_me(view), "draw", source="reserve")


def _drawn_king(view: View) -> bool:
    return (isinstance(view, CrispView) and view.turn == view.me and view.phase == "drawn_pile"
            and view.drawn is not None and crisp_rank(view.drawn) == "K")


def draw_from_pile(view: View) -> Move | None:
    """Crisp, an honest move: on our turn, draw from the pile (where a King comes from) rather than take the
    discard (a random bot took either). A cheat waiting for a drawn King at an 8-seat table with the limit 30
    draws about once a round in its two rounds: its chance comes in about one game of seven (4 Kings in 52)."""
    if isinstance(view, CrispView) and view.turn == view.me and view.phase == "draw_due":
        return Move(_me(view), "draw", source="pile")
    return None


def discard_drawn_king(view: View) -> Move | None:
    """Crisp: throw away a drawn King instead of using it (seen by all as soon as it lands face up)."""
    return Move(_me(view), "discard") if _drawn_king(view) else None


def replace_with_drawn_king(view: View) -> Move | None:
    """Crisp: swap a drawn King into the hand (face down: only the audit sees it)."""
    return Move(_me(view), "replace", pos=0) if _drawn_king(view) else None


def wrong_special(view: View) -> Move | None:
    """Crescendo: a special action the Reserve's top card does not show (public backs: seen by all at once)."""
    if not isinstance(view, CrescendoView) or view.turn != view.me or view.phase != "turn":
        return None
    top = view.reserve_top
    if top is None or view.window_open:
        return None
    if top.action != "lock":
        return Move(_me(view), "lock", pos=0)
    other = view.players[(view.me + 1) % len(view.players)]
    return Move(_me(view), "peek", target=other, pos=0)


# ---------------------------------------------------------------- frames


def reseal(identity: Identity, frame: bytes, **changes: Any) -> bytes:
    """The same envelope with `changes` (e.g. body=...), signed again by `identity`: same seq, same prev."""
    env = parse(frame).envelope
    return seal(identity, dataclasses.replace(env, **changes)).frame


def frame_type(frame: bytes) -> str | None:
    """The message type of a well-formed frame, else None."""
    try:
        return parse(frame).envelope.type
    except MalformedMessage:
        return None


def forge_signature(frame: bytes, body: dict[str, Value] | None = None) -> bytes:
    """A frame whose message was altered (`body`, or a bumped round) but whose signature is the original."""
    signed = parse(frame)
    env = signed.envelope
    changed = dataclasses.replace(env, body=body) if body is not None else dataclasses.replace(env, round=env.round + 1)
    return signed.signature + changed.encode()


def outsider_frame(table: bytes, mtype: str = "move", body: dict[str, Value] | None = None,
                   identity: Identity | None = None, rnd: int = 1) -> bytes:
    """A well-signed first message from a key that has no seat at the table."""
    ident = identity or generate("outsider")
    env = Envelope(table, rnd, ident.public, 0, GENESIS, mtype, body if body is not None else {"m": {"a": "draw"}})
    return seal(ident, env).frame


def garbage_frames(rng: random.Random, sample: bytes | None = None) -> list[bytes]:
    """Bytes no peer should choke on: empty, random, truncated, oversized, not a map, a map of nonsense."""
    out = [b"", bytes(1), rng.randbytes(63), rng.randbytes(64), rng.randbytes(65), rng.randbytes(500),
           bytes(64) + encode([1, 2, 3]), bytes(64) + encode({"table": 1}), bytes(64) + b"\xc1",
           bytes(64) + b"\xdc\xff\xff", rng.randbytes(64) + b"\x81\xa4body" * 10_000]
    if sample is not None:
        out += [sample[: len(sample) // 2], sample + b"\x00", sample[:64] + bytes(len(sample) - 64)]
        flipped = bytearray(sample)
        flipped[-1] ^= 0x01
        out.append(bytes(flipped))
    return out


# ---------------------------------------------------------------- taps


def chain_taps(*taps: Tap) -> Tap:
    """One tap that runs each of `taps` in turn (a dropped frame stays dropped)."""

    def tap(sender: int, receiver: int, frame: bytes) -> bytes | None:
        out: bytes | None = frame
        for t in taps:
            if out is None:
                return None
            out = t(sender, receiver, out)
        return out

    return tap


class EquivocationTap:
    """Makes seat `cheater` sign a second message for the place in its chain of its `nth` message of type `mtype`.

    `alter(body) -> body` makes the second body. Receivers in `split` get only the second
    version (a split view of the chain); receivers in `both` get the first and then the second.
    """

    def __init__(self, net: MemNet | None, cheater: int, identity: Identity, mtype: str,
                 alter: Callable[[dict[str, Value]], dict[str, Value]], *, nth: int = 0,
                 split: Sequence[int] = (), both: Sequence[int] = (), gap: float = 0.05) -> None:
        self.net = net
        self.cheater = cheater
        self.identity = identity
        self.mtype = mtype
        self.alter = alter
        self.nth = nth
        self.split = set(split)
        self.both = set(both)
        self.gap = gap
        self.seen = 0
        self.target_seq: int | None = None
        self.frames: tuple[bytes, bytes] | None = None

    def __call__(self, sender: int, receiver: int, frame: bytes) -> bytes | None:
        if sender != self.cheater:
            return frame
        try:
            env = parse(frame).envelope
        except MalformedMessage:
            return frame
        if self.target_seq is None and env.type == self.mtype:
            if self.seen == self.nth:
                self.target_seq = env.seq
                other = reseal(self.identity, frame, body=self.alter(dict(env.body)))
                self.frames = (frame, other)
            self.seen += 1
        if self.frames is None or env.seq != self.target_seq or frame != self.frames[0]:
            return frame
        if receiver in self.split:
            return self.frames[1]
        if receiver in self.both:
            assert self.net is not None
            self.net.inject(receiver, self.frames[1], at=self.net.now + self.gap)
        return frame


class ReplayTap:
    """Delivers each frame of the given types once more, `delay` seconds later (a replay on the network)."""

    def __init__(self, net: MemNet, types: Sequence[str] = ("move", "order", "shares"), delay: float = 0.3,
                 limit: int = 50) -> None:
        self.net = net
        self.types = set(types)
        self.delay = delay
        self.limit = limit
        self.replayed: list[bytes] = []

    def __call__(self, sender: int, receiver: int, frame: bytes) -> bytes | None:
        if len(self.replayed) < self.limit and frame_type(frame) in self.types:
            self.replayed.append(frame)
            self.net.inject(receiver, frame, at=self.net.now + self.delay)
        return frame


class Recorder:
    """Keeps every frame that crossed the network, by (sender, receiver)."""

    def __init__(self) -> None:
        self.frames: list[tuple[int, int, bytes]] = []

    def __call__(self, sender: int, receiver: int, frame: bytes) -> bytes | None:
        self.frames.append((sender, receiver, frame))
        return frame

    def of_type(self, mtype: str, sender: int | None = None) -> list[bytes]:
        """Frames of one type (from one sender)."""
        return [f for s, _, f in self.frames if (sender is None or s == sender) and frame_type(f) == mtype]


def random_identity() -> Identity:
    """A fresh identity with no seat anywhere."""
    return generate("x" + secrets.token_hex(4))


def signed_of(frame: bytes) -> Signed:
    """Parse a frame (no signature check)."""
    return parse(frame)
