"""A peer never crashes on what a seated peer signs: message bodies mutated and re-signed with the
sender's real key (so they pass every envelope check) are refused with a note, never an exception."""

from __future__ import annotations

import functools
import random
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from p2pcards.bots.base import RandomBot
from p2pcards.crypto.encoding import Value
from p2pcards.crypto.envelope import Envelope, parse, seal
from p2pcards.sim.memnet import MemNet
from p2pcards.sim.table_game import make_table
from p2pcards.table.peer import Send, TablePeer

SEED = 11
PLAYERS = 3


class Taping(MemNet):
    """Keeps every broadcast frame, with its sender and the time it was sent."""

    tape: list[tuple[int, float, bytes]]

    def _outputs(self, sender: int, outputs: list[Any]) -> None:
        self.tape.extend((sender, self.now, o.frame) for o in outputs if isinstance(o, Send))
        super()._outputs(sender, outputs)


def _record(game: str) -> tuple[list[TablePeer], list[tuple[int, float, bytes]]]:
    peers = make_table(game, PLAYERS, {"limit": 15} if game == "crisp" else {}, random.Random(SEED))
    net = Taping(peers, [RandomBot(random.Random(i)) for i in range(PLAYERS)], random.Random(SEED))
    net.tape = []
    net.start()
    net.run(until=30.0)
    return peers, net.tape


@functools.cache
def tapes() -> dict[str, tuple[list[TablePeer], list[tuple[int, float, bytes]]]]:
    """Each game's recorded frames, recorded on first use (not while tests are collected)."""
    return {game: _record(game) for game in ("crisp", "crescendo")}

values: st.SearchStrategy[Value] = st.recursive(
    st.none() | st.booleans() | st.integers(-(2**63), 2**64 - 1) | st.binary(max_size=80) | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=8,
)


def _mutate(body: dict[str, Value], data: st.DataObject) -> dict[str, Value]:
    body = dict(body)
    key = data.draw(st.sampled_from(sorted(body) + ["extra"]))
    target = body.get(key)
    if isinstance(target, list) and target and data.draw(st.booleans()):
        items = list(target)
        items[data.draw(st.integers(0, len(items) - 1))] = data.draw(values)
        body[key] = items
    elif isinstance(target, dict) and target and data.draw(st.booleans()):
        inner = dict(target)
        inner[data.draw(st.sampled_from(sorted(inner)))] = data.draw(values)
        body[key] = inner
    elif data.draw(st.booleans()) or key == "extra":
        body[key] = data.draw(values)
    else:
        body.pop(key, None)
    return body


FUZZ = settings(deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])


@settings(FUZZ, max_examples=6)
@given(st.data())
def test_a_signed_malformed_body_never_crashes_a_peer(data: st.DataObject) -> None:
    fuzz_one(data)


@pytest.mark.slow  # the same, at length
@settings(FUZZ, max_examples=100)
@given(st.data())
def test_many_signed_malformed_bodies_never_crash_a_peer(data: st.DataObject) -> None:
    fuzz_one(data)


def fuzz_one(data: st.DataObject) -> None:
    """Replay a recorded game to a fresh peer, one frame of it re-signed with a mutated body: nothing raises."""
    game = data.draw(st.sampled_from(sorted(tapes())))
    peers, tape = tapes()[game]
    others = [i for i, (sender, _, _) in enumerate(tape) if sender != 0]
    cut = data.draw(st.sampled_from(others[: min(len(others), 160)]))
    victim = make_table(game, PLAYERS, {"limit": 15} if game == "crisp" else {}, random.Random(SEED))[0]
    victim.start(0.0)
    for sender, at, frame in tape[:cut]:
        if sender != 0:
            victim.receive(frame, at + 0.01)
    sender, at, frame = tape[cut]
    env = parse(frame).envelope
    forged = seal(peers[sender].identity, Envelope(env.table, env.round, env.sender, env.seq, env.prev, env.type,
                                                   _mutate(dict(env.body), data))).frame
    victim.receive(forged, at + 0.01)  # must not raise
    for sender, at, frame in tape[cut + 1: cut + 20]:
        if sender != 0:
            victim.receive(frame, at + 0.01)
    victim.tick(at + 1.0)
