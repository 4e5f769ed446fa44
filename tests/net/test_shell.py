"""The shell ticks its peer when the peer asks, however busy the links are."""

from __future__ import annotations

import asyncio
from typing import Any

from p2pcards.net.shell import LATER_S, TableShell


class Peer:
    """What the shell sees of a peer that wants a tick half a second after the last thing it heard."""

    finished = False
    stopped = None

    def __init__(self) -> None:
        self.now = 0.0
        self.ticks: list[float] = []
        self.taken: list[tuple[bytes, float]] = []

    def can_wait(self, frame: bytes) -> bool:
        return frame.startswith(b"box")

    def receive(self, frame: bytes, now: float) -> list[Any]:
        self.now = now
        self.taken.append((frame, now))
        return []

    def tick(self, now: float) -> list[Any]:
        self.now = now
        self.ticks.append(now)
        return []

    def wake_time(self) -> float:
        return self.now + 0.5

    def busy(self) -> bool:
        return False


def test_frames_coming_faster_than_the_wake_moves_on_do_not_put_the_tick_off() -> None:
    async def main() -> Peer:
        peer = Peer()
        loop = asyncio.get_running_loop()
        shell = TableShell(peer, lambda frame: None, clock=loop.time)  # type: ignore[arg-type]
        shell.receive(b"")
        for _ in range(15):  # a frame every 0.1 s for 1.5 s
            await asyncio.sleep(0.1)
            shell.receive(b"")
        shell.close()
        return peer

    peer = asyncio.run(main())
    assert len(peer.ticks) >= 2, peer.ticks


def test_a_frame_that_can_wait_is_taken_soon_and_never_after_a_frame_that_came_later() -> None:
    async def main() -> tuple[Peer, list[bytes]]:
        peer = Peer()
        shell = TableShell(peer, lambda frame: None)  # type: ignore[arg-type]
        shell.receive(b"box 1")
        shell.receive(b"box 2")
        before = [f for f, _ in peer.taken]
        shell.receive(b"move")  # waited on: the boxes go first, in the order they came
        shell.receive(b"box 3")
        await asyncio.sleep(LATER_S * 3)
        shell.close()
        return peer, before

    peer, before = asyncio.run(main())
    assert before == []
    assert [f for f, _ in peer.taken] == [b"box 1", b"box 2", b"move", b"box 3"]
    assert peer.taken[0][1] <= peer.taken[2][1]  # each is taken at the time it came
