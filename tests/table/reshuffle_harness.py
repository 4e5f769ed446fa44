"""Reaching Crescendo's fresh shuffle (protocol.md §11.2) on purpose, and crashing a seat at each of its steps.

Random bots rarely empty the Reserve: a round usually ends first. `Drainer` bots do it every time:
they never take the discard pile and never call CRESCENDO until they have seen as many fresh
shuffles in the round as asked, so after 104 − 8S − 1 turns (87 at two seats) the next card needed
from the Reserve starts deck 1's shuffle. Which move needs it is chosen (`trigger`): a Reserve
draw, a special action, or a NUMBER claim. Then they call CRESCENDO at once, every round after too.

`crash_at` stops the table at one point of a seat's reshuffle, kills that seat with its journal cut
where a crash there leaves it (what it signed past the cut never left: taken off the wire), and
brings it back from that journal (`TablePeer.resume`, §14.10). `RoundWatch` keeps, for every seat, the
round's state object (a resumed peer has a new one) and the engine's piles when the shuffle began,
so a test can check the new Reserve against the old discard pile once the openings show every face.
"""

from __future__ import annotations

import heapq
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from p2pcards.cards import CRESCENDO_DECK
from p2pcards.crypto import deck as dk
from p2pcards.crypto.envelope import parse
from p2pcards.games.audit import apply_input
from p2pcards.games.base import Handle, Move, RoundInput
from p2pcards.games.crescendo import CrescendoGame, CrescendoView
from p2pcards.sim.memnet import MemNet
from p2pcards.sim.table_game import make_table
from p2pcards.table.peer import TablePeer
from p2pcards.table.round import Round, Stage

from table_harness import KnowledgeCheck, chain

FAST = {"number_window_s": 0.2}  # short NUMBER windows: the table's clock runs less between turns


class Drainer:
    """Empties the Reserve: draws from it and discards, never takes the discard pile, never calls CRESCENDO
    in round `drain_round` before it has seen `reshuffles` fresh shuffles there (its Reserve count grew).

    `trigger` is the move that asks the empty Reserve for a card: "draw" (a Reserve draw), "special"
    (a Peek of the next seat's first card, sent whatever the new top's back turns out to be) or "claim"
    (a NUMBER claim with the card at position 0, made by the seat whose turn is next, in every window
    while the Reserve is empty; a wrong one takes a penalty card). In every other round, and once
    drained, it calls CRESCENDO as soon as it may.
    """

    def __init__(self, trigger: str = "draw", reshuffles: int = 1, drain_round: int = 1) -> None:
        self.trigger = trigger
        self.reshuffles = reshuffles
        self.drain_round = drain_round
        self.last: dict[int, int] = {}  # round -> the Reserve's count we last saw
        self.seen: dict[int, int] = {}  # round -> fresh shuffles seen

    def draining(self, view: CrescendoView) -> bool:
        before = self.last.get(view.round)
        if before is not None and view.reserve > before:
            self.seen[view.round] = self.seen.get(view.round, 0) + 1
        self.last[view.round] = view.reserve
        return view.round == self.drain_round and self.seen.get(view.round, 0) < self.reshuffles

    def choose(self, view: Any) -> Move | None:
        assert isinstance(view, CrescendoView)
        draining = self.draining(view)
        me = view.players[view.me]
        legal = {m.action: m for m in reversed(view.legal)}  # the first of each action
        if draining and self.trigger == "claim" and view.reserve == 0 and "number" in legal \
                and view.turn == (view.me + 1) % len(view.players):
            return Move(me, "number", pos=0)
        if view.turn != view.me or view.phase is None:
            return None
        if "setup_pass" in legal:
            return legal["setup_pass"]
        if not draining and "crescendo" in legal:
            return legal["crescendo"]
        if draining and self.trigger == "special" and view.reserve == 0 and view.phase == "turn" \
                and view.discard and len(view.discard) >= 2 and not view.window_open:
            return Move(me, "peek", pos=0, target=view.players[(view.me + 1) % len(view.players)])
        if view.phase in ("turn", "final"):
            if draining and self.trigger == "claim" and view.reserve == 0:
                return None  # the next seat claims first
            draw = Move(me, "draw", source="reserve")
            return draw if draw in view.legal else legal.get("draw") or legal.get("pass")
        return legal.get("discard")


def drain_table(players: int = 2, seed: int = 1, trigger: str = "draw", reshuffles: int = 1,
                options: dict[str, Any] | None = None, drain_round: int = 1, **peer_args: Any) -> MemNet:
    """A seeded Crescendo table of Drainers, every seat journaling, not yet started."""
    rng = random.Random(seed)
    peers = make_table("crescendo", players, {**FAST, **(options or {})}, random.Random(rng.random()),
                       journal=True, **peer_args)
    return MemNet(peers, [Drainer(trigger, reshuffles, drain_round) for _ in range(players)], rng)


# ---------------------------------------------------------------- watching the round


