"""Several bot peers in one event loop, sharing one AsyncZeroconf: what `p2pcards play --bots N` does."""

from __future__ import annotations

import asyncio
import secrets

import pytest

from p2pcards.net.botpeer import BotPeer, run_bot_peer
from p2pcards.net.discovery import Discovery


@pytest.mark.slow  # a whole game or two: tens of seconds
def test_three_bot_peers_in_one_loop_find_the_table_and_finish_a_game() -> None:
    table = f"one loop {secrets.token_hex(3)}"

    async def main() -> list[dict[str, object]]:
        async with Discovery(["127.0.0.1"]) as disco:
            host = BotPeer("good", "host", create=True, game="crisp", options={"limit": 10}, players=3,
                           table=table, interfaces=["127.0.0.1"])
            guests = [BotPeer("random", f"guest{i}", table=table, interfaces=["127.0.0.1"]) for i in range(2)]
            async with asyncio.timeout(120):
                return await asyncio.gather(*(run_bot_peer(p, disco=disco) for p in (host, *guests)))

    results = asyncio.run(main())
    assert all(r["finished"] and not r["faults"] for r in results), results
    assert len({r["log"] for r in results}) == 1
    assert sorted(r["seat"] for r in results) == [0, 1, 2]  # type: ignore[type-var]
