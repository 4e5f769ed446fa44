"""Frames dropped, duplicated and reordered by a proxy between real processes: the game completes alike."""

from __future__ import annotations

import asyncio
import random
import struct
import threading
from collections.abc import Iterator

import pytest

from p2pcards.net.link import TABLE_KINDS
from p2pcards.net.local import run_local_game

pytestmark = pytest.mark.slow  # a whole game between processes


class LossyProxy:
    """One loopback listener per seat, forwarding to it; table frames (F) are mangled after the handshake."""

    def __init__(self, seed: int, drop: float = 0.04, dup: float = 0.04, swap: float = 0.04) -> None:
        self.rng = random.Random(seed)  # a test's faults, nothing secret
        self.drop, self.dup, self.swap = drop, dup, swap
        self.loop = asyncio.new_event_loop()
        self.counts = {"dropped": 0, "duplicated": 0, "reordered": 0, "frames": 0}
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def ports(self, real: list[int]) -> list[int]:
        """The proxy's port in front of each real port."""
        return [asyncio.run_coroutine_threadsafe(self._listen(p), self.loop).result(5) for p in real]

    async def _listen(self, target: int) -> int:
        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            up_r, up_w = await asyncio.open_connection("127.0.0.1", target)
            await asyncio.gather(self._pipe(reader, up_w), self._pipe(up_r, writer), return_exceptions=True)
        server = await asyncio.start_server(accepted, "127.0.0.1", 0)
        port: int = server.sockets[0].getsockname()[1]
        return port

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        held: bytes | None = None
        try:
            while True:
                head = await reader.readexactly(4)
                body = await reader.readexactly(struct.unpack(">I", head)[0])
                frame = head + body
                if body[0] not in TABLE_KINDS:  # the handshake, heartbeats, requests: untouched
                    writer.write(frame)
                    continue
                self.counts["frames"] += 1
                x = self.rng.random()
                if x < self.drop:
                    self.counts["dropped"] += 1
                    continue
                if x < self.drop + self.dup:
                    self.counts["duplicated"] += 1
                    writer.write(frame)
                if held is None and x > 1 - self.swap:
                    self.counts["reordered"] += 1
                    held = frame  # goes out after the next frame
                    continue
                writer.write(frame)
                if held is not None:
                    writer.write(held)
                    held = None
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        finally:
            writer.close()

    def close(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)


@pytest.fixture
def proxy() -> Iterator[LossyProxy]:
    p = LossyProxy(seed=3)
    yield p
    p.close()


def test_a_game_through_a_lossy_proxy_completes_alike(proxy: LossyProxy) -> None:
    seats = run_local_game("crisp", 3, {"limit": 20, "crisp_window_s": 0.5, "next_start_s": 0.2},
                           limit_s=240, via=proxy.ports)
    assert all(s["finished"] and s["stopped"] is None and not s["faults"] for s in seats), seats
    assert len({s["log"] for s in seats}) == 1
    assert len({tuple(s["totals"]) for s in seats}) == 1
    assert proxy.counts["dropped"] and proxy.counts["duplicated"] and proxy.counts["reordered"], proxy.counts
