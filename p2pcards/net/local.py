"""A table of real processes on this machine: one process per seat, real TCP links between them.

`run_local_game` starts every seat as `python -m p2pcards.net.local`, hands each its key and
the table's config on standard input, tells each the others' ports, and collects one JSON
summary line from each when the game is over.
"""

from __future__ import annotations

import asyncio
import json
import secrets
import subprocess
import sys
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..bots.base import Bot
from ..crypto.encoding import decode, encode
from ..crypto.identity import Identity, generate
from ..errors import LinkBroken
from ..table.config import TableConfig
from ..table.peer import TablePeer
from .botpeer import make_bot
from .link import Link, Links
from .seat import Seat


class SeatRig:
    """How a seat process builds its peer, bot and seat, and what it adds to its summary (a sim's seats differ)."""

    def peer(self, config: TableConfig, identity: Identity, timeout: float) -> TablePeer:
        """The seat's table peer."""
        return TablePeer(config, identity, timeout=timeout)

    def bot(self, bot: Bot) -> Bot:
        """The bot that plays the seat."""
        return bot

    def seat(self, peer: TablePeer, links: Links, bot: Bot) -> Seat:
        """The seat on the links."""
        return Seat(peer, links, bot)

    def summary(self, peer: TablePeer, seat: Seat) -> dict[str, Any]:
        """More for the summary line."""
        return {}


async def _seat(order: Mapping[str, Any], rig: SeatRig) -> dict[str, Any]:
    config = TableConfig.from_wire(decode(bytes.fromhex(order["config"])))
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(order["key"]))
    identity = Identity(key, config.names[order["seat"]])
    peer = rig.peer(config, identity, float(order.get("timeout", 15)))
    seats = set(config.keys) - {identity.public}
    seat: Seat | None = None

    def on_frame(link: Link, kind: int, payload: bytes) -> None:
        if seat is None:
            raise LinkBroken(f"frame kind {kind} has no place here")
        seat.take(link, kind, payload)

    def on_link(link: Link) -> None:
        if seat is not None:
            seat.linked(link)

    def on_lost(link: Link, why: str) -> None:
        if seat is not None:
            seat.lost(link, why)

    def on_quiet(link: Link, quiet: bool) -> None:
        if seat is not None:
            seat.quiet(link, quiet)

    async with Links(identity, config.table, seats.__contains__, on_frame, on_link, on_lost, on_quiet) as links:
        seat = rig.seat(peer, links, rig.bot(make_bot(config.game, order["bot"], f"{order.get('seed', 0)}/{order['seat']}")))
        port = await links.listen(["127.0.0.1"])
        print(json.dumps({"port": port}), flush=True)
        ports = json.loads(await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline))["ports"]
        for i in range(order["seat"]):  # each seat dials the seats before it: one link per pair
            await links.dial([("127.0.0.1", ports[i])], config.keys[i], attempts=50, pause=0.1)
        try:
            await seat.play(float(order.get("limit_s", 600)))
        except TimeoutError:
            pass
        await seat.linger()  # let our last frames leave, and send them again to a seat that missed one
    return {"seat": order["seat"], "finished": peer.finished, "stopped": peer.stopped,
            "totals": peer.game.totals, "log": peer.rs.log_hash.hex() if peer.rs else None,
            "faults": [f"{n.detail} [{n.blame}]" for n in peer.faults], "bytes_out": seat.shell.bytes_out,
            "rounds": peer.round, **rig.summary(peer, seat)}


def child_main(rig: Callable[[Mapping[str, Any]], SeatRig] = lambda order: SeatRig()) -> int:
    """The seat process: one JSON order on stdin, the port on stdout, then the ports, then the summary."""
    order = json.loads(sys.stdin.readline())
    summary = asyncio.run(_seat(order, rig(order)))
    print(json.dumps(summary), flush=True)
    return 0


def run_local_game(game: str, players: int, options: Mapping[str, Any] | None = None,
                   bots: list[str] | None = None, limit_s: float = 600.0, seed: int = 0,
                   via: Callable[[list[int]], list[int]] | None = None, *,
                   dial: Callable[[int, list[int]], list[int]] | None = None, module: str = "p2pcards.net.local",
                   orders: Sequence[Mapping[str, Any]] = ()) -> list[dict[str, Any]]:
    """Play one game with one real process per seat; returns each seat's summary.

    `seed` seeds the random bots; keys and shuffles come from `secrets`, so no two games are alike.
    `via` maps the seats' ports to the ports they dial instead (a proxy of a test in between);
    `dial(k, ports)` does so for seat k alone. Each seat runs `python -m module` (a `child_main`),
    its order extended by `orders[k]` when given.
    """
    names = [f"p{i}" for i in range(players)]
    ids = [generate(n) for n in names]
    config = TableConfig(secrets.token_bytes(16), game, dict(options or {}),
                         tuple(i.public for i in ids), tuple(names))
    bots = bots or ["good"] + ["random"] * (players - 1)
    procs = [subprocess.Popen([sys.executable, "-m", module], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True) for _ in range(players)]
    try:
        ports = []
        for seat, (proc, ident) in enumerate(zip(procs, ids)):
            assert proc.stdin is not None and proc.stdout is not None
            raw = ident.key.private_bytes_raw().hex()
            proc.stdin.write(json.dumps({"seat": seat, "key": raw, "config": encode(config.to_wire()).hex(),
                                         "bot": bots[seat], "limit_s": limit_s, "seed": seed,
                                         **(orders[seat] if orders else {})}) + "\n")
            proc.stdin.flush()
            ports.append(json.loads(proc.stdout.readline())["port"])
        if via is not None:
            ports = via(ports)
        for seat, proc in enumerate(procs):
            assert proc.stdin is not None
            proc.stdin.write(json.dumps({"ports": ports if dial is None else dial(seat, ports)}) + "\n")
            proc.stdin.flush()
        summaries = []
        for proc in procs:
            assert proc.stdout is not None
            out, _ = proc.communicate(timeout=limit_s + 60)
            line = out.strip().splitlines()[-1] if out.strip() else "{}"
            summaries.append(json.loads(line))
        return summaries
    finally:
        for proc in procs:
            if proc.poll() is None:
                proc.kill()


if __name__ == "__main__":
    sys.exit(child_main())
