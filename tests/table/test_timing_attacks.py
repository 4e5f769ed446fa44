"""Attacks on time: an orderer moving stamps within (and just past) its bounds, moves landing on a
deadline, ticks withheld, doubled or late, old frames replayed, the memory aid toggled.

Each test names its outcome: caught and blamed on the cheater, rejected harmlessly, or (where the
protocol admits it, §15) an advantage the orderer really has, pinned down so that it cannot grow.
"""

from __future__ import annotations

import math
import random
import types
from collections.abc import Callable, Sequence
from typing import Any

import pytest

from p2pcards.bots.base import View
from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK
from p2pcards.crypto.envelope import parse
from p2pcards.errors import MalformedMessage
from p2pcards.games.base import Move
from p2pcards.games.crescendo import CrescendoGame, CrescendoOptions
from p2pcards.games.crisp import CrispGame, CrispOptions
from p2pcards.sim.cheaters import make_seeded_table, replace_peer
from p2pcards.sim.memnet import LinkModel, MemNet
from p2pcards.table.bodies import Order
from p2pcards.table.log import Log
from p2pcards.table.peer import TablePeer
from p2pcards.table.round import Round

# Plain cards first: every draw below may simply be discarded.
PLAIN_CRISP = [c for c in CRISP_DECK if c[:-1] not in ("J", "Q", "K")] + [c for c in CRISP_DECK if c[:-1] in ("J", "Q", "K")]


# ---------------------------------------------------------------- deadlines on the millisecond grid
#
# Stamps are whole milliseconds read as seconds (t / 1000); a deadline is a stamp plus a time
# option. In binary floating point 0.119 + 3.0 is just below 3.119 and 0.131 + 2.0 just above
# 2.131, so without care a move stamped exactly at a deadline would be late (or early) for about
# one stamp in a hundred, against §12.1 ("deadlines are inclusive"), and an implementation that
# counts in integer milliseconds would part ways with this one.

GRID_EDGES = [119, 131, 236, 256, 500]


def _crisp_engine() -> CrispGame:
    game = CrispGame(["p0", "p1", "p2"], CrispOptions())
    game.queue_deck(PLAIN_CRISP)
    game.apply(Move("p1", "draw", source="pile"), now=0.0)
    return game


@pytest.mark.parametrize("end_ms", GRID_EDGES)
def test_a_crisp_call_stamped_exactly_at_its_windows_end_is_in_time(end_ms: int) -> None:
    game = _crisp_engine()
    game.apply(Move("p1", "discard"), now=end_ms / 1000)
    game.apply(Move("p1", "crisp"), now=(end_ms + 3000) / 1000)
    assert game.r is not None and game.r.caller == 1


@pytest.mark.parametrize("end_ms", GRID_EDGES)
def test_a_draw_stamped_exactly_at_the_turns_opening_is_allowed(end_ms: int) -> None:
    game = _crisp_engine()
    game.apply(Move("p1", "discard"), now=end_ms / 1000)
    game.apply(Move("p2", "draw", source="pile"), now=(end_ms + 2000) / 1000)  # "may be stamped exactly then"


@pytest.mark.parametrize("end_ms", [26, 29, 96, 99, 500])  # (0.026 + 2.0) + 30.0 is not 32.026, nor near it
def test_a_crisp_time_out_is_dated_on_the_grid(end_ms: int) -> None:
    game = CrispGame(["p0", "p1", "p2"], CrispOptions(draw_seconds=30.0))
    game.queue_deck(PLAIN_CRISP)
    game.apply(Move("p1", "draw", source="pile"), now=0.0)
    game.apply(Move("p1", "discard"), now=end_ms / 1000)
    # p2's turn opens at end + 2 s and times out at end + 32 s: a draw stamped exactly then is in time.
    game.apply(Move("p2", "draw", source="pile"), now=(end_ms + 32000) / 1000)


def _crescendo_discarded(end_ms: int) -> CrescendoGame:
    game = CrescendoGame(["p0", "p1"], CrescendoOptions())
    game.queue_deck(list(CRESCENDO_DECK))
    for p in ("p1", "p0"):
        game.apply(Move(p, "setup_pass"))
    game.apply(Move("p1", "draw", source="reserve"))
    game.apply(Move("p1", "discard"), now=end_ms / 1000)
    return game


