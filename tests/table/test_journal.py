"""A peer's journal as it grows: what it keeps, what the shell takes, and nothing while it replays."""

from __future__ import annotations

from p2pcards.crypto.envelope import Outbox
from p2pcards.crypto.identity import generate
from p2pcards.table.journal import Journal
from p2pcards.table.resume import carried, frame_record


def test_a_journal_keeps_its_start_then_every_record_until_taken() -> None:
    j = Journal()
    j.record(("seed", 1, b"s"))
    assert j.take() == [] and j.records is None  # off: nothing gathered
    outbox = Outbox(generate("p0"), bytes(16), 3, b"h" * 32)
    j.keep(((4, 5), 2), outbox, [b"lobby"])
    assert carried(j.records or []) == ((4, 5), 2)
    assert (j.records or [])[1:] == [("outbox", 3, b"h" * 32), frame_record(0.0, b"lobby")]
    j.take()
    j.record(("seed", 1, b"s"))
    j.replaying = True
    j.record(("seed", 2, b"t"))  # journaled already: what a replay takes again is not kept twice
    j.replaying = False
    assert j.take() == [("seed", 1, b"s")] and j.take() == []