@dataclass
class RoundWatch:
    """After every delivered frame: each live seat's state object of round `number` (the latest: a resumed peer
    has a new one) and its engine's inputs of that round (the same list object while the round lasts)."""

    number: int = 1
    rs: dict[int, Round] = field(default_factory=dict)
    inputs: dict[int, tuple[list[RoundInput], float]] = field(default_factory=dict)  # seat -> (inputs, start)

    def __call__(self, net: MemNet, receiver: int = -1) -> None:
        for seat, peer in enumerate(net.peers):
            if seat not in net.dead:
                self.observe(seat, peer)

    def observe(self, seat: int, peer: TablePeer) -> None:
        rs = peer.rs
        if rs is None or rs.number != self.number:
            return
        self.rs[seat] = rs
        game = peer.game
        if game.round_no == self.number:
            self.inputs[seat] = (game.inputs, game.round_start)

    def round_done(self, net: MemNet) -> bool:
        """Every live seat has settled round `number` (or begun a later one)."""
        return all(p.round > self.number or (p.rs is not None and p.rs.number == self.number
                                             and p.rs.stage is Stage.DONE)
                   for i, p in enumerate(net.peers) if i not in net.dead) and not net.down


def audited_faces(rs: Round) -> dict[Handle, object]:
    """Every face of a settled round by handle, from the crypto audit of the openings (reshuffled decks too)."""
    decks = rs.decks
    report = dk.audit(rs.ctx, [decks.anns[s] for s in range(decks.seats)],
                      [rs.settlement.openings[s] for s in range(decks.seats)], decks.book, decks.records(),
                      rs.reveals.reveals)
    assert report.verified, f"round {rs.number}: crypto audit failed: {report}"
    return {h: report.faces[d][pos] for h, (d, pos) in decks.loc.items()}


def assert_reshuffled_exactly(watch: RoundWatch, seats: int) -> list[int]:
    """At every seat, replayed on a referee engine that knows every face (from the audit of the openings):
    each fresh shuffle's deck is the common discard pile but its top, bottom card first, with their backs
    as its tags; its new Reserve (handles placed at that deck's positions, top first) holds exactly those
    cards; and at the round's end every card of the deck lies somewhere exactly once. The deck ids checked."""
    decks_seen: list[int] = []
    for seat in range(seats):
        rs = watch.rs[seat]
        assert rs.stage is Stage.DONE, f"seat {seat} did not settle round {rs.number}"
        faces = audited_faces(rs)
        inputs, start = watch.inputs[seat]
        game = rs.rules.game
        assert isinstance(game, CrescendoGame)
        referee = CrescendoGame(game.players, game.options, game.first_dealer, auto_reshuffle=False)
        referee.round_no, referee.clock = rs.number - 1, start
        referee.deal(faces, start)  # type: ignore[arg-type]
        d = 0
        for item in inputs:
            if item.kind == "reshuffle":
                d += 1
                r = referee.r
                assert r is not None and not r.reserve
                taken = r.discard[:-1]
                cards, tags = rs.decks.cards[d]
                assert tuple(faces[h] for h in taken) == tuple(cards), f"seat {seat}: deck {d} is not the pile"
                assert tags == tuple(str(referee.backs[h]) for h in taken)
                apply_input(referee, item)
                reserve = list(reversed(r.reserve))  # top first
                assert [rs.decks.loc[h] for h in reserve] == [(d, pos) for pos in range(len(taken))]
                assert Counter(str(faces[h]) for h in reserve) == Counter(str(c) for c in cards), \
                    f"seat {seat}: deck {d}'s new Reserve is not the cards it took"
            else:
                apply_input(referee, item)
        assert d == len(rs.decks.chains) - 1, f"seat {seat}: {d} reshuffles applied, {len(rs.decks.chains) - 1} decks"
        r = referee.r
        assert r is not None
        held = [h for row in r.rows for h in row] + [h for p in r.piles for h in p] + r.discard + r.reserve
        held += [r.drawn] if r.drawn is not None else []
        assert Counter(str(faces[h]) for h in held) == Counter(str(c) for c in CRESCENDO_DECK), \
            f"seat {seat}: a card was lost or doubled"
        decks_seen.append(d)
    assert len(set(decks_seen)) == 1
    return list(range(1, decks_seen[0] + 1))


def assert_round_alike(watch: RoundWatch, seats: int) -> None:
    """Every seat settled the round with the same log and the same signed results, and no one was blamed."""
    first = watch.rs[0]
    for seat in range(seats):
        rs = watch.rs[seat]
        assert rs.stage is Stage.DONE, (seat, rs.stage)
        assert rs.log_hash == first.log_hash, f"seat {seat}'s log differs"
        assert rs.results == first.results, f"seat {seat}'s results differ"
        assert sorted(rs.decks.chains) == sorted(first.decks.chains)
        for d in first.decks.chains:
            assert rs.decks.chains[d][-1].cts() == first.decks.chains[d][-1].cts(), (seat, d)


# ---------------------------------------------------------------- crashing a seat at a step of the shuffle