@pytest.mark.parametrize("end_ms", GRID_EDGES)
def test_a_number_claim_stamped_exactly_at_the_windows_end_is_in_time(end_ms: int) -> None:
    game = _crescendo_discarded(end_ms)
    game.apply(Move("p0", "number", pos=0), now=(end_ms + 2000) / 1000)  # right or wrong, in time
    assert game.r is not None and game.r.window is not None and game.r.window.claimed


@pytest.mark.parametrize("end_ms", GRID_EDGES)
def test_the_next_crescendo_turn_may_begin_exactly_at_the_windows_end(end_ms: int) -> None:
    game = _crescendo_discarded(end_ms)
    game.apply(Move("p0", "draw", source="reserve"), now=(end_ms + 2000) / 1000)


# ---------------------------------------------------------------- the bounds of §9.2, at their edges
#
# A move that reached us at `seen` may be stamped from seen − TOLERANCE_S − SLACK_S to
# max(seen, previous stamp) + TOLERANCE_S + SLACK_S, and never past our clock + TOLERANCE_S; a tick
# not before our clock − TOLERANCE_S − SLACK_S. All inclusive; a millisecond past is the orderer's fault.

MOVE = Move("p1", "draw", source="pile")


def _log(seen: float = 10.0) -> Log:
    log = Log(3, tolerance=1.0, slack=1.5, orderer=0)
    log.take(Order(0, 0, "deal", (), ()), bytes(64), now=0.5)
    log.add_move((1, 0), MOVE, b"", seen, mine=False, ordering=False)
    return log


@pytest.mark.parametrize(("t_ms", "now", "ok"), [
    (12500, 12.0, True),   # seen + 2.5 s, our clock 1.5 s past the move: exactly the bound
    (12501, 12.0, False),  # a millisecond later
    (7500, 10.0, True),    # seen − 2.5 s
    (7499, 10.0, False),
    (12000, 11.0, True),   # our clock + 1 s, the most ahead any stamp may be
    (12001, 11.0, False),
])
def test_a_moves_stamp_is_judged_inclusively_to_the_millisecond(t_ms: int, now: float, ok: bool) -> None:
    log = _log()
    order = Order(1, t_ms, "move", ((1, 0),), (b"",))
    if ok:
        assert log.take(order, bytes(64), now).time == t_ms / 1000
    else:
        with pytest.raises(MalformedMessage):
            log.take(order, bytes(64), now)


@pytest.mark.parametrize(("t_ms", "ok"), [(17500, True), (17499, False), (21000, True), (21001, False)])
def test_a_ticks_stamp_is_judged_inclusively_to_the_millisecond(t_ms: int, ok: bool) -> None:
    log = _log()
    order = Order(1, t_ms, "tick", (), ())
    if ok:
        log.take(order, bytes(64), now=20.0)
    else:
        with pytest.raises(MalformedMessage):
            log.take(order, bytes(64), now=20.0)


# ---------------------------------------------------------------- an orderer that moves stamps

Policy = Callable[[str, Sequence[Move]], float]  # (kind, moves) -> how far to move the stamp, in seconds


