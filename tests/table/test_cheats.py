"""Cheating and faults at the table (issue 4, item 4): each is rejected or detected with blame on the cheater,
and every honest peer does the same thing next: goes on and finishes, or stops with the round void.

Small seeded tables over the in-memory network, real keys and real deck crypto; the parts are in
p2pcards/sim/cheaters.py.
"""

from __future__ import annotations

import dataclasses
import functools
import random
from collections.abc import Callable
from typing import Any

import pytest

from p2pcards.crypto.encoding import Value
from p2pcards.crypto import deck as dk
from p2pcards.sim.cheaters import (
    LIES,
    CheatBot,
    CheatingPeer,
    EquivocationTap,
    LyingReveals,
    LyingSharePeer,
    Recorder,
    ReplayTap,
    Run,
    WithholdingPeer,
    discard_drawn_king,
    forge_signature,
    frame_type,
    garbage_frames,
    replace_peer,
    out_of_turn_draw,
    outsider_frame,
    replace_with_drawn_king,
    run_table,
    withhold_private_to,
    withhold_public,
    wrong_special,
)
from p2pcards.sim.memnet import MemNet
from p2pcards.table.peer import TablePeer
from p2pcards.table.reveals import Reveals

CRISP = {"limit": 20}
TIMEOUT = 2.0
UNTIL = 40.0  # virtual seconds: a 3-seat Crisp game to 20 ends well before; a hang shows as a peer not stopped
CHEATER = 1  # never seat 0: a blame that falls on the lowest seat by default must not pass by luck


# ---------------------------------------------------------------- what honest peers must agree on


def blamed(peer: TablePeer) -> list[str]:
    """Everyone this peer blamed, in order (rejected moves and faults)."""
    return [n.blame for n in peer.notes if n.blame is not None and n.kind in ("rejected", "fault")]


def honest(run: Run, cheater: int | None = CHEATER) -> list[TablePeer]:
    return run.honest([] if cheater is None else [cheater])


def assert_finished(run: Run, cheater: int | None = CHEATER) -> None:
    """Every honest peer finished the game, unstopped, with the same totals and winners."""
    peers = honest(run, cheater)
    for p in peers:
        assert p.stopped is None, (p.names[p.me], p.stopped, p.notes[-5:])
        assert p.finished, (p.names[p.me], p.notes[-5:])
    assert len({tuple(p.game.totals) for p in peers}) == 1
    assert len({tuple(p.game.winners) for p in peers}) == 1


def assert_rejected_and_finished(run: Run, name: str) -> None:
    """Every honest peer rejected a move of `name` (and blamed no one else), then finished the game."""
    assert_finished(run)
    for p in honest(run):
        assert name in blamed(p), p.notes
        assert set(blamed(p)) == {name}, blamed(p)
        assert not p.faults


def assert_void(run: Run, name: str, cheater: int | None = CHEATER) -> None:
    """Every honest peer stopped with the round void, its first fault blaming `name`."""
    for p in honest(run, cheater):
        assert p.stopped is not None, (p.names[p.me], p.notes[-5:])
        assert p.faults and p.faults[0].blame == name, (p.names[p.me], p.faults)
        assert any(n.kind == "void" for n in p.notes)
        assert not p.finished
        assert set(blamed(p)) <= {name}, (p.names[p.me], blamed(p))


def assert_void_or_claim(run: Run, name: str) -> None:
    """Every honest peer stopped, blaming `name` by its own check, or (a fault only its reporter could see,
    such as a lie in a box sealed to it) showing the report's blame of `name` as the reporter's word only."""
    blamers = 0
    for p in honest(run):
        assert p.stopped is not None and p.faults, (p.names[p.me], p.notes[-5:])
        first = p.faults[0]
        assert first.blame == name or (first.blame is None and first.claim is not None and first.claim.blames == name), \
            (p.names[p.me], p.faults)
        blamers += first.blame == name
        assert set(blamed(p)) <= {name}, (p.names[p.me], blamed(p))
    assert blamers, "no honest peer found the fault itself"