def unsend(net: MemNet, frames: set[bytes]) -> int:
    """Take frames still on their way off the wire (their sender crashed before they left): how many copies."""
    keep = [e for e in net._queue if not (e[2] in ("frame", "again") and e[4] in frames)]
    gone = len(net._queue) - len(keep)
    net._queue = keep
    heapq.heapify(net._queue)
    return gone


def own_frames(peer: TablePeer, records: list[tuple[str, int, bytes]]) -> list[tuple[int, bytes]]:
    """The indexes and frames of the records that hold frames `peer` signed."""
    return [(i, r[2]) for i, r in enumerate(records)
            if r[0] in ("frame", "again") and parse(r[2]).envelope.sender == peer.identity.public]


@dataclass
class Crash:
    """What `crash_at` did: the seat, where its journal was cut, and what never left."""

    seat: int
    kept: int
    records: list[tuple[str, int, bytes]]
    unsent: int
    back: list[TablePeer] = field(default_factory=list)


def crash_now(net: MemNet, seat: int, cut: int | None = None, down: float = 3.0,
              stored: list[tuple[str, int, bytes]] | None = None) -> Crash:
    """Seat `seat` dies now with its journal cut to `cut` records (None: whole): the frames it signed past the
    cut never left it (still on the wire: taken off); it is back from that journal `down` s later. A peer that
    came back before has the journal it came back from on disk already (`stored`), its own records after it."""
    dead = net.peers[seat]
    records = list(stored or []) + list(dead.journal or [])
    if cut is not None:
        cut += len(stored or [])
    kept = len(records) if cut is None else cut
    lost = {f for i, f in own_frames(dead, records) if i >= kept}
    crash = Crash(seat, kept, records[:kept], unsend(net, lost))

    def back(net: MemNet) -> TablePeer:
        peer = TablePeer.resume(dead.cfg, dead.identity, crash.records, net.now)
        crash.back.append(peer)
        return peer

    net.crash(seat, down, back)
    return crash


POINTS = ("before_pass", "pass_unsent", "waiting", "final", "first_draw")


def at_point(seat: int, point: str, deck: int = 1, round_no: int = 1) -> Callable[[MemNet], bool]:
    """A stop for `MemNet.run` at a step of seat `seat`'s part in deck `deck`'s fresh shuffle; once it stops,
    `.cut` is where that seat's journal is to be cut (None: whole).

    - before_pass: the step that begins the shuffle at that seat (the entry that needs the card, or the pass
      before its own) was never taken: the journal as it was before that step;
    - pass_unsent: its pass is signed, but the crash came before it was journaled (so before it was sent);
    - waiting: its pass is sent, and it waits for the later seats' passes (whole journal);
    - final: it has just taken the pass that makes the deck final, and crashed before journaling anything
      that step made (its shares for the card the waiting entry draws, say);
    - first_draw: the waiting entry took its card from the new Reserve at that seat (whole journal): the
      reveal of that first card is under way.
    """
    state: dict[str, Any] = {"mark": 0, "cut": None}

    def stop(net: MemNet) -> bool:
        peer = net.peers[seat]
        rs = peer.rs
        if seat in net.dead or rs is None or rs.number != round_no:
            return False
        records = peer.journal or []
        decks = rs.decks
        hit = False
        if point == "before_pass":
            hit = deck in decks.chains
            state["cut"] = state["mark"]
        elif point in ("pass_unsent", "waiting"):
            hit = deck in decks.passed
            if hit and point == "pass_unsent":
                mine = [i for i, f in own_frames(peer, records)
                        if parse(f).envelope.type == "pass" and parse(f).envelope.body["deck"] == deck]
                state["cut"] = mine[0]
        elif point == "final":
            hit = decks.final(deck) is not None
            if hit:
                after = [i for i, _ in own_frames(peer, records) if i >= state["mark"]]
                state["cut"] = after[0] if after else None
        elif point == "first_draw":
            game = peer.game
            placed = [h for h, loc in decks.loc.items() if loc[0] == deck]
            hit = bool(placed) and isinstance(game, CrescendoGame) and game.r is not None and (
                len(game.r.reserve) < len(placed))
        else:
            raise ValueError(point)
        if not hit:
            state["mark"] = len(records)
        return hit

    stop.state = state  # type: ignore[attr-defined]
    return stop


def crash_at(net: MemNet, seat: int, point: str, deck: int = 1, until: float = 900.0, down: float = 3.0,
             round_no: int = 1) -> Crash:
    """Run until `point` of seat `seat`'s part in deck `deck`'s shuffle of round `round_no`, then crash it there
    (see `at_point`)."""
    stop = at_point(seat, point, deck, round_no)
    net.run(until=until, stop=stop)
    assert stop(net), f"seat {seat} never reached {point} of deck {deck}"
    return crash_now(net, seat, stop.state["cut"], down)  # type: ignore[attr-defined]


def watched(net: MemNet, number: int = 1) -> tuple[RoundWatch, KnowledgeCheck]:
    """Hook a round watch and the knowledge check onto the network (after every delivered frame)."""
    watch, knowledge = RoundWatch(number), KnowledgeCheck()
    net.on_deliver = chain(watch, knowledge)
    return watch, knowledge