class Shifter(TablePeer):
    """An orderer that moves each entry's stamp by `policy` (holding an order back until a stamp that late
    is no more than `lead` ahead of the others' clocks), and ticks as `ticks` says: "honest", "never",
    "twice" (an extra tick, due to nothing, after each one), or "late" (`tick_late` s after the deadline,
    stamped `tick_back` s before it is sent)."""

    lead = 0.95

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.policy: Policy = lambda kind, moves: 0.0
        self.ticks = "honest"
        self.tick_late = 0.0
        self.tick_back = 0.0
        self.held: tuple[str, tuple[tuple[int, int], ...], float] | None = None
        self.shifted: list[tuple[str, float, float]] = []  # (action, intended stamp, stamp sent)
        self.extra = False
        self.ticked: list[tuple[float | None, float]] = []  # (the deadline, our clock) of each tick ordered

    def _begin_round(self, number: int) -> None:
        super()._begin_round(number)
        rs = self.rs
        assert rs is not None
        rs.order_next = types.MethodType(lambda r, now: self._order_next(r, now), rs)  # type: ignore[method-assign]

    def _order_next(self, rs: Round, now: float) -> None:
        if rs.port.stopped or not rs.log_open():
            return
        if self.held is not None:
            kind, refs, t = self.held
            if now >= t - self.lead:
                self.held = None
                rs.order(kind, refs, t)  # type: ignore[arg-type]
            return
        nxt = rs.log.next_order(now)
        if nxt is not None:
            moves = [rs.log.moves[r] for r in nxt[1]]
            t = nxt[2] + self.policy(nxt[0], moves)
            if t != nxt[2]:
                self.shifted.append((moves[0].action, nxt[2], t))
            if t > now + self.lead:
                self.held = (nxt[0], tuple(nxt[1]), t)
            else:
                rs.order(nxt[0], nxt[1], t)
            return
        if rs.log.inbox:
            return
        d = rs.rules.game.wake_time()
        if self.extra:  # "twice": one more tick, due to nothing
            self.extra = False
            self.ticked.append((None, now))
            rs.order("tick", (), now)
            return
        if d is None or d >= now or self.ticks == "never":
            return
        if self.ticks == "late":
            if now < d + self.tick_late:
                return
            self.ticked.append((d, now))
            rs.order("tick", (), max(now - self.tick_back, math.floor(d * 1000 + 1e-6) / 1000 + 0.001))
            return
        self.ticked.append((d, now))
        Round.order_next(rs, now)
        self.extra = self.ticks == "twice"

    def wake_time(self) -> float | None:
        wake = super().wake_time()
        if self.held is not None:
            at = max(self.held[2] - self.lead, self.now + 0.01)
            wake = at if wake is None else min(wake, at)
        return wake


def _pick(view: View, action: str, **keys: object) -> Move | None:
    return next((m for m in view.legal if m.action == action and all(getattr(m, k) == v for k, v in keys.items())),
                None)


class Plain:
    """Draws from the pile (the Reserve) and discards at once; never calls out of turn."""

    def choose(self, view: View) -> Move | None:
        if view.turn != view.me:
            return None
        return (_pick(view, "setup_pass") or _pick(view, "draw", source="pile") or _pick(view, "draw", source="reserve")
                or _pick(view, "discard"))


class PromptCaller(Plain):
    """Thinks `think` s over its drawn card, discards it, and calls crisp the moment its window shows."""

    def __init__(self, net: MemNet, think: float) -> None:
        self.net = net
        self.think = think
        self.drew: float | None = None
        self.called: float | None = None

    def choose(self, view: View) -> Move | None:
        call = _pick(view, "crisp")
        if call is not None and self.called is None:
            self.called = self.net.now
            return call
        if view.turn == view.me and view.phase == "drawn_pile":
            self.drew = self.net.now if self.drew is None else self.drew
            if self.net.now - self.drew < self.think:
                return None
            self.drew = None
        return super().choose(view) if self.called is None or view.turn == view.me else None


def _crisp_table(policy: Policy, think: float = 3.0, ticks: str = "honest", limit: int = 20,
                 **peer_args: Any) -> tuple[MemNet, Shifter, PromptCaller]:
    """Three seats of Crisp: p0 deals and orders (a `Shifter`), p1 plays first and calls crisp after its first turn."""
    peers = make_seeded_table("crisp", 3, {"limit": limit}, 5, **peer_args)
    orderer = replace_peer(peers, 0, Shifter)
    assert isinstance(orderer, Shifter)
    orderer.policy = policy
    orderer.ticks = ticks
    net = MemNet(peers, [None] * 3, random.Random(1), LinkModel())
    caller = PromptCaller(net, think)
    net.bots = [Plain(), caller, Plain()]
    return net, orderer, caller


def _p1_turn(end: float, call: float) -> Policy:
    """Move p1's turn-ending discard's stamp by `end` and its crisp call's by `call`."""
    def policy(kind: str, moves: Sequence[Move]) -> float:
        if kind == "move" and moves[0].player == "p1":
            return {"discard": end, "crisp": call}.get(moves[0].action, 0.0)
        return 0.0
    return policy


def _call_settled(net: MemNet) -> bool:
    """Every peer has applied p1's crisp call (accepted or refused), or one stopped."""
    return all(any(e.kind == "crisp" for e in p.game.events) or any(n.kind == "rejected" for n in p.notes)
               or p.stopped for p in net.peers)


