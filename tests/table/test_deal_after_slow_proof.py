"""A deal that waits behind the check of the last pass's proof is judged from when that pass arrived."""

from __future__ import annotations

import random

from p2pcards.crypto.encoding import decode
from p2pcards.sim.table_game import make_table
from p2pcards.table.peer import Note, Send


def _is_deal(frame: bytes) -> bool:
    msg = decode(frame[64:])
    return isinstance(msg, dict) and msg["type"] == "order" and isinstance(msg["body"], dict) and msg["body"]["k"] == "deal"


def test_deal_queued_behind_a_slow_proof_check_is_not_a_fault() -> None:
    """Every frame arrives at once, but the deal reaches the non-orderer 3 s late (its clock ran while it verified)."""
    peers = make_table("crisp", 2, {}, random.Random(5))
    now = 1000.0
    queue: list[tuple[float, int, bytes]] = []
    notes: list[Note] = []

    def emit(sender: int, outputs: list[Send | Note], at: float) -> None:
        for out in outputs:
            if isinstance(out, Note):
                notes.append(out)
                continue
            for to in range(len(peers)):
                if to != sender:
                    queue.append((at + (3.0 if _is_deal(out.frame) else 0.0), to, out.frame))

    for i, p in enumerate(peers):
        emit(i, p.start(now), now)
    dealt = False
    while queue:
        queue.sort(key=lambda x: x[0])
        at, to, frame = queue.pop(0)
        dealt = dealt or _is_deal(frame)
        emit(to, peers[to].receive(frame, at), at)
        if dealt and not queue:
            break
    assert dealt
    assert not [n for n in notes if n.kind in ("fault", "void")], notes
    assert all(p.stopped is None for p in peers)
