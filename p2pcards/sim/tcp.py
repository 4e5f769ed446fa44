"""`p2pcards sim --transport tcp`: every peer a process of its own on loopback, through the real network layer.

A game is `net.local.run_local_game` with this module as each seat's program: the seat is an
ordinary `Seat` on real `Links`, but the cheater's process builds its peer, bot and frames as
the catalogue says (a modified peer, a cheating bot, a rewrite of its own frames signed again
with its own key, a memory tap run on what the cheater itself sends and receives: its own
frames per receiver, and what it got from others sent on; or a cheat on its own time, such as
the staller's chatter), and every process reports how it ended (`Outcome`), its CPU time and
peak memory, and what it sent. Faults go through `proxy.FaultProxy` between the processes.
"""

from __future__ import annotations

import asyncio
import random
import resource
import sys
import time
from collections.abc import Callable, Mapping
from typing import Any

from ..bots.base import Bot
from ..crypto.envelope import parse
from ..crypto.identity import Identity
from ..errors import InputError, MalformedMessage
from ..net.link import AGAIN, FRAME, Links
from ..net.local import Crash, SeatRig, child_main, run_local_game
from ..net.seat import GONE_AFTER_S, Seat
from ..net.store import SeatStore
from ..table.chains import private_to
from ..table.config import TableConfig
from ..table.peer import Output, Send, TablePeer
from .batch import TRIES, GameReport, check_cheat, report_from, seeded
from .catalogue import CATALOGUE, CheatKind, Rewriter, cheat_moves, fired_in
from .cheaters import CheatBot, Tap, frame_type
from .faults import FaultSpec
from .outcome import Outcome
from .proxy import FaultProxy

MODULE = "p2pcards.sim.tcp"
GONE_S = 5.0  # how long a seat's link may be missing before the others vote it gone (a restart is back sooner)
OWN = frozenset({"peer_class", "peer_kwargs", "cheat", "cheat_limit", "cheat_seek", "rewrite", "tap", "setup"})  # what a cheater's process can do


def check_tcp_cheat(cheat: CheatKind | None, players: int, cheater: int) -> None:
    """InputError (one line) when the cheat has a part a seat process does not build (OWN lists those it does)."""
    if cheat is not None and set(cheat.rig(cheater, players)) - OWN:
        raise InputError(f"--cheat {cheat.name} is not built for a seat process: --transport memory only")


class SimSeat(Seat):
    """A seat that counts what it sends, by message type, and may rewrite its own frames first (a modified client)
    or run a memory tap on what it sends and receives; to a cheat's parts it is the network (`now`, `peers`,
    `inject`, `call_at`, `send_as`, as MemNet's)."""

    def __init__(self, peer: TablePeer, links: Links, bot: Bot, rewrite: Rewriter | None, *,
                 store: SeatStore | None = None, gone_after: float = GONE_AFTER_S) -> None:
        self.rewrite = rewrite
        self.tap: Tap | None = None
        self.peers = [peer] * peer.n  # what a tap reads of the network: how many seats, the cheater's own peer
        self.frames = self.bytes = 0
        self.by_type: dict[str, int] = {}  # frames sent first hand
        self.resent = 0
        self._start = asyncio.get_running_loop().time()
        super().__init__(peer, links, bot, store=store, gone_after=gone_after)

    @property
    def now(self) -> float:
        """Seconds since the seat was made (a tap's clock)."""
        return asyncio.get_running_loop().time() - self._start

    def _count(self, sent: bytes, again: bool = False) -> None:
        self.frames += 1
        self.bytes += len(sent)
        mtype = frame_type(sent) or "?"
        if again:  # our move sent again, its order slow to come (not another move), or another's frame relayed
            self.resent += mtype == "move"
            return
        self.by_type[mtype] = self.by_type.get(mtype, 0) + 1

    def _broadcast(self, out: Send) -> None:
        for sent in [out.frame] if self.rewrite is None else self.rewrite(self.peer.me, out.frame):
            self._count(sent, out.again)
            if self.tap is None:
                super()._broadcast(out if sent == out.frame else Send(sent, private_to(sent), out.again))
                continue
            for seat in self._others():
                tapped = self.tap(self.peer.me, seat, sent)
                if tapped is not None:
                    self.links.send(self.peer.cfg.keys[seat], AGAIN if out.again else FRAME, tapped)

    def _others(self, *but: int) -> list[int]:
        return [s for s in range(self.peer.n) if s != self.peer.me and s not in but]

    def frame(self, payload: bytes, live: bool = True) -> None:
        """A table frame from a seat's link, `live` or sent again (a rewriter sees it too: a cheat may need the
        others' passes; a tap sees it as on its way on to every other seat)."""
        if self.rewrite is not None:
            self.rewrite(-1, payload)
        if self.tap is not None:
            try:
                sender = self.peer.cfg.keys.index(parse(payload).envelope.sender)
            except (MalformedMessage, ValueError):
                sender = None
            if sender is not None:
                for seat in self._others(sender):
                    self.tap(sender, seat, payload)  # what it lets through went from the sender itself
        super().frame(payload, live)

    def call_at(self, t: float, call: Callable[[SimSeat], None]) -> None:
        """Call `call(self)` at `t` on our clock (MemNet.call_at's contract)."""
        asyncio.get_running_loop().call_later(max(0.0, t - self.now), call, self)

    def send_as(self, sender: int, outputs: list[Output]) -> None:
        """Send the frames our peer's own call returned (MemNet.send_as's contract: a modified client acting alone)."""
        for out in outputs:
            if isinstance(out, Send):
                self._broadcast(out)

    def inject(self, receiver: int, frame: bytes, at: float | None = None) -> None:
        """A tap's frame to one seat, at `at` on its clock (MemNet.inject's contract)."""
        if receiver == self.peer.me:
            return

        def send() -> None:
            self._count(frame)
            self.links.send(self.peer.cfg.keys[receiver], FRAME, frame)
        asyncio.get_running_loop().call_later(max(0.0, (at or 0.0) - self.now), send)