def _faults(net: MemNet) -> list[list[str | None]]:
    return [[n.blame for n in p.faults] for p in net.peers]


def test_an_honest_orderer_takes_a_prompt_crisp_call() -> None:
    net, orderer, caller = _crisp_table(_p1_turn(0.0, 0.0))
    net.start()
    net.run(until=30.0, stop=_call_settled)
    assert caller.called is not None
    assert all(any(e.kind == "crisp" for e in p.game.events) for p in net.peers)
    assert _faults(net) == [[], [], []]


def test_an_orderer_moving_both_ends_of_a_crisp_window_by_90_percent_makes_a_prompt_call_miss_unblamed() -> None:
    """Undetected, and an advantage §15 admits: each stamp 2.25 s off (90 % of TOLERANCE_S + SLACK_S), the
    turn's end early and the call late, moves the call 4.5 s against its 3 s window. A call made at once
    after a turn that took more than about 2.5 s after its draw's stamp is the orderer's to refuse."""
    net, orderer, caller = _crisp_table(_p1_turn(-2.25, 2.25))
    net.start()
    net.run(until=30.0, stop=_call_settled)
    assert caller.called is not None
    (discard, d0, d1), (call, c0, c1) = orderer.shifted
    assert (discard, call) == ("discard", "crisp") and c0 - d0 < 0.2  # called at once after the turn's end...
    assert c1 - d1 > 3.0  # ... stamped past the window
    for p in net.peers:
        assert not any(e.kind == "crisp" for e in p.game.events)
        assert any(n.kind == "rejected" and n.blame == "p1" and "crisp" in n.detail for n in p.notes)
    assert _faults(net) == [[], [], []]  # no one is blamed for it: every stamp is within its bounds


@pytest.mark.parametrize(("end", "call"), [(0.0, 2.6), (-2.6, 0.0)], ids=["call-late", "turn-end-early"])
def test_a_stamp_moved_past_the_bound_is_blamed_on_the_orderer_by_every_honest_peer(end: float, call: float) -> None:
    net, orderer, caller = _crisp_table(_p1_turn(end, call))
    net.start()
    net.run(until=30.0, stop=lambda n: all(p.stopped for p in n.peers[1:]))
    for p in net.peers[1:]:
        assert p.faults and p.faults[0].blame == "p0", p.notes[-3:]
        assert "stamped" in p.faults[0].detail


def test_an_orderer_silent_for_a_moment_may_stamp_a_rivals_call_as_late_as_it_likes_unblamed() -> None:
    """Undetected, and admitted by §14.10 and §18.6 (an orderer found missing since a move reached us stamps it
    when it got it, back): the orderer sends nothing for 2.1 s (over GAP_S, so every network layer reports the
    silence) right after p1's prompt call, then stamps the call 8 s late. No peer can tell this from a cut that
    healed, so no bound but the time-out holds: the call misses its window and no one is blamed."""
    net, orderer, caller = _crisp_table(_p1_turn(0.0, 8.0))

    def silence(net: MemNet, receiver: int) -> None:
        if orderer.held is not None and not getattr(silence, "done", False):
            silence.done = True  # type: ignore[attr-defined]
            since = net.now
            # The others' network layers report the silence; the cheater, a modified client, excuses itself too.
            def report(net: MemNet) -> None:
                for p in net.peers:
                    p.silent(0, since, net.now)
            net.call_at(since + 2.1, report)

    net.on_deliver = silence
    net.start()
    net.run(until=30.0, stop=_call_settled)
    (call, c0, c1), = orderer.shifted
    assert call == "crisp" and c1 - c0 == 8.0
    for p in net.peers:
        assert not any(e.kind == "crisp" for e in p.game.events)
    assert _faults(net) == [[], [], []]


# ---------------------------------------------------------------- ticks withheld, doubled, late


def test_an_orderer_that_never_ticks_is_timed_out_and_no_one_else_is_blamed() -> None:
    """p1's turn ends; p2's turn opens 2 s later only with a tick. Item 7 of §12.4 blames the orderer once the
    opening is TOLERANCE_S + TIMEOUT_S past."""
    net, orderer, caller = _crisp_table(_p1_turn(0.0, 0.0), think=0.1, ticks="never", timeout=2.0)
    caller.called = 0.0  # p1 plays on without calling
    net.start()
    net.run(until=60.0)
    assert not orderer.ticked
    for p in net.peers[1:]:
        assert [n.blame for n in p.faults][:1] == ["p0"], p.notes[-3:]
        assert p.faults[0].detail.startswith("p0 sent nothing owed")
    assert orderer.stopped is not None and all(n.blame is None for n in orderer.faults)  # it blames no one


