"""Network faults between seat processes (`p2pcards sim --transport tcp --faults SPEC`): a proxy on loopback.

One listener per pair of seats (the later seat dials the earlier one through it, see
`run_local_game`'s `dial`), so the proxy knows both ends of every link. It reads the links'
framing (net/link.py) and, as `FaultSpec` says, delays table frames (F) by `delay` plus up to
`jitter` ms in their order, holds one back 50 to 250 ms so that later ones overtake it
(`reorder`), sends one twice (`dup`) or loses it (`drop`); the handshake, heartbeats and
requests pass untouched. A partition holds every byte that reaches it across the cut (heartbeats
too, as a cut cable would) until it heals, then lets them through in order, as TCP does.
"""

from __future__ import annotations

import asyncio
import contextlib
import random
import struct
import threading

from ..crypto.envelope import parse
from ..errors import MalformedMessage
from ..net.link import TABLE_KINDS
from .faults import FaultSpec

HEADER = struct.Struct(">I")


class FaultProxy:
    """Runs on its own thread and event loop; `dial` is `run_local_game`'s `dial`, `close` ends it all."""

    def __init__(self, spec: FaultSpec, players: int, rng: random.Random) -> None:
        self.spec = spec
        self.rng = rng  # the faults' dice: a test's choices, nothing secret
        self.side = spec.partition.side(players) if spec.partition is not None else frozenset()
        self.counts: dict[str, int] = {}
        self.relayed = 0  # table frames relayed so far (what a tester watching a slow run sees move)
        self.round = 0  # the highest round a relayed frame was signed in
        self.last: float | None = None  # when the last one came (loop time)
        self.loop = asyncio.new_event_loop()
        self.start = self.loop.time()  # the partition's clock starts when the seats are about to dial
        self._servers: list[asyncio.Server] = []
        self._thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self._thread.start()

    def dial(self, seat: int, ports: list[int]) -> list[int]:
        """The ports `seat` dials: one of ours in front of each seat before it (it dials only those)."""
        self.start = self.loop.time()
        return [asyncio.run_coroutine_threadsafe(self._listen(seat, i, port), self.loop).result(5) if i < seat
                else port for i, port in enumerate(ports)]

    def close(self) -> None:
        """Stop listening, end every link still piped (what it held is lost, as a game cut short loses it) and
        close the loop, so that a run stopped mid-game (Ctrl-C, SIGTERM) leaves no task to die noisily at exit."""
        async def stop() -> None:
            for server in self._servers:
                server.close()
            pending = [t for t in asyncio.all_tasks() if t is not asyncio.current_task()]
            for task in pending:
                task.cancel()
            await asyncio.gather(*pending, return_exceptions=True)
        with contextlib.suppress(RuntimeError, TimeoutError):
            asyncio.run_coroutine_threadsafe(stop(), self.loop).result(5)
        self.loop.call_soon_threadsafe(self.loop.stop)
        self._thread.join(5)
        if not self._thread.is_alive():
            self.loop.close()

    def status(self) -> str:
        """How far the game has gone, as the frames relayed show it: whether a slow run is moving at all."""
        if self.last is None:
            return "no table frame relayed yet"
        return (f"round {self.round}, {self.relayed} table frames relayed, the last "
                f"{self.loop.time() - self.last:.1f} s ago")

    def _seen(self, payload: bytes) -> None:
        """Note a table frame going through (its round, when), as a watcher would."""
        self.relayed += 1
        self.last = self.loop.time()
        with contextlib.suppress(MalformedMessage):
            self.round = max(self.round, parse(payload).envelope.round)

    def _count(self, kind: str) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1

    async def _listen(self, dialer: int, target: int, port: int) -> int:
        async def accepted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            try:
                up_r, up_w = await asyncio.open_connection("127.0.0.1", port)
            except OSError:  # the seat behind us is gone (killed, or over): the dialler sees its link fail
                writer.close()
                return
            except asyncio.CancelledError:  # the proxy closes (asyncio would report a cancelled handler as an error)
                writer.close()
                return
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.gather(self._pipe(reader, up_w, dialer, target),
                                     self._pipe(up_r, writer, target, dialer), return_exceptions=True)
        server = await asyncio.start_server(accepted, "127.0.0.1", 0)
        self._servers.append(server)
        bound: int = server.sockets[0].getsockname()[1]
        return bound

    def _when(self, sender: int, receiver: int, table: bool, last: float) -> tuple[float | None, bool]:
        """When a frame from `sender` to `receiver` goes on (None: lost), and whether it was held back to be overtaken."""
        spec, rng, now = self.spec, self.rng, self.loop.time()
        if table and spec.drop and rng.random() < spec.drop:
            self._count("drop")
            return None, False
        at = now + ((spec.delay or 0.0) + rng.random() * (spec.jitter or 0.0)) / 1000 if table else now
        held = bool(table and spec.reorder and rng.random() < spec.reorder)
        if held:
            self._count("reorder")
            at += rng.uniform(0.05, 0.25)
        cut = spec.partition
        if cut is not None and cut.cuts(self.side, sender, receiver, now - self.start):
            self._count("partition")
            at = max(at, self.start + cut.at + cut.span)
        return (at if held else max(at, last + 1e-6)), held

    async def _pipe(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, sender: int, receiver: int) -> None:
        def write(data: bytes) -> None:
            if not writer.is_closing():
                writer.write(data)

        last = self.loop.time()
        try:
            while True:
                head = await reader.readexactly(HEADER.size)
                body = await reader.readexactly(HEADER.unpack(head)[0])
                table = body[0] in TABLE_KINDS
                if table:
                    self._seen(body[1:])
                at, held = self._when(sender, receiver, table, last)
                if at is None:
                    continue
                if not held:
                    last = at
                self.loop.call_at(at, write, head + body)
                if table and self.spec.dup and self.rng.random() < self.spec.dup:
                    self._count("dup")
                    self.loop.call_at(at + self.rng.uniform(0.001, 0.1), write, head + body)
        except (asyncio.IncompleteReadError, ConnectionError, OSError):
            pass
        except asyncio.CancelledError:  # the proxy closes: the link ends now
            writer.close()
            raise
        self.loop.call_at(last + 0.2, writer.close)  # once what was read has gone on
