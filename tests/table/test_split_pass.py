"""A shuffler that shows different peers different passes (a split view of its pass, protocol.md §4.6, §14.3).

The cheater signs two valid passes for its place in deck 0's shuffle (each with a correct proof: the second is its
pass made from another seed), one at the seq of its chain where the first is, and sends one to some peers and the
other to the rest. The next shuffler builds on the one it got; a peer that holds the other must not blame it: every
honest peer ends up blaming the cheater, and only it, with the round void.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import Any

import pytest
from parts_helpers import dealt_crisp_seats, make_decks

from p2pcards.cards import CRISP_DECK
from p2pcards.crypto import deck as dk
from p2pcards.crypto.encoding import Value
from p2pcards.crypto.envelope import parse
from p2pcards.crypto.identity import Identity, generate
from p2pcards.table.bodies import Shares
from p2pcards.table.reveals import Reveals
from p2pcards.errors import MalformedMessage
from p2pcards.sim.cheaters import Run, frame_type, reseal, run_table
from p2pcards.sim.memnet import LinkModel, MemNet
from p2pcards.table.config import TableConfig
from p2pcards.table.peer import TablePeer
from p2pcards.table.round import Parts

CRISP = {"limit": 20}
KEYS = tuple(generate(f"p{i}").public for i in range(2))
UNTIL = 60.0  # virtual seconds: the table stops in round 1, well before; a hang shows as a peer not stopped


def second_pass(peer: TablePeer, body: dict[str, Value]) -> dict[str, Value]:
    """Another valid pass of `peer` on the input its pass `body` names: its own deck functions, its round secret with
    another seed (another permutation and masks, a proof that verifies)."""
    assert peer.rs is not None
    decks = peer.rs.decks
    keys = decks.keys
    assert keys is not None
    first = dk.EncryptedDeck.from_wire(body)
    prev = decks.chains[first.deck][first.stage - 1]
    assert dk.deck_digest(decks.ctx, prev) == first.input
    other = dataclasses.replace(decks.secret, seed=bytes(b ^ 0x5A for b in decks.secret.seed))
    second = dk.shuffle_pass(decks.ctx, keys, other, prev)
    dk.verify_pass(decks.ctx, keys, prev, second)  # as valid as the first
    assert second.c1 != first.c1
    return second.to_wire()


class SplitPass:
    """Seat `cheater` signs a second pass for its place in deck 0 (same seq of its chain); the seats in `split` get
    only the second, the others only the first, whoever sends it to them (the cheater, or anyone it answers)."""

    def __init__(self, peers: list[TablePeer], cheater: int, split: Sequence[int]) -> None:
        self.peers = peers
        self.cheater = cheater
        self.split = set(split)
        self.frames: tuple[bytes, bytes] | None = None

    def __call__(self, sender: int, receiver: int, frame: bytes) -> bytes | None:
        if sender != self.cheater:
            return frame
        try:
            env = parse(frame).envelope
        except MalformedMessage:
            return frame
        if self.frames is None and env.type == "pass" and env.body.get("deck") == 0:
            peer = self.peers[self.cheater]
            self.frames = (frame, reseal(peer.identity, frame, body=second_pass(peer, dict(env.body))))
        if self.frames is not None and frame == self.frames[0] and receiver in self.split:
            return self.frames[1]
        return frame


def split_pass(cheater: int, split: Sequence[int]) -> Callable[[MemNet, list[TablePeer]], SplitPass]:
    return lambda net, peers: SplitPass(peers, cheater, split)


def blamed(peer: TablePeer) -> list[str]:
    """Everyone this peer blamed, in order (rejected moves and faults)."""
    return [n.blame for n in peer.notes if n.blame is not None and n.kind in ("rejected", "fault")]


def assert_cheater_blamed(run: Run, cheater: int) -> None:
    """The split happened; every honest peer stopped with the round void, blaming the cheater and nobody else."""
    tap = run.net.tap
    assert isinstance(tap, SplitPass) and tap.frames is not None
    name = run.peers[cheater].names[cheater]
    for p in run.honest([cheater]):
        who = p.names[p.me]
        assert p.stopped is not None, (who, p.notes[-5:])
        assert any(n.kind == "void" for n in p.notes), who
        assert not p.finished, who
        assert p.faults and p.faults[0].blame == name, (who, p.faults)
        assert set(blamed(p)) == {name}, (who, blamed(p))


# (seats, cheater, split): the cheater first or in the middle of the shuffle order, the second pass going to the
# next shuffler, to the seats after it, to the seats before the cheater, or to a mix.
CASES = [
    (3, 0, (2,)),  # first; the next shuffler (1) builds on the first pass, 2 holds the second
    (3, 0, (1,)),  # first; the next shuffler builds on the second, 2 holds the first
    (3, 1, (0,)),  # middle; a seat before the cheater holds the second
    (3, 1, (2,)),  # middle; the next shuffler builds on the second
    (4, 0, (2, 3)),
    (4, 1, (3,)),
    (4, 1, (0, 2)),
    (4, 2, (0, 1)),
    (5, 0, (1, 3)),
    (5, 2, (4,)),
    (5, 2, (0, 3)),
    (5, 3, (0, 1, 2)),
]


def slow_but(keep: int, cases: list[Any]) -> list[Any]:
    """`cases`, all but the first `keep` run with the slow tests only (each is a whole table's shuffle and stop)."""
    return [c if i < keep else pytest.param(*c, marks=pytest.mark.slow) for i, c in enumerate(cases)]


# The cheater last: no pass follows its own, and the split shows only when shares proved on one final deck (naming
# it) reach a peer that holds the other.
LAST = [(3, 2, (0,)), (3, 2, (1,)), (4, 3, (1, 2)), (5, 4, (2,))]


@pytest.mark.parametrize("seats, cheater, split", slow_but(2, [CASES[0], CASES[6], *CASES[1:6], *CASES[7:]]))
def test_a_split_view_of_a_pass_is_blamed_on_its_shuffler_only(seats: int, cheater: int, split: tuple[int, ...]) -> None:
    run = run_table("crisp", seats, CRISP, seed=seats, tap=split_pass(cheater, split), until=UNTIL)
    assert_cheater_blamed(run, cheater)
    assert run.net.stats.resent == 0  # the passes shown again are no moves sent again (they were counted so)


@pytest.mark.slow
def test_a_split_view_of_a_pass_of_tagged_cards_is_blamed_on_its_shuffler_only() -> None:
    # Crescendo's cards carry their backs as tags: the second pass moves them along its own permutation.
    run = run_table("crescendo", 4, {}, seed=4, tap=split_pass(1, (0, 3)), until=UNTIL)
    assert_cheater_blamed(run, 1)


@pytest.mark.parametrize("seats, cheater, split, seed", slow_but(1, [(4, 1, (3,), 1), (5, 2, (0, 4), 2), (5, 3, (1,), 3),
                                                                  (4, 3, (0, 2), 4), (5, 4, (1, 3), 5)]))
def test_a_split_view_of_a_pass_over_a_reordering_network(seats: int, cheater: int, split: tuple[int, ...],
                                                          seed: int) -> None:
    # Passes overtake each other: the next shuffler's pass may come before the one it follows, and the pass shown
    # again before or after either; shares may come before the last pass they name.
    run = run_table("crisp", seats, CRISP, seed=seed, tap=split_pass(cheater, split), until=UNTIL,
                    link=LinkModel(delay=0.005, jitter=0.060))
    assert_cheater_blamed(run, cheater)


@pytest.mark.parametrize("seats, cheater, split", slow_but(1, LAST))
def test_a_split_view_of_the_last_pass_is_blamed_on_its_shuffler_only(seats: int, cheater: int,
                                                                      split: tuple[int, ...]) -> None:
    # Shares name the final deck they were proved on: a peer holding the other shows its last pass, and a peer
    # holding both finds the equivocation (no share is blamed on its honest prover).
    run = run_table("crisp", seats, CRISP, seed=seats, tap=split_pass(cheater, split), until=UNTIL)
    assert_cheater_blamed(run, cheater)


class WrongInput:
    """Seat `seat` names another input than the pass it got in its pass of deck 0 (no one signed two passes)."""

    def __init__(self, peers: list[TablePeer], seat: int) -> None:
        self.peers = peers
        self.seat = seat
        self.frames: dict[bytes, bytes] = {}

    def __call__(self, sender: int, receiver: int, frame: bytes) -> bytes | None:
        if sender != self.seat or frame_type(frame) != "pass":
            return frame
        if frame not in self.frames:
            body = dict(parse(frame).envelope.body)
            wrong = body["deck"] == 0 and body["stage"] == self.seat + 1
            self.frames[frame] = reseal(self.peers[self.seat].identity, frame, body=dict(body, input=bytes(32))) \
                if wrong else frame
        return self.frames[frame]


@pytest.mark.parametrize("seats, seat", slow_but(1, [(3, 1), (4, 3)]))
def test_a_pass_on_an_input_no_one_shows_is_blamed_on_its_seat_by_the_time_out(seats: int, seat: int) -> None:
    # Everyone holds the one pass before it: each shows it to the others in vain, and the deck waits on the seat
    # whose pass it cannot take until the time-out names that seat, at every honest peer.
    run = run_table("crisp", seats, CRISP, seed=seats, tap=lambda net, peers: WrongInput(peers, seat),
                    timeout=2.0, until=UNTIL)
    name = run.peers[seat].names[seat]
    for p in run.honest([seat]):
        assert p.stopped is not None and not p.finished, (p.names[p.me], p.notes[-5:])
        assert p.faults and p.faults[0].blame == name, (p.names[p.me], p.faults)
        assert set(blamed(p)) == {name}, (p.names[p.me], blamed(p))


class WrongFinalReveals(Reveals):
    """Reveals naming a final deck no one holds (no one signed two), public ones or sealed ones as `sealed` says."""

    sealed = False

    def make_reveals(self, handles: list[int], recipient: int | None) -> list[dk.Reveal]:
        reveals = super().make_reveals(handles, recipient)
        if (recipient is not None) != self.sealed:
            return reveals
        return [dataclasses.replace(rv, final=bytes(32)) for rv in reveals]


class WrongFinalPeer(TablePeer):
    """Proves its shares on the one final deck, but names another in them (its public or its sealed ones)."""

    def __init__(self, config: TableConfig, identity: Identity, *, sealed: bool, **peer_args: Any) -> None:
        super().__init__(config, identity, **peer_args)
        self.parts = Parts(reveals=type("Sealed" if sealed else "Public", (WrongFinalReveals,), {"sealed": sealed}))


@pytest.mark.parametrize("seats, seat, sealed", slow_but(2, [(3, 1, False), (3, 1, True), (4, 3, False), (4, 2, True)]))
def test_shares_on_a_final_deck_no_one_shows_are_blamed_on_their_prover_by_the_time_out(seats: int, seat: int,
                                                                                       sealed: bool) -> None:
    # Everyone holds the one final deck: a receiver shows its last pass in vain, and the card waits on the prover's
    # share until the time-out names it, at every honest peer.
    run = run_table("crisp", seats, CRISP, seed=seats, seat=seat, peer_class=WrongFinalPeer,
                    peer_kwargs={"sealed": sealed}, timeout=2.0, until=UNTIL)
    name = run.peers[seat].names[seat]
    for p in run.honest([seat]):
        assert p.stopped is not None and not p.finished, (p.names[p.me], p.notes[-5:])
        assert any("name another final deck" in n.detail for n in p.notes) or sealed, p.names[p.me]
        assert p.faults and p.faults[0].blame == name, (p.names[p.me], p.faults)
        assert any("sent nothing owed" in f.detail for f in p.faults), (p.names[p.me], p.faults)
        assert set(blamed(p)) == {name}, (p.names[p.me], blamed(p))


# ---------------------------------------------------------------- the rule, on the decks alone


def test_a_pass_naming_another_pass_before_it_than_ours_waits_and_shows_ours() -> None:
    # Seat 0 made two passes; seat 2 holds the second, seat 1 built on the first. Seat 2 blames no one: it shows
    # the pass it holds to every seat (once) and waits, its deck still owed by seat 1.
    decks, ports, _ = make_decks(3, CRISP_DECK)
    for d in decks:
        for other in decks:
            other.take_key(d.me, d.announcement())
    init = decks[0].chains[0][0]
    first = dk.shuffle_pass(decks[0].ctx, decks[0].keys, decks[0].secret, init)  # type: ignore[arg-type]
    twin = dataclasses.replace(decks[0].secret, seed=bytes(32))
    second = dk.shuffle_pass(decks[0].ctx, decks[0].keys, twin, init)  # type: ignore[arg-type]
    decks[1].take_pass(0, first, b"first pass of seat 0")
    decks[1].advance()
    built = dk.EncryptedDeck.from_wire(ports[1].of_type("pass")[0])
    decks[2].take_pass(0, second, b"second pass of seat 0")
    decks[2].take_pass(1, built, b"pass of seat 1")
    decks[2].advance()
    decks[2].advance()
    assert not ports[2].faults and not ports[2].of_type("pass")
    assert ports[2].relayed == [b"second pass of seat 0"]
    assert len(decks[2].chains[0]) == 2 and decks[2].owed() == {1}


def test_a_first_pass_on_another_deck_than_the_public_one_is_its_seats_fault_at_once() -> None:
    decks, ports, _ = make_decks(2, CRISP_DECK)
    for d in decks:
        for other in decks:
            other.take_key(d.me, d.announcement())
    mine = dk.shuffle_pass(decks[0].ctx, decks[0].keys, decks[0].secret, decks[0].chains[0][0])  # type: ignore[arg-type]
    decks[1].take_pass(0, dataclasses.replace(mine, input=bytes(32)), b"pass of seat 0")
    decks[1].advance()
    assert ports[1].faults and ports[1].faults[0][1] == 0 and "another input" in ports[1].faults[0][0]
    assert not ports[1].relayed


def test_shares_naming_another_final_deck_than_ours_wait_and_show_our_last_pass_once() -> None:
    # Seat 1 (the last shuffler) may have signed two final passes: a reveal proved on the other one is no proof
    # against its prover. Nothing is blamed, the last pass we hold goes to every seat once, and the share is owed.
    reveals, ports, games = dealt_crisp_seats(KEYS)
    reveals[1].decks.frames[(0, 2)] = b"last pass of seat 1"
    for r in reveals:
        r.grant_public([40, 41])
    theirs = Shares.from_wire(ports[0].of_type("shares")[0]).reveals
    other = [dataclasses.replace(rv, final=bytes(32)) for rv in theirs]
    reveals[1].take(0, None, other)
    reveals[1].take_early()
    reveals[1].take(0, None, [dataclasses.replace(rv, final=bytes(range(32))) for rv in theirs])
    reveals[1].take_early()
    assert not ports[1].faults and ports[1].relayed == [b"last pass of seat 1"]
    assert reveals[1].public_owed() == {0} and 0 in reveals[1].shares_owed() and games[1].faces.get(40) is None
    # The same share naming our final deck is taken; one naming ours whose proof fails is its prover's fault at once.
    reveals[1].take(0, None, theirs)
    reveals[1].take_early()
    assert not ports[1].faults and reveals[1].public_owed() == set() and games[1].faces.get(40) in CRISP_DECK
    lie = dataclasses.replace(reveals[0].make_reveals([42], None)[0], shares=theirs[0].shares[:1])
    reveals[1].grant_public([42])
    reveals[1].take(0, None, [lie])
    reveals[1].take_early()
    assert ports[1].faults and ports[1].faults[0][1] == 0 and "DLEQ" in ports[1].faults[0][0]