def until_fired(make: Callable[[int], Run], seat: int = CHEATER, tries: int = 30) -> Run:
    """The first seeded run in which the cheating bot at `seat` got its chance."""
    for seed in range(tries):
        run = make(seed)
        bot = run.bots[seat]
        assert isinstance(bot, CheatBot)
        if bot.fired:
            return run
    pytest.fail(f"the cheat never fired in {tries} games")


# ---------------------------------------------------------------- a clean table, for reference


def test_clean_crisp_table_with_short_timeouts_blames_nobody() -> None:
    run = run_table("crisp", 3, CRISP, seed=1, timeout=TIMEOUT, until=UNTIL)
    assert_finished(run, None)
    assert all(not blamed(p) for p in run.peers)


@pytest.mark.slow  # a whole Crescendo game
def test_clean_crescendo_table_with_short_timeouts_blames_nobody() -> None:
    # A busy orderer (NUMBER claims waiting out their tie window) must not time itself out.
    run = run_table("crescendo", 3, {}, seed=2, timeout=5.0, until=300.0)
    assert_finished(run, None)
    assert not any(n.kind == "fault" for p in run.peers for n in p.notes)


# ---------------------------------------------------------------- (a) a move out of turn


def test_move_out_of_turn_is_rejected_with_blame_and_the_game_goes_on() -> None:
    run = until_fired(lambda seed: run_table("crisp", 3, CRISP, seed, seat=CHEATER, peer_class=CheatingPeer,
                                             cheat=out_of_turn_draw, timeout=TIMEOUT, until=UNTIL))
    assert_rejected_and_finished(run, "p1")
    for p in honest(run):
        assert any(n.kind == "rejected" and "not p1's turn" in n.detail for n in p.notes)


# ---------------------------------------------------------------- (b) an illegal move everyone sees at once


@pytest.mark.slow  # a whole game, one of many kinds of cheat; the slow run plays it
def test_discarding_a_drawn_king_is_rejected_with_blame_and_the_game_goes_on() -> None:
    run = until_fired(lambda seed: run_table("crisp", 3, CRISP, seed, seat=CHEATER, peer_class=CheatingPeer,
                                             cheat=discard_drawn_king, out_of_turn_chance=0.01,
                                             timeout=TIMEOUT, until=UNTIL))
    assert_rejected_and_finished(run, "p1")
    for p in honest(run):
        assert any(n.kind == "rejected" and "King" in n.detail for n in p.notes)


@pytest.mark.slow  # whole Crescendo games until one gives the cheat its chance
def test_crescendo_special_action_the_reserve_does_not_show_is_rejected() -> None:
    run = until_fired(lambda seed: run_table("crescendo", 3, {}, seed, seat=CHEATER, peer_class=CheatingPeer,
                                             cheat=wrong_special, out_of_turn_chance=0.0, until=300.0))
    assert_finished(run)
    for p in honest(run):
        assert any(n.kind == "rejected" and n.blame == "p1" and "Reserve's top" in n.detail for n in p.notes)
        assert not p.faults


# ---------------------------------------------------------------- (c) an illegal move only the audit sees


def _king_swap(seed: int, **kwargs: Any) -> Run:
    return run_table("crisp", 3, CRISP, seed, seat=CHEATER, peer_class=CheatingPeer, peer_kwargs=kwargs,
                     cheat=replace_with_drawn_king, out_of_turn_chance=0.01, timeout=TIMEOUT, until=UNTIL)


@pytest.mark.slow  # a whole game of many moves, one of many kinds of cheat; the slow run plays it
def test_drawn_king_swapped_into_hand_is_accepted_then_named_by_the_audit() -> None:
    # The cheater's client accepts its own move, so the table plays on in step until the audit.
    run = until_fired(lambda seed: _king_swap(seed, lax=True))
    for p in honest(run):
        assert not any(n.kind == "rejected" for n in p.notes)  # accepted provisionally
    assert_void(run, "p1")
    for p in honest(run):
        assert "audit" in p.faults[0].detail


