"""One seated peer on the network: its TableShell, fed by authenticated links to every other seat.

Table frames go only to the other seats' links. A seat whose link ends or goes quiet (no
heartbeat) is a `missing` note naming it at once (a UI shows it); a seat heard again in time is
a `back` note; one missing for `gone_after` seconds is voted gone (a signed `gone`); once every
other seat has voted, the round in play is void and the table goes on without it (protocol.md
§14.9): the seat then plays the successor table the peer names. Frames lost on the way are
asked for with `Q` requests and sent again as `R` frames (table/recovery.py): a frame sent again is
not judged by when it came, since it was lost on its way (protocol.md §18.5).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable

from ..bots.base import Bot
from ..errors import LinkBroken, MalformedMessage
from ..table.peer import Note, Send, TablePeer
from ..table.recovery import RETRY_S, Recovery, pack_request, parse_request
from .link import AGAIN, FRAME, REQUEST, TABLE_KINDS, Link, Links
from .shell import LATER_S, MAX_LATER, TableShell
from .store import SeatStore

LINK_UP_S = 30.0  # how long we wait for a link to every seat before the first round
GONE_AFTER_S = 30.0  # how long a seat may be missing before we vote it gone: time for a person to restart a client
LINGER_S = 2.0  # once the table is over, how long we stay after the last request for a frame we hold
MAX_LINGER_S = 10.0
MAX_HELD = 8 * MAX_LATER  # frames held back for all seats together: past it, they go at once


class Seat:
    """A TablePeer on `links`: call `frame`, `linked` and `lost` from the links' handlers, then `play`."""

    def __init__(self, peer: TablePeer, links: Links, bot: Bot | None = None,
                 on_note: Callable[[Note], None] | None = None, gone_after: float = GONE_AFTER_S,
                 think: float = 0.05, store: SeatStore | None = None) -> None:
        self.links = links
        self.on_shell: Callable[[TableShell], None] | None = None  # told of each table's shell as it is made
        self.gone_after = gone_after
        self._shell_args = (bot, think, on_note)
        self.store: SeatStore | None = None
        self.missing: dict[bytes, asyncio.TimerHandle] = {}
        self.unheard: set[bytes] = set()  # missing since we came back from our journal, with no word yet of why
        self._giving_up: asyncio.TimerHandle | None = None  # cut off from every seat: when we leave, unless one is back
        self._held: dict[bytes, list[bytes]] = {}  # our private boxes not yet sent to a seat, by its key
        self._holding: asyncio.TimerHandle | None = None
        self.tables: dict[bytes, tuple[TablePeer, Recovery]] = {}  # every table we sat at: we answer for each
        self._seat(peer, store)
        self._asking: asyncio.TimerHandle | None = None
        self._asked_at = 0.0  # when a seat last asked us for frames (loop time)
        self._all_linked = asyncio.Event()
        self.started: float | None = None  # when we said ready
        self.linked(None)

    def _seat(self, peer: TablePeer, store: SeatStore | None = None) -> None:
        """Play `peer` from now on (the first table, or the one that goes on without the seats voted out)."""
        self.peer = peer
        self.names = dict(zip(peer.cfg.keys, peer.cfg.names))
        self.others = [k for k in peer.cfg.keys if k != peer.identity.public]
        stale = list(self.missing)  # timers of the table before: they vote there, by its seat numbers
        for key in stale:
            self.missing.pop(key).cancel()
        bot, think, on_note = self._shell_args
        before: TableShell | None = getattr(self, "shell", None)
        if before is not None:  # the table that goes on is played as the one before was (a bot set since)
            bot, think = before.bot, before.think
        if self.store is not None and self.store is not store:
            self.store.close()
        self.store = store
        self.shell = TableShell(peer, self._broadcast, bot, think=think, on_note=on_note, store=store)
        if self.on_shell is not None:  # a recorder follows the table that goes on
            self.on_shell(self.shell)
        self.recovery = Recovery(peer.n, peer.me, peer.missing, peer.frame)
        self.tables[peer.cfg.table] = (peer, self.recovery)
        for key in stale:
            self._missing(key, "still missing")

    def _broadcast(self, out: Send) -> None:
        frame, to = out.frame, out.to
        if to is None or not 0 <= to < len(self.peer.cfg.keys):
            self._release()
            self.links.broadcast(AGAIN if out.again else FRAME, frame, self.others)
            return
        # A private box is waited on by its recipient alone: the other seats get it LATER_S later, or
        # before our next frame to them. On a machine shared by several peers, the CPU then goes first
        # to the one that will show a card, and the others are not woken for what they cannot open.
        key = self.peer.cfg.keys[to]
        self._release(key)
        self.links.send(key, FRAME, frame)
        for other in self.others:
            if other != key:
                self._held.setdefault(other, []).append(frame)
        if sum(map(len, self._held.values())) > MAX_HELD:
            self._release()
        elif self._holding is None:
            self._holding = asyncio.get_running_loop().call_later(LATER_S, self._release)

    def _release(self, key: bytes | None = None) -> None:
        """Send the frames held for `key` (None: for every seat), in the order they were made."""
        for k in list(self._held) if key is None else [key]:
            self.links.send_all(k, FRAME, self._held.pop(k, []))
        if not self._held and self._holding is not None:
            self._holding.cancel()
            self._holding = None

    def frame(self, payload: bytes, live: bool = True) -> None:
        """A table frame from a seat's link (not `live`: one sent again)."""
        self.shell.receive(payload, live)

    def sat_with(self, key: bytes) -> bool:
        """Whether `key` held a seat at a table we sat at before this one (a seat voted out, say)."""
        return any(key in peer.cfg.keys for peer, _ in self.tables.values())

    def take(self, link: Link, kind: int, payload: bytes) -> None:
        """A frame (F), one sent again (R) or a request for missing frames (Q) from a seat's link; LinkBroken
        for any other kind. A link from a seat of an earlier table only (`sat_with`) is answered, and nothing it
        sends is taken: it cannot disturb the table we play now."""
        self._take_gaps()
        if kind in TABLE_KINDS and link.key not in self.names:
            return
        if kind in TABLE_KINDS:
            self.frame(payload, kind == FRAME)
        elif kind == REQUEST:
            table, sender, first, count = parse_request(payload)  # MalformedMessage cuts the link
            if table not in self.tables:
                return  # a table we never sat at (or not yet): we hold nothing of it
            # A seat that has not yet decided what we decided asks for the table before: we answer for it too.
            peer, recovery = self.tables[table]
            if sender >= peer.n:
                raise MalformedMessage(f"a request for seat {sender} of a table of {peer.n}")
            if link.key not in peer.cfg.keys:
                raise LinkBroken("a request from a key with no seat at that table")
            self._asked_at = asyncio.get_running_loop().time()
            for frame in recovery.answer(peer.cfg.keys.index(link.key), sender, first, count, self.shell.clock()):
                link.send(AGAIN, frame)
        else:
            raise LinkBroken(f"frame kind {kind} has no place here")

    def _ask(self) -> None:
        """Ask for what we miss, and again in RETRY_S / 2."""
        self._asking = None
        if self.shell.over:
            return
        for seat, sender, first, count in self.recovery.requests(self.shell.clock()):
            self.links.send(self.peer.cfg.keys[seat], REQUEST, pack_request(self.peer.cfg.table, sender, first, count))
        self._asking = asyncio.get_running_loop().call_later(RETRY_S / 2, self._ask)

    def _take_gaps(self) -> None:
        """Tell the table of every link's silences (a cut that healed) before what came after them."""
        offset = self.shell.clock() - asyncio.get_running_loop().time()
        for key, link in self.links.links.items():
            if link.gaps and key in self.names:
                for since, until in link.gaps:
                    self.shell.silent(self.peer.cfg.keys.index(key), since + offset, until + offset)
                link.gaps.clear()

    def linked(self, link: Link | None) -> None:
        """A link is up (None: just look at the links)."""
        if link is not None:
            self._back(link.key)
        if all(k in self.links.links for k in self.others):
            self._all_linked.set()

    def lost(self, link: Link, why: str) -> None:
        """A seat's link is gone: say so now, stop the table blaming it if it stays gone."""
        if link.key not in self.links.links and "the table is over" not in why:  # else: it saw the end first
            self._missing(link.key, why, link.by_them)

    def quiet(self, link: Link, quiet: bool) -> None:
        """A seat's link went quiet (no heartbeat for a while), or speaks again."""
        if quiet:
            self._missing(link.key, "no heartbeat")
        else:
            self._back(link.key)

    def _missing(self, key: bytes, why: str, closed: bool = False) -> None:
        """`key`'s link is missing, as `why` says (`closed`: the other end closed it); the first word stands until it
        is back (a quiet link that ends later was still lost to silence)."""
        if key not in self.names or key in self.missing or self.shell.over:
            return
        name = self.names[key]
        self.shell.absent(self.peer.cfg.keys.index(key), True, closed)
        self.shell.note("missing", f"{name} is missing: {why}; it is voted gone in {self.gone_after:g} s"
                        " unless it is back", name)
        self.missing[key] = asyncio.get_running_loop().call_later(
            self.gone_after, self._gone, key, f"{name} was missing for {self.gone_after:g} s ({why})")

    def refused(self, key: bytes) -> None:
        """Every address we know for `key` refused our dial: a seat with no link since we came back (`unheard`) is
        missing as if it had closed its link (its machine answered: our own network works, protocol.md §14.9)."""
        if key in self.unheard and key in self.missing and not self.shell.over:
            self.unheard.discard(key)
            self.shell.absent(self.peer.cfg.keys.index(key), True, closed=True)
            self.shell.note("missing", f"{self.names[key]} refuses our links: nothing listens where it was",
                            self.names[key])

    def _gone(self, key: bytes, why: str) -> None:
        """Vote a seat missing for `gone_after` gone; cut off (§14.9), give up `gone_after` on unless one is back."""
        self.shell.gone(self.peer.cfg.keys.index(key), why)
        if self.peer.cut_off is not None and self._giving_up is None and not self.shell.over:
            self._giving_up = asyncio.get_running_loop().call_later(self.gone_after, self._give_up)

    def _give_up(self) -> None:
        """Leave the table, cut off, unless a seat is back (the others went on without us by now)."""
        self._giving_up = None
        if all(k in self.missing for k in self.others):
            self.shell.give_up()

    def _back(self, key: bytes) -> None:
        if key not in self.names:  # a seat of an earlier table only (`sat_with`): no seat of ours is back
            return
        self.unheard.discard(key)
        if self._giving_up is not None:  # not alone after all: the table decides what comes next
            self._giving_up.cancel()
            self._giving_up = None
        if key in self.missing:
            self.missing.pop(key).cancel()
            self.shell.absent(self.peer.cfg.keys.index(key), False)
            self.shell.note("back", f"{self.names[key]} is back", self.names[key])

    async def play(self, limit_s: float = 3600.0, link_up_s: float = LINK_UP_S, resumed: bool = False) -> None:
        """Wait for a link to every seat, say ready, run until the table finishes or stops.

        A peer `resumed` from its journal said ready before it stopped: it goes on at once, and
        catches up through the links as they come back."""
        if not resumed:
            try:
                async with asyncio.timeout(link_up_s):
                    await self._all_linked.wait()
            except TimeoutError:
                absent = [self.names[k] for k in self.others if k not in self.links.links]
                self.shell.note("missing", f"no link to {', '.join(absent)} after {link_up_s:.0f} s", absent[0])
                self.close()
                raise LinkBroken(f"no link to {', '.join(absent)}") from None
        self.started = self.shell.clock()
        if resumed:
            self.shell.resume()
            for key in self.others:  # until its link is back: counted down, and voted gone if it never is
                if key not in self.links.links:
                    self._missing(key, "no link since we came back")
                    self.unheard.add(key)
        else:
            self.shell.start()
        self._ask()
        try:
            async with asyncio.timeout(limit_s):
                await self.shell.done()
                while self.peer.successor is not None:
                    # The table goes on without the seats voted out (protocol.md §14.9): every link we need is up.
                    cfg = self.peer.successor
                    me = cfg.keys.index(self.peer.identity.public)
                    store = None if self.store is None else self.store.successor(cfg, me)
                    records = [] if store is None else store.load()
                    successor = self.peer.next_peer(records)
                    assert successor is not None
                    self._seat(successor, store)
                    if records:
                        self.shell.resume()
                    else:
                        self.shell.start()
                    if self._asking is None:
                        self._ask()  # it stopped asking when the table before was over
                    await self.shell.done()
        finally:
            self.close()

    async def linger(self, quiet: float = LINGER_S, most: float = MAX_LINGER_S) -> None:
        """Once the table is over, answer requests until none came for `quiet` s (at most `most` s)
        or no other seat is linked: a seat that missed one of our last frames asks for it."""
        loop = asyncio.get_running_loop()
        start = loop.time()
        self._asked_at = max(self._asked_at, start)
        while loop.time() < start + most and loop.time() < self._asked_at + quiet:
            if not any(k in self.links.links for k in self.others):
                return
            await asyncio.sleep(0.05)

    @property
    def over(self) -> bool:
        """True once the table ended by itself (finished with none to go on at, or stopped): not merely
        because we stopped running it (a Ctrl-C or SIGTERM cancels `play`, which closes the shell)."""
        peer = self.peer
        return (peer.finished and peer.successor is None) or peer.stopped is not None

    def close(self) -> None:
        """Send what we hold back, and stop every timer of this seat."""
        self._release()
        for handle in self.missing.values():
            handle.cancel()
        if self._giving_up is not None:
            self._giving_up.cancel()
            self._giving_up = None
        if self._asking is not None:
            self._asking.cancel()
            self._asking = None
        self.shell.close()
