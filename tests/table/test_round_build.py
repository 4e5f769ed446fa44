"""One round's parts as `new_round` builds them, for a seat and for a witness, and the orderer's steps on their own."""

from __future__ import annotations

import math

import pytest

from p2pcards.crypto import deck as dk
from p2pcards.crypto.envelope import Outbox, Signed
from p2pcards.crypto.identity import generate
from p2pcards.crypto.sealing import Opener
from p2pcards.errors import IllegalMove
from p2pcards.games.base import Move
from p2pcards.table.bodies import parse_body
from p2pcards.table.config import TableConfig
from p2pcards.table.log import Log
from p2pcards.table.outputs import Emitter
from p2pcards.table.round import Parts, Round, Stage, new_round
from p2pcards.table.rules import rules_for

IDS = [generate(f"p{i}") for i in range(2)]
CFG = TableConfig(bytes(16), "crisp", {"draw_seconds": 10.0}, tuple(i.public for i in IDS), tuple(i.name for i in IDS))
SEEDS = [bytes([7 + s]) * 32 for s in range(2)]


def build(seat: int, seed: bytes | None, clock: float = 5.0) -> tuple[Round, Emitter]:
    """Round 1 at `seat` (a witness: seat 2, no seed), ordered by seat 0, at a clock that reads `clock`."""
    rules = rules_for(CFG.new_game())
    rules.game.round_no = 0
    emit = Emitter(Outbox(IDS[seat % 2], CFG.context), CFG.names, lambda: 1)
    log = Log(2, 1.0, rules.tie_window, rules.ties, orderer=0)
    return new_round(CFG, 1, seat, seed, emit.port(1), rules, Parts(), log, lambda: clock), emit


def deliver(rounds: list[Round], emits: list[Emitter], now: float) -> list[Signed]:
    """Hand every message the seats signed to every round (the sender's too), until none is left; what was sent."""
    done: list[Signed] = []
    while any(e.own for e in emits):
        for seat, emit in enumerate(emits):
            while emit.own:
                signed = emit.own.pop(0)
                done.append(signed)
                body = parse_body(signed.envelope.type, signed.envelope.body, CFG.names, seat)
                for rs in rounds:
                    rs.take(seat, signed, body, now, lambda *_: None, Opener(IDS[rs.decks.me % 2]))
    return done


def test_a_seats_round_draws_its_secret_from_its_seed_and_a_witness_has_a_placeholder() -> None:
    ctx = dk.RoundContext(CFG.context, 1, CFG.names)
    rs, _ = build(1, SEEDS[1])
    assert rs.decks.secret == dk.round_secret(ctx, 1, SEEDS[1]) and rs.orderer == 0 and rs.log.back == 0.0
    assert rs.stage is Stage.KEYS and rs.number == 1 and rs.rules.game is rs.settlement.game
    witness, _ = build(2, None)
    assert witness.decks.secret == dk.round_secret(ctx, 0, bytes(32)) and witness.decks.me == 2
    assert witness.log.back == math.inf  # it judges no stamp by when the order reached the recorder


def test_the_orderer_orders_the_deal_at_its_clock_once_deck_0_is_final_then_ticks_past_a_deadline() -> None:
    built = [build(s, SEEDS[s], clock=5.0) for s in range(2)]
    rounds, emits = [rs for rs, _ in built], [e for _, e in built]
    for rs, emit in built:
        emit.send(1, "key", rs.decks.announcement().to_wire())
    sent = deliver(rounds, emits, 5.0)
    orders = [s.envelope for s in sent if s.envelope.type == "order"]
    assert [(e.sender, e.body["k"], e.body["t"]) for e in orders] == [(IDS[0].public, "deal", 5000)]
    for rs in rounds:
        rs.apply_entries(lambda seat: 0)
        assert rs.stage is Stage.PLAYING and rs.busy()  # our cards' shares are on their way
    deliver(rounds, emits, 5.0)
    assert not any(rs.busy() for rs in rounds)
    orderer = rounds[0]
    assert orderer.log_open()
    deadline = orderer.rules.game.wake_time()
    assert deadline is not None and orderer.wakes() == [deadline + 1e-3]
    orderer.order_next(deadline)  # not past it yet: nothing to order
    assert not emits[0].own
    orderer.order_next(deadline + 0.0004)  # past it, within its millisecond: stamped strictly after it
    (tick,) = [s.envelope.body for s in emits[0].own]
    assert tick["k"] == "tick" and tick["t"] == math.floor(deadline * 1000) + 1


def test_a_move_is_refused_before_the_round_is_played_and_for_another_seat() -> None:
    rs, _ = build(0, SEEDS[0])
    with pytest.raises(IllegalMove, match="not playing"):
        rs.check_move(Move("p0", "draw"))
    assert rs.busy()  # not dealt yet
    rs.stage = Stage.PLAYING
    rs.rules.game.deal({}, 0.0)
    with pytest.raises(IllegalMove, match="only its own seat"):
        rs.check_move(Move("p1", "draw"))
