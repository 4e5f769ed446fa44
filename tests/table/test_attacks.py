"""Attacks on the table itself (issue 9): each one is refused or blamed on the attacker, never on an honest seat."""

from __future__ import annotations

import dataclasses
import random
from typing import Any

import pytest
from parts_helpers import exchange, make_decks

from p2pcards.cards import CRISP_DECK
from p2pcards.crypto.envelope import parse
from p2pcards.crypto.identity import generate
from p2pcards.games.base import Move
from p2pcards.games.crisp import CrispGame
from p2pcards.sim.cheaters import (Run, Withhold, WithholdingPeer, frame_type, run_table, withhold_private_to,
                                   withhold_public)
from p2pcards.sim.table_game import make_table
from p2pcards.sim.transcript import Transcript, record, verify
from p2pcards.sim.verify_cli import as_json
from p2pcards.table.bodies import Shares
from p2pcards.table.outputs import Claim, Output, Send
from p2pcards.table.peer import TablePeer
from p2pcards.table.reveals import Reveals

CRISP = {"limit": 20}
CHEATER = 1


def faults_of(run: Run, cheater: int = CHEATER) -> list[list[str | None]]:
    """Each honest peer's fault blames, in order."""
    return [[n.blame for n in p.faults] for p in run.honest([cheater])]


# ---------------------------------------------------------------- one pass per place


class DoublePasser(TablePeer):
    """Signs a second, different (and validly proved) pass for its place in deck 0, right after its first."""

    doubled = False

    def _flush(self) -> list[Output]:
        out = super()._flush()
        if not self.doubled and any(isinstance(o, Send) and frame_type(o.frame) == "pass" for o in out):
            self.doubled = True
            rs = self.rs
            assert rs is not None
            second = rs.decks.shuffle(rs.decks.chains[0][self.me])
            out.append(Send(self.outbox.seal(rs.number, "pass", second.to_wire()).frame))
        return out


def test_two_signed_passes_for_one_place_are_equivocation_with_both_frames_as_evidence() -> None:
    run = run_table("crisp", 3, CRISP, seed=3, seat=CHEATER, peer_class=DoublePasser, timeout=2.0, until=20.0)
    cheater = run.peers[CHEATER].names[CHEATER]
    honest = run.honest([CHEATER])
    for p in honest:
        assert p.faults and p.faults[0].blame == cheater, p.notes[-4:]
        assert "equivocation" in p.faults[0].detail
    # Whoever saw both passes (the others may hear of it first in a fault report) holds them.
    found = [p for p in honest if p.evidence]
    assert found
    for p in found:
        ((a, b),) = p.evidence
        ea, eb = parse(a).envelope, parse(b).envelope  # both verify: signed by the cheater
        assert ea.sender == eb.sender == p.cfg.keys[CHEATER] and ea.type == eb.type == "pass" and a != b


def test_a_repeated_face_at_reveal_is_a_fault_of_the_deck() -> None:
    decks, ports, _ = make_decks(2, CRISP_DECK)
    exchange(decks, ports)
    ids = [generate(f"p{i}") for i in range(2)]
    games, reveals = [], []
    for d, port in zip(decks, ports):
        final = d.chains[0][-1]  # position 31 made a copy of position 30 (as a broken deck would hold)
        c1, c2 = list(final.c1), list(final.c2)
        c1[31], c2[31] = c1[30], c2[30]
        d.chains[0][-1] = dataclasses.replace(final, c1=tuple(c1), c2=tuple(c2))
        d.place(list(range(len(CRISP_DECK))), 0)
        game = CrispGame(("p0", "p1"))
        game.deal({}, 0.0)
        games.append(game)
        reveals.append(Reveals(d, game, tuple(i.public for i in ids), port))
    for handle in (30, 31):
        for r in reveals:
            r.grant_public([handle])
        for s, r in enumerate(reveals):
            body = ports[1 - s].of_type("shares")[-1]
            r.take(1 - s, None, Shares.from_wire(body).reveals)
            r.take_early()
    for port in ports:
        assert port.faults and "already seen" in port.faults[0][0], port.faults


# ---------------------------------------------------------------- stalls


class BusyWithholder(WithholdingPeer):
    """Withholds its public shares, and keeps signing moves (any move) every half time-out to look alive."""

    last = 0.0

    def tick(self, now: float) -> list[Output]:
        out = super().tick(now)
        if self.withheld and self.stopped is None and now - self.last >= self.timeout / 2:
            self.last = now
            out += self.send_move(Move(self.names[self.me], "draw", source="pile"))
        return out


