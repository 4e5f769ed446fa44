"""Finding tables on the local network with DNS-SD over multicast DNS (python-zeroconf's asyncio API).

A table is a `_p2pcards._tcp.local.` service whose TXT record says `role=table`; each peer
seated at a table announces one more with `role=peer`. TXT keys (every value is short, every
string is at most 255 bytes, the whole record stays far below 1300 bytes):

    txtvers=1  pv=<protocol version>  role=table|peer  id=<table id, hex>  game=crisp|crescendo
    opts=<host options as compact JSON, times in ms>  taken=<seats taken>  free=<seats free>
    host=<host's name>  fpr=<host's key fingerprint>  port=<TCP port of the links>

Use it as one context per process (one AsyncZeroconf; leaving the block, by any exit path,
withdraws every announcement with a goodbye):

    async with Discovery(["127.0.0.1"]) as disco:      # None: every IPv4 interface
        ann = await disco.announce(TableAd(...))       # the name may change on a clash: see ann.ad.name
        await ann.update(taken=2, free=1)
        async for tables in disco.tables():            # a snapshot now and after every change
            ...                                        # tuple[TableAd, ...], sorted by name

`Discovery.tables()` is the lobby's feed: it yields the tables currently seen, once at once and
again each time one appears, changes or vanishes (goodbye or expiry). Browser callbacks only
hand names to a task that resolves them; nothing blocks the loop.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import socket
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Final

import ifaddr
from zeroconf import BadTypeInNameException, InterfaceChoice, IPVersion, ServiceStateChange, Zeroconf
# The DNS message classes, for a one-shot query: importable from zeroconf itself, though not in its __all__.
from zeroconf import DNSIncoming, DNSOutgoing, DNSPointer, DNSQuestion, DNSText  # type: ignore[attr-defined]
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from ..crypto.identity import valid_name
from ..errors import InputError, MalformedMessage
from ..table.config import SEATS, options_from_wire, options_to_wire
from ..table.lobby import check_host_options
from .handshake import LINK_VERSION

SERVICE: Final = "_p2pcards._tcp.local."
PROTOCOL_VERSION: Final = LINK_VERSION  # what our links speak: a table of another is not listed
MAX_TXT_VALUE: Final = 200  # bytes of one value; a key=value string must stay within 255
MAX_INSTANCE: Final = 63  # bytes of a DNS-SD instance name
RESOLVE_MS: Final = 3000
CLASS_IN, FLAGS_QUERY, TYPE_PTR = 1, 0x0000, 12  # RFC 1035 §3.2.2, §3.2.4, §4.1.1 (zeroconf's are private)
MAX_SEEN: Final = 256  # ads kept at once: what anyone on the network can make us hold is bounded
FINGERPRINT: Final = re.compile(r"[0-9]{5}(?: [0-9]{5}){4}")
TABLE_ID: Final = re.compile(r"(?:[0-9a-f]{2}){1,64}")


@dataclass(frozen=True, slots=True)
class TableAd:
    """One announcement as seen on the network: a table (role "table") or a peer seated at one (role "peer")."""

    name: str  # the instance name, unique on the network ("Ann's table")
    table: bytes
    game: str
    host: str
    fingerprint: str
    port: int
    addresses: tuple[str, ...] = ()
    options: tuple[tuple[str, Any], ...] = ()  # as on the wire (times in ms), sorted; see `opts`
    taken: int = 1
    free: int = 0
    role: str = "table"
    version: int = PROTOCOL_VERSION

    @property
    def opts(self) -> dict[str, Any]:
        """The host options as a dict (times in seconds, as the engines take them)."""
        return options_from_wire(dict(self.options))

    def txt(self) -> dict[str, str]:
        """The TXT record's keys and values."""
        return {"txtvers": "1", "pv": str(self.version), "role": self.role, "id": self.table.hex(),
                "game": self.game, "opts": json.dumps(dict(self.options), separators=(",", ":"), sort_keys=True),
                "taken": str(self.taken), "free": str(self.free), "host": self.host,
                "fpr": self.fingerprint, "port": str(self.port)}

    @classmethod
    def from_txt(cls, name: str, txt: Mapping[str, str | None], addresses: Sequence[str]) -> TableAd:
        """An ad from a resolved TXT record; MalformedMessage on a missing key or a value out of range."""
        try:
            t = {k: v for k, v in txt.items() if v is not None}
            opts = json.loads(t["opts"])
            if not isinstance(opts, dict) or any(len(v) > MAX_TXT_VALUE for v in t.values()):
                raise ValueError("bad options")
            if not all(isinstance(v, (int, bool)) or v is None for v in opts.values()):
                raise ValueError("bad option value")
            ad = cls(name, bytes.fromhex(t["id"]), t["game"], t["host"], t["fpr"], int(t["port"]),
                     tuple(addresses), tuple(sorted(opts.items())), int(t["taken"]), int(t["free"]),
                     t["role"], int(t["pv"]))
            if t["txtvers"] != "1" or ad.version != PROTOCOL_VERSION:
                raise ValueError(f"txtvers {t['txtvers']}, protocol version {ad.version}: not ours")
            if ad.role not in ("table", "peer") or not 0 < ad.port < 65536 or not TABLE_ID.fullmatch(t["id"]):
                raise ValueError("bad role, port or id")
            if not FINGERPRINT.fullmatch(ad.fingerprint):
                raise ValueError("bad fingerprint")
            if not valid_name(ad.host) or not (name.isprintable() and 1 <= len(name.encode()) <= MAX_INSTANCE):
                raise ValueError("the host's or the table's name is not printable or too long")
            if ad.game not in SEATS or not 0 <= ad.taken <= 16 or not 0 <= ad.free <= 16:
                raise ValueError("bad game or seats")
            check_host_options(ad.game, ad.opts)
        except (KeyError, ValueError, TypeError, InputError, MalformedMessage) as exc:
            raise MalformedMessage(f"a table ad that does not parse: {exc}") from None
        return ad


