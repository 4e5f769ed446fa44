"""TCP links between peers: length-prefixed frames, a full mesh, and one TablePeer in its shell.

The table protocol is sans-IO; this is its shell on real sockets. Every frame is broadcast to
every other seat, so a link needs no addressing: whatever arrives goes to the peer.
"""

from __future__ import annotations

import asyncio
import struct
from collections.abc import Sequence
from types import TracebackType

from ..bots.base import Bot
from ..crypto.encoding import MAX_FRAME
from ..table.peer import TablePeer
from .shell import TableShell

HEADER = struct.Struct(">I")


async def read_frame(reader: asyncio.StreamReader) -> bytes | None:
    """One frame, or None at a clean end of stream; ValueError on an oversized frame."""
    try:
        head = await reader.readexactly(HEADER.size)
    except asyncio.IncompleteReadError:
        return None
    (size,) = HEADER.unpack(head)
    if size > MAX_FRAME:
        raise ValueError(f"frame of {size} bytes is over the cap")
    try:
        return await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        return None


def frame_bytes(frame: bytes) -> bytes:
    """A frame with its length prefix."""
    return HEADER.pack(len(frame)) + frame


class PeerProcess:
    """One seat on real sockets: listens, dials the seats before it, relays frames, drives its bot."""

    def __init__(self, peer: TablePeer, bot: Bot | None, host: str = "127.0.0.1") -> None:
        self.peer = peer
        self.bot = bot
        self.host = host
        self.writers: list[asyncio.StreamWriter] = []
        self.tasks: set[asyncio.Task[None]] = set()
        self.server: asyncio.Server | None = None
        self.shell = TableShell(peer, self._broadcast, bot)

    async def __aenter__(self) -> PeerProcess:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    async def listen(self, port: int = 0) -> int:
        """Start accepting links; returns the port."""
        self.server = await asyncio.start_server(self._link, self.host, port)
        return int(self.server.sockets[0].getsockname()[1])

    async def dial(self, ports: Sequence[int], attempts: int = 50) -> None:
        """Open a link to each port (retrying while the other process starts)."""
        for port in ports:
            for _ in range(attempts):
                try:
                    reader, writer = await asyncio.open_connection(self.host, port)
                    break
                except OSError:
                    await asyncio.sleep(0.1)
            else:
                raise ConnectionError(f"no peer answers on port {port}")
            await self._link(reader, writer)

    async def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        task = asyncio.get_running_loop().create_task(self._read(reader))
        self.tasks.add(task)
        task.add_done_callback(self.tasks.discard)

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while True:
            try:
                frame = await read_frame(reader)
            except (ValueError, ConnectionError):
                return  # a broken or hostile link is dropped; the protocol's time-outs blame the silence
            if frame is None:
                return
            self.shell.receive(frame)

    def _broadcast(self, frame: bytes) -> None:
        data = frame_bytes(frame)
        for w in self.writers:
            if not w.is_closing():
                w.write(data)

    @property
    def bytes_out(self) -> int:
        """Bytes of table frames this seat sent (each counted once, not once per link)."""
        return self.shell.bytes_out

    async def play(self, peers: int, limit_s: float = 600.0) -> None:
        """Wait until every link is up, say ready, and run until the table finishes or stops."""
        while len(self.writers) < peers - 1:
            await asyncio.sleep(0.02)
        self.shell.start()
        try:
            await asyncio.wait_for(self.shell.done(), limit_s)
        except TimeoutError:
            pass
        await asyncio.sleep(0.3)  # let our last frames leave before the links close

    async def close(self) -> None:
        """Close every link and the server, and wait until they are closed."""
        self.shell.close()
        for task in list(self.tasks):
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        for w in self.writers:
            w.close()
        for w in self.writers:
            try:
                await w.wait_closed()
            except (ConnectionError, OSError):
                pass
        if self.server is not None:
            self.server.close()
            await self.server.wait_closed()
