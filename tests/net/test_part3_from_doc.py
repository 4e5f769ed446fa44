"""A second, independent peer written from protocol.md alone (§1–§3, §6.1, §17, §18) against a real host.

Nothing here imports p2pcards: framing, the handshake, heartbeats, a guest's join, a request for missing
frames and the discovery records are built from the document with msgpack, PyNaCl and python-zeroconf, so
that where the document and the reference peer disagree, this file fails. The other side, host or guest, is
a real `p2pcards peer` process on loopback; mDNS stays on 127.0.0.1 (nothing goes to a real network)."""

from __future__ import annotations

import asyncio
import base64
import hashlib
import json
import secrets
import socket
import struct
import time
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import Any

import msgpack  # type: ignore[import-untyped]
import pytest
from nacl.bindings import crypto_core_ed25519_is_valid_point
from nacl.exceptions import BadSignatureError
from nacl.signing import SigningKey, VerifyKey
from zeroconf import IPVersion, ServiceStateChange
from zeroconf.asyncio import AsyncServiceBrowser, AsyncServiceInfo, AsyncZeroconf

from tests.net.net_procs import PeerProc

SERVICE = "_p2pcards._tcp.local."
MAX_FRAME = 1 << 20
HELLO_CAP, PROOF_CAP = 257, 65
ZEROS = bytes(32)
LINK_V = 4  # §18.2's `v`, §17's `pv`
WAIT = 20.0  # generous bound on any one step, never an assertion on time


# ---- §1: canonical msgpack ------------------------------------------------------------------------------------

def canon(value: Any) -> Any:
    """The value with every map's keys in ascending bytewise order of their UTF-8 (§1)."""
    if isinstance(value, dict):
        return {k: canon(value[k]) for k in sorted(value, key=lambda k: k.encode())}
    if isinstance(value, (list, tuple)):
        return [canon(v) for v in value]
    return value


def pack(value: Any) -> bytes:
    """The canonical encoding (§1)."""
    data: bytes = msgpack.packb(canon(value), use_bin_type=True)
    return data


def unpack(data: bytes) -> Any:
    """Strict decoding: one value, str keys, no floats or extensions, and canonical (re-encoding gives the bytes)."""
    value = msgpack.unpackb(data, raw=False, strict_map_key=True, use_list=True,
                            max_str_len=4096, max_bin_len=524288, max_array_len=4096, max_map_len=64, max_ext_len=0)
    assert pack(value) == data, "not canonical"
    assert not has_float(value) and depth(value) <= 16
    return value


def has_float(value: Any) -> bool:
    """Whether a float is anywhere in `value`."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return any(has_float(v) for v in value)
    return isinstance(value, float)


def depth(value: Any) -> int:
    """How many levels of arrays and maps lie below the top value."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0) if value else 0
    return 0


def blake(data: bytes, n: int, person: bytes) -> bytes:
    """BLAKE2b with digest `n` and personalisation `person` (zero-padded to 16 bytes by hashlib)."""
    return hashlib.blake2b(data, digest_size=n, person=person).digest()


# ---- §2, §3: envelopes, signatures, fingerprints ----------------------------------------------------------------

def fingerprint(key: bytes) -> str:
    """§3: five groups of five digits."""
    h = blake(key, 25, b"p2pc/fpr/v1")
    return " ".join(f"{int.from_bytes(h[5 * i:5 * i + 5], 'big') % 100_000:05d}" for i in range(5))


def verify(key: bytes, message: bytes, sig: bytes) -> bool:
    """§3's strict rule, with the key validated first."""
    L = 2 ** 252 + 27742317777372353535851937790883648493
    if len(sig) != 64 or not crypto_core_ed25519_is_valid_point(key):
        return False
    if int.from_bytes(sig[32:], "little") >= L or sig[:32] == b"\x01" + bytes(31):
        return False
    try:
        VerifyKey(key).verify(message, sig)
    except BadSignatureError:
        return False
    return True


def msg_hash(message: bytes) -> bytes:
    """§2: the message hash."""
    return blake(message, 32, b"p2pc/msg/v1")


@dataclass(frozen=True)
class Envelope:
    """One received frame of §2, checked as far as a stranger can (shape and signature)."""

    frame: bytes
    message: bytes
    fields: dict[str, Any]

    @classmethod
    def parse(cls, frame: bytes) -> Envelope:
        assert 64 < len(frame) <= MAX_FRAME
        message = frame[64:]
        fields = unpack(message)
        assert isinstance(fields, dict) and list(fields) == ["body", "prev", "round", "sender", "seq", "table", "type"]
        assert isinstance(fields["table"], bytes) and 1 <= len(fields["table"]) <= 64
        assert isinstance(fields["sender"], bytes) and len(fields["sender"]) == 32
        assert isinstance(fields["prev"], bytes) and len(fields["prev"]) == 32
        assert isinstance(fields["body"], dict) and isinstance(fields["type"], str)
        assert verify(fields["sender"], message, frame[:64]), "bad signature"
        return cls(frame, message, fields)

    def __getattr__(self, name: str) -> Any:
        return self.fields[name]


@dataclass
class Chain:
    """A sender's chain at one table (§2)."""

    signer: SigningKey
    context: bytes
    seq: int = 0
    prev: bytes = ZEROS

    def sign(self, type_: str, body: dict[str, Any], round_: int = 0) -> bytes:
        """The next frame of this chain: signature || message."""
        message = pack({"body": body, "prev": self.prev, "round": round_, "sender": bytes(self.signer.verify_key),
                        "seq": self.seq, "table": self.context, "type": type_})
        self.seq, self.prev = self.seq + 1, msg_hash(message)
        return self.signer.sign(message).signature + message


# ---- §18.1, §18.2: framing and the handshake --------------------------------------------------------------------

