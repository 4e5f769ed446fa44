"""A seat that finished stays to send its last frames again: the seat that missed one finishes too."""

from __future__ import annotations

import asyncio

import pytest

from seats_harness import linked_seats

from p2pcards.crypto.envelope import parse
from p2pcards.net.seat import Seat


@pytest.mark.slow  # seconds of real time: the last seat lingers
def test_a_result_lost_on_its_way_to_the_last_seat_is_sent_again_after_the_table_is_over() -> None:
    async def main() -> list[Seat]:
        seats, all_links, _ = await linked_seats("crisp", 3, {"limit": 1, "crisp_window_s": 0.5, "next_start_s": 0.2}, 10.0)
        first = seats[0]
        lost_to = seats[1].peer.identity.public
        send = all_links[0].broadcast

        def broadcast(kind: int, payload: bytes, keys: object) -> None:
            if parse(payload).envelope.type == "result":  # our signed result never reaches seat 1
                send(kind, payload, [k for k in first.others if k != lost_to])
            else:
                send(kind, payload, first.others)

        all_links[0].broadcast = broadcast  # type: ignore[method-assign]
        async def run(i: int) -> None:
            await seats[i].play(limit_s=100)
            await seats[i].linger()
            await all_links[i].close("the table is over")  # as a peer does when it is done

        async with asyncio.timeout(120):
            await asyncio.gather(*(run(i) for i in range(3)))
        return seats

    seats = asyncio.run(main())
    assert all(s.peer.finished and not s.peer.faults for s in seats), [s.peer.stopped for s in seats]
    assert len({s.peer.log_hash for s in seats}) == 1
