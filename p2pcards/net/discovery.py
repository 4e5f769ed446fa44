"""Finding tables on the local network with DNS-SD over multicast DNS (python-zeroconf's asyncio API).

A table is a `_p2pcards._tcp.local.` service whose TXT record says `role=table`; each peer
seated at a table announces one more with `role=peer`. TXT keys (every value is short, every
string is at most 255 bytes, the whole record stays far below 1300 bytes):

    txtvers=1  pv=<protocol version>  role=table|peer  id=<table id, hex>  game=crisp|crescendo
    opts=<host options as compact JSON, times in ms>  taken=<seats taken>  free=<seats free>
    host=<host's name>  fpr=<host's key fingerprint>  port=<TCP port of the links>

and, signed by the identity key of the peer that announces the ad (protocol.md §17):

    addr=<its IPv4 addresses, comma-separated>  at=<its wall clock, ms>  sig=<Ed25519 signature, base64url>
    key=<the host's public key, base64url: a table ad only>

Use it as one context per process (one AsyncZeroconf; leaving the block, by any exit path,
withdraws every announcement with a goodbye):

    async with Discovery(["127.0.0.1"]) as disco:      # None: every IPv4 interface
        ann = await disco.announce(TableAd(...), identity)  # signed; the name may change on a clash: ann.ad.name
        await ann.update(taken=2, free=1)
        async for tables in disco.tables():            # a snapshot now and after every change
            ...                                        # tuple[TableAd, ...], sorted by name

`Discovery.tables()` is the lobby's feed: it yields the tables currently seen, once at once and
again each time one appears, changes or vanishes (goodbye or expiry). It lists only table ads that the key they
carry signed, each host key's freshest of each table (an unsigned or forged one is counted in `refused`, never
listed; an older one played back replaces nothing). Browser callbacks only
hand names to a `ResolveQueue` (resolving.py), whose turns start the tasks that resolve them: a bounded number at
once, the rest waiting in a bounded queue and tried again later, so that a flood of names that never answer can
neither hold every slot for good nor grow our memory; nothing blocks the loop. A seated peer `watch`es the
other seats' keys: `signed[key]` is then the freshest peer ad that key signed, which is all it
dials a seat at (an unsigned ad, or one signed by another key, is anyone's word).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import functools
import ipaddress
import json
import re
import secrets
import socket
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any, Final

import ifaddr
from zeroconf import (BadTypeInNameException, InterfaceChoice, IPVersion, ServiceStateChange, Zeroconf,
                      current_time_millis)
# The DNS message classes, for a one-shot query: importable from zeroconf itself, though not in its __all__.
from zeroconf import DNSIncoming, DNSOutgoing, DNSPointer, DNSQuestion, DNSText  # type: ignore[attr-defined]
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from ..crypto.encoding import encode
from ..crypto.identity import Identity, fingerprint, valid_name, verify
from ..errors import InputError, MalformedMessage
from ..table.config import SEATS, options_from_wire, options_to_wire
from ..table.lobby import check_host_options
from .handshake import LINK_VERSION
from .resolving import RESOLVE_S, ResolveQueue

SERVICE: Final = "_p2pcards._tcp.local."
PROTOCOL_VERSION: Final = LINK_VERSION  # what our links speak: a table of another is not listed
MAX_TXT_VALUE: Final = 200  # bytes of one value; a key=value string must stay within 255
MAX_INSTANCE: Final = 63  # bytes of a DNS-SD instance name
RESOLVE_MS: Final = round(RESOLVE_S * 1000)
CLASS_IN, FLAGS_QUERY, TYPE_PTR = 1, 0x0000, 12  # RFC 1035 §3.2.2, §3.2.4, §4.1.1 (zeroconf's are private)
MAX_SEEN: Final = 256  # ads kept at once: what anyone on the network can make us hold is bounded
MAX_HOSTED: Final = 2 * MAX_SEEN  # (host's key, table id) pairs whose freshest table ad we remember
# After a listed table's goodbye (anyone can send one) we ask for the service again, 20 to 120 ms after it, then these
# many s after that first ask, the gaps doubling (RFC 6762 §5.2): a second forged goodbye right after the first could
# keep the answer from us (a responder sends an answer no more than once a second, and a querier asks no more often).
ASK_AGAIN_S: Final = (0.0, 1.2, 3.6, 8.4)
FINGERPRINT: Final = re.compile(r"[0-9]{5}(?: [0-9]{5}){4}")
TABLE_ID: Final = re.compile(r"(?:[0-9a-f]{2}){1,64}")
AD_LABEL: Final = b"p2pc/ad/v1"  # what an ad's signature signs begins with: no other signed bytes do (§17)
MAX_AD_ADDRESSES: Final = 8  # addresses an ad names in `addr`: a seat dials at most 8 announced ones a turn
STAMP: Final = re.compile(r"0|[1-9][0-9]{0,15}")  # `at`: ms, no leading zero
SIG_TEXT: Final = re.compile(r"[A-Za-z0-9_-]{86}")  # `sig`: 64 bytes in base64url, unpadded
KEY_TEXT: Final = re.compile(r"[A-Za-z0-9_-]{43}")  # `key`: 32 bytes in base64url, unpadded
TXT_KEY: Final = re.compile(r"[\x20-\x3c\x3e-\x7e]+")  # printable US-ASCII but "=" (RFC 6763 §6.4)


def ad_message(name: str, txt: Mapping[str, str | None]) -> bytes:
    """The bytes an ad's `sig` signs: AD_LABEL, then the canonical encoding of [instance name, every other key's
    value by key] (a key without "=" as nil)."""
    return AD_LABEL + encode([name, {k: v for k, v in txt.items() if k != "sig"}])


def _b64_text(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def _b64_bytes(text: str, shape: re.Pattern[str]) -> bytes:
    """A `sig` or `key` value's bytes; ValueError unless `text` has `shape` and is their one unpadded base64url
    spelling."""
    if not shape.fullmatch(text) or _b64_text(raw := base64.urlsafe_b64decode(text + "==")) != text:
        raise ValueError("bad signature or key")
    return raw


def _addr(text: str) -> tuple[str, ...]:
    """An `addr` value's addresses; ValueError unless it is dotted quads (no leading zero) joined by commas."""
    hosts = tuple(text.split(","))
    if any(str(ipaddress.IPv4Address(h)) != h for h in hosts):
        raise ValueError("bad address")
    return hosts


