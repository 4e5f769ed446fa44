"""A peer never raises on what the network brings, and never blames an honest seat for it.

A recorded table's frames are replayed to a fresh peer (seat 0), with frames an attacker made
slipped in anywhere: random bytes, recorded frames mutated or cut short, replays, envelopes of
any shape signed by a seated attacker (seat 2), by an unseated key, by small-order "keys" (with
the signature a lax check accepts from them), or for another table. Nothing raises out of
`receive` or `tick`, and every blame falls on the attacker's seat.
"""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2pcards.bots.base import RandomBot
from p2pcards.crypto import group
from p2pcards.crypto.encoding import Value
from p2pcards.crypto.envelope import GENESIS, Envelope, parse, seal
from p2pcards.crypto.identity import generate
from p2pcards.sim.memnet import MemNet
from p2pcards.sim.table_game import make_table
from p2pcards.table.messages import BODIES
from p2pcards.table.peer import Send, TablePeer

SEED = 5
PLAYERS = 3
ATTACKER = 2
SMALL_ORDER = [(1).to_bytes(32, "little"), bytes([0xEC] + [0xFF] * 30 + [0x7F]), bytes(32),
               bytes.fromhex("c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a")]
OUTSIDER = generate("outsider")


class Taping(MemNet):
    """Keeps every broadcast frame, with its sender and the time it was sent."""

    tape: list[tuple[int, float, bytes]]

    def _outputs(self, sender: int, outputs: list[Any]) -> None:
        self.tape.extend((sender, self.now, o.frame) for o in outputs if isinstance(o, Send))
        super()._outputs(sender, outputs)


def _table(game: str) -> list[TablePeer]:
    return make_table(game, PLAYERS, {"limit": 15} if game == "crisp" else {}, random.Random(SEED))


def _record(game: str) -> tuple[list[TablePeer], list[tuple[int, float, bytes]]]:
    """A game's frames up to seat 0's first move (a replayed seat 0 cannot make its bot's moves)."""
    peers = _table(game)
    net = Taping(peers, [RandomBot(random.Random(i)) for i in range(PLAYERS)], random.Random(SEED))
    net.tape = []
    net.start()
    net.run(until=6.0)
    first = next(i for i, (s, _, f) in enumerate(net.tape) if s == 0 and parse(f).envelope.type == "move")
    return peers, net.tape[:first]


@functools.cache
def tapes() -> dict[str, tuple[list[TablePeer], list[tuple[int, float, bytes]]]]:
    """Each game's recorded frames, recorded on first use (not while tests are collected)."""
    return {game: _record(game) for game in ("crisp", "crescendo")}

values: st.SearchStrategy[Value] = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.binary(max_size=40) | st.text(max_size=10),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=8,
)


@st.composite
def attacks(draw: st.DrawFn, peers: list[TablePeer], tape: list[tuple[int, float, bytes]]) -> bytes:
    """One frame an attacker could put on the wire."""
    recorded = draw(st.sampled_from([f for _, _, f in tape]))
    kind = draw(st.sampled_from(["raw", "flip", "cut", "replay", "forged", "small-order", "outsider", "other-table"]))
    if kind == "raw":
        return draw(st.binary(max_size=300))
    if kind == "flip":
        at = draw(st.integers(0, len(recorded) - 1))
        return recorded[:at] + bytes([recorded[at] ^ draw(st.integers(1, 255))]) + recorded[at + 1:]
    if kind == "cut":
        return recorded[: draw(st.integers(0, len(recorded) - 1))]
    if kind == "replay":
        return recorded
    env = parse(recorded).envelope
    cfg = peers[0].cfg
    mtype = draw(st.sampled_from(sorted(BODIES)) | st.text(min_size=1, max_size=8))
    body = draw(st.just(dict(env.body)) | st.dictionaries(st.text(max_size=8), values, max_size=4))
    forged = Envelope(cfg.context, draw(st.integers(0, 3)), cfg.keys[ATTACKER], draw(st.integers(0, 60)),
                      draw(st.sampled_from([GENESIS, env.prev, bytes(range(32))])), mtype, body)
    if kind == "forged":
        return seal(peers[ATTACKER].identity, forged).frame
    if kind == "outsider":
        return seal(OUTSIDER, Envelope(cfg.context, env.round, OUTSIDER.public, env.seq, env.prev, env.type,
                                       env.body)).frame
    if kind == "other-table":
        other = Envelope(b"another table", env.round, cfg.keys[ATTACKER], env.seq, env.prev, env.type, env.body)
        return seal(peers[ATTACKER].identity, other).frame
    key = draw(st.sampled_from(SMALL_ORDER))  # with the signature R = s*B, S = s a lax check accepts
    message = Envelope(cfg.context, env.round, key, env.seq, env.prev, env.type, env.body).encode()
    s = draw(st.integers(1, 2**64))
    return group.mul_base(group.scalar_of_int(s)) + s.to_bytes(32, "little") + message


FUZZ = settings(deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


def fuzz_one(data: st.DataObject) -> None:
    game = data.draw(st.sampled_from(sorted(tapes())))
    peers, tape = tapes()[game]
    plan = data.draw(st.lists(st.tuples(st.integers(0, len(tape)), attacks(peers, tape)), min_size=1, max_size=4))
    victim = _table(game)[0]
    out = victim.start(0.0)
    at = 0.0
    last = max(where for where, _ in plan) + 25  # what follows the attack, a little way on
    for i, (sender, at, frame) in enumerate(tape[:last]):
        for where, bad in plan:
            if where == i:
                victim.receive(bad, at + 0.005)
        if sender != 0:
            victim.receive(frame, at + 0.01)
        victim.tick(at + 0.01)
    for where, bad in plan:
        if where == len(tape):
            victim.receive(bad, at + 0.02)
    out += victim.tick(at + 1.0)
    attacker = victim.names[ATTACKER]
    blamed = [n for n in victim.notes if n.blame is not None and n.blame != attacker]
    assert not blamed, blamed


def test_the_replayed_table_blames_no_one() -> None:
    for game, (peers, tape) in tapes().items():
        victim = _table(game)[0]
        victim.start(0.0)
        for sender, at, frame in tape:
            if sender != 0:
                victim.receive(frame, at + 0.01)
        assert victim.stopped is None and not [n for n in victim.notes if n.blame], (game, victim.notes[-3:])


@settings(FUZZ, max_examples=4)
@given(st.data())
def test_frames_from_an_attacker_never_crash_a_peer_or_blame_an_honest_seat(data: st.DataObject) -> None:
    fuzz_one(data)


@pytest.mark.slow  # the same, at length
@settings(FUZZ, max_examples=150)
@given(st.data())
def test_many_frames_from_an_attacker_never_crash_a_peer_or_blame_an_honest_seat(data: st.DataObject) -> None:
    fuzz_one(data)
