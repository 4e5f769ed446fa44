"""Frames in, on their own: each seat's chain in order, frames ahead of their chain held, a rival frame blamed."""

from __future__ import annotations

from p2pcards.crypto.envelope import Outbox, Signed
from p2pcards.crypto.identity import generate
from p2pcards.table.chains import Chains
from p2pcards.table.config import TableConfig
from p2pcards.table.outputs import Emitter

IDS = [generate(f"p{i}") for i in range(3)]
CFG = TableConfig(bytes(16), "crisp", {}, tuple(i.public for i in IDS), tuple(i.name for i in IDS))


def seat_zero() -> tuple[Chains, Emitter, list[Signed]]:
    taken: list[Signed] = []
    emitter = Emitter(Outbox(IDS[0], CFG.context), CFG.names, lambda: 1)
    return Chains(CFG, 0, emitter, taken.append, lambda: 1), emitter, taken


def frames(seat: int, count: int) -> list[bytes]:
    out = Outbox(IDS[seat], CFG.context)
    return [out.seal(1, "move", {"m": {"a": "draw", "p": k}}).frame for k in range(count)]


def test_frames_in_order_are_taken_and_a_replay_is_dropped() -> None:
    chains, emitter, taken = seat_zero()
    f = frames(1, 2)
    for frame in f + f[:1]:
        chains.accept(frame)
    assert [s.envelope.seq for s in taken] == [0, 1] and chains.received(1) == 2
    assert emitter.stopped is None and not emitter.notes


def test_a_frame_ahead_of_its_chain_waits_for_the_ones_before_it() -> None:
    chains, emitter, taken = seat_zero()
    f = frames(2, 3)
    chains.accept(f[2])
    chains.accept(f[1])
    assert not taken and len(chains.held) == 2
    chains.accept(f[0])
    assert [s.envelope.seq for s in taken] == [0, 1, 2] and not chains.held


def test_two_frames_for_one_place_in_a_chain_stop_the_table_blaming_their_signer() -> None:
    chains, emitter, taken = seat_zero()
    rival = Outbox(IDS[1], CFG.context)
    rival.seal(1, "move", {"m": {"a": "draw"}})  # seq 0, never delivered
    a = rival.seal(1, "move", {"m": {"a": "draw", "p": 1}}).frame
    again = Outbox(IDS[1], CFG.context)
    again.seal(1, "move", {"m": {"a": "draw"}})
    b = again.seal(1, "move", {"m": {"a": "draw", "p": 2}}).frame
    chains.accept(a)
    chains.accept(b)
    assert emitter.stopped is not None and emitter.faults[0].blame == "p1"
    assert emitter.own[-1].envelope.type == "fault"  # the others are told


def test_a_stranger_is_noted_never_blamed() -> None:
    chains, emitter, taken = seat_zero()
    stranger = generate("zed")
    chains.accept(Outbox(stranger, CFG.context).seal(1, "move", {"m": {"a": "draw"}}).frame)
    assert not taken and emitter.stopped is None
    assert [n.kind for n in emitter.notes] == ["rejected"] and emitter.notes[0].blame is None