@pytest.mark.slow
def test_king_swapper_who_signs_a_clean_result_is_blamed_for_the_result() -> None:
    run = until_fired(lambda seed: _king_swap(seed, lax=True, clean_result=True))
    assert_void(run, "p1")


@pytest.mark.slow  # a whole game, one of many kinds of cheat; the slow run plays it
def test_king_swapper_whose_own_client_refuses_the_swap_is_blamed() -> None:
    # An unmodified engine under the cheating client: it refuses its own swap, so it never grants the
    # reveal of the card it swapped out, and the honest peers wait on it.
    run = until_fired(lambda seed: _king_swap(seed))
    assert_void(run, "p1")


# ---------------------------------------------------------------- (d) two signed messages for one place


def _other_move(body: dict[str, Value]) -> dict[str, Value]:
    m = body["m"]
    assert isinstance(m, dict)
    if "p" in m:
        p = m["p"]
        assert isinstance(p, int)
        return {"m": dict(m, p=(p + 1) % 3)}
    return {"m": {"a": "replace", "p": 2}} if m.get("a") == "draw" else {"m": {"a": "draw"}}


def _equivocate(split: tuple[int, ...], both: tuple[int, ...]) -> Callable[[MemNet, list[TablePeer]], Any]:
    def make(net: MemNet, peers: list[TablePeer]) -> EquivocationTap:
        return EquivocationTap(net, CHEATER, peers[CHEATER].identity, "move", _other_move, split=split, both=both)
    return make


def test_equivocation_seen_by_every_honest_peer_voids_the_round_with_blame() -> None:
    run = run_table("crisp", 3, CRISP, 1, tap=_equivocate((), (0, 2)), timeout=TIMEOUT, until=UNTIL)
    assert isinstance(run.net.tap, EquivocationTap) and run.net.tap.frames is not None
    assert_void(run, "p1")
    for p in honest(run):
        assert "two different signed messages" in p.faults[0].detail
        assert p.faults[0].detail.endswith("from p1")  # the seat's name, not its key in hex


@pytest.mark.slow  # a whole game, one of many kinds of cheat; the slow run plays it
def test_equivocation_with_a_split_view_is_detected_with_blame() -> None:
    # p0 gets one move, p2 another, each signed by p1 for the same seq: no honest peer ever holds both.
    run = run_table("crisp", 3, CRISP, 1, tap=_equivocate((2,), ()), timeout=TIMEOUT, until=UNTIL)
    assert isinstance(run.net.tap, EquivocationTap) and run.net.tap.frames is not None
    assert_void(run, "p1")


# ---------------------------------------------------------------- (e) a lying share


# "recipient" by default: the share is right and only its proof wrong, so the drawer shows the card before it is
# blamed (Reveals.prove); the slow run tries every lie.
@pytest.mark.parametrize("lie", [LIES[2], *(pytest.param(lie, marks=pytest.mark.slow) for lie in LIES[:2])])
def test_lying_share_is_blamed_on_the_prover(lie: str) -> None:
    run = run_table("crisp", 3, CRISP, 1, seat=CHEATER, peer_class=LyingSharePeer, peer_kwargs={"lie": lie},
                    timeout=TIMEOUT, until=UNTIL)
    liar = run.peers[CHEATER]
    assert isinstance(liar, LyingSharePeer) and liar.lies
    assert_void_or_claim(run, "p1")


# "recipient" by default: the share is right and only its proof wrong, so the drawer shows the card before it is
# blamed (Reveals.prove); the slow run tries every lie.
@pytest.mark.parametrize("lie", [LIES[2], *(pytest.param(lie, marks=pytest.mark.slow) for lie in LIES[:2])])
def test_lying_share_in_mid_round_is_blamed_on_the_prover(lie: str) -> None:
    run = run_table("crisp", 3, CRISP, 2, seat=CHEATER, peer_class=LyingSharePeer,
                    peer_kwargs={"lie": lie, "after": 3}, timeout=TIMEOUT, until=UNTIL)
    liar = run.peers[CHEATER]
    assert isinstance(liar, LyingSharePeer) and liar.lies
    assert_void_or_claim(run, "p1")