def interface_addresses(names: Sequence[str] | None = None) -> list[str]:
    """IPv4 addresses of the named interfaces (names or addresses), or of every interface when None."""
    found: list[str] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            if isinstance(ip.ip, str) and (names is None or adapter.nice_name in names or ip.ip in names):
                found.append(ip.ip)
    missing = [n for n in names or () if n not in found and not any(
        a.nice_name == n for a in ifaddr.get_adapters())]
    if missing:
        raise InputError(f"no such IPv4 interface: {', '.join(missing)}")
    return found


def advertised(addresses: Sequence[str]) -> list[str]:
    """The addresses to put in an ad: every non-loopback one, or loopback when there is nothing else."""
    outside = [a for a in addresses if not a.startswith("127.")]
    return outside or [a for a in addresses if a.startswith("127.")][:1]


class Announcement:
    """One registered ad; `update` re-announces it, `withdraw` says goodbye."""

    def __init__(self, disco: Discovery, ad: TableAd, info: AsyncServiceInfo) -> None:
        self.disco = disco
        self.ad = ad
        self.info = info

    async def update(self, **changes: Any) -> None:
        """Change some fields (seats taken and free) and announce the new record."""
        self.ad = replace(self.ad, **changes)
        self.info = self.disco._info(self.ad, self.info.name, self.info.server or "")
        await (await self.disco.zc.async_update_service(self.info))

    async def withdraw(self) -> None:
        """Goodbye: the ad vanishes from every browser at once."""
        if self in self.disco._announced:
            self.disco._announced.remove(self)
            if self.disco.zc.zeroconf.registry.async_get_info_name(self.info.key) is not None:  # past probing
                await (await self.disco.zc.async_unregister_service(self.info))