@dataclass(frozen=True, slots=True)
class TableAd:
    """One announcement as seen on the network: a table (role "table") or a peer seated at one (role "peer")."""

    name: str  # the instance name, unique on the network ("Ann's table")
    table: bytes
    game: str
    host: str
    fingerprint: str
    port: int
    addresses: tuple[str, ...] = ()  # its A records' (a signed ad's: its `addr`, which it signs)
    options: tuple[tuple[str, Any], ...] = ()  # as on the wire (times in ms), sorted; see `opts`
    taken: int = 1
    free: int = 0
    role: str = "table"
    version: int = PROTOCOL_VERSION
    at: int = 0  # a signed ad's stamp: its signer's wall clock in ms, higher on each announcement
    signature: bytes = b""  # a signed ad's `sig` (empty: unsigned)
    message: bytes = b""  # the bytes `signature` signs (`ad_message`), as received
    key: bytes = b""  # a signed table ad's `key`: the host's public key, which signs it

    @property
    def opts(self) -> dict[str, Any]:
        """The host options as a dict (times in seconds, as the engines take them)."""
        return options_from_wire(dict(self.options))

    def txt(self) -> dict[str, str]:
        """The TXT record's keys and values (a signed ad's with its `addr`, `at` and `sig`, a table's with `key`)."""
        if not self.signature:
            return self._unsigned_txt(None)
        return {**self._unsigned_txt(self.at), "sig": _b64_text(self.signature)}

    def _unsigned_txt(self, at: int | None) -> dict[str, str]:
        """Every key but `sig`: with `addr` and `at` (and a table's `key`) when stamped `at`."""
        txt = {"txtvers": "1", "pv": str(self.version), "role": self.role, "id": self.table.hex(),
               "game": self.game, "opts": json.dumps(dict(self.options), separators=(",", ":"), sort_keys=True),
               "taken": str(self.taken), "free": str(self.free), "host": self.host,
               "fpr": self.fingerprint, "port": str(self.port)}
        if at is not None:
            txt.update(addr=",".join(self.addresses), at=str(at))
            if self.role == "table":
                txt.update(key=_b64_text(self.key))
        return txt

    def signed(self, identity: Identity, at: int) -> TableAd:
        """This ad signed by `identity` (whose fingerprint it names, and a table ad its key), stamped `at` ms, naming
        its addresses."""
        if identity.fingerprint != self.fingerprint:
            raise ValueError("an ad is signed by the key whose fingerprint it names")
        if not 1 <= len(self.addresses) <= MAX_AD_ADDRESSES or not STAMP.fullmatch(str(at)):
            raise ValueError(f"an ad names 1 to {MAX_AD_ADDRESSES} addresses, stamped 0 to 16 digits of ms")
        ad = replace(self, key=identity.public if self.role == "table" else b"")
        message = ad_message(ad.name, ad._unsigned_txt(at))
        return replace(ad, at=at, signature=identity.sign(message), message=message)

    def signed_by(self, public: bytes) -> bool:
        """Whether this ad, as received, is signed by `public` (and names its fingerprint)."""
        return (bool(self.signature) and fingerprint(public) == self.fingerprint
                and verify(public, self.message, self.signature))

    @property
    def genuine(self) -> bool:
        """Whether this is a table ad, as received, that the key it carries signed (and whose fingerprint it names)."""
        return self.role == "table" and self.signed_by(self.key)

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
            if "sig" in t:  # signed: the addresses are those it signs, not the A records'
                if not all(TXT_KEY.fullmatch(k) for k in txt) or not STAMP.fullmatch(t["at"]):
                    raise ValueError("a key that is not printable ASCII, or a bad stamp")
                ad = replace(ad, addresses=_addr(t["addr"]), at=int(t["at"]), message=ad_message(name, txt),
                             signature=_b64_bytes(t["sig"], SIG_TEXT),
                             key=_b64_bytes(t["key"], KEY_TEXT) if ad.role == "table" else b"")
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

    def __init__(self, disco: Discovery, ad: TableAd, info: AsyncServiceInfo, identity: Identity) -> None:
        self.disco = disco
        self.ad = ad
        self.info = info
        self.identity = identity  # the ad's signer: each record announced is signed and stamped afresh

    async def update(self, **changes: Any) -> None:
        """Change some fields (seats taken and free) and announce the new record."""
        self.ad = _stamped(replace(self.ad, **changes), self.identity)
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
        self.signed: dict[bytes, TableAd] = {}  # per watched key: the freshest peer ad it signed (kept on goodbyes)
        self.hosted: dict[tuple[bytes, bytes], TableAd] = {}  # per (host's key, table id): its freshest table ad
        self.refused = 0  # table ads resolved but never listed: unsigned, or not signed by the key they carry
        self._watched: dict[bytes, int] = {}  # the keys whose peer ads we keep, each with how many watch it
        self._announced: list[Announcement] = []
        self._browser: AsyncServiceBrowser | None = None
        self._tasks: set[asyncio.Task[Any]] = set()
        self._queue = ResolveQueue()  # the names being resolved (one task each) and those waiting their turn
        self._wake: asyncio.TimerHandle | None = None  # when the next waiting name falls due
        self._missing: dict[str, tuple[float, int]] = {}  # listed tables said goodbye: our first ask, and asks made
        self._ask: asyncio.TimerHandle | None = None  # our next ask for the service, while a table is missing
        self._closed = False
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
        self._closed = True
        for handle in (self._wake, self._ask):
            if handle is not None:
                handle.cancel()
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        with contextlib.suppress(Exception):  # the goodbyes are best effort; closing must go on
            await self.zc.async_unregister_all_services()
        self._announced.clear()
        if self._browser is not None:
            await self._browser.async_cancel()
        await self.zc.async_close()

    async def announce(self, ad: TableAd, identity: Identity) -> Announcement:
        """Register `ad` on every chosen interface, signed by `identity`; a name already taken becomes "name-2" and
        so on."""
        host = f"p2pc-{ad.fingerprint.replace(' ', '')[:10]}-{ad.port}.local."
        ad = _stamped(replace(ad, name=_instance(ad.name),
                              addresses=tuple(advertised(self.addresses))[:MAX_AD_ADDRESSES]), identity)
        info = self._info(ad, f"{ad.name}.{SERVICE}", host)
        announcement = Announcement(self, ad, info, identity)
        self._announced.append(announcement)  # withdrawn by `close` from now on, even if we are cancelled below
        try:
            await (await self.zc.async_register_service(info, allow_name_change=True))
            name = info.name[: -len(SERVICE) - 1]
            if name != ad.name:  # taken: the ad's signature names the instance, so it is signed again
                announcement.ad = replace(ad, name=name)
                await announcement.update()
        except BaseException:  # cancelled (a node that closes while its ad is probed or announced) or failed
            await announcement.withdraw()  # registered already: goodbye, or the ad outlives whoever made it
            raise
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
            fresh = (a for a in self.seen.values() if a.role == "table" and self.hosted.get((a.key, a.table)) == a)
            yield tuple(sorted(fresh, key=lambda a: a.name))

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

    def watch(self, keys: Sequence[bytes]) -> None:
        """Keep in `signed` the freshest peer ad each of `keys` signs, from the ads seen already on, until `unwatch`."""
        for key in keys:
            self._watched[key] = self._watched.get(key, 0) + 1
        for ad in self.seen.values():
            self._keep_signed(ad)

    def unwatch(self, keys: Sequence[bytes]) -> None:
        """Undo one `watch` of `keys`: a key no one watches any more has its ad dropped."""
        for key in keys:
            self._watched[key] = self._watched.get(key, 1) - 1
            if self._watched[key] <= 0:
                del self._watched[key]
                self.signed.pop(key, None)

    def _keep_signed(self, ad: TableAd) -> None:
        """Keep peer ad `ad` as its signer's when a watched key signed it and it is stamped later than the one we keep:
        an older ad of the same signer played back by anyone replaces nothing."""
        for key in self._watched:
            if ad.role == "peer" and ad.signed_by(key) and (key not in self.signed or ad.at > self.signed[key].at):
                self.signed[key] = ad

    def _keep_hosted(self, ad: TableAd) -> bool:
        """Whether table ad `ad` may be listed: signed by the key it carries, and that key's freshest ad of its table
        (kept as such from now on) or that very ad again; an older one played back by anyone, under any name, is not."""
        if not ad.genuine:
            self.refused += 1
            return False
        kept = self.hosted.get((ad.key, ad.table))
        if kept is not None and ad.at <= kept.at:
            return ad == kept
        self.hosted.pop((ad.key, ad.table), None)  # re-inserted last: the oldest entries are the first dropped
        self.hosted[ad.key, ad.table] = ad
        if len(self.hosted) > MAX_HOSTED:  # a flood of keys: forget the oldest tables no kept ad is of
            listed = {(a.key, a.table) for a in self.seen.values() if a.role == "table"}
            for old in [k for k in self.hosted if k not in listed][: len(self.hosted) - MAX_HOSTED]:
                del self.hosted[old]
        return True

    # ------------------------------------------------------------ the browser's side

    def _on_change(self, zeroconf: Zeroconf, service_type: str, name: str, state_change: ServiceStateChange) -> None:
        # Called inside the loop by zeroconf: only hand the name to the queue, whose turns start the tasks.
        if state_change is ServiceStateChange.Removed:
            self._queue.forget(name)
            if (gone := self.seen.pop(name, None)) is not None:
                self._bump()
                if gone.role == "table":
                    if len(self._missing) >= MAX_SEEN:
                        del self._missing[next(iter(self._missing))]
                    now = asyncio.get_running_loop().time()
                    self._missing[name] = (now + (20 + secrets.randbelow(101)) / 1000, 0)
                    self._ask_later()
            return
        self._queue.offer(name, asyncio.get_running_loop().time())
        self._pump()

    def _ask_later(self) -> None:
        """Wake for our next ask for the service, while a table that said goodbye is not listed again."""
        at = min((first + ASK_AGAIN_S[asked] for first, asked in self._missing.values()), default=None)
        if self._ask is not None and self._ask.when() != at:
            self._ask.cancel()
            self._ask = None
        if at is not None and self._ask is None and not self._closed:
            self._ask = asyncio.get_running_loop().call_at(at, self._ask_again, at)

    def _ask_again(self, now: float) -> None:
        """Ask who announces our service, as the browser asks (with the answers it knows, RFC 6762 §7.1): anyone can
        send a goodbye for a table, and a host that is still there answers, so its table is listed again; a table
        not listed again after our last ask is gone."""
        self._ask = None  # `now` is when it was due: the loop may run a timer a tick early
        due = {name: (first, asked) for name, (first, asked) in self._missing.items()
               if first + ASK_AGAIN_S[asked] <= now}
        if due:
            assert self._browser is not None
            self._browser.query_scheduler.async_send_ready_queries(False, current_time_millis(), {SERVICE})
        for name, (first, asked) in due.items():
            if asked + 1 < len(ASK_AGAIN_S):
                self._missing[name] = (first, asked + 1)
            else:
                del self._missing[name]
        self._ask_later()

    def _pump(self) -> None:
        """Start resolving each name whose turn it is, and wake when the next waiting one falls due."""
        if self._closed:
            return
        loop = asyncio.get_running_loop()
        while (name := self._queue.start(loop.time())) is not None:
            task = loop.create_task(self._resolve(name))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
            task.add_done_callback(functools.partial(self._resolved, name))
        at = self._queue.wake_at()
        if self._wake is not None and self._wake.when() != at:
            self._wake.cancel()
            self._wake = None
        if at is not None and self._wake is None:
            self._wake = loop.call_at(at, self._woken)

    def _woken(self) -> None:
        self._wake = None
        self._pump()

    def _resolved(self, name: str, task: asyncio.Task[bool]) -> None:
        if task.cancelled():  # we are closing
            return
        loop = asyncio.get_running_loop()
        if (exc := task.exception()) is not None:  # a bug: said as asyncio says it of a task nobody awaits
            loop.call_exception_handler({"message": f"resolving {name!r} failed", "exception": exc, "task": task})
        self._queue.done(name, exc is None and task.result(), loop.time())
        self._pump()

    async def _resolve(self, name: str) -> bool:
        """Resolve `name` and keep its ad if it is one; whether its records were known in time."""
        info = AsyncServiceInfo(SERVICE, name)
        if not await info.async_request(self.zc.zeroconf, RESOLVE_MS):
            return False
        try:
            ad = TableAd.from_txt(name[: -len(SERVICE) - 1], info.decoded_properties,
                                  info.parsed_addresses(IPVersion.V4Only))
        except (MalformedMessage, BadTypeInNameException):
            return True  # someone else's broken ad: not a table we can join
        self._take(name, ad)
        return True

    def _take(self, name: str, ad: TableAd) -> None:
        """Keep the ad just resolved under the full service name `name`: as its signer's when a watched key signed it,
        and among those seen, the last resolved last; a table ad only when it may be listed (`_keep_hosted`)."""
        if ad.role == "table" and not self._keep_hosted(ad):
            return
        self._keep_signed(ad)
        if name not in self.seen and len(self.seen) >= MAX_SEEN:
            # Too many ads: a new one takes the place of the oldest peer ad (no lobby shows one; a seat's signed ad
            # is kept in `signed`), so that forged peer ads cannot keep a seat's own ad, under a name not seen yet,
            # from being read; with only tables kept, it is not kept.
            oldest = next((n for n, a in self.seen.items() if a.role == "peer"), None)
            if oldest is None:
                return
            del self.seen[oldest]
        if self.seen.get(name) != ad:
            self.seen.pop(name, None)
            self.seen[name] = ad
            self._missing.pop(name, None)
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


