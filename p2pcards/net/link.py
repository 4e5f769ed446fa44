"""TCP links between peers: length-prefixed frames, a full mesh, and a loop that runs one TablePeer.

The table protocol is sans-IO; this is its shell on real sockets. Every frame is broadcast to
every other seat, so a link needs no addressing: whatever arrives goes to the peer.
"""

from __future__ import annotations

import asyncio
import random
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass, field

from ..bots.base import Bot
from ..crypto.encoding import MAX_FRAME
from ..errors import IllegalMove
from ..table.peer import Note, Send, TablePeer

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


@dataclass
class PeerProcess:
    """One seat on real sockets: listens, dials the seats before it, relays frames, drives its bot."""

    peer: TablePeer
    bot: Bot | None
    host: str = "127.0.0.1"
    think: float = 0.05
    notes: list[Note] = field(default_factory=list)
    writers: list[asyncio.StreamWriter] = field(default_factory=list)
    bytes_out: int = 0

    def clock(self) -> float:
        """The wall clock: the orderer's stamps are checked against it, so peers' clocks must agree (NTP)."""
        return time.time()

    async def listen(self, port: int = 0) -> int:
        """Start accepting links; returns the port."""
        self.server = await asyncio.start_server(self._accepted, self.host, port)
        sock = self.server.sockets[0]
        return int(sock.getsockname()[1])

    async def dial(self, ports: Sequence[int], attempts: int = 50) -> None:
        """Open a link to each port (retrying while the other process starts)."""
        for port in ports:
            for attempt in range(attempts):
                try:
                    reader, writer = await asyncio.open_connection(self.host, port)
                    break
                except OSError:
                    await asyncio.sleep(0.1)
            else:
                raise ConnectionError(f"no peer answers on port {port}")
            self._link(reader, writer)

    async def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._link(reader, writer)

    def _link(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.writers.append(writer)
        asyncio.get_running_loop().create_task(self._read(reader))

    async def _read(self, reader: asyncio.StreamReader) -> None:
        while True:
            try:
                frame = await read_frame(reader)
            except (ValueError, ConnectionError):
                return  # a broken or hostile link is dropped; the protocol's time-outs blame the silence
            if frame is None:
                return
            self._emit(self.peer.receive(frame, self.clock()))
            self._bot_soon()

    def _emit(self, outputs: list[Send | Note]) -> None:
        for out in outputs:
            if isinstance(out, Note):
                self.notes.append(out)
                continue
            data = frame_bytes(out.frame)
            self.bytes_out += len(data)
            for w in self.writers:
                if not w.is_closing():
                    w.write(data)

    def _bot_soon(self) -> None:
        if self.bot is not None and not getattr(self, "_bot_due", False):
            self._bot_due = True
            asyncio.get_running_loop().call_later(self.think * (0.5 + random.random()), self._bot_turn)

    def _bot_turn(self) -> None:
        self._bot_due = False
        peer, bot = self.peer, self.bot
        if bot is None or peer.busy() or peer.finished or peer.stopped:
            return
        move = bot.choose(peer.view())
        if move is None:
            self._bot_soon()
            return
        try:
            self._emit(peer.play(move, self.clock()))
        except IllegalMove:
            self._bot_soon()

    async def play(self, peers: int, limit_s: float = 600.0) -> None:
        """Wait until every link is up, say ready, and run until the table finishes or stops."""
        while len(self.writers) < peers - 1:
            await asyncio.sleep(0.02)
        self._emit(self.peer.start(self.clock()))
        deadline = self.clock() + limit_s
        while not (self.peer.finished or self.peer.stopped) and self.clock() < deadline:
            wake = self.peer.wake_time()
            await asyncio.sleep(max(0.0, min(0.1, (wake or self.clock() + 0.1) - self.clock())))
            self._emit(self.peer.tick(self.clock()))
            self._bot_soon()
        await asyncio.sleep(0.3)  # let our last frames leave before the links close
        for w in self.writers:
            w.close()
        self.server.close()