@pytest.mark.parametrize("withhold", [withhold_public, withhold_private_to(2)], ids=["public", "private"])
def test_a_withholder_that_keeps_sending_moves_is_still_timed_out(withhold: Withhold) -> None:
    timeout = 2.0
    run = run_table("crisp", 3, CRISP, 1, seat=CHEATER, peer_class=BusyWithholder,
                    peer_kwargs={"withhold": withhold}, timeout=timeout, until=30.0)
    cheat = run.peers[CHEATER]
    assert isinstance(cheat, BusyWithholder) and cheat.withheld and cheat.last > 0
    name = cheat.names[CHEATER]
    for p in run.honest([CHEATER]):
        assert p.faults and p.faults[0].blame == name, p.notes[-4:]


class LyingReporter(WithholdingPeer):
    """Withholds its public shares, then at once reports a time-out of seat 0 (as if seat 0 had stalled it)."""

    reported = False

    def tick(self, now: float) -> list[Output]:
        out = super().tick(now)
        if self.withheld and not self.reported:
            self.reported = True
            self.emit.fault("p0 sent nothing owed for 2 s", 0, stall=True)
            out += self._flush()
        return out


def test_a_staller_that_reports_a_time_out_of_an_honest_seat_is_blamed_itself() -> None:
    # What a seat owes is public: a time-out claim our own view does not see is weighed, not believed.
    run = run_table("crisp", 3, CRISP, 1, seat=CHEATER, peer_class=LyingReporter,
                    peer_kwargs={"withhold": withhold_public}, timeout=2.0, until=30.0)
    cheat = run.peers[CHEATER]
    assert isinstance(cheat, LyingReporter) and cheat.reported
    for p in run.honest([CHEATER]):
        assert p.faults and p.faults[0].blame == cheat.names[CHEATER], p.faults


# ---------------------------------------------------------------- fault reports on a reporter's word