def framed(kind: bytes, payload: bytes = b"") -> bytes:
    """length (4 bytes BE, N) || kind || payload, N = 1 + len(payload)."""
    return struct.pack(">I", 1 + len(payload)) + kind + payload


def transcript(role: str, hello_l: bytes, hello_d: bytes) -> bytes:
    """§18.2: the 76 bytes a side signs: 'p2pc/link/v1' then T_X."""
    return b"p2pc/link/v1" + blake(pack([role, hello_l, hello_d]), 64, b"p2pc/link/v1")


class Closed(Exception):
    """The other side closed the link."""


@dataclass
class Link:
    """One TCP link of §18, this side the dialer."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    cap: int = HELLO_CAP
    goodbye: str | None = None
    kinds: list[bytes] = field(default_factory=list)
    requests: list[list[Any]] = field(default_factory=list)
    mine: dict[tuple[bytes, int], list[bytes]] = field(default_factory=dict)  # (table id, seat): our chain's frames

    async def read(self) -> tuple[bytes, bytes]:
        """The next (kind, payload); heartbeats are counted in `kinds` and returned too."""
        try:
            head = await asyncio.wait_for(self.reader.readexactly(5), WAIT)
            n = struct.unpack(">I", head[:4])[0]
            assert 1 <= n <= self.cap, f"the peer sent a frame of {n} bytes (cap {self.cap})"
            payload = await asyncio.wait_for(self.reader.readexactly(n - 1), WAIT)
        except asyncio.IncompleteReadError as e:
            raise Closed(e.partial) from None
        kind = head[4:5]
        self.kinds.append(kind)
        if kind == b"B":
            self.goodbye = payload.decode()
        if kind == b"Q":
            self.answer(payload)
        return kind, payload

    def answer(self, payload: bytes) -> None:
        """§18.5: check a request's shape, and answer what we hold of it as R frames in seq order."""
        assert len(payload) <= 96
        request = unpack(payload)
        seat, first, count, table = request
        assert isinstance(table, bytes) and 1 <= len(table) <= 64 and first >= 0 and 1 <= count <= 64
        self.requests.append(request)
        for frame in self.mine.get((table, seat), [])[first:first + count]:
            self.send(b"R", frame)

    async def next(self, *want: bytes, skip: bytes = b"KQ") -> tuple[bytes, bytes]:
        """The next frame of a kind in `want`, skipping heartbeats and requests (answered) and kinds in `skip`."""
        while True:
            kind, payload = await self.read()
            if kind in want:
                return kind, payload
            assert kind in skip, f"unexpected {kind!r} {payload[:80]!r}"

    def send(self, kind: bytes, payload: bytes = b"") -> None:
        self.writer.write(framed(kind, payload))

    async def closed(self) -> bytes:
        """Wait for the end of the stream; every kind that came before it (heartbeats and goodbyes included)."""
        seen = b""
        try:
            while True:
                kind, _ = await self.read()
                seen += kind
        except (Closed, ConnectionError):  # a reset, or a broken pipe that a write of ours met
            return seen

    def close(self) -> None:
        self.writer.close()


def hello(key: bytes, table: bytes, *, port: int = 0, v: int = LINK_V, nonce: bytes | None = None) -> bytes:
    """§18.2's hello map."""
    return pack({"key": key, "nonce": secrets.token_bytes(32) if nonce is None else nonce, "port": port,
                 "table": table, "v": v})


async def dial(port: int) -> Link:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    return Link(reader, writer)


async def handshake(port: int, signer: SigningKey, expect: bytes | None = None,
                    listen_port: int = 0) -> tuple[Link, dict[str, Any], bytes, bytes]:
    """Dial and run §18.2 as the dialer, adopting the listener's table; the link, the listener's hello, ours, our
    proof."""
    link = await dial(port)
    kind, hello_l = await link.read()
    assert kind == b"H"
    theirs = unpack(hello_l)
    assert list(theirs) == ["key", "nonce", "port", "table", "v"] and theirs["v"] == LINK_V
    assert len(theirs["nonce"]) == 32 and 0 <= theirs["port"] <= 65535 and 1 <= len(theirs["table"]) <= 64
    assert crypto_core_ed25519_is_valid_point(theirs["key"])
    if expect is not None:
        assert theirs["key"] == expect
    hello_d = hello(bytes(signer.verify_key), theirs["table"], port=listen_port)
    proof = signer.sign(transcript("dialer", hello_l, hello_d)).signature
    link.send(b"H", hello_d)
    link.send(b"P", proof)
    link.cap = PROOF_CAP
    kind, sig = await link.read()
    assert kind == b"P" and len(sig) == 64
    assert verify(theirs["key"], transcript("listener", hello_l, hello_d), sig)
    link.cap = MAX_FRAME + 1
    return link, theirs, hello_d, proof


# ---- §17: discovery -------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Ad:
    name: str
    port: int
    addresses: tuple[str, ...]
    txt: dict[str, str]
    raw: tuple[bytes, ...]


def strings(text: bytes) -> tuple[bytes, ...]:
    """A TXT record's character-strings (RFC 6763 §6: each a length byte, then that many bytes)."""
    out, i = [], 0
    while i < len(text):
        out.append(text[i + 1:i + 1 + text[i]])
        i += 1 + text[i]
    return tuple(out)


@asynccontextmanager
async def browser() -> AsyncIterator[dict[str, Ad]]:
    """Every ad of our service type on 127.0.0.1, kept up to date while the block runs."""
    ads: dict[str, Ad] = {}
    zc = AsyncZeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    tasks: set[asyncio.Task[None]] = set()

    async def resolve(name: str) -> None:
        info = AsyncServiceInfo(SERVICE, name)
        if await info.async_request(zc.zeroconf, 3000) and info.port is not None:
            raw = strings(info.text or b"")
            txt = dict(s.decode().partition("=")[::2] for s in raw)
            ads[name] = Ad(name, info.port, tuple(info.parsed_addresses()), txt, raw)

    def changed(zeroconf: Any, service_type: str, name: str, state_change: ServiceStateChange) -> None:
        if state_change is ServiceStateChange.Removed:
            ads.pop(name, None)
        else:
            task = asyncio.ensure_future(resolve(name))
            tasks.add(task)
            task.add_done_callback(tasks.discard)

    browse = AsyncServiceBrowser(zc.zeroconf, SERVICE, handlers=[changed])
    try:
        yield ads
    finally:
        await browse.async_cancel()
        await zc.async_close()


