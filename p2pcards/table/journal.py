"""A peer's journal as it grows, and its replay on resume, sans-IO (the records are in resume.py).

`Journal` gathers the records a peer must not lose (protocol.md §14.10) until the shell takes
them to store; nothing is gathered while the journal is off or being replayed. `replay` takes a
journal's frames again, each at its time, through the hooks of the peer that resumes.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from ..crypto.envelope import Outbox, parse
from .outputs import FAULT_BEFORE_RESTART, LEFT_BEFORE_RESTART, Emitter, Send
from .resume import (ABSENCES, FRAMES, Check, Hashes, Record, ResumeOutbox, carry_record, chain_hashes, frame_record,
                     last_check, record_time)

RESENT = ("move", "aid", "leave", "ready")  # our own messages no step of the table makes: our user's, or our start


class Journal:
    """The records not yet taken by the shell, or None while we do not journal."""

    def __init__(self) -> None:
        self.records: list[Record] | None = None
        self.replaying = False

    def keep(self, carry: tuple[tuple[int, ...], int], outbox: Outbox, lobby: Iterable[bytes]) -> None:
        """Journal from now on: what our table carries, where our chain begins and the frames we hold."""
        self.records = [carry_record(*carry), ("outbox", outbox.next_seq, outbox.head)]
        self.records += [frame_record(0.0, frame) for frame in lobby]

    def take(self) -> list[Record]:
        """The records since the last call."""
        if self.records is None:
            return []
        records, self.records = self.records, []
        return records

    def record(self, record: Record) -> None:
        """Journal `record` (unless we do not journal, or replay what is journaled already)."""
        if self.records is not None and not self.replaying:
            self.records.append(record)

    def replay(self, records: Sequence[Record], outbox: ResumeOutbox, emit: Emitter,
               at: Callable[[float, float | None], None],
               accept: Callable[[bytes, bool], None], step: Callable[[], None],
               check: Callable[[Check, list[bytes], Hashes], None], absent: Callable[[Record], None]) -> None:
        """Take the journal's frames again, each at its time (`at`), as they were taken (`accept`, then `step`).

        A journal with a checkpoint is replayed from its last one: `check` is handed it, the frames
        before it and the older places of the chains a compacted journal keeps by their hash. Our own frames come back from the outbox as the steps that made them make them
        again; a move, an aid, a leave (our user's) or a ready is sent again where the journal has it.
        What the last steps sign beyond the journal (we stopped before storing it: `outbox.fresh`) is left
        in `emit.out`, to be journaled and sent; the rest was sent before we stopped, and a seat that missed
        it asks. What our network layer found of the links (`absent`: a seat missing, back or silent a
        while) is taken again where the journal has it, the checkpoint's prefix included: live, it judged the
        stamps of the frames taken after it, so a replay must judge them alike.
        """
        self.replaying = True
        clock: float | None = None
        try:
            start = last_check(records)
            if start is not None:
                check(Check.parse(records[start]), [data for kind, _, data in records[:start] if kind in FRAMES],
                      chain_hashes(records[:start]))
                for record in records[:start]:
                    if record[0] in ABSENCES:
                        absent(record)
            for kind, number, data in records if start is None else records[start + 1:]:
                if kind in ABSENCES:
                    absent((kind, number, data))
                if kind == "clock":
                    clock = record_time(number)  # the frame after it was taken at this clock, later than it came
                if kind not in FRAMES:
                    continue
                at(record_time(number), clock)
                clock = None
                env = parse(data).envelope
                if env.sender != outbox.identity.public:
                    accept(data, kind == "frame")
                elif env.seq >= outbox.next_seq:
                    if env.type not in RESENT:
                        step()  # a tick: the step that made it makes it again
                    if env.seq >= outbox.next_seq:
                        emit.send(env.round, env.type, dict(env.body))
                    if env.type in ("leave", "fault") and emit.stopped is None:
                        why = env.body.get("why")
                        said = f": {why}" if isinstance(why, str) and why else ""
                        emit.stopped = LEFT_BEFORE_RESTART if env.type == "leave" else f"{FAULT_BEFORE_RESTART}{said}"
                step()
        finally:
            self.replaying = False
            emit.out = [out for out in emit.out if isinstance(out, Send) and out.frame in outbox.fresh]