# ---------------------------------------------------------------- (f) a share withheld until the time-out


def test_withheld_public_share_blames_the_withholder_after_the_timeout() -> None:
    run = run_table("crisp", 3, CRISP, 1, seat=CHEATER, peer_class=WithholdingPeer,
                    peer_kwargs={"withhold": withhold_public}, timeout=TIMEOUT, until=UNTIL)
    cheat = run.peers[CHEATER]
    assert isinstance(cheat, WithholdingPeer) and cheat.withheld
    assert_void(run, "p1")
    for p in honest(run):
        assert f"for {TIMEOUT:g} s" in p.faults[0].detail


def test_withheld_private_share_blames_the_withholder_after_the_timeout() -> None:
    # Only p2 waits on p1's share of its own cards; p0 must end the same way, not wait for ever.
    run = run_table("crisp", 3, CRISP, 1, seat=CHEATER, peer_class=WithholdingPeer,
                    peer_kwargs={"withhold": withhold_private_to(2)}, timeout=TIMEOUT, until=UNTIL)
    cheat = run.peers[CHEATER]
    assert isinstance(cheat, WithholdingPeer) and cheat.withheld
    assert_void(run, "p1")


class _LiesToSeat0InPlay(LyingReveals):
    """Right shares under wrong proofs in every box sealed to seat 0 after the deal (handles of the pile)."""

    def make_reveals(self, handles: list[int], recipient: int | None) -> list[dk.Reveal]:
        reveals = Reveals.make_reveals(self, handles, recipient)
        if recipient != 0 or min(handles) < 9:  # 3 seats: handles 0-8 are dealt
            return reveals
        self.liar.lies += 1
        return [self._corrupt(self.decks.chains[rv.deck][-1], rv) for rv in reveals]


class _LiarToSeat0(LyingSharePeer):
    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, lie="recipient", **kwargs)
        self.parts = dataclasses.replace(self.parts, reveals=functools.partial(_LiesToSeat0InPlay, liar=self))


def test_a_lie_among_the_shares_that_came_is_named_before_the_share_withheld() -> None:
    # Seat 0 draws: p1's share is right under a wrong proof (shown unproved), p2 withholds its share. Waiting on
    # p2, seat 0 has not checked p1's proof; when the wait times out, it checks it first and names the liar,
    # the box as evidence, rather than the withholder alone.
    def withholder(net: MemNet, peers: list[TablePeer]) -> None:
        replace_peer(net.peers, 2, WithholdingPeer,
                     withhold=lambda handles, recipient: recipient == 0 and min(handles) >= 9)

    run = run_table("crisp", 3, CRISP, 1, seat=CHEATER, peer_class=_LiarToSeat0, prepare=withholder,
                    timeout=TIMEOUT, until=UNTIL)
    liar, drawer = run.net.peers[CHEATER], run.net.peers[0]
    assert isinstance(liar, _LiarToSeat0) and liar.lies
    assert drawer.stopped is not None and drawer.faults
    first = drawer.faults[0]
    assert first.blame == "p1" and "proof" in first.detail and "sent nothing" not in first.detail, drawer.faults


# ---------------------------------------------------------------- (g) garbage bytes