async def ad_where(ads: dict[str, Ad], test: Any) -> Ad:
    """The first ad for which `test` holds, waiting for it."""
    for _ in range(int(WAIT / 0.05)):
        for ad in list(ads.values()):
            if test(ad):
                return ad
        await asyncio.sleep(0.05)
    raise AssertionError(f"no such ad among {ads}")


# ---- the real host --------------------------------------------------------------------------------------------

def start_host(tag: str, *extra: str) -> PeerProc:
    """A real host of a two-seat Crisp table on loopback, announced by mDNS on 127.0.0.1 only."""
    return PeerProc("--bot", "random", "--create", "--game", "crisp", "--players", "2", "--name", f"h{tag}",
                    "--table", f"doc {tag}", "--interface", "127.0.0.1", "--limit", "50", "--draw-seconds", "30",
                    *extra)


async def heartbeats(link: Link) -> None:
    """§18.3: a heartbeat every second, whatever else goes."""
    while True:
        link.send(b"K")
        await asyncio.sleep(1)


def b64(raw: bytes) -> str:
    """§17: base64url (RFC 4648 §5) without padding."""
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def ad_message(name: str, txt: dict[str, str]) -> bytes:
    """§17: M = "p2pc/ad/v1" || canonical msgpack of [instance name, every key but sig]."""
    return b"p2pc/ad/v1" + pack([name, {k: v for k, v in txt.items() if k != "sig"}])


def check_txt(ad: Ad) -> None:
    """§17's rules for every TXT record: sizes, versions, every key's value, and the signature (a table ad's by the key
    it carries, which has its fingerprint)."""
    table = ad.txt.get("role") == "table"
    assert all(len(s) <= 255 for s in ad.raw) and sum(1 + len(s) for s in ad.raw) < (700 if table else 600)
    assert all(len(v.encode()) <= 200 for v in ad.txt.values())
    txt = ad.txt
    assert set(txt) == {"txtvers", "pv", "role", "id", "game", "opts", "taken", "free", "host", "fpr", "port",
                        "addr", "at", "sig", *(("key",) if table else ())}, txt
    assert len(txt["sig"]) == 86 and "=" not in txt["sig"] and txt["at"].isdigit() and txt["at"][0] != "0"
    if table:
        key = base64.urlsafe_b64decode(txt["key"] + "=")
        assert len(txt["key"]) == 43 and b64(key) == txt["key"] and fingerprint(key) == txt["fpr"]
        assert verify(key, ad_message(ad.name[: -len(SERVICE) - 1], txt), base64.urlsafe_b64decode(txt["sig"] + "=="))
    assert (txt["txtvers"], txt["pv"]) == ("1", str(LINK_V)) and txt["role"] in ("table", "peer")
    assert txt["id"] == txt["id"].lower() and 1 <= len(bytes.fromhex(txt["id"])) <= 64
    assert txt["game"] in ("crisp", "crescendo")
    opts = json.loads(txt["opts"])
    assert txt["opts"] == json.dumps(opts, sort_keys=True, separators=(",", ":"))
    assert 0 <= int(txt["taken"]) <= 16 and 0 <= int(txt["free"]) <= 16
    assert len(txt["fpr"].split(" ")) == 5 and all(len(g) == 5 and g.isdigit() for g in txt["fpr"].split(" "))
    assert txt["port"] == str(ad.port)