class Discovery:
    """One AsyncZeroconf for this process: announce ads, browse for tables; `async with` for its lifetime."""

    def __init__(self, interfaces: Sequence[str] | None = None) -> None:
        self.addresses = interface_addresses(interfaces)
        self._interfaces = interfaces
        self.zc: AsyncZeroconf
        self.seen: dict[str, TableAd] = {}  # every resolved ad, tables and peers, by full service name
        self._announced: list[Announcement] = []
        self._browser: AsyncServiceBrowser | None = None
        self._tasks: set[asyncio.Task[None]] = set()
        self._resolving: dict[str, bool] = {}  # names being resolved now (one task each): changed since
        self._changed = asyncio.Condition()
        self._version = 0

    async def __aenter__(self) -> Discovery:
        chosen: Any = list(self.addresses) if self._interfaces else InterfaceChoice.All
        self.zc = AsyncZeroconf(interfaces=chosen, ip_version=IPVersion.V4Only)
        self._browser = AsyncServiceBrowser(self.zc.zeroconf, [SERVICE], handlers=[self._on_change])
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close()

    async def close(self) -> None:
        """Goodbye for every announcement, stop browsing, close the sockets."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):  # the goodbyes are best effort; closing must go on
            await self.zc.async_unregister_all_services()
        self._announced.clear()
        if self._browser is not None:
            await self._browser.async_cancel()
        await self.zc.async_close()

    async def announce(self, ad: TableAd) -> Announcement:
        """Register `ad` on every chosen interface; a name already taken becomes "name-2" and so on."""
        host = f"p2pc-{ad.fingerprint.replace(' ', '')[:10]}-{ad.port}.local."
        info = self._info(ad, f"{_instance(ad.name)}.{SERVICE}", host)
        announcement = Announcement(self, ad, info)
        self._announced.append(announcement)  # withdrawn by `close` from now on, even if we are cancelled below
        try:
            await (await self.zc.async_register_service(info, allow_name_change=True))
        except BaseException:  # cancelled (a node that closes while its ad is probed or announced) or failed
            await announcement.withdraw()  # registered already: goodbye, or the ad outlives whoever made it
            raise
        announcement.ad = replace(ad, name=info.name[: -len(SERVICE) - 1], addresses=tuple(advertised(self.addresses)))
        return announcement

    def _info(self, ad: TableAd, name: str, server: str) -> AsyncServiceInfo:
        return AsyncServiceInfo(SERVICE, name, port=ad.port, properties=ad.txt(), server=server,
                                addresses=[socket.inet_aton(a) for a in advertised(self.addresses)])

    async def tables(self) -> AsyncIterator[tuple[TableAd, ...]]:
        """The tables seen now, then again after every change (an async generator that never ends)."""
        version = -1
        while True:
            async with self._changed:
                await self._changed.wait_for(lambda: self._version != version)
                version = self._version
            yield tuple(sorted((a for a in self.seen.values() if a.role == "table"), key=lambda a: a.name))

    async def wait_for_table(self, name: str | None = None, game: str | None = None) -> TableAd:
        """The first table with free seats, of this name and game when given."""
        async for tables in self.tables():
            for ad in tables:
                if ad.free > 0 and name in (None, ad.name) and game in (None, ad.game):
                    return ad
        raise AssertionError("unreachable")

    def peers_at(self, table: bytes) -> list[TableAd]:
        """The peers announced as seated at `table`."""
        return [a for a in self.seen.values() if a.role == "peer" and a.table == table]

    def peer_ads(self, tables: Sequence[bytes], fpr: str) -> list[TableAd]:
        """The peer ads at any of `tables` that name the fingerprint `fpr`, the last resolved first."""
        return [a for a in reversed(self.seen.values()) if a.role == "peer" and a.fingerprint == fpr
                and a.table in tables]

    # ------------------------------------------------------------ the browser's side

    def _on_change(self, zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange) -> None:
        # Called inside the loop by zeroconf: only hand work to a task.
        if state_change is ServiceStateChange.Removed:
            if self.seen.pop(name, None) is not None:
                self._bump()
            return
        if name not in self.seen and name not in self._resolving and len(self.seen) + len(self._resolving) >= MAX_SEEN:
            return  # too many ads, kept or being resolved: a flood of names is neither kept nor resolved
        if name in self._resolving:
            self._resolving[name] = True  # changed while we resolve it: once more after
            return
        self._resolving[name] = False
        task = asyncio.get_running_loop().create_task(self._resolve(name))
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
        task.add_done_callback(lambda t: self._resolved(name, t.cancelled()))

    def _resolved(self, name: str, cancelled: bool) -> None:
        if self._resolving.pop(name, False) and not cancelled:  # cancelled: we are closing
            self._on_change(self.zc.zeroconf, SERVICE, name, ServiceStateChange.Updated)

    async def _resolve(self, name: str) -> None:
        info = AsyncServiceInfo(SERVICE, name)
        if not await info.async_request(self.zc.zeroconf, RESOLVE_MS):
            return
        try:
            ad = TableAd.from_txt(name[: -len(SERVICE) - 1], info.decoded_properties,
                                  info.parsed_addresses(IPVersion.V4Only))
        except (MalformedMessage, BadTypeInNameException):
            return  # someone else's broken ad: not a table we can join
        if self.seen.get(name) != ad:
            self.seen.pop(name, None)
            self.seen[name] = ad  # last in the dict: `peer_ads` tries the newest word on a seat first
            self._bump()

    def _bump(self) -> None:
        self._version += 1
        task = asyncio.get_running_loop().create_task(self._notify())
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()


MDNS_PORT: Final = 5353
ASK_S: Final = 1.0  # how long a one-shot query waits for its answers
MAX_ANSWERS: Final = 16  # datagrams a one-shot query takes, at most


async def ask_for_table(address: str, table: bytes, timeout: float = ASK_S, port: int = MDNS_PORT) -> TableAd | None:
    """The ad of `table` that the mDNS responder at `address` answers a one-shot query with (RFC 6762 §5.1, protocol.md
    §17): what a guest that joined a table by address learns its name from. None when no answer names it in time (a
    host without multicast, another peer's responder on its machine answering, a network that drops datagrams)."""
    loop = asyncio.get_running_loop()
    answers: asyncio.Queue[bytes] = asyncio.Queue(MAX_ANSWERS)

    class Answers(asyncio.DatagramProtocol):
        def datagram_received(self, data: bytes, addr: tuple[str | Any, int]) -> None:
            with contextlib.suppress(asyncio.QueueFull):
                answers.put_nowait(data)

    try:
        transport, _ = await loop.create_datagram_endpoint(Answers, remote_addr=(address, port),
                                                           family=socket.AF_INET)
    except OSError:
        return None
    try:
        query = DNSOutgoing(FLAGS_QUERY)
        query.add_question(DNSQuestion(SERVICE, TYPE_PTR, CLASS_IN))
        for packet in query.packets():
            transport.sendto(packet)
        async with asyncio.timeout(timeout):
            for _ in range(MAX_ANSWERS):
                ad = _table_in(await answers.get(), address, table)
                if ad is not None:
                    return ad
    except (TimeoutError, OSError):
        pass
    finally:
        transport.close()
    return None


def _table_in(datagram: bytes, address: str, table: bytes) -> TableAd | None:
    """The ad of `table` with role table in an mDNS answer (its pointer and TXT record), or None."""
    try:
        records = DNSIncoming(datagram, (address, MDNS_PORT)).answers()
    except Exception:  # pylint: disable=broad-except  # whatever a datagram holds, it is no table of ours
        return None
    names = {r.alias for r in records if isinstance(r, DNSPointer) and r.name == SERVICE}
    for r in records:
        if isinstance(r, DNSText) and r.name in names and r.name.endswith("." + SERVICE):
            try:
                ad = TableAd.from_txt(r.name[: -len(SERVICE) - 1], _txt(r.text), [address])
            except MalformedMessage:
                continue
            if ad.role == "table" and ad.table == table:
                return ad
    return None


def _txt(text: bytes) -> dict[str, str | None]:
    """A TXT record's `key=value` strings (RFC 6763 §6) as a dict; MalformedMessage when one is not UTF-8."""
    out: dict[str, str | None] = {}
    i = 0
    while i < len(text):
        item = text[i + 1: i + 1 + text[i]]
        i += 1 + text[i]
        try:
            key, eq, value = item.decode().partition("=")
        except UnicodeDecodeError:
            raise MalformedMessage("a TXT string that is not UTF-8") from None
        out.setdefault(key, value if eq else None)
    return out


def _instance(name: str) -> str:
    """A DNS-SD instance name: printable, no dots, at most MAX_INSTANCE bytes."""
    clean = "".join(c if c.isprintable() and c != "." else "-" for c in name).strip() or "table"
    while len(clean.encode()) > MAX_INSTANCE:
        clean = clean[:-1]
    return clean


def wire_options(options: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Host options (times in seconds) as a TableAd holds them."""
    return tuple(sorted(options_to_wire(options).items()))
