"""One peer on the network from lobby to last round: host or join a table, link to every seat, play.

A host listens, announces its table (unless told not to), relays every lobby frame to every
guest, and seats the table; it then sends each guest where the other seats listen (an `A`
frame). A guest finds the table by discovery or is given an address (`--peer`), links to the
host, joins, and once seated dials every seat before its own (the seats after it dial it), so
each pair of seats has one link; a seat whose link is missing is dialled where the freshest peer ad its own key
signed says too (protocol.md §17), so that two seats both back elsewhere find each other. Table frames go only to
seated keys.
Use it as

    async with Node(identity, interfaces=["127.0.0.1"]) as node:
        await node.host("crisp", {"limit": 50}, "Ann's table")     # or: await node.join(ad or address)
        await node.wait_players(3); node.seat_table()               # the host closes the lobby
        await node.play(bot)                                        # until the table finishes or stops

Leaving the block by any path (the end, an exception, cancellation by Ctrl-C or SIGTERM) leaves
the table cleanly (a signed `leave` when a round is in play), says goodbye on every link and
withdraws every mDNS announcement.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import ipaddress
import secrets
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

from ..bots.base import Bot
from ..crypto.encoding import decode, encode
from ..crypto.envelope import parse
from ..crypto.identity import Identity, fingerprint, key_file
from ..errors import InputError, LinkBroken, MalformedMessage, Refused
from ..files import write_file
from ..table.config import SEATS, TableConfig
from ..table.lobby import MAX_GUESTS, Lobby
from ..table.outputs import NoteKind
from ..table.peer import Note, TablePeer
from .discovery import Announcement, Discovery, TableAd, advertised, interface_addresses, wire_options
from .link import ADDRS, AGAIN, FRAME, REQUEST, TABLE_KINDS, Link, Links
from .seat import GONE_AFTER_S, Seat
from .shell import wall_clock
from .store import BOT_KEY, NodeState, SeatStore

MAX_EARLY = 256  # table frames that came before we were seated, kept until we are ...
MAX_EARLY_BYTES = 1 << 22  # ... and their bytes
TAKEN_OFF = "you were taken off this table"  # the goodbye to a guest taken off, and to its key if it comes again
JOIN_S = 15.0  # how long a guest waits to be let into the lobby, and a host for a linked guest's join
REDIAL_S = 0.2  # how often we dial a seat whose link broke, until it is back
UNHEARD_S = 1.0  # back from our journal: how long a seat after ours has to dial us before we dial it once ourselves
MAX_ADDRESSES = 16  # addresses of one seat in the host's `A` frame
MAX_ANNOUNCED = 8  # addresses of one seat taken from its announcements per dial, the newest ads first
ANNOUNCED_S = 1.0  # how long one dial of an announced address may take (a link on a LAN is up in milliseconds)


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """The address `text` names (an IPv4-mapped IPv6 one as IPv4, a zone dropped), or None for no address."""
    try:
        address = ipaddress.ip_address(text.split("%")[0])
    except ValueError:
        return None
    return (address.ipv4_mapped or address) if isinstance(address, ipaddress.IPv6Address) else address


def dialable(host: str, via: str) -> bool:
    """Whether a guest dials `host` on the host's word: a unicast address, and a loopback one only when its own
    link to the host (from `via`) is over loopback too.

    An honest host names where it sees each seat; a loopback address seen by a host on another machine
    names the guest's own machine, and the rest name no seat at all. Leaving them out means a hostile
    host cannot point its guests at their own machine's services, nor at a broadcast or multicast group.
    """
    address, link = _ip(host), _ip(via)
    if address is not None and address.is_loopback:  # (::1 is also in a reserved block)
        return link is not None and link.is_loopback
    return address is not None and not (address.is_multicast or address.is_unspecified or address.is_reserved)


class Node:
    """One peer: its links, its discovery (when multicast is used), its lobby and then its seat."""

    def __init__(self, identity: Identity, interfaces: Sequence[str] | None = None, mdns: bool = True,
                 port: int = 0, on_note: Callable[[Note], None] | None = None,
                 gone_after: float = GONE_AFTER_S, disco: Discovery | None = None,
                 timeout: float | None = None, state: Path | None = None, bot: str | None = None,
                 whole_journal: bool = False, comeback: bool = False) -> None:
        self.identity = identity
        self.timeout = timeout  # how long our seat lets a peer owe a message (None: the table's default)
        self.interfaces = interfaces
        self.mdns = mdns
        self.port = port
        self.on_note = on_note
        self.gone_after = gone_after
        self.links = Links(identity, None, self._admit, self._frame, self._linked, self._lost, self._quiet)
        self.disco = disco  # shared by every node of this process when given (one AsyncZeroconf per process)
        self._own_disco: Discovery | None = None
        self._joining = False
        self.lobby: Lobby | None = None
        self.seat: Seat | None = None
        self.ad: Announcement | None = None
        self.peer_ad: Announcement | None = None
        self.is_host = False
        self.seats_wanted = 0  # host: how many seats the table ad offers
        self.lobby_frames: list[bytes] = []  # host: the table frame and every accepted join, in order
        self.early: list[bytes] = []
        self.changed = asyncio.Event()  # set whenever the lobby changes; a UI clears it and waits again
        self._tasks: set[asyncio.Task[None]] = set()
        self._join_failed: str | None = None
        self.barred: set[bytes] = set()  # (the host) keys taken off the table, never let join it again
        self.dialled: dict[bytes, list[tuple[str, int]]] = {}  # the seats we dial (before ours), and where
        self.later: dict[bytes, list[tuple[str, int]]] = {}  # where the seats after ours listen (they dial us)
        self.comeback = comeback  # `port` is where we listened before a crash: another one if it is taken now
        self.moved_from: int | None = None  # that port, when it was taken and we listen on another
        self._redialling: set[bytes] = set()
        self._watching: list[bytes] = []  # the keys whose signed peer ads our discovery keeps for us
        self._addressed = False  # the host told us where the seats listen (once)
        self.state = state  # where we journal our seat, to come back into the round after a crash (§14.10)
        self.whole_journal = whole_journal  # never begun anew: a recording is made again from it on a comeback
        self.bot = bot  # who plays our seat, as `p2pcards peer --bot` names it: kept in `state` for a resume
        self.resumed = False

    async def __aenter__(self) -> Node:
        if self.disco is None and self.mdns:
            self.disco = self._own_disco = Discovery(self.interfaces)
            await self.disco.__aenter__()
        hosts = interface_addresses(self.interfaces) if self.interfaces else ["0.0.0.0"]
        try:
            try:
                await self.links.listen(hosts, self.port)
            except OSError as exc:
                if not (self.comeback and self.port and exc.errno == errno.EADDRINUSE):
                    raise
                # Another program took our port while we were down: we listen on another and dial every seat
                # ourselves, the later ones too; our hello tells them where we listen now (protocol.md §18.3).
                await self.links.listen(hosts, 0)
                self.moved_from = self.port
        except BaseException:
            await self.close("could not listen")
            raise
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        over = self.seat is not None and self.seat.over
        error = None if et is None or issubclass(et, asyncio.CancelledError) else et.__name__  # a signal cancels us
        await self.close("the table is over" if over else f"quit: {error}" if error else "quit")

    async def close(self, why: str) -> None:
        """Leave the table if a round is in play, say goodbye on every link, withdraw every ad."""
        seat = self.seat
        if seat is not None and not seat.over:
            seat.shell.leave(why)
            await asyncio.sleep(0.05)  # let the signed leave reach the sockets
        if seat is not None:
            if seat.over and why == "the table is over":
                await seat.linger()
            seat.close()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        try:
            await self.links.close(why)
        finally:
            if self.disco is not None:
                self.disco.unwatch(self._watching)
                self._watching = []
            if self._own_disco is not None:
                await self._own_disco.close()
            else:
                for ann in (self.ad, self.peer_ad):
                    if ann is not None:
                        await ann.withdraw()

    def note(self, kind: NoteKind, detail: str, blame: str | None = None) -> None:
        """A note for whoever watches this node."""
        if self.seat is not None:
            self.seat.shell.note(kind, detail, blame)
        elif self.on_note is not None:
            self.on_note(Note(kind, detail, blame))

    def _spawn(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    # ------------------------------------------------------------ hosting

    async def host(self, game: str, options: Mapping[str, Any], table_name: str, seats: int | None = None) -> None:
        """Open a table: InputError when the game or an option is not the host's to set."""
        self.is_host = True
        table = secrets.token_bytes(16)
        self.lobby, frame = Lobby.open(self.identity, table, game, options)
        self.lobby_frames.append(frame)
        self.links.table = table
        self.seats_wanted = seats or SEATS[game][1]
        if self.disco is not None:
            self.ad = await self.disco.announce(TableAd(
                table_name, table, game, self.identity.name, self.identity.fingerprint, self.links.port,
                options=wire_options(options), taken=1, free=self.seats_wanted - 1), self.identity)

    @property
    def players(self) -> list[str]:
        """The names in the lobby, in join order, the host first."""
        return list(self.lobby.names.values()) if self.lobby else []

    async def wait_players(self, count: int) -> None:
        """Wait until `count` players (the host included) have joined."""
        while len(self.players) < count:
            self.changed.clear()
            await self.changed.wait()

    def seat_table(self) -> None:
        """Host: close the lobby, seat everyone who joined, tell each seat where the others listen."""
        assert self.lobby is not None and self.is_host
        seats = self.lobby.seat()
        config = self.lobby.config
        assert config is not None
        for key in list(self.links.links):
            if key not in config.keys:
                self.links.links[key].close("the table is seated without you", goodbye=True)
        self.links.broadcast(FRAME, seats, config.keys)
        # A seat whose hello said port 0 listens nowhere: it is left out (an `A` entry with port 0 would
        # cut every guest's link to us), so the seats after it find no way to it and give up naming it.
        where: list[Any] = [[k, [self.links.links[k].address], self.links.links[k].hello.port]
                            for k in config.keys if k in self.links.links and self.links.links[k].hello.port]
        self.links.broadcast(ADDRS, encode(where), config.keys)
        self.later = {k: [(hosts[0], port)] for k, hosts, port in where}  # every seat is after ours
        self._make_seat()
        if self.ad is not None:
            self._spawn(self.ad.update(taken=config.seats, free=0))

    # ------------------------------------------------------------ joining

    async def find(self, name: str | None = None, game: str | None = None, within: float = 30.0) -> TableAd:
        """The first table announced with free seats (of this name and game when given)."""
        if self.disco is None:
            raise InputError("no multicast discovery: give the host's address with --peer HOST:PORT")
        try:
            async with asyncio.timeout(within):
                return await self.disco.wait_for_table(name, game)
        except TimeoutError:
            raise InputError(f"no table {'named ' + repr(name) + ' ' if name else ''}found in {within:.0f} s") from None

    async def join(self, where: TableAd | Sequence[tuple[str, int]]) -> None:
        """Link to the host (trying each address), ask to join, and wait until the host seats us."""
        if isinstance(where, TableAd):
            self.links.table = where.table
            addresses = [(a, where.port) for a in where.addresses]
        else:
            addresses = list(where)
        self._joining = True
        link = await self.links.dial(addresses, attempts=20, pause=0.25)
        self.dialled[link.key] = addresses
        if isinstance(where, TableAd) and fingerprint(link.key) != where.fingerprint:
            link.close("the host's key does not match its announced fingerprint", goodbye=True)
            raise LinkBroken("the host's key does not match its announced fingerprint")
        assert self.links.table is not None
        self.lobby = Lobby(self.identity, self.links.table, link.key)
        self.links.send(link.key, FRAME, self.lobby.join())
        try:
            async with asyncio.timeout(JOIN_S):
                while self.lobby.game is None and self._join_failed is None:
                    self.changed.clear()
                    await self.changed.wait()
        except TimeoutError:
            raise LinkBroken("the host never opened its lobby to us") from None
        if self._join_failed:
            raise LinkBroken(self._join_failed)

    async def wait_seated(self) -> None:
        """Guest: wait until the host seats the table; LinkBroken if it is seated without us or the host goes."""
        while self.seat is None:
            if self._join_failed:
                raise LinkBroken(self._join_failed)
            self.changed.clear()
            await self.changed.wait()

    # ------------------------------------------------------------ the table

    async def play(self, bot: Bot | None = None, limit_s: float = 3600.0, think: float = 0.05) -> None:
        """Wait until seated and linked to every seat, then run the table until it finishes or stops."""
        if not self.is_host:
            await self.wait_seated()
        assert self.seat is not None
        self.seat.shell.bot = bot
        self.seat.shell.think = think
        if self.disco is not None:  # a seat come back from its journal too: it has no lobby, but it is seated
            name = f"{self.identity.name} {self.identity.fingerprint[:5]}"
            ad = TableAd(name, self.seat.peer.cfg.table, self.seat.peer.cfg.game, self.identity.name,
                         self.identity.fingerprint, self.links.port, role="peer",
                         options=wire_options(self.seat.peer.cfg.options), taken=self.seat.peer.n)
            self._spawn(self._announce_peer(self.disco, ad))  # probing takes a second: do not hold up `ready`
        await self.seat.play(limit_s, resumed=self.resumed)

    async def _announce_peer(self, disco: Discovery, ad: TableAd) -> None:
        self.peer_ad = await disco.announce(ad, self.identity)

    def _seat_at(self, peer: TablePeer, store: SeatStore | None) -> Seat:
        """Our seat at `peer`'s table; the peer ads the other seats sign are kept from now on (§17)."""
        self._watching = [key for key in peer.cfg.keys if key != self.identity.public]
        if self.disco is not None:
            self.disco.watch(self._watching)
        return Seat(peer, self.links, on_note=self.on_note, gone_after=self.gone_after, store=store)

    def _make_seat(self) -> None:
        assert self.lobby is not None
        kwargs = {} if self.timeout is None else {"timeout": self.timeout}
        peer = self.lobby.table_peer(**kwargs)
        store = None
        if self.state is not None:
            store = SeatStore(self.state, peer.cfg, peer.me, compacting=not self.whole_journal)
            peer.keep_journal()
        self.seat = self._seat_at(peer, store)
        self._save_state()
        self.changed.set()
        for frame in self.early:
            self.seat.frame(frame)
        self.early.clear()

    # ------------------------------------------------------------ link handlers

    def _admit(self, key: bytes) -> bool:
        if self.seat is not None:  # a seat of a table we sat at before asks for its frames only (protocol.md §18.5)
            return key in self.seat.names or self.seat.sat_with(key)
        if self.lobby is None:
            return self._joining
        if self.is_host:
            return len(self.links.links) < MAX_GUESTS or self._make_room()
        return key == self.lobby.host or key in self.lobby.names

    def _make_room(self) -> bool:
        """Host, the lobby's places all linked: cut the oldest link that has sent no join yet, so that a guest that
        proves its key now gets its place (a guest sends its join as soon as it is linked: strangers that link and
        never join held every place for JOIN_S, again and again, and every real guest was refused); False when
        every link has joined."""
        assert self.lobby is not None
        idle = next((link for key, link in self.links.links.items() if key not in self.lobby.names), None)
        if idle is None:
            return False
        idle.close("made room for another guest: no join yet", goodbye=True)
        return True

    def _frame(self, link: Link, kind: int, payload: bytes) -> None:
        if kind == REQUEST:
            if self.seat is not None:  # before we are seated we hold no table frame to send again
                self.seat.take(link, kind, payload)
        elif kind in TABLE_KINDS:
            parse(payload)  # MalformedMessage (the link is cut) unless it is a well-formed envelope
            if self.seat is not None:
                self.seat.take(link, kind, payload)  # after the link's silences: the table hears of them first
            elif kind == AGAIN:
                pass  # nobody sends one before every seat is: no round is under way, nothing was asked for
            elif self.is_host:
                self._host_lobby(link, payload)
            elif self.lobby is not None and link.key == self.lobby.host:
                self._guest_lobby(payload)
            elif len(self.early) < MAX_EARLY and sum(map(len, self.early)) + len(payload) <= MAX_EARLY_BYTES:
                self.early.append(payload)  # a seat that was seated before us says ready
            else:
                raise LinkBroken("too many table frames before we are seated")
        elif kind == ADDRS and self.lobby is not None and link.key == self.lobby.host and not self.is_host:
            if self.seat is None or self._addressed:
                raise LinkBroken("the seats' addresses come once, after the seats")
            self._addressed = True
            self._spawn(self._dial_seats(self._seat_addresses(payload, link.address)))
        else:
            raise LinkBroken(f"a frame of kind {kind} has no place here")

    def _host_lobby(self, link: Link, frame: bytes) -> None:
        assert self.lobby is not None
        env = parse(frame).envelope
        if env.sender != link.key or env.type != "join":
            raise MalformedMessage("a guest may only send its own join")
        # A join refused is said in the goodbye, so that the guest can tell its player why.
        if link.key in self.barred:
            link.close(TAKEN_OFF, goodbye=True)
            return
        if link.key not in self.lobby.names and len(self.lobby.names) >= self.seats_wanted:
            link.close(f"the table is full ({self.seats_wanted} seats)", goodbye=True)
            return
        before = len(self.lobby.names)
        self.lobby.receive(frame)
        errors, self.lobby.errors = self.lobby.errors, []
        if errors or len(self.lobby.names) == before or link.key not in self.lobby.names:
            link.close(f"your join was refused: {errors[-1] if errors else 'you joined already'}", goodbye=True)
            return
        self.lobby_frames.append(frame)
        # Every link in the lobby was sent the history when it came: it gets each join after that too,
        # joined yet or not, or a later guest's chain would start at a gap.
        self.links.broadcast(FRAME, frame, list(self.links.links))
        self.changed.set()
        self._advertise_seats()

    def take_off(self, key: bytes) -> None:
        """(The host, before the seats) take a guest off the table: its link is closed with a goodbye saying so, it
        leaves the lobby as a guest whose link ends does (every guest is told), and its key may not join again;
        InputError when `key` is no guest in our lobby."""
        if not self.is_host or self.seat is not None or self.lobby is None:
            raise InputError("only the host takes a guest off the table, before it starts")
        if key == self.identity.public or key not in self.lobby.names:
            raise InputError("no such guest in the lobby")
        self.barred.add(key)
        link = self.links.links.get(key)
        if link is not None:
            link.close(TAKEN_OFF, goodbye=True)  # `_lost` frees its place and tells every guest

    def offer_seats(self, seats: int) -> None:
        """(The host, before the seats) offer `seats` seats, ours among them, from now on: the table ad says so, and a
        join past them is refused; InputError when the game cannot seat that many, or more have joined already."""
        if not self.is_host or self.seat is not None or self.lobby is None or self.lobby.game is None:
            raise InputError("only the host sets the seats offered, before it starts the game")
        low, high = SEATS[self.lobby.game]
        if not low <= seats <= high:
            raise InputError(f"a table of {self.lobby.game.capitalize()} seats {low} to {high} players")
        if seats < len(self.lobby.names):
            raise InputError(f"{len(self.lobby.names)} players have joined: the table cannot offer fewer seats")
        self.seats_wanted = seats
        self._advertise_seats()
        self.changed.set()

    def _advertise_seats(self) -> None:
        """Update our table's ad (if we announce it) with the seats the lobby has taken and those still free."""
        if self.ad is not None and self.lobby is not None:
            taken = len(self.lobby.names)
            self._spawn(self.ad.update(taken=taken, free=max(0, self.seats_wanted - taken)))

    def _guest_lobby(self, frame: bytes) -> None:
        assert self.lobby is not None
        self.lobby.receive(frame)
        errors, self.lobby.errors = self.lobby.errors, []
        self.changed.set()
        if errors:
            raise MalformedMessage(f"the host sent a bad lobby frame: {errors[-1]}")
        config = self.lobby.config
        if config is not None:
            if self.identity.public in config.keys:
                self._make_seat()
            else:
                self._join_failed = "the table was seated without us"

    def _seat_addresses(self, payload: bytes, via: str) -> dict[bytes, list[tuple[str, int]]]:
        """Where the host (linked to us from `via`) says the seats before ours listen, less what no seat can be
        at (`dialable`); MalformedMessage (the link is cut) unless every entry is [key, [IP address, ...], port]
        for a seat of the table."""
        assert self.seat is not None
        keys = self.seat.peer.cfg.keys
        me = keys.index(self.identity.public)
        value = decode(payload)
        if not isinstance(value, list):
            raise MalformedMessage("the seats' addresses are not a list")
        where: dict[bytes, list[tuple[str, int]]] = {}
        for item in value:
            if not (isinstance(item, list) and len(item) == 3):
                raise MalformedMessage("a seat's address is not [key, hosts, port]")
            key, hosts, port = item
            if not (key in keys and isinstance(hosts, list) and 1 <= len(hosts) <= MAX_ADDRESSES
                    and type(port) is int and 0 < port < 65536):
                raise MalformedMessage("a seat's address names no seat, no host or no port")
            try:
                addresses = [(str(ipaddress.ip_address(h)), port) for h in hosts if isinstance(h, str)]
            except ValueError:
                raise MalformedMessage("a seat's host is not an IP address") from None
            if len(addresses) != len(hosts):
                raise MalformedMessage("a seat's host is not an IP address")
            usable = [(h, p) for h, p in addresses if dialable(h, via)]
            if keys.index(key) < me:
                where[key] = usable
            elif keys.index(key) > me and usable:
                self.later[key] = usable  # dialled only back on another port, or cut off (§14.9)
        return where

    async def _dial_seats(self, where: Mapping[bytes, list[tuple[str, int]]]) -> None:
        """Dial each seat before ours where the host says it listens."""
        for key, addresses in where.items():
            if key not in self.links.links:
                self.dialled[key] = addresses
                self._save_state()
                with contextlib.suppress(LinkBroken):
                    await self.links.dial(addresses, key, attempts=20, pause=0.25)

    def _save_state(self) -> None:
        """What our journal needs beside it to come back: the key we sign with, our port, where the seats before
        ours listen, and the options we run with. A bot's key is made for its seat: its one file is in the store."""
        if self.state is not None and self.seat is not None:
            cfg = self.seat.peer.cfg
            interfaces = None if self.interfaces is None else tuple(self.interfaces)
            if self.bot is not None and not (self.state / BOT_KEY).exists():
                write_file(self.state / BOT_KEY, key_file(self.identity.key), private=True)  # before a node names it
            write_file(self.state / "node", NodeState(self.identity.public, self.links.port, self.dialled, cfg,
                                                      self.seat.peer.me, interfaces, self.gone_after,
                                                      self.bot, self.disco is not None, self.later).to_bytes(),
                       overwrite=True, private=True)

    def resume(self, store: SeatStore, config: TableConfig, dial: Mapping[bytes, list[tuple[str, int]]],
               later: Mapping[bytes, list[tuple[str, int]]] | None = None) -> None:
        """Take our seat again from its journal (we crashed or were killed mid-round): listen where we
        did, dial the seats before ours, catch up and go on in the round (protocol.md §14.10). Where our
        port was taken meanwhile, we listen on another and dial the seats after ours (at `later`) too."""
        records = store.load()
        peer = (TablePeer.resume(config, self.identity, records, wall_clock()) if self.timeout is None
                else TablePeer.resume(config, self.identity, records, wall_clock(), timeout=self.timeout))
        self.links.table = config.table
        self.seat = self._seat_at(peer, store)
        self.resumed = True
        self.dialled = dict(dial)
        self.later = dict(later or {})
        self._save_state()  # the options of this run, an option given again included, for the next resume
        for key in self.dialled:
            self._spawn(self._redial(key))
        if self.moved_from is not None:
            self.note("local", f"port {self.moved_from} was taken by another program while we were down: we listen "
                               f"on {self.links.port} and dial every seat")
        for key in self.seat.others:  # the seats after ours, and any the host's `A` frame gave no address for
            if key not in self.dialled:
                self._spawn(self._dial_later(key) if self.moved_from is not None else self._dial_cut_off(key))
                if self.moved_from is None:
                    self._spawn(self._dial_unheard(key))

    async def _dial_unheard(self, key: bytes) -> None:
        """Back from our journal: dial a seat after ours once if it did not dial us within UNHEARD_S, to learn whether
        its process is gone (every address refuses: `Seat.refused`) rather than our own network (§14.9)."""
        # It dials us within REDIAL_S when it runs and reaches us: one dial of ours then seldom crosses its own.
        await asyncio.sleep(UNHEARD_S)
        seat = self.seat
        if seat is not None and not seat.shell.over and key not in self.links.links and self.later.get(key):
            await self._dial_known(key, self.later[key])

    async def _dial_known(self, key: bytes, addresses: Sequence[tuple[str, int]], only: bool = True) -> None:
        """Dial `key` once at `addresses`; when every one refused and they are `only` the places we know it at,
        tell our seat (`Seat.refused`)."""
        try:
            await self.links.dial(addresses, key, attempts=1)
        except Refused:
            if only and self.seat is not None:
                self.seat.refused(key)
        except LinkBroken:
            pass

    async def _dial_later(self, key: bytes) -> None:
        """Back on another port: dial a seat after ours until it is linked to us, whoever dialled (§14.10)."""
        # From our hello it learns where we listen now, and dials that when the link breaks (protocol.md §18.3): we
        # dial it no more, so that two links do not keep crossing between us.
        await self._dial_until_linked(key, self.later)

    async def _dial_cut_off(self, key: bytes) -> None:
        """Dial a seat after ours whose link is gone while we are cut off (§14.9), or while it announces an address
        we do not know for it (§17), until a link to it is up."""
        # It dials us again, unless it went on without us: then it answers us for the table we sat at together, and
        # so tells us whether it voted us out. Or it came back where we never knew, and may not know where we are.
        await self._dial_until_linked(key, self.later, cut_off_only=True)

    async def _redial(self, key: bytes) -> None:
        """Dial a seat whose link broke (Wi-Fi dropped, a reset) again until it is back or the table is over:
        the seat after a pair dials, as at the start, so the other only has to listen."""
        await self._dial_until_linked(key, self.dialled)

    async def _dial_until_linked(self, key: bytes, book: Mapping[bytes, list[tuple[str, int]]],
                                 cut_off_only: bool = False) -> None:
        """Dial `key` where `book` says, then where its announcements say (§17), until a link to it is up or the table
        is over (`cut_off_only`: only while cut off, or while it announces a port that `book` does not hold)."""
        if key in self._redialling:
            return
        self._redialling.add(key)
        try:
            seat = self.seat
            while seat is not None and not seat.shell.over and key in seat.names and key not in self.links.links:
                known = book.get(key, [])
                new = [where for where in self._announced(key) if where not in known]
                # A seat after ours dials us again itself, unless it came back on another port (where it may not
                # know where we are now either); one more address of a seat where it listened before says nothing.
                moved = any(port not in {p for _, p in known} for _, port in new)
                dialling = not cut_off_only or seat.peer.cut_off is not None or moved
                if dialling and known:
                    await self._dial_known(key, known, only=not new)
                if dialling and new and key not in self.links.links:
                    await self._dial_announced(new, key)
                await asyncio.sleep(REDIAL_S if dialling else 1.0)
                seat = self.seat
        finally:
            self._redialling.discard(key)

    async def _dial_announced(self, addresses: Sequence[tuple[str, int]], key: bytes) -> None:
        """Dial the addresses announced for `key` all at once, each for at most ANNOUNCED_S: anyone may announce a
        seat's fingerprint, and addresses that accept and never speak, tried one after another, would hold back
        the dials of the addresses we know for a minute a turn (long enough to vote an honest seat gone)."""
        async def one(where: tuple[str, int]) -> None:
            with contextlib.suppress(LinkBroken, TimeoutError):
                async with asyncio.timeout(ANNOUNCED_S):
                    await self.links.dial([where], key, attempts=1)
        await asyncio.gather(*(one(where) for where in addresses))

    def _announced(self, key: bytes) -> list[tuple[str, int]]:
        """Where the seat holding `key` says it listens in the freshest peer ad it signed (protocol.md §17), at a table
        we sat at with it: at most MAX_ANNOUNCED addresses, less what no seat can be at (`dialable`). An ad it did not
        sign is anyone's word, and never dialled."""
        if self.disco is None or self.seat is None:
            return []
        ad = self.disco.signed.get(key)
        tables = [*self.seat.tables, *([self.links.table] if self.links.table is not None else [])]
        if ad is None or ad.table not in tables:
            return []
        ours = advertised(self.disco.addresses)
        # A loopback address only when ours are (`advertised`: we then use no other, so every peer we hear is on
        # our machine): as from the host's `A` frame, an ad must not point us at our own machine's services.
        via = ours[0] if ours else "0.0.0.0"
        return [(host, ad.port) for host in dict.fromkeys(ad.addresses) if dialable(host, via)][:MAX_ANNOUNCED]

    def _linked(self, link: Link) -> None:
        if self.seat is not None:
            self._learn(link)
            self.seat.linked(link)
        elif self.is_host:
            for frame in self.lobby_frames:
                link.send(FRAME, frame)
            # A place in the lobby is for a guest that joins: one that only links would keep it from others.
            asyncio.get_running_loop().call_later(JOIN_S, self._joined_or_cut, link)

    def _learn(self, link: Link) -> None:
        """Keep where a seat listens as its link shows it, first: its address, at the port its hello names (§14.10)."""
        assert self.seat is not None
        keys, port = self.seat.peer.cfg.keys, link.hello.port
        if not port or link.key not in keys or self.identity.public not in keys:
            return
        book = self.dialled if keys.index(link.key) < keys.index(self.identity.public) else self.later
        known = book.get(link.key, [])
        where = ([(link.address, port)] + [(h, port) for h, _ in known if h != link.address])[:MAX_ADDRESSES]
        if where != known:
            book[link.key] = where
            self._save_state()

    def _joined_or_cut(self, link: Link) -> None:
        if self.seat is None and self.lobby is not None and link.key not in self.lobby.names:
            link.close(f"no join within {JOIN_S:g} s", goodbye=True)

    def _quiet(self, link: Link, quiet: bool) -> None:
        if self.seat is not None:
            self.seat.quiet(link, quiet)

    def _lost(self, link: Link, why: str) -> None:
        if self.seat is not None:
            self.seat.lost(link, why)
            if link.key not in self.links.links and "said goodbye" not in why:
                if link.key in self.dialled:
                    self._spawn(self._redial(link.key))
                else:
                    self._spawn(self._dial_cut_off(link.key))
        elif self.lobby is not None and link.key == self.lobby.host and not self.is_host:
            self._join_failed = f"the host {why}" if why.startswith("said goodbye") else f"the host went away: {why}"
            self.changed.set()
        elif self.lobby is not None and link.key in self.lobby.names:
            name = self.lobby.names[link.key]
            if self.is_host and link.key not in self.links.links:
                # Seated without a link, it would keep every seat waiting for one, then the table would give up:
                # its place (and its name) is free again for whoever joins next, that player started anew included.
                left = self.lobby.leave(link.key)
                self.lobby_frames = [f for f in self.lobby_frames if parse(f).envelope.sender != link.key] + [left]
                # Every guest is told, so that its list and its count of seats are the host's (protocol.md §6.1).
                self.links.broadcast(FRAME, left, list(self.links.links))
                self.changed.set()
                self.note("missing", f"{name} left the lobby: {why}; its place is free again", name)
                self._advertise_seats()
            else:
                self.note("missing", f"{name} left the lobby: {why}", name)