class FalseReporter(TablePeer):
    """Once the deal is under way, stops the table with a report that blames honest seat 0 for a bad box
    sealed to it (nothing anyone else can check), with seat 0's own `ready` as 'evidence' if `dress` is set."""

    reported = False

    def __init__(self, *args: Any, dress: bool = False, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.dress = dress

    def tick(self, now: float) -> list[Output]:
        out = super().tick(now)
        rs = self.rs
        if not self.reported and rs is not None and rs.dealt and self.stopped is None:
            self.reported = True
            first = self.frame(0, 0)
            assert first is not None
            self.emit.fault("a private box from p0 does not open", 0, evidence=(first,) if self.dress else ())
            out += self._flush()
        return out


@pytest.mark.parametrize("dress", [False, True], ids=["bare", "dressed"])
def test_a_false_fault_report_does_not_get_the_honest_seat_it_names_blamed(dress: bool) -> None:
    recorded: list[Transcript] = []
    run = run_table("crisp", 3, CRISP, seed=5, seat=CHEATER, peer_class=FalseReporter,
                    peer_kwargs={"dress": dress}, until=20.0,
                    prepare=lambda net, peers: recorded.append(record(net, peers[0].cfg)))
    cheat = run.peers[CHEATER]
    assert isinstance(cheat, FalseReporter) and cheat.reported
    for p in run.honest([CHEATER]):
        assert p.stopped is not None and p.faults, p.notes[-4:]  # the stop is certain ...
        assert all(n.blame != "p0" for n in p.faults + p.notes), p.faults  # ... the blame is not
        assert "on its word only" in p.faults[0].detail and cheat.names[CHEATER] in p.faults[0].detail
        assert p.faults[0].claim == Claim(cheat.names[CHEATER], "p0")  # the report's claim, apart from any blame
    # A witness of the table's transcript reads the report the same way, and `verify --json` says so as a claim.
    transcript = Transcript.from_bytes(recorded[0].to_bytes())
    verdict = verify(transcript)
    assert verdict.fault is not None and verdict.fault.blame is None and "on its word only" in verdict.fault.detail
    fault = as_json("t", transcript, verdict)["fault"]
    assert fault["blame"] is None and fault["claim"] == {"reporter": cheat.names[CHEATER], "blames": "p0"}


def test_a_fault_report_carries_the_evidence_a_peer_that_saw_nothing_checks_for_itself() -> None:
    peers = make_table("crisp", 3, CRISP, random.Random(4))
    ready = [[o.frame for o in p.start(0.0) if isinstance(o, Send)] for p in peers]
    keys: list[bytes] = []  # what seat 0 sends once round 1 begins (its key)
    for i, p in enumerate(peers):
        for j, frames in enumerate(ready):
            if i != j:
                for frame in frames:
                    keys += [o.frame for o in p.receive(frame, 0.1) if isinstance(o, Send) and i == 0]
    seen, blind, cheat = peers[0], peers[2], peers[CHEATER]
    for frame in keys:
        blind.receive(frame, 0.1)  # so that seat 0's report is next in its chain at seat 2
    seq, head = cheat.outbox.next_seq, cheat.outbox.head
    one = cheat.outbox.seal(cheat.round, "aid", {"on": True}).frame
    cheat.outbox.next_seq, cheat.outbox.head = seq, head  # and a second message for the same place
    two = cheat.outbox.seal(cheat.round, "aid", {"on": False}).frame
    report = [o.frame for frame in (one, two) for o in seen.receive(frame, 0.2) if isinstance(o, Send)
              and frame_type(o.frame) == "fault"]
    assert seen.faults and seen.faults[0].blame == "p1" and report
    blind.receive(report[0], 0.3)  # it never saw either message: only the report's evidence
    assert blind.faults and blind.faults[0].blame == "p1", blind.faults
    assert "stopped the table" not in blind.faults[0].detail  # its own verdict, not the reporter's word


def test_a_report_relayed_ahead_of_its_senders_chain_is_checked_for_what_it_carries() -> None:
    # Seat 0 finds the cheat's two messages for one place and reports them; the cheat, stopping too, relays that
    # report as its evidence. Seat 2 has not yet taken seat 0's key, so the relayed report is ahead of seat 0's
    # chain there and waits unchecked: seat 2 still checks what it carries, and blames the cheat on its own check.
    peers = make_table("crisp", 3, CRISP, random.Random(4))
    ready = [[o.frame for o in p.start(0.0) if isinstance(o, Send)] for p in peers]
    keys: list[list[bytes]] = [[], [], []]  # what each seat sends once round 1 begins (its key)
    for i, p in enumerate(peers):
        for j, frames in enumerate(ready):
            if i != j:
                for frame in frames:
                    keys[i] += [o.frame for o in p.receive(frame, 0.1) if isinstance(o, Send)]
    seen, blind, cheat = peers[0], peers[2], peers[CHEATER]
    for frame in keys[0]:
        cheat.receive(frame, 0.1)  # seat 2 takes none of them: seat 0's report is ahead of its chain there
    for frame in keys[CHEATER]:
        blind.receive(frame, 0.1)
    seq, head = cheat.outbox.next_seq, cheat.outbox.head
    one = cheat.outbox.seal(cheat.round, "aid", {"on": True}).frame
    cheat.outbox.next_seq, cheat.outbox.head = seq, head
    two = cheat.outbox.seal(cheat.round, "aid", {"on": False}).frame
    report = [o.frame for frame in (one, two) for o in seen.receive(frame, 0.2) if isinstance(o, Send)
              and frame_type(o.frame) == "fault"]
    relayed = [o.frame for o in cheat.receive(report[0], 0.25) if isinstance(o, Send) and frame_type(o.frame) == "fault"]
    assert relayed and report[0] in parse(relayed[0]).envelope.body["evidence"]  # type: ignore[operator]
    blind.receive(two, 0.2)  # the version the cheat showed seat 2
    blind.receive(relayed[0], 0.3)
    assert blind.faults and blind.faults[0].blame == "p1", blind.faults
    assert "stopped the table" not in blind.faults[0].detail


def test_an_orderer_that_stamps_its_round_before_the_rounds_before_is_blamed_and_nobody_crashes() -> None:
    """The engine's clock runs on from round to round: a round-2 deal and tick stamped just before the last
    entry of round 1 would have the engines' clock go backwards. It is the orderer's fault, at receipt."""
    from p2pcards.bots.base import RandomBot
    from p2pcards.crypto.envelope import Envelope, seal
    from p2pcards.sim.memnet import MemNet

    rng = random.Random(1)
    peers = make_table("crisp", 3, None, random.Random(rng.random()))
    forged: dict[str, int] = {}

    def backdate(sender: int, frame: bytes) -> list[bytes]:
        env = parse(frame).envelope
        peer = net.peers[sender]
        if not forged and env.round >= 2 and env.type == "order" and env.body["k"] == "deal":
            forged["orderer"] = sender
            t = int(min(q.game.clock for q in net.peers) * 1000) - 1
            deal = seal(peer.identity, Envelope(env.table, env.round, env.sender, env.seq, env.prev, "order",
                                                {**env.body, "t": t}))
            tick = seal(peer.identity, Envelope(env.table, env.round, env.sender, env.seq + 1, deal.hash, "order",
                                                {"i": 1, "t": t, "k": "tick", "refs": [], "frames": [], "why": ""}))
            return [deal.frame, tick.frame]
        return [] if forged.get("orderer") == sender else [frame]

    net = MemNet(peers, [RandomBot(random.Random(rng.random()), 0.05) for _ in range(3)], rng, rewrite=backdate)
    net.start()
    net.run(until=36000)
    assert forged
    for seat, peer in enumerate(net.peers):
        if seat != forged["orderer"]:
            assert peer.stopped is not None and "stamped before the one it follows" in peer.stopped
            assert peer.faults[0].blame == peer.names[forged["orderer"]]
            peer.tick(net.now + 1)  # and it goes on taking input: no exception
