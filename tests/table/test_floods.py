"""Floods (issue 9): what another peer can make a peer keep is bounded, and junk is counted, dropped and noted once.

Frames for another table are refused before any signature check and blame no one: a key may sit
at several tables, so anyone could replay an honest seat's frames from one table at another.
"""

from __future__ import annotations

import random
import secrets
import tracemalloc
from collections.abc import Iterator

import pytest

from p2pcards.crypto import deck as dk
from p2pcards.crypto import shuffle
from p2pcards.crypto.envelope import GENESIS, Envelope, Outbox, parse, seal
from p2pcards.crypto.identity import generate
from p2pcards.sim.table_game import make_table
from p2pcards.bots.base import RandomBot
from p2pcards.sim.memnet import MemNet
from p2pcards.table.chains import MAX_HELD_BYTES, MAX_LATER, MAX_ROUND_BYTES
from p2pcards.table.log import MAX_MOVES
from p2pcards.table.peer import Send, TablePeer

HONEST, ATTACKER = 1, 2
BIG = 64 << 10  # bytes of junk per frame


def _table() -> list[TablePeer]:
    return make_table("crisp", 3, {"limit": 15}, random.Random(7))


def _junk(peers: list[TablePeer], rounds: int) -> Iterator[bytes]:
    """Every kind of frame a flooder can send, about BIG bytes each, made one at a time."""
    cfg = peers[0].cfg
    attacker, honest, outsider = peers[ATTACKER].identity, peers[HONEST].identity, generate("outsider")
    pad = {"m": b"x" * BIG}
    for i in range(rounds):
        yield secrets.token_bytes(BIG)  # garbage
        yield bytes(64) + Envelope(cfg.context, 1, honest.public, 5, GENESIS, "move", pad).encode()  # forged
        yield seal(honest, Envelope(b"another table", 1, honest.public, i, GENESIS, "move", pad)).frame
        yield seal(outsider, Envelope(cfg.context, 1, outsider.public, i, GENESIS, "move", pad)).frame
        yield seal(attacker, Envelope(cfg.context, 1, attacker.public, 10 + i, GENESIS, "move", pad)).frame  # ahead


def test_a_flood_of_junk_costs_bounded_memory_and_few_notes() -> None:
    peers = _table()
    victim = peers[0]
    victim.start(0.0)
    for frame in _junk(peers, 4):  # warm up (first notes, caches)
        victim.receive(frame, 0.1)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for frame in _junk(peers, 300):  # ~100 MiB offered
            victim.receive(frame, 0.2)
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert grown < MAX_HELD_BYTES + (4 << 20), grown  # one sender's held frames, and change
    assert victim.stopped is None and not [n for n in victim.notes if n.blame not in (None, "p2")], victim.notes
    assert len(victim.notes) <= 8, victim.notes
    dropped = victim.chains.dropped
    assert dropped[(None, "WrongContext")] == 304 and dropped[(None, "BadSignature")] == 304
    assert dropped[(ATTACKER, "held")] > 200


def test_a_frame_of_another_table_is_refused_and_blames_no_one() -> None:
    peers = _table()
    victim = peers[0]
    victim.start(0.0)
    honest = peers[HONEST]
    # The honest seat's own ready, signed for another table it also sits at, replayed here by anyone.
    other = Outbox(honest.identity, b"another table").seal(0, "ready", {"config": bytes(32)}).frame
    victim.receive(other, 0.1)
    assert victim.stopped is None and victim.notes and all(n.blame is None for n in victim.notes), victim.notes
    assert victim.chains.received(HONEST) == 0


def test_too_many_messages_of_a_round_not_begun_are_their_senders_fault() -> None:
    peers = _table()
    victim = peers[0]
    victim.start(0.0)
    out = Outbox(peers[ATTACKER].identity, victim.cfg.context)
    victim.receive(out.seal(0, "ready", {"config": victim.cfg.digest()}).frame, 0.1)
    for _ in range(MAX_LATER + 1):  # round 1 has not begun at the victim: seat 1 is not ready
        victim.receive(out.seal(1, "shares", {"reveals": ["x" * 100]}).frame, 0.2)
    assert victim.faults and victim.faults[0].blame == "p2", victim.notes
    assert len(victim.chains.later) == MAX_LATER


def test_a_pass_for_a_deck_that_cannot_have_begun_is_its_senders_fault() -> None:
    peers = _table()
    victim = peers[0]
    readies = [p.start(0.0) for p in peers]
    for out in readies[1:]:
        for o in out:
            if isinstance(o, Send):
                victim.receive(o.frame, 0.1)
    assert victim.round == 1
    n = len(victim.cfg.cards())
    bogus = dk.EncryptedDeck(5, ATTACKER + 1, (bytes(32),) * n, (bytes(32),) * n, None, bytes(32),
                             bytes(shuffle.proof_bytes(n)))
    victim.receive(peers[ATTACKER].outbox.seal(1, "pass", bogus.to_wire()).frame, 0.2)
    assert victim.faults and victim.faults[0].blame == "p2" and "cannot have begun" in victim.faults[0].detail