class SimRig(SeatRig):
    """A sim's seat process: the catalogue's cheat when its order names one, and the sim's own summary."""

    def __init__(self, order: Mapping[str, Any]) -> None:
        self.kind = CATALOGUE[order["cheat"]] if order.get("cheat") else None
        self.parts: dict[str, Any] = {}
        self.rewriter: Rewriter | None = None
        self.cheat_bot: CheatBot | None = None

    def peer(self, config: TableConfig, identity: Identity, timeout: float) -> TablePeer:
        """An honest peer, or the cheat's modified one."""
        if self.kind is None:
            return super().peer(config, identity, timeout)
        me, players = config.keys.index(identity.public), len(config.keys)
        self.parts = self.kind.rig(me, players)
        cls: type[TablePeer] = self.parts.get("peer_class", TablePeer)
        peer = cls(config, identity, timeout=timeout, **self.parts.get("peer_kwargs", {}))
        if "rewrite" in self.parts:
            self.rewriter = self.parts["rewrite"](None, [peer] * players)  # it reads only its own seat's peer
        return peer

    def bot(self, bot: Bot) -> Bot:
        """The bot, wrapped by the cheat's when it has one."""
        if "cheat" in self.parts:
            self.cheat_bot = CheatBot(bot, self.parts["cheat"], self.parts.get("cheat_limit", 1),
                                     self.parts.get("cheat_seek"))
            return self.cheat_bot
        return bot

    def seat(self, peer: TablePeer, links: Links, bot: Bot, store: SeatStore | None, gone_after: float) -> Seat:
        """A seat that counts what it sends (and rewrites or taps it, for a cheat)."""
        seat = SimSeat(peer, links, bot, self.rewriter, store=store, gone_after=gone_after)
        if "tap" in self.parts:
            seat.tap = self.parts["tap"](seat, seat.peers)
        if "setup" in self.parts:  # a cheat that acts on its own time (the staller's chatter)
            self.parts["setup"](seat, seat.peers)
        return seat

    def summary(self, peer: TablePeer, seat: Seat) -> dict[str, Any]:
        """How it ended, its cost and its traffic."""
        assert isinstance(seat, SimSeat)
        return {"outcome": Outcome.of(peer).to_json(),
                "fired": fired_in([self.cheat_bot, peer, self.rewriter, seat.tap]),
                "cheat_moves": cheat_moves([self.cheat_bot]),
                "cpu_s": time.process_time(), "rss_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                "frames": seat.frames, "bytes": seat.bytes, "moves": seat.by_type.get("move", 0), "resent": seat.resent,
                "table_s": seat.shell.clock() - seat.started if seat.started is not None else 0.0}