@pytest.mark.slow
def test_a_guest_written_from_the_document_joins_a_real_host_and_asks_for_frames() -> None:
    tag = secrets.token_hex(3)
    host = start_host(tag)

    async def main() -> None:
        async with browser() as ads:
            # §17: the table's ad, before anyone joined.
            table_ad = await ad_where(ads, lambda ad: ad.name == f"doc {tag}.{SERVICE}")
            check_txt(table_ad)
            txt = table_ad.txt
            assert txt["role"] == "table" and txt["game"] == "crisp" and txt["host"] == f"h{tag}"
            assert json.loads(txt["opts"]) == {"discard_draw": False, "draw_seconds": 30000, "limit": 50}
            assert (txt["taken"], txt["free"]) == ("1", "1") and table_ad.addresses == ("127.0.0.1",)
            assert table_ad.port == host.port() and txt["addr"] == "127.0.0.1"

            # §18.2: the handshake, as a dialer that knows the table from its ad; the key is the announced one.
            signer = SigningKey.generate()
            me = bytes(signer.verify_key)
            link, theirs, hello_d, proof = await handshake(table_ad.port, signer, listen_port=4999)
            host_key, table_id = theirs["key"], theirs["table"]
            assert b64(host_key) == txt["key"] and fingerprint(host_key) == txt["fpr"] and table_id.hex() == txt["id"]
            assert theirs["port"] == table_ad.port
            beat = asyncio.ensure_future(heartbeats(link))

            # §18.4, §6.1: the host's `table` comes first, then our `join`, the `seats` and the addresses.
            announce = Envelope.parse((await link.next(b"F"))[1])
            assert (announce.type, announce.sender, announce.seq, announce.prev, announce.round, announce.table) == (
                "table", host_key, 0, ZEROS, 0, table_id)
            assert list(announce.body) == ["game", "name", "nonce", "options"]
            assert announce.body["game"] == "crisp" and announce.body["name"] == f"h{tag}"
            assert announce.body["options"] == json.loads(txt["opts"]) and len(announce.body["nonce"]) == 32
            lobby = Chain(signer, table_id)
            nonce = secrets.token_bytes(32)
            join = lobby.sign("join", {"name": "docguest", "nonce": nonce})
            link.send(b"F", join)
            echoed = Envelope.parse((await link.next(b"F"))[1])
            assert echoed.frame == join  # every accepted join goes to every link, its own guest's too
            seats = Envelope.parse((await link.next(b"F"))[1])
            assert (seats.type, seats.sender, seats.seq, seats.prev) == ("seats", host_key, 1, msg_hash(announce.message))
            config = seats.body["config"]
            assert list(seats.body) == ["config"]
            assert config == {"dealer": 0, "game": "crisp", "keys": [host_key, me], "names": [f"h{tag}", "docguest"],
                              "nonces": [announce.body["nonce"], nonce], "options": announce.body["options"],
                              "table": table_id}
            kind, addresses = await link.next(b"A")
            entries = unpack(addresses)
            assert entries == [[me, ["127.0.0.1"], 4999]]  # only seats whose hello port is not 0: ours

            # §17: seated, the table's ad says so (signed again, stamped later), and the host announces its peer ad.
            seated = await ad_where(ads, lambda ad: ad.name == f"doc {tag}.{SERVICE}" and ad.txt["free"] == "0")
            check_txt(seated)
            assert int(seated.txt["at"]) > int(txt["at"]) and seated.txt["key"] == txt["key"]
            peer_ad = await ad_where(ads, lambda ad: ad.txt.get("role") == "peer" and ad.txt.get("id") == txt["id"])
            check_txt(peer_ad)
            assert peer_ad.name == f"h{tag} {txt['fpr'][:5]}.{SERVICE}"
            signed = {k: v for k, v in peer_ad.txt.items() if k not in ("addr", "at", "sig")}
            unsigned = {k: v for k, v in txt.items() if k not in ("addr", "at", "sig", "key")}
            assert signed == {**unsigned, "role": "peer", "taken": "2", "free": "0"} and peer_ad.port == table_ad.port
            # The signed peer ad: M = "p2pc/ad/v1" || [instance name, every key but sig], signed by the host's key.
            sig = peer_ad.txt["sig"]
            assert len(sig) == 86 and "=" not in sig and peer_ad.txt["addr"] == "127.0.0.1"
            assert peer_ad.txt["at"].isdigit() and peer_ad.txt["at"][0] != "0"
            message = ad_message(peer_ad.name[: -len(SERVICE) - 1], peer_ad.txt)
            VerifyKey(host_key).verify(message, base64.urlsafe_b64decode(sig + "=="))

            # §8.1: `ready` on the table's chain; the host's comes too (it may come before ours).
            context = blake(pack(config), 32, b"p2pc/config/v1")
            table = Chain(signer, context)
            ours = table.sign("ready", {"config": context})
            link.mine[table_id, 1] = [ours]
            link.send(b"F", ours)
            ready = Envelope.parse((await link.next(b"F"))[1])
            assert (ready.type, ready.sender, ready.seq, ready.prev, ready.round, ready.table, ready.body) == (
                "ready", host_key, 0, ZEROS, 0, context, {"config": context})

            # §18.5: a request names the config's table id; the answer is R frames in seq order, nothing for
            # places the answerer does not hold (so the first answer is to the second request).
            link.send(b"Q", pack([0, 100, 5, table_id]))
            link.send(b"Q", pack([0, 0, 1, table_id]))
            link.send(b"Q", pack([1, 0, 1, table_id]))
            assert (await link.next(b"R", skip=b"KQF"))[1] == ready.frame
            assert (await link.next(b"R", skip=b"KQF"))[1] == ours

            # §18.3: heartbeats came on the link.
            while b"K" not in link.kinds:
                await link.read()

            # §18.2: after the seats a stranger's valid handshake is refused, and so is our own handshake replayed.
            stranger = SigningKey.generate()
            with pytest.raises(Closed):
                await handshake(table_ad.port, stranger)
            replay = await dial(table_ad.port)
            assert (await replay.read())[0] == b"H"
            replay.send(b"H", hello_d)
            replay.send(b"P", proof)
            assert await replay.closed() == b""

            # §18.2: a newer link from our key replaces the older one.
            beat.cancel()
            newer, _, _, _ = await handshake(table_ad.port, signer, expect=host_key)
            await link.closed()
            newer.send(b"Q", pack([0, 0, 1, table_id]))
            assert (await newer.next(b"R", skip=b"KQF"))[1] == ready.frame
            link = newer

            # §18.1, §18.5: whatever breaks a rule closes the seated link, with no goodbye; we dial again, and
            # the host, alive, takes our key and answers.
            for junk in [framed(b"Q", pack([0, 0, 0, table_id])),  # count 0
                         framed(b"Q", pack([2, 0, 1, table_id])),  # a seat the table does not have
                         framed(b"Q", pack([0, 0, 1, table_id, 0])),  # a fifth item
                         framed(b"F", b"\x00" * 100),  # not an envelope
                         framed(b"F", ours[:-1]),  # truncated
                         framed(b"H", hello_d), framed(b"P", proof),  # the handshake is done
                         framed(b"A", pack([])),  # addresses from a guest
                         framed(b"Z"),  # no such kind
                         struct.pack(">I", MAX_FRAME + 2) + b"F"]:  # over the cap
                link.writer.write(junk)
                assert b"B" not in await link.closed(), junk[:6]
                link, _, _, _ = await handshake(table_ad.port, signer, expect=host_key)
                link.send(b"Q", pack([0, 0, 1, table_id]))
                assert (await link.next(b"R", skip=b"KQF"))[1] == ready.frame
            assert host.proc.poll() is None

            # §17: on SIGTERM the host withdraws both its ads with goodbye packets.
            host.signal()
            for _ in range(int(WAIT / 0.05)):
                if not any(ad.txt["id"] == txt["id"] for ad in list(ads.values())):
                    break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError(f"the host's ads are still there: {ads}")

    try:
        asyncio.run(main())
    finally:
        host.stop()