@pytest.mark.parametrize(("ticks", "late", "back"), [
    pytest.param("twice", 0.0, 0.0, id="twice"),
    pytest.param("late", 1.5, 0.0, id="1.5s-late", marks=pytest.mark.slow),
    pytest.param("late", 3.0, 2.4, id="stamped-2.4s-back", marks=pytest.mark.slow),
])
def test_ticks_doubled_or_late_within_their_bounds_are_harmless(ticks: str, late: float, back: float) -> None:
    net, orderer, caller = _crisp_table(_p1_turn(0.0, 0.0), think=0.1, ticks=ticks, timeout=4.0)
    orderer.tick_late, orderer.tick_back = late, back
    caller.called = 0.0
    net.start()
    net.run(until=25.0)
    assert _faults(net) == [[], [], []]
    assert len(orderer.ticked) >= 4  # turn openings, each of its own (twice: each followed by one due to nothing)
    assert ticks != "twice" or any(d is None for d, _ in orderer.ticked)
    for p in net.peers:  # the game went on: every seat has had turns, on every engine alike
        assert {e.player for e in p.game.events if e.kind == "draw"} == {"p0", "p1", "p2"}


def test_a_tick_stamped_past_its_bound_behind_our_clock_is_blamed_on_the_orderer() -> None:
    net, orderer, caller = _crisp_table(_p1_turn(0.0, 0.0), think=0.1, ticks="late", timeout=4.0)
    orderer.tick_late, orderer.tick_back = 3.0, 2.7
    caller.called = 0.0
    net.start()
    net.run(until=25.0, stop=lambda n: all(p.stopped for p in n.peers[1:]))
    assert orderer.ticked
    for p in net.peers[1:]:
        assert [n.blame for n in p.faults][:1] == ["p0"] and "long before" in p.faults[0].detail


# ---------------------------------------------------------------- slow play and stalling


def test_a_crescendo_player_that_never_moves_is_blamed_by_no_one() -> None:
    """Legal slow play: no time-out covers a player who does not move (§12.4); only a seat that owes a
    message is timed out. The table waits, showing whose turn it is; no one is blamed."""
    peers = make_seeded_table("crescendo", 2, None, 7, timeout=2.0)
    net = MemNet(peers, [Plain(), None], random.Random(1), LinkModel())
    net.start()
    net.run(until=40.0)
    assert all(p.rs is not None and p.rs.dealt for p in net.peers)
    assert _faults(net) == [[], []] and not any(p.stopped for p in net.peers)


def test_a_crisp_player_that_never_moves_forfeits_each_draw_and_is_blamed_by_no_one() -> None:
    peers = make_seeded_table("crisp", 2, {"limit": 1000, "draw_seconds": 2.0}, 7, timeout=2.0)
    net = MemNet(peers, [Plain(), None], random.Random(1), LinkModel())
    net.start()
    net.run(until=40.0)
    assert _faults(net) == [[], []]
    for p in net.peers:
        assert sum(e.kind == "timeout" and e.player == "p1" for e in p.game.events) >= 3


# ---------------------------------------------------------------- claims sent early, and raced