def play_game(game: str, players: int, options: Mapping[str, Any], seed: int, bots: list[str], *,
              cheat: CheatKind | None = None, cheater: int = 1, faults: FaultSpec | None = None,
              timeout: float = 15.0, limit_s: float = 600.0,
              on_proxy: Callable[[FaultProxy], None] | None = None) -> GameReport:
    """Play one game, one process per seat (the cheater's with its cheat), through a proxy when there are faults or
    `on_proxy` watches (it is handed the proxy)."""
    start = time.perf_counter()
    # Without faults a proxy only relays and watches, for `on_proxy`: a run's progress line reads the game alike.
    watched = faults is not None or on_proxy is not None
    proxy = FaultProxy(faults or FaultSpec(), players, random.Random(f"faults/{seed}")) if watched else None
    if proxy is not None and on_proxy is not None:
        on_proxy(proxy)
    orders = [{"timeout": timeout, "cheat": cheat.name if cheat is not None and k == cheater else None}
              for k in range(players)]
    crash_at = faults.restart or faults.gone if faults is not None else 0.0
    killed = faults.crashing if faults is not None else 0
    crashed: list[int] = []  # the seats killed: none when the game was over before the crash was due
    try:
        summaries = run_local_game(game, players, options, bots, limit_s, seed, module=MODULE, orders=orders,
                                   dial=None if proxy is None else proxy.dial,
                                   crash=Crash(players - killed, after_s=crash_at, back=faults is None or not faults.gone,
                                               together=killed) if crash_at else None, killed=crashed,
                                   gone_after=GONE_S)
    finally:
        if proxy is not None:
            proxy.close()
    outcomes = [Outcome.from_json(s["outcome"]) if "outcome" in s else
                Outcome(f"p{k}", False, "its process ended without a summary", (), (), 0, (), ())
                for k, s in enumerate(summaries)]
    if faults is not None and faults.gone:  # the seats killed for good (or due to be): the others are judged
        summaries, outcomes = summaries[:-killed], outcomes[:-killed]
    report = report_from(outcomes, seed, cheat, cheater if cheat is not None else None,
                         any(s.get("fired") for s in summaries),
                         [m for s in summaries for m in s.get("cheat_moves", [])],
                         [] if faults is None or faults.gone else [outcomes[k].name for k in crashed], transport="tcp",
                         moves=sum(s.get("moves", 0) for s in summaries),
                         resent=sum(s.get("resent", 0) for s in summaries),
                         frames=sum(s.get("frames", 0) for s in summaries),
                         bytes=sum(s.get("bytes", 0) for s in summaries), wall_s=time.perf_counter() - start,
                         table_s=max(s.get("table_s", 0.0) for s in summaries),
                         cpu_s=[s.get("cpu_s", 0.0) for s in summaries], rss_mib=[s.get("rss_mib", 0.0) for s in summaries])
    if proxy is not None and faults is not None:
        report.faults = dict(proxy.counts)
    if crashed:
        report.faults["gone" if faults is not None and faults.gone else "restart"] = len(crashed)
    return report


def play_batch(game: str, players: int, options: Mapping[str, Any], seed: int, games: int, *, good: int = 0,
               cheat: CheatKind | None = None, cheater: int = 1, faults: FaultSpec | None = None,
               timeout: float = 15.0, limit_s: float = 600.0,
               on_game: Callable[[GameReport], None] | None = None,
               on_try: Callable[[int, int], None] | None = None,
               on_proxy: Callable[[FaultProxy], None] | None = None) -> list[GameReport]:
    """Play `games` seeded games over tcp (a cheating one needs its chance: up to TRIES seeds each) and judge each.

    The first `good` seats are good bots, the rest random ones (a cheat's table: random bots only).
    """
    check_cheat(cheat, game, players, cheater)
    check_tcp_cheat(cheat, players, cheater)
    if faults is not None and faults.partition is not None:
        faults.partition.side(players)
    if faults is not None and faults.restart and faults.gone:
        raise InputError("--faults: restart and gone both act on the last seat: give one")
    killed = faults.crashing if faults is not None else 0
    if faults is not None and faults.gone and players - killed < 2:
        raise InputError(f"--faults gone=T:{killed}: at least 2 of the {players} seats must stay")
    if killed and cheat is not None and cheater >= players - killed:
        raise InputError("--faults restart/gone: a seat that crashes cannot be the cheater too")
    bots = ["good" if k < good and cheat is None else "random" for k in range(players)]
    return seeded(games, seed, TRIES if cheat is not None else 1,
                  lambda attempt: play_game(game, players, options, attempt, bots, cheat=cheat, cheater=cheater,
                                            faults=faults, timeout=timeout, limit_s=limit_s, on_proxy=on_proxy),
                  on_game, on_try)


if __name__ == "__main__":
    sys.exit(child_main(SimRig))