async def closed_after_hello(port: int, *sends: bytes) -> tuple[bytes, Link]:
    """Dial, take the listener's hello, write `sends` raw; every kind that came before the link closed."""
    link = await dial(port)
    kind, hello_l = await link.read()
    assert kind == b"H"
    link.writer.write(b"".join(sends))
    return await link.closed(), link


async def lobby_link(port: int, signer: SigningKey | None = None) -> tuple[Link, bytes]:
    """A stranger's link in the open lobby, handshake done; the table id."""
    link, theirs, _, _ = await handshake(port, signer or SigningKey.generate())
    return link, theirs["table"]


def test_a_real_host_refuses_bad_handshakes_and_frames_and_still_seats_a_guest() -> None:
    tag = secrets.token_hex(3)
    host = start_host(tag, "--no-mdns")

    async def main() -> None:
        port = host.port()
        other = SigningKey.generate()
        first = await dial(port)
        hello_l = unpack((await first.read())[1])
        table_id, host_key = hello_l["table"], hello_l["key"]
        first.close()
        good = hello(bytes(other.verify_key), table_id)
        unsorted = msgpack.packb({"v": LINK_V, "key": bytes(other.verify_key), "nonce": bytes(32), "port": 0,
                                  "table": table_id}, use_bin_type=True)
        extra = pack({"key": bytes(other.verify_key), "nonce": bytes(32), "port": 0, "table": table_id, "v": LINK_V,
                      "x": 1})
        # §18.1, §18.2: each of these closes the link before the handshake is done, with no goodbye.
        for sends in [
            [struct.pack(">I", 0xFFFFFFFF)],  # a 4 GiB length
            [struct.pack(">I", 0)],  # N = 0
            [framed(b"H", good + bytes(257 - len(good)))],  # a hello over its cap of 257
            [framed(b"F", b"x" * 100)],  # a frame before the handshake
            [framed(b"K")],  # a heartbeat before the handshake
            [framed(b"Z", b"")],  # an unknown kind
            [framed(b"H", hello(bytes(other.verify_key), table_id, v=1))],  # link version 1
            [framed(b"H", hello(bytes(other.verify_key), b"another table"))],  # another table
            [framed(b"H", hello(host_key, table_id))],  # the listener's own key
            [framed(b"H", hello(bytes(32), table_id)), framed(b"P", bytes(64))],  # not a valid point
            [framed(b"H", unsorted)],  # not canonical
            [framed(b"H", extra)],  # a sixth key
            [framed(b"H", good), framed(b"P", bytes(64))],  # a proof that does not verify
            [framed(b"H", good), framed(b"P", bytes(65))],  # a proof over its cap of 65
        ]:
            seen, _ = await closed_after_hello(port, *sends)
            assert seen == b"", (sends, seen)
        # A hello out of its ranges closes the link, even with a proof that verifies.
        bads: list[dict[str, Any]] = [{"nonce": bytes(31)}, {"port": 65536}, {"port": -1}, {"v": "3"}, {"key": bytes(31)}]
        for bad in bads:
            link = await dial(port)
            hello_l = (await link.read())[1]
            hello_d = pack({"key": bytes(other.verify_key), "nonce": bytes(32), "port": 0, "table": table_id, "v": LINK_V,
                            **bad})
            link.send(b"H", hello_d)
            link.send(b"P", other.sign(transcript("dialer", hello_l, hello_d)).signature)
            assert await link.closed() == b"", bad

        # §18.4: in the open lobby a stranger's handshake is done, but a frame that is not its own `join` closes it.
        for frame in [
            b"\x00" * 100,  # not an envelope
            Chain(SigningKey.generate(), table_id).sign("join", {"name": "ghost", "nonce": bytes(32)}),  # another key's
            Chain(other, table_id).sign("seats", {"config": {}}),  # not a join
            Chain(other, table_id).sign("join", {"name": "x", "nonce": bytes(32)})[:-1],  # truncated
        ]:
            link, _ = await lobby_link(port, other)
            await link.next(b"F")  # the host's `table`
            link.send(b"F", frame)
            assert await link.closed() == b"", frame  # at once: no goodbye, which says why a join was refused
        for bad, why in [({"name": f"h{tag}", "nonce": bytes(32)}, "name"), ({"name": "ok", "nonce": bytes(31)}, "nonce"),
                         ({"name": " spaced", "nonce": bytes(32)}, "name")]:
            link, _ = await lobby_link(port, other)
            await link.next(b"F")
            link.send(b"F", Chain(other, table_id).sign("join", bad))
            assert (await link.closed()).endswith(b"B") and link.goodbye, bad
        # §18.1: the host reads until we end the stream, so that what we send after its goodbye (a heartbeat on its
        # way) brings no reset, which would throw its `B` away (a stream raises a reset before what came ahead of it).
        late = SigningKey.generate()
        link, _ = await lobby_link(port, late)
        await link.next(b"F")
        link.send(b"F", Chain(late, table_id).sign("join", {"name": f"h{tag}", "nonce": bytes(32)}))
        await asyncio.sleep(0.5)  # the host has said goodbye: it is in our stream, unread, when ...
        for _ in range(2):
            link.send(b"K")  # ... this reaches the host (a socket closed would reset: the next write raises it)
            await asyncio.sleep(0.3)
        assert (await link.closed()).endswith(b"B") and "name" in (link.goodbye or ""), link.kinds
        link, _ = await lobby_link(port)
        await link.next(b"F")
        link.send(b"A", pack([]))  # addresses from a guest
        assert await link.closed() == b""

        # After all that the host still seats a guest; a request before the seats is ignored (no table yet).
        signer = SigningKey.generate()
        link, table_id = await lobby_link(port, signer)
        await link.next(b"F")
        link.send(b"Q", pack([0, 0, 1, table_id]))
        link.send(b"F", Chain(signer, table_id).sign("join", {"name": "late", "nonce": secrets.token_bytes(32)}))
        await link.next(b"F")  # our join, back
        seats = Envelope.parse((await link.next(b"F"))[1])
        assert seats.type == "seats" and seats.body["config"]["names"] == [f"h{tag}", "late"]
        assert unpack((await link.next(b"A"))[1]) == []  # our hello said port 0: we listen nowhere
        link.close()
        assert host.proc.poll() is None

    try:
        asyncio.run(main())
    finally:
        host.stop()


