"""A round's stage table, the emitter's first-fault rule and the watchdog, each on its own."""

from __future__ import annotations

import pytest

from p2pcards.crypto.envelope import Outbox
from p2pcards.crypto.identity import generate
from p2pcards.errors import BadProof, EquivocationEvidence, MalformedMessage, RemoteProtocolError, Replay
from p2pcards.table.round import NEXT, Stage, Watchdog
from p2pcards.table.outputs import Emitter


def test_the_stages_follow_one_another_in_one_line() -> None:
    order = [Stage.KEYS]
    while order[-1] in NEXT:
        order.append(NEXT[order[-1]])
    assert order == list(Stage)


def test_the_first_fault_stops_the_table_and_tells_the_others_once() -> None:
    ident = generate("ann")
    emitter = Emitter(Outbox(ident, bytes(16)), ("ann", "bob"), lambda: 3)
    emitter.fault("bob cheated", 1)
    emitter.fault("and again", 1)
    assert emitter.stopped == "bob cheated"
    assert [(n.kind, n.blame) for n in emitter.notes] == [("fault", "bob"), ("void", None), ("fault", "bob")]
    assert len(emitter.faults) == 2
    sent = [s.envelope for s in emitter.own]
    assert [(e.type, e.round, e.body["blame"]) for e in sent] == [("fault", 3, 1)]


def test_the_watchdog_blames_only_a_stall_longer_than_its_time_out() -> None:
    dog = Watchdog(timeout=10.0)
    assert dog.watch(0.0, frozenset({2}), (1,)) == []
    assert dog.watch(8.0, frozenset({2}), (1,)) == [] and dog.waited(8.0) == [2]
    assert dog.watch(9.0, frozenset({2}), (2,)) == []  # progress: the wait starts again
    assert dog.watch(18.0, frozenset({2}), (2,)) == [] and dog.waited(13.0) == []
    assert dog.watch(19.5, frozenset({1, 2}), (2,)) == []  # someone else owes too: a new stall
    assert dog.watch(30.0, frozenset({1, 2}), (2,)) == [1, 2]
    assert dog.watch(31.0, frozenset(), (2,)) == [] and dog.since is None


@pytest.mark.parametrize("stage", list(Stage)[1:])
def test_no_stage_is_skipped(stage: Stage) -> None:
    assert NEXT[Stage(stage - 1)] is stage


def test_a_remote_error_in_a_message_is_its_senders_fault_and_an_equivocation_is_kept_as_evidence() -> None:
    def blamed(exc: RemoteProtocolError) -> tuple[str, str | None, list[tuple[bytes, bytes]]]:
        emitter = Emitter(Outbox(generate("ann"), bytes(16)), ("ann", "bob", "cy"), lambda: 2)
        emitter.blame(exc, "shares", 1)
        return emitter.faults[0].detail, emitter.faults[0].blame, emitter.evidence

    assert blamed(MalformedMessage("no list")) == ("malformed shares from bob: no list", "bob", [])
    detail, who, _ = blamed(BadProof("a share's proof fails", seat=2))
    assert who == "cy" and detail.startswith("BadProof")  # the seat the deck names
    detail, who, evidence = blamed(EquivocationEvidence("two at seq 4", None, (b"a", b"b")))
    assert detail == "equivocation by bob: two at seq 4" and evidence == [(b"a", b"b")]
    assert blamed(Replay("seen"))[0] == "shares from bob cannot be applied: seen"
