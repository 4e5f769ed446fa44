"""A link that breaks mid-game (Wi-Fi dropped, a reset) is dialled again: the game goes on with every seat."""

from __future__ import annotations

import asyncio

import pytest

from p2pcards.net.botpeer import BotPeer, run_bot_peer
from p2pcards.net.node import Node
from p2pcards.table.peer import Note


class CuttingProxy:
    """Forwards TCP to `port`; `cut()` resets every connection open now (later ones pass)."""

    def __init__(self, port: int) -> None:
        self.port = port
        self.open: list[asyncio.StreamWriter] = []
        self.connections = 0

    async def start(self) -> int:
        server = await asyncio.start_server(self._serve, "127.0.0.1", 0)
        self.server = server
        return int(server.sockets[0].getsockname()[1])

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        self.open += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()

        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self) -> None:
        for w in self.open:
            w.transport.abort()  # a reset, no goodbye: as when the Wi-Fi drops
        self.open.clear()


@pytest.mark.slow  # a game over real links cut and dialled again: seconds
def test_a_link_cut_mid_game_is_dialled_again_and_nobody_is_voted_out() -> None:
    notes: list[str] = []

    async def main() -> list[dict[str, object]]:
        ready: asyncio.Future[int] = asyncio.get_running_loop().create_future()

        def on_ready(node: Node) -> None:
            ready.set_result(node.links.port)

        host = BotPeer("good", "host", create=True, game="crisp", options={"limit": 10}, players=2,
                       interfaces=["127.0.0.1"], mdns=False)
        host_task = asyncio.create_task(run_bot_peer(host, on_ready=on_ready))
        proxy = CuttingProxy(await ready)
        port = await proxy.start()
        guest = BotPeer("random", "guest", peers=[("127.0.0.1", port)], interfaces=["127.0.0.1"], mdns=False)

        def on_note(note: Note) -> None:
            notes.append(f"{note.kind}: {note.detail}")
            if note.detail == "round 1 begins":
                asyncio.get_running_loop().call_later(1.0, proxy.cut)

        async with asyncio.timeout(120):
            results = await asyncio.gather(host_task, run_bot_peer(guest, on_note=on_note))
        proxy.server.close()
        assert proxy.connections >= 2  # the guest dialled the host again through the proxy
        return list(results)

    results = asyncio.run(main())
    assert all(r["finished"] and not r["faults"] for r in results), results
    assert any(n.startswith("missing: host is missing") for n in notes) and "back: host is back" in notes, notes
    assert not any("we vote it gone" in n or " votes " in n for n in notes), notes
    assert results[0]["log"] == results[1]["log"]