def test_a_number_claim_sent_before_its_window_opens_is_judged_by_its_order_and_a_second_one_refused() -> None:
    """p1 (a modified client) claims NUMBER, twice, the moment it sees p0's discard, before the window is open on
    any engine (it cannot know the face yet). The orderer got the discard first, so the first claim is ordered after
    it, stamped at the discard's time: in the window, and judged on its face like any claim; the second is refused
    (one claim per window). Nothing is a fault."""
    peers = make_seeded_table("crescendo", 2, None, 7)
    net = MemNet(peers, [Plain(), Plain()], random.Random(1), LinkModel())
    sent: list[float] = []

    def claim_early(net: MemNet, receiver: int) -> None:
        p1 = net.peers[1]
        if receiver != 1 or sent or p1.rs is None:
            return
        if any(m.player == "p0" and m.action == "discard" for m in p1.rs.log.moves.values()):
            assert p1.view().window_open is False  # type: ignore[union-attr]  # not open here yet
            sent.append(net.now)
            net.send_as(1, p1.send_move(Move("p1", "number", pos=0)))
            net.send_as(1, p1.send_move(Move("p1", "number", pos=1)))

    net.on_deliver = claim_early
    net.start()
    net.run(until=30.0, stop=lambda n: all(any(x.kind == "rejected" for x in p.notes) for p in n.peers))
    assert sent
    for p in net.peers:
        assert [e.kind for e in p.game.events if e.kind.startswith("number_")] in (["number_right"], ["number_wrong"])
        assert [(n.blame, "only one NUMBER claim" in n.detail) for n in p.notes if n.kind == "rejected"] == [("p1", True)]
    assert _faults(net) == [[], []]
    assert net.peers[0].log_hash == net.peers[1].log_hash


# ---------------------------------------------------------------- old frames replayed


def _round_one_then_two() -> tuple[MemNet, list[tuple[int, bytes]]]:
    """An honest table played through round 1 (p1 calls crisp after its first turn) into round 2, every frame kept."""
    net, orderer, caller = _crisp_table(_p1_turn(0.0, 0.0), think=0.1, limit=1000)
    frames: list[tuple[int, bytes]] = []
    net.on_send = lambda sender, frame: frames.append((sender, frame))
    net.start()
    net.run(until=60.0, stop=lambda n: all(p.round == 2 for p in n.peers))
    assert all(p.round == 2 for p in net.peers) and _faults(net) == [[], [], []]
    return net, frames


def test_frames_of_the_last_round_replayed_in_the_next_change_nothing_and_blame_no_one() -> None:
    net, frames = _round_one_then_two()
    old = [(s, f) for s, f in frames if s != 2 and parse(f).envelope.round == 1]
    assert {parse(f).envelope.type for _, f in old} >= {"move", "order", "shares", "result"}
    target = net.peers[2]
    notes = len(target.notes)
    for _, frame in old:
        target.receive(frame, net.now + 0.001)
    assert target.stopped is None and not target.faults
    assert not [n for n in target.notes[notes:] if n.blame is not None]  # replays: dropped silently
    net.run(until=net.now + 3.0)
    assert _faults(net) == [[], [], []]


def test_frames_of_a_table_replayed_at_its_successor_are_dropped_blaming_no_one() -> None:
    net, frames = _round_one_then_two()
    cfg = net.peers[0].cfg
    successor = cfg.without((2,), 2, net.peers[0].game.dealer_of(2))
    heir = TablePeer(successor, net.peers[0].identity)
    heir.start(net.now)
    for sender, frame in frames:
        if sender == 1:
            heir.receive(frame, net.now)
    assert heir.stopped is None and not heir.faults
    assert all(n.blame is None for n in heir.notes)


# ---------------------------------------------------------------- the memory aid


def test_memory_aid_toggled_mid_window_and_spammed_changes_no_log_and_reveals_nothing() -> None:
    """p2 flips its aid 200 times while p1's crisp window is open: every peer notes each change, and nothing else moves: the call stands, no share is sent for it, the logs agree."""
    net, orderer, caller = _crisp_table(_p1_turn(0.0, 0.0))
    flips: list[float] = []

    def spam(net: MemNet, receiver: int) -> None:
        p2 = net.peers[2]
        if receiver == 2 and not flips and p2.game.r is not None and getattr(p2.game.r, "windows", None):
            flips.append(net.now)
            shares = net.stats.by_type.get("shares", 0)
            for k in range(200):
                net.send_as(2, p2.aid(k % 2 == 0, net.now))
            assert net.stats.by_type.get("shares", 0) == shares

    net.on_deliver = spam
    net.start()
    net.run(until=30.0, stop=_call_settled)
    assert flips
    for p in net.peers:
        assert any(e.kind == "crisp" for e in p.game.events)
    net.run(until=net.now + 2.0)
    assert _faults(net) == [[], [], []]
    for p in net.peers[:2]:
        assert sum(n.kind == "aid" for n in p.notes) == 200 and 2 not in p.aided
    assert len({p.log_hash for p in net.peers}) == 1