@pytest.mark.slow  # a whole game under junk; test_fuzz_frames.py sends junk in the default run
def test_garbage_bytes_are_dropped_and_the_game_goes_on() -> None:
    sample: list[bytes] = []
    rec = Recorder()

    def setup(net: MemNet, peers: list[TablePeer]) -> None:
        rng = random.Random(7)
        for k in range(40):
            for junk in garbage_frames(rng, sample[0] if sample else None):
                net.inject(k % len(peers), junk, at=0.05 * k)

    def tap(net: MemNet, peers: list[TablePeer]) -> Recorder:
        return rec

    run = run_table("crisp", 3, CRISP, 1, tap=tap, setup=setup, timeout=TIMEOUT, until=UNTIL)
    assert_finished(run, None)
    for p in run.peers:
        assert not blamed(p)
        assert any(n.kind == "rejected" for n in p.notes)  # the garbage was seen and dropped

    # Garbage that is a seated peer's real frame cut short or bit-flipped: still nobody to blame.
    frame = rec.of_type("move")[0]

    def setup2(net: MemNet, peers: list[TablePeer]) -> None:
        for junk in garbage_frames(random.Random(3), frame):
            for r in range(3):
                net.inject(r, junk, at=0.5 + 0.01 * r)

    run2 = run_table("crisp", 3, CRISP, 1, setup=setup2, timeout=TIMEOUT, until=UNTIL)
    assert_finished(run2, None)
    for p in run2.peers:
        assert not blamed(p)


# ---------------------------------------------------------------- (h) a peer not at the table


@pytest.mark.slow  # a whole game, one of many kinds of cheat; the slow run plays it
def test_message_from_a_key_not_at_the_table_is_dropped_and_the_game_goes_on() -> None:
    def setup(net: MemNet, peers: list[TablePeer]) -> None:
        table = peers[0].cfg.context
        for r in range(len(peers)):
            bodies: list[tuple[str, dict[str, Value]]] = [
                ("move", {"m": {"a": "draw"}}), ("ready", {"config": bytes(32)}),
                ("order", {"i": 0, "t": 0, "k": "deal", "refs": [], "why": ""})]
            for k, (mtype, body) in enumerate(bodies):
                net.inject(r, outsider_frame(table, mtype, body, rnd=1 if mtype != "ready" else 0), at=0.2 * k)
                net.inject(r, outsider_frame(table, mtype, body, rnd=1), at=1.0 + 0.3 * k)

    run = run_table("crisp", 3, CRISP, 1, setup=setup, timeout=TIMEOUT, until=UNTIL)
    assert_finished(run, None)
    for p in run.peers:
        assert not blamed(p)
        assert any(n.kind == "rejected" and "not seated" in n.detail for n in p.notes)


# ---------------------------------------------------------------- replays and forged signatures


@pytest.mark.slow  # a whole game, one of many kinds of cheat; the slow run plays it
def test_replayed_frames_are_dropped_and_the_game_goes_on() -> None:
    replays: list[ReplayTap] = []

    def tap(net: MemNet, peers: list[TablePeer]) -> ReplayTap:
        replays.append(ReplayTap(net, types=("ready", "key", "pass", "move", "order", "shares"), limit=200))
        return replays[0]

    run = run_table("crisp", 3, CRISP, 1, tap=tap, timeout=TIMEOUT, until=UNTIL)
    assert len(replays[0].replayed) > 20
    assert_finished(run, None)
    for p in run.peers:
        assert not blamed(p)


def test_forged_signature_is_dropped_and_nobody_is_blamed() -> None:
    rec = Recorder()

    def setup(net: MemNet, peers: list[TablePeer]) -> None:
        def on_deliver(net: MemNet, i: int) -> None:
            # Once p1 has moved, hand every peer a copy of that move with a changed body and p1's old signature.
            moves = [f for s, _, f in rec.frames if s == CHEATER and frame_type(f) == "move"]
            if moves and not forged:
                forged.append(forge_signature(moves[0], {"m": {"a": "crisp"}}))
                forged.append(forge_signature(moves[0]))
                for r in range(len(peers)):
                    for f in forged:
                        net.inject(r, f, at=net.now + 0.001)
        forged: list[bytes] = []
        net.on_deliver = on_deliver

    run = run_table("crisp", 3, CRISP, 1, tap=lambda net, peers: rec, setup=setup, timeout=TIMEOUT, until=UNTIL)
    assert_finished(run, None)
    for p in run.peers:
        assert not blamed(p)
    for i, p in enumerate(run.peers):
        if i != CHEATER:
            assert any(n.kind == "rejected" and "bad signature" in n.detail for n in p.notes)