def _dealt(rounds: int = 1) -> tuple[list[TablePeer], MemNet]:
    """A table that has dealt round `rounds` (and played the ones before)."""
    peers = make_table("crisp", 3, {"limit": 100}, random.Random(7))
    net = MemNet(peers, [RandomBot(random.Random(i)) for i in range(3)], random.Random(1))
    net.start()
    until = 0.0
    while not (peers[0].round >= rounds and peers[0].rs is not None and peers[0].rs.dealt):
        until += 0.5
        net.run(until=until)
        assert until < 600 and not any(p.stopped or p.finished for p in peers), [p.stopped for p in peers]
    return peers, net


@pytest.mark.slow
def test_a_flood_of_valid_signed_moves_costs_bounded_memory_and_is_its_senders_fault() -> None:
    peers, net = _dealt()
    victim, out = peers[0], peers[ATTACKER].outbox
    rnd = victim.round

    def moves(count: int) -> Iterator[bytes]:
        for i in range(count):  # out of turn, all of them, each validly signed in the attacker's chain
            yield out.seal(rnd, "move", {"m": {"a": "crisp" if i % 2 else "draw"}}).frame

    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        for frame in moves(8 * MAX_MOVES):
            victim.receive(frame, net.now)
        grown = tracemalloc.get_traced_memory()[0] - base
    finally:
        tracemalloc.stop()
    assert victim.faults and victim.faults[0].blame == "p2" and f"{MAX_MOVES} moves" in victim.faults[0].detail
    assert not [n for n in victim.notes if n.blame not in (None, "p2")], victim.notes
    assert victim.chains.received(ATTACKER) <= MAX_MOVES + 64  # taken no further once it stopped
    assert grown < MAX_MOVES * (2 << 10), grown  # what MAX_MOVES moves cost, not what the flood offered


def test_a_peer_keeps_whole_frames_of_this_round_and_the_last_only() -> None:
    peers, net = _dealt(rounds=2)
    peer, key = peers[0], peers[0].cfg.keys[HONEST]
    kept = {seq: peer.tracker.frame_at(key, seq) for seq in range(peer.chains.received(HONEST))}
    rounds = {seq: parse(f).envelope.round for seq, f in kept.items() if f is not None}
    assert rounds and min(rounds.values()) >= peer.round - 1, rounds
    assert kept[0] is None  # its ready (round 0): by its hash only ...
    # ... which still tells a replay of the old frame (ignored) from a rival for its place (equivocation).
    frame = seal(peers[HONEST].identity, Envelope(peer.cfg.context, 0, key, 0, GENESIS, "ready",
                                                  {"config": peer.cfg.digest()})).frame
    peer.receive(frame, net.now)  # its ready signed again: the very same frame (Ed25519 is deterministic)
    assert peer.stopped is None
    rival = seal(peers[HONEST].identity, Envelope(peer.cfg.context, 0, key, 0, GENESIS, "aid", {"on": True}))
    peer.receive(rival.frame, net.now)
    assert peer.faults and peer.faults[0].blame == "p1" and "old seq" in peer.faults[0].detail


def test_a_flood_of_big_valid_frames_costs_bounded_memory_and_is_its_senders_fault() -> None:
    """Shares for a deck that never comes are dropped with a note, but every frame we accept we keep (to
    answer requests for it): past MAX_ROUND_BYTES in one round, it is its sender's fault."""
    peers, net = _dealt()
    victim, out = peers[0], peers[ATTACKER].outbox
    rnd, positions = victim.round, 1000
    reveals = [{"deck": 2 ** 32 - 1 - k, "final": bytes(32), "prover": ATTACKER, "recipient": None,
                "positions": list(range(positions)), "shares": bytes(32 * positions), "proofs": bytes(64 * positions)}
               for k in range(10)]
    before = victim.chains.received(ATTACKER)
    size = 0
    for _ in range(3 * MAX_ROUND_BYTES // (96 * positions * 10)):  # three times what a round may carry
        frame = out.seal(rnd, "shares", {"reveals": reveals}).frame
        size = len(frame)
        victim.receive(frame, net.now)
    assert victim.faults and victim.faults[0].blame == "p2" and "MiB in round" in victim.faults[0].detail
    kept = [victim.chains.frame(ATTACKER, seq) for seq in range(before, victim.chains.received(ATTACKER))]
    assert sum(len(f or b"") for f in kept) <= MAX_ROUND_BYTES + size  # taken no further once it stopped
