"""A table of real processes on this machine: one process per seat, real TCP links between them.

`run_local_game` starts every seat as `python -m p2pcards.net.local`, hands each its key and
the table's config on standard input, tells each the others' ports, and collects one JSON
summary line from each when the game is over. With a store directory each seat journals to
disk (net/store.py); `run_local_game(crash=...)` kills one seat with SIGKILL at a chosen moment
and starts it again on the same port and store, and it resumes its round from the journal. A
seat whose link to a seat before it is lost dials it again until it is back (one dials, the
other listens, always the same way round).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import signal
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..crypto.encoding import decode, encode
from ..bots.base import Bot
from ..crypto.identity import Identity, generate
from ..errors import LinkBroken, LocalError
from ..table.config import TableConfig
from ..table.peer import TablePeer
from .botpeer import make_bot
from .link import Link, Links
from .seat import GONE_AFTER_S, Seat
from .shell import wall_clock
from .store import SeatStore, parse_journal


class SeatRig:
    """How a seat process builds its peer, bot and seat, and what it adds to its summary (a sim's seats differ)."""

    def peer(self, config: TableConfig, identity: Identity, timeout: float) -> TablePeer:
        """The seat's table peer (a seat that resumes from its journal is rebuilt from that instead)."""
        return TablePeer(config, identity, timeout=timeout)

    def bot(self, bot: Bot) -> Bot:
        """The bot that plays the seat."""
        return bot

    def seat(self, peer: TablePeer, links: Links, bot: Bot, store: SeatStore | None, gone_after: float) -> Seat:
        """The seat on the links."""
        return Seat(peer, links, bot, store=store, gone_after=gone_after)

    def summary(self, peer: TablePeer, seat: Seat) -> dict[str, Any]:
        """More for the summary line."""
        return {}


async def _seat(order: Mapping[str, Any], rig: SeatRig) -> dict[str, Any]:
    config = TableConfig.from_wire(decode(bytes.fromhex(order["config"])))
    key = Ed25519PrivateKey.from_private_bytes(bytes.fromhex(order["key"]))
    identity = Identity(key, config.names[order["seat"]])
    timeout = float(order.get("timeout", 15))
    me: int = order["seat"]
    store = SeatStore(Path(order["store"]), config, me) if order.get("store") else None
    records = store.load() if store is not None else []
    if records:
        peer = TablePeer.resume(config, identity, records, wall_clock(), timeout=timeout)
    else:
        peer = rig.peer(config, identity, timeout)
        if store is not None:
            peer.keep_journal()
    seats = set(config.keys) - {identity.public}
    seat: Seat | None = None
    ports: list[int] = []
    dialling: set[asyncio.Task[None]] = set()

    async def dial_again(i: int) -> None:
        key = config.keys[i]
        while seat is not None and not seat.shell.over and key not in links.links:
            try:
                await links.dial([("127.0.0.1", ports[i])], key)
            except LinkBroken:
                await asyncio.sleep(0.2)

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
            i = config.keys.index(link.key)
            if i < me and ports and not seat.shell.over:
                task = asyncio.get_running_loop().create_task(dial_again(i))
                dialling.add(task)
                task.add_done_callback(dialling.discard)

    def on_quiet(link: Link, quiet: bool) -> None:
        if seat is not None:
            seat.quiet(link, quiet)

    async with Links(identity, config.table, seats.__contains__, on_frame, on_link, on_lost, on_quiet) as links:
        seat = rig.seat(peer, links, rig.bot(make_bot(config.game, order["bot"], f"{order.get('seed', 0)}/{me}")),
                        store, float(order.get("gone_after", GONE_AFTER_S)))
        port = await links.listen(["127.0.0.1"], int(order.get("port", 0)))
        print(json.dumps({"port": port}), flush=True)
        ports += json.loads(await asyncio.get_running_loop().run_in_executor(None, sys.stdin.readline))["ports"]
        for i in range(me):  # each seat dials the seats before it: one link per pair
            await links.dial([("127.0.0.1", ports[i])], config.keys[i], attempts=50, pause=0.1)
        try:
            await seat.play(float(order.get("limit_s", 600)), resumed=bool(records))
        except TimeoutError:
            pass
        await seat.linger()  # let our last frames leave, and send them again to a seat that missed one
        for task in list(dialling):
            task.cancel()
    peer = seat.peer  # the table that went on without the seats voted out, if one was
    return {"seat": order["seat"], "finished": peer.finished, "stopped": peer.stopped,
            "totals": peer.game.totals, "log": peer.rs.log_hash.hex() if peer.rs else None,
            "faults": [f"{n.detail} [{n.blame}]" for n in peer.faults], "bytes_out": seat.shell.bytes_out,
            "rounds": peer.round, "resumed": bool(records), "seats": peer.n, **rig.summary(peer, seat)}


def child_main(rig: Callable[[Mapping[str, Any]], SeatRig] = lambda order: SeatRig()) -> int:
    """The seat process: one JSON order on stdin, the port on stdout, then the ports, then the summary."""
    order = json.loads(sys.stdin.readline())
    summary = asyncio.run(_seat(order, rig(order)))
    print(json.dumps(summary), flush=True)
    return 0


@dataclass(frozen=True)
class Crash:
    """One seat killed with SIGKILL mid-game (`together` seats from it on, at the same moment): once its
    journal holds `records` records, or `after_s` seconds after the seats have their ports; each started
    again on its port and journal if `back`."""

    seat: int
    records: int = 0
    after_s: float | None = None
    back: bool = True
    together: int = 1


def run_local_game(game: str, players: int, options: Mapping[str, Any] | None = None,
                   bots: list[str] | None = None, limit_s: float = 600.0, seed: int = 0,
                   via: Callable[[list[int]], list[int]] | None = None, *,
                   dial: Callable[[int, list[int]], list[int]] | None = None, module: str = "p2pcards.net.local",
                   orders: Sequence[Mapping[str, Any]] = (),
                   crash: Crash | None = None, killed: list[int] | None = None,
                   gone_after: float = GONE_AFTER_S) -> list[dict[str, Any]]:
    """Play one game with one real process per seat; returns each seat's summary.

    With `crash`, every seat journals to a store of its own and the crash's seat is killed as it
    says (it resumes from its journal when started again); a seat that stays dead summarises as {}. A seat
    whose process ended before its crash was due (the game was over) is left alone; `killed`, when given,
    gets the seats that were killed.

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
    stores = tempfile.TemporaryDirectory(prefix="p2pcards-stores-") if crash is not None else None
    every = [{"seat": seat, "key": ident.key.private_bytes_raw().hex(), "config": encode(config.to_wire()).hex(),
               "bot": bots[seat], "limit_s": limit_s, "seed": seed, "gone_after": gone_after,
               "store": None if stores is None else str(Path(stores.name) / str(seat)),
               **(orders[seat] if orders else {})}
              for seat, ident in enumerate(ids)]
    procs: list[subprocess.Popen[str]] = []
    try:
        ports = []
        for order in every:
            procs.append(_start_seat(order, module))
            assert procs[-1].stdout is not None
            ports.append(json.loads(procs[-1].stdout.readline())["port"])
            order["port"] = ports[-1]  # where it listens again after a restart
        if via is not None:
            ports = via(ports)
        for seat, proc in enumerate(procs):
            _send_ports(proc, ports if dial is None else dial(seat, ports))
        if crash is not None:
            victim = crash.seat
            journal = Path(str(every[victim]["store"])) / "journal"
            due = None if crash.after_s is None else time.monotonic() + crash.after_s
            while procs[victim].poll() is None and (
                    time.monotonic() < due if due is not None else
                    not journal.exists() or len(parse_journal(journal.read_bytes())[0]) < crash.records):
                time.sleep(0.05)
            victims = range(victim, victim + crash.together)
            for k in victims:
                procs[k].send_signal(signal.SIGKILL)
            for k in victims:
                if procs[k].wait() != -signal.SIGKILL:
                    continue  # it ended on its own first: its summary is in its pipe, and there is no table to rejoin
                if killed is not None:
                    killed.append(k)
                if crash.back:
                    again = procs[k] = _start_seat(every[k], module)
                    assert again.stdout is not None
                    again.stdout.readline()  # its port, the same as before
                    _send_ports(again, ports if dial is None else dial(k, ports))
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
            _live.discard(proc)
        if stores is not None:
            stores.cleanup()


# Every seat process of every game this process runs (load runs several at once, one per thread), so that a
# command told to stop ends them all now, rather than each thread playing its game to its end first.
_live: set[subprocess.Popen[str]] = set()
_stopping = threading.Event()


def stop_all() -> None:
    """Kill every seat process of every game in this process, and start none after (the command is ending)."""
    _stopping.set()
    for proc in list(_live):
        proc.kill()


def _start_seat(order: Mapping[str, Any], module: str) -> subprocess.Popen[str]:
    """One seat's process (`python -m module`), handed its order."""
    if _stopping.is_set():
        raise LocalError("the command is ending: no new game starts")
    proc = subprocess.Popen([sys.executable, "-m", module], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    _live.add(proc)
    if _stopping.is_set():  # stop_all came while it started
        proc.kill()
    assert proc.stdin is not None
    proc.stdin.write(json.dumps(order) + "\n")
    proc.stdin.flush()
    return proc


def _send_ports(proc: subprocess.Popen[str], ports: list[int]) -> None:
    assert proc.stdin is not None
    proc.stdin.write(json.dumps({"ports": ports}) + "\n")
    proc.stdin.flush()


if __name__ == "__main__":
    sys.exit(child_main())