async def listener() -> tuple[asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]], asyncio.Server, int]:
    """A port on loopback, as a peer written from the document listens: each connection made there is queued."""
    accepted: asyncio.Queue[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = asyncio.Queue()
    server = await asyncio.start_server(lambda r, w: accepted.put_nowait((r, w)), "127.0.0.1", 0)
    return accepted, server, server.sockets[0].getsockname()[1]


async def accept_handshake(reader: asyncio.StreamReader, writer: asyncio.StreamWriter, signer: SigningKey,
                           table_id: bytes, port: int) -> tuple[Link, dict[str, Any]]:
    """§18.2 as the listener: our hello first, then the dialer's hello and proof, then ours; the dialer's hello."""
    link = Link(reader, writer)
    hello_l = hello(bytes(signer.verify_key), table_id, port=port)
    link.send(b"H", hello_l)
    kind, hello_d = await link.read()
    assert kind == b"H"
    theirs = unpack(hello_d)
    assert list(theirs) == ["key", "nonce", "port", "table", "v"] and theirs["v"] == LINK_V
    assert theirs["table"] == table_id and theirs["key"] != bytes(signer.verify_key)
    assert crypto_core_ed25519_is_valid_point(theirs["key"]) and len(theirs["nonce"]) == 32
    link.cap = PROOF_CAP
    kind, sig = await link.read()
    assert kind == b"P" and verify(theirs["key"], transcript("dialer", hello_l, hello_d), sig)
    link.send(b"P", signer.sign(transcript("listener", hello_l, hello_d)).signature)
    link.cap = MAX_FRAME + 1
    return link, theirs


@pytest.mark.slow
def test_a_real_guest_joins_a_host_written_from_the_document() -> None:
    async def main() -> None:
        signer = SigningKey.generate()
        me = bytes(signer.verify_key)
        table_id = secrets.token_bytes(16)
        links, server, port = await listener()
        guest = PeerProc("--bot", "random", "--name", "realguest", "--peer", f"127.0.0.1:{port}", "--json")
        try:
            link, theirs = await accept_handshake(*await asyncio.wait_for(links.get(), WAIT), signer, table_id, port)
            beat = asyncio.ensure_future(heartbeats(link))
            guest_key = theirs["key"]

            # §18.4, §6.1: our `table`, the guest's `join`, its join back, our `seats`, the addresses.
            lobby = Chain(signer, table_id)
            our_nonce = secrets.token_bytes(32)
            options = {"limit": 50}  # the other host options take their defaults
            link.send(b"F", lobby.sign("table", {"game": "crisp", "name": "dochost", "nonce": our_nonce,
                                                  "options": options}))
            join = Envelope.parse((await link.next(b"F"))[1])
            assert (join.type, join.sender, join.seq, join.prev, join.round, join.table) == (
                "join", guest_key, 0, ZEROS, 0, table_id)
            assert list(join.body) == ["name", "nonce"] and join.body["name"] == "realguest"
            link.send(b"F", join.frame)
            config = {"dealer": 0, "game": "crisp", "keys": [me, guest_key], "names": ["dochost", "realguest"],
                      "nonces": [our_nonce, join.body["nonce"]], "options": options, "table": table_id}
            link.send(b"F", lobby.sign("seats", {"config": config}))
            link.send(b"A", pack([[guest_key, ["127.0.0.1"], theirs["port"] or 1]]))  # its own entry: ignored

            # §8.1: the guest says `ready` on the table's chain, and on ours begins round 1 with its `key`.
            context = blake(pack(config), 32, b"p2pc/config/v1")
            ready = Envelope.parse((await link.next(b"F"))[1])
            assert (ready.type, ready.sender, ready.seq, ready.prev, ready.round, ready.table, ready.body) == (
                "ready", guest_key, 0, ZEROS, 0, context, {"config": context})
            table = Chain(signer, context)
            ours = table.sign("ready", {"config": context})
            link.mine[table_id, 0] = [ours]
            link.send(b"F", ours)
            key = Envelope.parse((await link.next(b"F"))[1])
            assert (key.type, key.seq, key.prev, key.round, list(key.body)) == (
                "key", 1, msg_hash(ready.message), 1, ["commitment", "proof", "public", "seat"])
            assert key.body["seat"] == 1

            # §18.5: the guest answers a request for its own chain, in seq order.
            link.send(b"Q", pack([1, 0, 2, table_id]))
            got = [(await link.next(b"R", skip=b"KQF"))[1] for _ in range(2)]
            assert got == [ready.frame, key.frame]
            while b"K" not in link.kinds:
                await link.read()

            # A frame that is not an envelope closes the link; the guest, the later seat, dials us again (§18.3),
            # hangs up on a listener with another key (§18.2: the key it meant to reach), and proves the same key.
            beat.cancel()
            link.send(b"F", b"\x00" * 100)
            await link.closed()
            impostor = Link(*await asyncio.wait_for(links.get(), WAIT))
            impostor.send(b"H", hello(bytes(SigningKey.generate().verify_key), table_id, port=port))
            assert await impostor.closed() == b""  # not even its hello
            link, again = await accept_handshake(*await asyncio.wait_for(links.get(), WAIT), signer, table_id, port)
            assert again["key"] == guest_key
            link.mine[table_id, 0] = [ours]
            link.send(b"Q", pack([1, 1, 1, table_id]))
            assert (await link.next(b"R", skip=b"KQF"))[1] == key.frame

            # §14.6: we leave; with one seat left the game is over for the guest, which ends.
            link.send(b"F", table.sign("leave", {"why": "the test is over"}))
            await link.closed()
            result = await asyncio.to_thread(guest.result, WAIT)
            assert result["rc"] == 0 and result["names"] == ["dochost", "realguest"] and not result["faults"], result
            assert "dochost left the table (the test is over)" in " ".join(result["notes"]), result
        finally:
            guest.stop()
            server.close()

    asyncio.run(main())


def test_at_three_seats_a_real_guest_dials_the_guest_from_the_document_where_the_host_says() -> None:
    tag = secrets.token_hex(3)
    host = start_host(tag, "--no-mdns", "--players", "3")
    guest: PeerProc | None = None

    async def main() -> None:
        nonlocal guest
        signer = SigningKey.generate()
        me = bytes(signer.verify_key)
        incoming, server, mine = await listener()
        try:
            port = host.port()
            link, theirs, _, _ = await handshake(port, signer, listen_port=mine)
            host_key, table_id = theirs["key"], theirs["table"]
            await link.next(b"F")  # the host's table
            nonce = secrets.token_bytes(32)
            join = Chain(signer, table_id).sign("join", {"name": "middle", "nonce": nonce})
            link.send(b"F", join)
            assert (await link.next(b"F"))[1] == join
            # Seat 2 joins after us: a real peer, told the host's address.
            guest = PeerProc("--bot", "random", "--name", "last", "--peer", f"127.0.0.1:{port}")
            guest_join = Envelope.parse((await link.next(b"F"))[1])
            seats = Envelope.parse((await link.next(b"F"))[1])
            config = seats.body["config"]
            assert config["keys"] == [host_key, me, guest_join.sender] and config["names"][1:] == ["middle", "last"]
            entries = unpack((await link.next(b"A"))[1])
            # every seat the host is linked to with a port, ours included; each [key, [IP literal, ...], port]
            assert sorted(e[0] for e in entries) == sorted([me, guest_join.sender])
            assert [me, ["127.0.0.1"], mine] in entries

            # §18.4: seat 2 dials every seat before its own, so us, on the address the host gave it.
            side, dialer = await accept_handshake(*await asyncio.wait_for(incoming.get(), WAIT), signer, table_id,
                                                  mine)
            assert dialer["key"] == guest_join.sender
            beats = [asyncio.ensure_future(heartbeats(side)), asyncio.ensure_future(heartbeats(link))]
            context = blake(pack(config), 32, b"p2pc/config/v1")
            ours = Chain(signer, context).sign("ready", {"config": context})
            link.mine[table_id, 1] = side.mine[table_id, 1] = [ours]
            link.send(b"F", ours)
            side.send(b"F", ours)
            host_ready = Envelope.parse((await link.next(b"F"))[1])
            guest_ready = Envelope.parse((await side.next(b"F"))[1])
            assert (host_ready.type, host_ready.sender, guest_ready.type, guest_ready.sender) == (
                "ready", host_key, "ready", guest_join.sender)

            # §18.5: a seat answers for any seat's chain it holds: seat 2 sends us the host's ready again.
            side.send(b"Q", pack([0, 0, 1, table_id]))
            assert (await side.next(b"R", skip=b"KQF"))[1] == host_ready.frame
            for beat in beats:
                beat.cancel()
        finally:
            server.close()

    try:
        asyncio.run(main())
    finally:
        host.stop()
        if guest is not None:
            guest.stop()


async def joined(port: int, name: str) -> tuple[Link, list[Envelope], bytes]:
    """A guest from the document, linked and joined; the lobby frames that came before its join came back, its key."""
    signer = SigningKey.generate()
    link, theirs, _, _ = await handshake(port, signer)
    join = Chain(signer, theirs["table"]).sign("join", {"name": name, "nonce": secrets.token_bytes(32)})
    link.send(b"F", join)
    before: list[Envelope] = []
    while True:
        env = Envelope.parse((await link.next(b"F"))[1])
        if env.frame == join:
            return link, before, bytes(signer.verify_key)
        before.append(env)


def test_a_guest_that_leaves_the_lobby_frees_its_place_and_its_name_and_every_guest_is_told() -> None:
    tag = secrets.token_hex(3)
    host = start_host(tag, "--no-mdns", "--players", "4")

    async def main() -> None:
        port = host.port()
        first, _, first_key = await joined(port, "dup")
        first.close()  # §6.1, §18.4: it leaves the lobby before the seats
        await asyncio.to_thread(host.wait_line, "dup left the lobby", WAIT)
        again, before, again_key = await joined(port, "dup")  # its name is free again
        # The host's chain so far (its table, then `left` naming the guest that went), then every join of the guests
        # still in the lobby (§18.4): not the one that left.
        table, left = before
        assert (table.type, left.type, left.sender, left.seq) == ("table", "left", table.sender, 1)
        assert left.body == {"key": first_key} and left.prev == msg_hash(table.message) and first_key != again_key
        gone, _, gone_key = await joined(port, "gone")
        assert Envelope.parse((await again.next(b"F"))[1]).sender == gone_key
        gone.close()  # a guest still in the lobby is told: its list and its count of seats are the host's
        told = Envelope.parse((await again.next(b"F"))[1])
        assert (told.type, told.seq, told.body) == ("left", 2, {"key": gone_key})
        guests = [await joined(port, name) for name in ("last", "more")]
        for _, _, key in guests:
            assert Envelope.parse((await again.next(b"F"))[1]).sender == key
        seats = Envelope.parse((await again.next(b"F"))[1])
        assert (seats.type, seats.seq) == ("seats", 3)
        assert seats.body["config"]["keys"][1:] == [again_key] + [key for _, _, key in guests]
        assert seats.body["config"]["names"] == [f"h{tag}", "dup", "last", "more"]
        again.close()
        for link, _, _ in guests:
            link.close()

    try:
        asyncio.run(main())
    finally:
        host.stop()


@pytest.mark.slow
def test_a_real_host_closes_a_half_open_connection_and_a_link_that_never_joins() -> None:
    tag = secrets.token_hex(3)
    host = start_host(tag, "--no-mdns")

    async def main() -> None:
        port = host.port()
        silent = await dial(port)  # §18.2: the handshake's 5 s run out
        idle, _ = await lobby_link(port)  # §18.4: no join within 15 s
        beat = asyncio.ensure_future(heartbeats(idle))
        assert await silent.closed() == b"H"
        seen = await idle.closed()
        beat.cancel()
        assert seen.endswith(b"B") and b"F" in seen and "join" in (idle.goodbye or ""), (seen, idle.goodbye)

    try:
        asyncio.run(main())
    finally:
        host.stop()


@asynccontextmanager
async def announced(name: str, txt: dict[str, str], port: int) -> AsyncIterator[None]:
    """A table ad of §17 made with python-zeroconf alone, on 127.0.0.1, withdrawn on the way out."""
    zc = AsyncZeroconf(interfaces=["127.0.0.1"], ip_version=IPVersion.V4Only)
    info = AsyncServiceInfo(SERVICE, f"{name}.{SERVICE}", addresses=[socket.inet_aton("127.0.0.1")], port=port,
                            properties=txt, server=f"doc-{secrets.token_hex(4)}.local.")
    await zc.async_register_service(info)
    try:
        yield
    finally:
        await zc.async_unregister_service(info)
        await zc.async_close()


def table_txt(name: str, signer: SigningKey, table_id: bytes, port: int, fpr: str | None = None) -> dict[str, str]:
    """§17: the TXT record of a table ad on 127.0.0.1 that `signer` signs, carrying its key; naming `fpr` if given."""
    key = bytes(signer.verify_key)
    txt = {"txtvers": "1", "pv": str(LINK_V), "role": "table", "id": table_id.hex(), "game": "crisp", "opts": '{"limit":50}',
           "taken": "1", "free": "1", "host": "adhost", "fpr": fpr or fingerprint(key), "port": str(port),
           "addr": "127.0.0.1", "at": str(time.time_ns() // 1_000_000), "key": b64(key)}
    return {**txt, "sig": b64(signer.sign(ad_message(name, txt)).signature)}


@pytest.mark.parametrize("case", ["honest", "another key in the handshake",
                                  pytest.param("forged first", marks=pytest.mark.slow)])
def test_a_real_guest_finds_a_table_announced_from_the_document_and_checks_its_key(case: str) -> None:
    # The ad is signed as §17 says. Another key proving itself at the ad's port is dropped in the handshake; an ad
    # whose fingerprint is not its key's is never dialled (it names another table id: a dial of it fails the test).
    async def main() -> None:
        signer = SigningKey.generate()
        announcer = SigningKey.generate() if case == "another key in the handshake" else signer
        table_id = secrets.token_bytes(16)
        links, server, port = await listener()
        name = f"docad {secrets.token_hex(3)}"
        txt = table_txt(name, announcer, table_id, port)
        guest = PeerProc("--bot", "random", "--name", "seeker", "--table", name, "--interface", "127.0.0.1")
        try:
            if case == "forged first":
                stranger = SigningKey.generate()  # signs a table naming the host's fingerprint, under another id
                async with announced(name, table_txt(name, stranger, secrets.token_bytes(16), port,
                                                     fingerprint(bytes(signer.verify_key))), port):
                    await asyncio.sleep(5)  # the guest lists it within a second if it lists it at all
                assert links.empty()
            async with announced(name, txt, port):
                link, theirs = await accept_handshake(*await asyncio.wait_for(links.get(), 2 * WAIT), signer,
                                                      table_id, port)
                link.send(b"F", Chain(signer, table_id).sign("table", {
                    "game": "crisp", "name": "adhost", "nonce": secrets.token_bytes(32), "options": {"limit": 50}}))
                if case != "another key in the handshake":
                    join = Envelope.parse((await link.next(b"F"))[1])
                    assert (join.type, join.sender, join.body["name"]) == ("join", theirs["key"], "seeker")
                else:
                    assert (await link.closed()).endswith(b"B") and "fingerprint" in (link.goodbye or "")
                link.close()
        finally:
            guest.stop()
            server.close()

    asyncio.run(main())


def test_a_real_guest_gives_up_on_a_host_whose_announcement_breaks_the_rules() -> None:
    async def main() -> None:
        signer = SigningKey.generate()
        table_id = secrets.token_bytes(16)
        links, server, port = await listener()
        guest = PeerProc("--bot", "random", "--name", "wary", "--peer", f"127.0.0.1:{port}")
        try:
            link, _ = await accept_handshake(*await asyncio.wait_for(links.get(), WAIT), signer, table_id, port)
            link.send(b"F", Chain(signer, table_id).sign("table", {"game": "poker", "name": "dochost",
                                                                   "nonce": bytes(32), "options": {}}))
            await link.closed()  # §18.4: it closes the link and gives up, saying why
            await asyncio.to_thread(guest.proc.wait, WAIT)
            assert guest.proc.returncode != 0 and "poker" in guest.text(), guest.text()
        finally:
            guest.stop()
            server.close()

    asyncio.run(main())