async def ask_for_table(address: str, table: bytes, host: bytes, timeout: float = ASK_S,
                        port: int = MDNS_PORT) -> TableAd | None:
    """The ad of `table` signed by its host's key `host` that the mDNS responder at `address` answers a one-shot query
    with (RFC 6762 §5.1, protocol.md §17): what a guest that joined a table by address learns its name from. None when
    no answer names it in time (a host without multicast, another peer's responder on its machine answering, a network
    that drops datagrams)."""
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
                ad = _table_in(await answers.get(), address, table, host)
                if ad is not None:
                    return ad
    except (TimeoutError, OSError):
        pass
    finally:
        transport.close()
    return None


def _table_in(datagram: bytes, address: str, table: bytes, host: bytes) -> TableAd | None:
    """The table ad of `table` that `host` signed in an mDNS answer (its pointer and TXT record), or None."""
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
            if ad.genuine and ad.key == host and ad.table == table:
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


def _stamped(ad: TableAd, identity: Identity) -> TableAd:
    """`ad` signed by `identity` and stamped with the wall clock in ms, later than its last stamp."""
    return ad.signed(identity, max(time.time_ns() // 1_000_000, ad.at + 1))


def _instance(name: str) -> str:
    """A DNS-SD instance name: printable, no dots, at most MAX_INSTANCE bytes."""
    clean = "".join(c if c.isprintable() and c != "." else "-" for c in name).strip() or "table"
    while len(clean.encode()) > MAX_INSTANCE:
        clean = clean[:-1]
    return clean


def wire_options(options: Mapping[str, Any]) -> tuple[tuple[str, Any], ...]:
    """Host options (times in seconds) as a TableAd holds them."""
    return tuple(sorted(options_to_wire(options).items()))
