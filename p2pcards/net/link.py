"""Authenticated TCP links between the peers of one table: framing, handshake, heartbeats, time-outs.

On the wire a link carries frames: a 4-byte big-endian length N (1 <= N <= the cap of the
link's state), then N bytes: one kind byte and its payload. A length over the cap is refused
before anything is allocated, and the link is closed. Kinds (see protocol.md, Part III):

    H hello     P proof     F table frame (a signed envelope)
    K heartbeat A addresses (host to guests: where each seat listens)     B goodbye
    Q request for missing table frames (answered with F frames)

`Links` owns a listening socket and every link of one peer, keyed by the proven identity key:
a connection counts for nothing until its handshake is done, at most MAX_PENDING handshakes
run at once, each within HANDSHAKE_S and with frames of at most MAX_HELLO bytes. A link that
sends nothing (not even a heartbeat) for SILENT_S is reported to `on_quiet` (and again when it
speaks); one silent for DEAD_S, one that cannot take our writes for WRITE_S, lets MAX_BACKLOG
bytes pile up unsent, or breaks the framing, is closed and reported to `on_lost`; `Link.by_them` then says
whether the other end closed it (its end of stream, a reset, a goodbye, a frame that breaks a rule: anything
that reached us from it shows our own network working), not silence or an error of our own network (unreachable,
down, timed out). A silence of our own (our process stopped, the laptop asleep) is not counted against the other
side. A quiet link
stays open because a peer whose event loop is busy (a long shuffle on a slow machine) is
silent for a while without being gone.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import secrets
import struct
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import Final

from ..crypto.encoding import MAX_FRAME
from ..crypto.identity import SIGNATURE_BYTES, Identity
from ..errors import LinkBroken, Refused, RemoteProtocolError
from .handshake import MAX_HELLO, Hello, check_proof, new_hello, prove

HEADER: Final = struct.Struct(">I")
HELLO, PROOF, FRAME, BEAT, ADDRS, BYE, REQUEST, AGAIN = b"HPFKABQR"
TABLE_KINDS: Final = frozenset({FRAME, AGAIN})  # the kinds that carry a signed table frame, first hand or again
MAX_LINK_FRAME: Final = MAX_FRAME + 1  # a table frame and its kind byte
MAX_BYE: Final = 200
HANDSHAKE_S: Final = 5.0
HEARTBEAT_S: Final = 1.0
SILENT_S: Final = 5.0
GAP_S: Final = 2 * HEARTBEAT_S  # a link that brought nothing, not even a heartbeat, for longer was cut for a while
DEAD_S: Final = 60.0
WRITE_S: Final = 5.0
CLOSE_S: Final = 2.0  # how long a closed link may take to send what it still holds (a goodbye) before it is cut
MAX_PENDING: Final = 256
MAX_LINKS: Final = 64
MAX_BACKLOG: Final = 8 * MAX_FRAME
# Where a seat listens when no port is given: below 32768, where the common ephemeral ranges begin (Linux
# 32768-60999, the IANA range 49152-65535 of macOS and Windows), and above most services' fixed ports.
LISTEN_RANGE: Final = (10000, 32768)
LISTEN_TRIES: Final = 20  # random ports of LISTEN_RANGE tried before the system's choice
EPHEMERAL_RANGE: Final = Path("/proc/sys/net/ipv4/ip_local_port_range")
# Errors of our own network, or of the way to the other end: nothing came from it, unlike a reset or an end of stream.
OUR_NETWORK: Final = frozenset({errno.ENETUNREACH, errno.ENETDOWN, errno.EHOSTUNREACH, errno.EHOSTDOWN, errno.ETIMEDOUT,
                                errno.ENETRESET, errno.EADDRNOTAVAIL})

FrameHandler = Callable[["Link", int, bytes], None]
LostHandler = Callable[["Link", str], None]
QuietHandler = Callable[["Link", bool], None]


def printable(text: str) -> str:
    """`text` with every character that is not printable (a control character, an ANSI escape's ESC, a line
    break, a bidi override) written as its Python escape, so that anyone's words cannot drive a terminal."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


class NetworkLost(LinkBroken):
    """A link broken by an error of our own network's (unreachable, down, timed out): not by the other end."""


def pack(kind: int, payload: bytes = b"") -> bytes:
    """One frame on the wire: length, kind, payload."""
    return HEADER.pack(1 + len(payload)) + bytes([kind]) + payload


async def read_frame(reader: asyncio.StreamReader, cap: int) -> tuple[int, bytes]:
    """(kind, payload) of the next frame; LinkBroken at end of stream or on a length outside 1..cap."""
    try:
        (size,) = HEADER.unpack(await reader.readexactly(HEADER.size))
        if not 1 <= size <= cap:
            raise LinkBroken(f"a frame of {size} bytes (the cap is {cap})")
        data = await reader.readexactly(size)
    except asyncio.IncompleteReadError:
        raise LinkBroken("end of stream") from None
    except (ConnectionError, OSError) as exc:
        raise (NetworkLost if exc.errno in OUR_NETWORK else LinkBroken)(f"connection error: {exc}") from None
    return data[0], data[1:]


async def _expect(reader: asyncio.StreamReader, kind: int, cap: int) -> bytes:
    got, payload = await read_frame(reader, cap)
    if got != kind:
        raise LinkBroken(f"expected a {chr(kind)} frame in the handshake, got kind {got}")
    return payload


class Link:
    """One authenticated connection to the peer holding `key`."""

    def __init__(self, key: bytes, hello: Hello, address: str, reader: asyncio.StreamReader,
                 writer: asyncio.StreamWriter, on_frame: FrameHandler, on_lost: LostHandler,
                 on_quiet: QuietHandler | None = None) -> None:
        self.key = key
        self.hello = hello  # theirs: the port they listen on is in it
        self.address = address  # their address as this connection sees it
        self.reader = reader
        self.writer = writer
        self.closed: str | None = None
        self.by_them = False  # it was closed by the other end (what reached us says so), not by silence or our network
        self.quiet = False  # nothing heard for SILENT_S
        self.heard = asyncio.get_running_loop().time()
        self.gaps: list[tuple[float, float]] = []  # (from, until) on the loop's clock: silences over GAP_S not yet taken
        self.frames_in = self.bytes_in = self.frames_out = self.bytes_out = 0
        self._on_frame = on_frame
        self._on_lost = on_lost
        self._on_quiet = on_quiet
        self._tasks: set[asyncio.Task[None]] = set()

    def start(self) -> None:
        """Start reading and sending heartbeats."""
        for coro in (self._read(), self._beat()):
            task = asyncio.get_running_loop().create_task(coro)
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)

    def send(self, kind: int, payload: bytes = b"") -> None:
        """Queue one frame; a link whose backlog passes MAX_BACKLOG is too slow and is closed."""
        self.send_all(kind, [payload])

    def send_all(self, kind: int, payloads: Sequence[bytes]) -> None:
        """Queue frames of one kind in one write (one system call, one wake-up at the other end)."""
        if self.closed is not None or not payloads:
            return
        data = b"".join(pack(kind, payload) for payload in payloads)
        self.writer.write(data)
        self.frames_out += len(payloads) if kind != BEAT else 0
        self.bytes_out += len(data)
        if self.writer.transport.get_write_buffer_size() > MAX_BACKLOG:
            self.close(f"too slow: over {MAX_BACKLOG} bytes waiting to be sent", cut=True)

    def close(self, why: str, goodbye: bool = False, cut: bool = False, by_them: bool = False) -> None:
        """Close now (saying goodbye first if asked) and report `why` once; `cut` drops what is still
        unsent at once (the other side takes none of it); `by_them`: the other end closed it (`Link.by_them`)."""
        if self.closed is not None:
            return
        self.by_them = by_them
        if goodbye:
            with contextlib.suppress(ConnectionError, OSError, RuntimeError):
                cut_why = why.encode("utf-8", "replace")[:MAX_BYE].decode("utf-8", "ignore")  # whole characters
                self.writer.write(pack(BYE, cut_why.encode()))
        self.closed = why
        ours = list(self._tasks)  # the one calling us, if one is, ends at its next turn (`closed` is set)
        for task in ours:
            if task is not asyncio.current_task():
                task.cancel()
        if cut:
            self.writer.transport.abort()
        elif goodbye and not by_them:
            task = asyncio.get_running_loop().create_task(self._linger(ours))
            self._tasks.add(task)
            task.add_done_callback(self._tasks.discard)
        else:
            self.writer.close()
        self._on_lost(self, why)

    async def _linger(self, stopped: list[asyncio.Task[None]]) -> None:
        """After a goodbye: send end of stream and read what still comes until theirs (CLOSE_S at most), then close.
        A socket closed with bytes unread answers with a reset, and a reset that reaches the other end before it
        reads our goodbye throws the goodbye away (its stream raises the reset first): the guest refused would
        not learn why."""
        try:
            await asyncio.gather(*stopped, return_exceptions=True)  # our reader no longer reads: this one may
            with contextlib.suppress(ConnectionError, OSError, RuntimeError, TimeoutError):
                if self.writer.can_write_eof():
                    self.writer.write_eof()
                async with asyncio.timeout(CLOSE_S):
                    while await self.reader.read(1 << 16):
                        pass
        finally:
            self.writer.close()

    async def wait_closed(self) -> None:
        """Wait until the socket and both tasks are gone: what is still unsent has CLOSE_S to go, then is
        dropped (a transport closes only once its buffer is empty, so a peer that reads nothing would keep
        the socket and its buffer for ever)."""
        await asyncio.gather(*self._tasks, return_exceptions=True)
        try:
            async with asyncio.timeout(CLOSE_S):
                await self.writer.wait_closed()
        except TimeoutError:
            self.writer.transport.abort()
        except (ConnectionError, OSError):
            pass

    async def _read(self) -> None:
        try:
            while self.closed is None:
                kind, payload = await read_frame(self.reader, MAX_LINK_FRAME)
                now = asyncio.get_running_loop().time()
                if now - self.heard > GAP_S and len(self.gaps) < 16:
                    self.gaps.append((self.heard, now))
                self.heard = now
                if self.quiet:
                    self.quiet = False
                    if self._on_quiet is not None:
                        self._on_quiet(self, False)
                self.bytes_in += 5 + len(payload)
                if kind == BYE:
                    raise LinkBroken("said goodbye: " + printable(payload[:MAX_BYE].decode(errors="replace")))
                if kind != BEAT:
                    self.frames_in += 1
                    self._on_frame(self, kind, payload)
                await asyncio.sleep(0)  # a flooding link takes its turn like the others
        except RemoteProtocolError as exc:
            self.close(str(exc), by_them=not isinstance(exc, NetworkLost))

    async def _beat(self) -> None:
        loop = asyncio.get_running_loop()
        try:
            while self.closed is None:
                before = loop.time()
                await asyncio.sleep(HEARTBEAT_S)
                if loop.time() - before < SILENT_S:
                    self._watch()
                # else we were the one stopped (a laptop asleep, SIGSTOP, a stalled loop): what the other
                # side sent meanwhile waits unread in our socket, and this wake-up comes before the read
                # that takes it. The next beat judges the link, once that read is done.
                self.send(BEAT)
                async with asyncio.timeout(WRITE_S):
                    await self.writer.drain()
        except TimeoutError:
            self.close(f"took none of our bytes for {WRITE_S:.0f} s", cut=True)
        except (ConnectionError, OSError) as exc:  # a reset or a closed pipe came from the other end
            self.close(f"connection error: {exc}", by_them=exc.errno not in OUR_NETWORK)

    def _watch(self) -> None:
        silent = asyncio.get_running_loop().time() - self.heard
        if silent > DEAD_S:
            self.close(f"silent for {DEAD_S:.0f} s")
        elif silent > SILENT_S and not self.quiet:
            self.quiet = True
            if self._on_quiet is not None:
                self._on_quiet(self, True)


def listen_ports(tries: int = LISTEN_TRIES, ranges: Path = EPHEMERAL_RANGE) -> list[int]:
    """Ports to try in turn when none is given: random ones of LISTEN_RANGE below the first port of the
    machine's ephemeral range (as `ranges` gives it, where it can be read), then 0, the system's choice."""
    low, high = LISTEN_RANGE
    with contextlib.suppress(OSError, ValueError, IndexError):
        high = min(high, int(ranges.read_text().split()[0]))
    if high - low < tries:
        return [0]
    return [low + secrets.randbelow(high - low) for _ in range(tries)] + [0]


class Links:
    """Every link of one peer: a listening socket, dialling out, and links by proven key.

    `admit(key)` says whether a key that proved itself may have a link now (a seat, or a guest
    while the lobby is open); `on_frame(link, kind, payload)` gets every frame but hellos,
    proofs, heartbeats and goodbyes, and may raise RemoteProtocolError to close that link;
    `on_link` and `on_lost` hear of links made and lost, `on_quiet` of links gone quiet and back.
    """

    def __init__(self, identity: Identity, table: bytes | None, admit: Callable[[bytes], bool],
                 on_frame: FrameHandler, on_link: Callable[[Link], None] | None = None,
                 on_lost: LostHandler | None = None, on_quiet: QuietHandler | None = None) -> None:
        self.identity = identity
        self.table = table  # None until a dialled host tells us (joining by address)
        self.admit = admit
        self.port = 0
        self.links: dict[bytes, Link] = {}
        self.refused: list[str] = []  # the last few reasons a connection was dropped, newest last
        self._closed_traffic = [0, 0, 0, 0]  # frames and bytes in and out of links already closed
        self._on_frame = on_frame
        self._on_link = on_link
        self._on_lost = on_lost
        self._on_quiet = on_quiet
        self._servers: list[asyncio.Server] = []
        self._handshakes: set[asyncio.Task[None]] = set()  # the handshakes of accepted connections, running
        self._closing: set[asyncio.Task[None]] = set()  # links being closed, kept until they are

    async def __aenter__(self) -> Links:
        return self

    async def __aexit__(self, et: type[BaseException] | None, e: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.close("leaving")

    async def listen(self, hosts: Sequence[str] = ("0.0.0.0",), port: int = 0) -> int:
        """Accept links on `hosts` (one port for all); returns the port. With no port given nor held, one
        below the machine's ephemeral range (`listen_ports`): the system's own pick comes from the range its
        outgoing connections take ports from, so one of them could hold our port while we are down, and a seat
        that comes back must listen where the others dial it (protocol.md §18.3)."""
        wanted = port or self.port
        for candidate in [wanted] if wanted else listen_ports():
            try:
                return await self._listen_on(hosts, candidate)
            except OSError as exc:
                if wanted or exc.errno != errno.EADDRINUSE:
                    raise
        raise AssertionError("unreachable: listen_ports ends with 0, the system's choice")

    async def _listen_on(self, hosts: Sequence[str], port: int) -> int:
        """Listen on `port` (0: the system's choice, then that port) on every one of `hosts`, or on none."""
        servers: list[asyncio.Server] = []
        try:
            for host in hosts:
                server = await asyncio.start_server(self._accepted, host, port)
                servers.append(server)
                port = int(server.sockets[0].getsockname()[1])
        except BaseException:
            for server in servers:
                server.close()
            raise
        self._servers += servers
        self.port = port
        return port

    def send(self, key: bytes, kind: int, payload: bytes = b"") -> None:
        """One frame to the peer holding `key`, if linked."""
        self.send_all(key, kind, [payload])

    def send_all(self, key: bytes, kind: int, payloads: Sequence[bytes]) -> None:
        """Frames to the peer holding `key`, if linked, in one write."""
        link = self.links.get(key)
        if link is not None:
            link.send_all(kind, payloads)

    def broadcast(self, kind: int, payload: bytes, keys: Iterable[bytes]) -> None:
        """One frame to each of `keys` that is linked; everyone else gets nothing."""
        for key in keys:
            self.send(key, kind, payload)

    async def dial(self, addresses: Sequence[tuple[str, int]], key: bytes | None = None,
                   attempts: int = 1, pause: float = 0.2) -> Link:
        """A link to the first of `addresses` that answers and proves `key` (any key when None); LinkBroken when none
        does, Refused when every one refused the connection every time."""
        errors: list[str] = []
        refused = bool(addresses)
        for attempt in range(attempts):
            for host, port in addresses:
                try:
                    async with asyncio.timeout(HANDSHAKE_S):
                        reader, writer = await asyncio.open_connection(host, port)
                except (OSError, TimeoutError) as exc:
                    refused = refused and isinstance(exc, ConnectionRefusedError)
                    errors.append(f"{host}:{port}: {_unanswered(exc)}")
                    continue
                refused = False
                try:
                    return await self._dialer(reader, writer, key)
                except (LinkBroken, RemoteProtocolError, TimeoutError) as exc:
                    errors.append(f"{host}:{port}: {str(exc) or 'no answer to the handshake (timed out)'}")
            if attempt + 1 < attempts:
                await asyncio.sleep(pause)
        tried = f" (tried {attempts} times)" if attempts > 1 else ""
        raise (Refused if refused else LinkBroken)(
            "no link: " + "; ".join(errors[-len(addresses):] or ["no address"]) + tried)

    async def close(self, why: str) -> None:
        """Say goodbye on every link, stop listening, and wait until everything is closed."""
        for server in self._servers:
            server.close()
        handshakes = list(self._handshakes)
        for task in handshakes:
            task.cancel()
        await asyncio.gather(*handshakes, return_exceptions=True)
        links = list(self.links.values())
        for link in links:
            link.close(why, goodbye=True)
        await asyncio.gather(*(link.wait_closed() for link in links), *self._closing, return_exceptions=True)
        for server in self._servers:
            await server.wait_closed()

    # ------------------------------------------------------------ the handshake

    def _accepted(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """A connection came: refused at once when too many handshakes run (no task made), else its handshake
        runs in a task of our own. Not a coroutine: asyncio's server would wrap one in a task of its own and,
        when that task is cancelled before its first step (the loop ending while a flood of connections waits),
        ask it for its exception and log the CancelledError as a traceback."""
        if len(self._handshakes) >= MAX_PENDING or len(self.links) >= MAX_LINKS or self.table is None:
            writer.close()
            return
        task = asyncio.get_running_loop().create_task(self._handshake(reader, writer))
        self._handshakes.add(task)
        task.add_done_callback(self._handshake_done)

    def _handshake_done(self, task: asyncio.Task[None]) -> None:
        self._handshakes.discard(task)
        if not task.cancelled() and (exc := task.exception()) is not None:  # a bug of ours: let the loop say so
            asyncio.get_running_loop().call_exception_handler(
                {"message": "a link's handshake failed", "exception": exc, "task": task})

    async def _handshake(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            await self._listener(reader, writer)
        except (LinkBroken, RemoteProtocolError, TimeoutError, ConnectionError, OSError) as exc:
            self._refuse(writer, str(exc) or "handshake timed out")
        except asyncio.CancelledError:  # we are shutting down mid-handshake
            writer.close()
            raise

    async def _listener(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        assert self.table is not None
        mine = new_hello(self.table, self.identity.public, self.port).to_bytes()
        writer.write(pack(HELLO, mine))
        async with asyncio.timeout(HANDSHAKE_S):
            theirs = await _expect(reader, HELLO, MAX_HELLO + 1)
            hello = Hello.parse(theirs)
            self._check_hello(hello)
            proof = await _expect(reader, PROOF, SIGNATURE_BYTES + 1)
            check_proof(hello.key, "dialer", mine, theirs, proof)
            if not self.admit(hello.key):
                raise LinkBroken("not a seat at this table", hello.key.hex())
            writer.write(pack(PROOF, prove(self.identity, "listener", mine, theirs)))
            await writer.drain()
        self._adopt(hello, reader, writer)

    async def _dialer(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, key: bytes | None) -> Link:
        try:
            async with asyncio.timeout(HANDSHAKE_S):
                theirs = await _expect(reader, HELLO, MAX_HELLO + 1)
                hello = Hello.parse(theirs)
                if self.table is None:
                    self.table = hello.table  # joining by address: the host names the table
                self._check_hello(hello)
                if key is not None and hello.key != key:
                    raise LinkBroken("the peer at this address holds another key")
                mine = new_hello(self.table, self.identity.public, self.port).to_bytes()
                writer.write(pack(HELLO, mine) + pack(PROOF, prove(self.identity, "dialer", theirs, mine)))
                proof = await _expect(reader, PROOF, SIGNATURE_BYTES + 1)
                check_proof(hello.key, "listener", theirs, mine, proof)
                if not self.admit(hello.key):
                    raise LinkBroken("not a seat at this table", hello.key.hex())
        except BaseException as exc:
            self._refuse(writer, str(exc) or "handshake timed out")
            raise
        return self._adopt(hello, reader, writer)

    def _check_hello(self, hello: Hello) -> None:
        if hello.table != self.table:
            raise LinkBroken("a hello for another table")
        if hello.key == self.identity.public:
            raise LinkBroken("a link to ourselves")

    def _refuse(self, writer: asyncio.StreamWriter, why: str) -> None:
        writer.close()
        self.refused = self.refused[-19:] + [why]

    def _adopt(self, hello: Hello, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> Link:
        peer = writer.get_extra_info("peername")
        link = Link(hello.key, hello, str(peer[0]) if peer else "", reader, writer, self._on_frame, self._lost,
                    self._on_quiet)
        old = self.links.get(hello.key)
        self.links[hello.key] = link
        if old is not None:
            old.close("replaced by a newer link")
        link.start()
        if self._on_link is not None:
            self._on_link(link)
        return link

    def traffic(self) -> dict[str, int]:
        """Frames and bytes in and out over every link so far, heartbeats and handshakes excluded from frames."""
        live = [[k.frames_in, k.bytes_in, k.frames_out, k.bytes_out] for k in self.links.values()]
        totals = [sum(col) for col in zip(self._closed_traffic, *live)]
        return dict(zip(("frames_in", "bytes_in", "frames_out", "bytes_out"), totals))

    def _lost(self, link: Link, why: str) -> None:
        for i, n in enumerate((link.frames_in, link.bytes_in, link.frames_out, link.bytes_out)):
            self._closed_traffic[i] += n
        if self.links.get(link.key) is link:
            del self.links[link.key]
        task = asyncio.get_running_loop().create_task(link.wait_closed())
        self._closing.add(task)
        task.add_done_callback(self._closing.discard)
        if self._on_lost is not None:
            self._on_lost(link, why)


def _unanswered(exc: OSError | TimeoutError) -> str:
    """Why a connection could not be opened, in plain words ("connection refused", not "[Errno 111] Connect call
    failed ('127.0.0.1', 9)")."""
    if isinstance(exc, TimeoutError) or not exc.errno:
        return str(exc) or "no answer (timed out)"
    if exc.errno < 0:  # a name that does not resolve (socket.gaierror): its own words, not "unknown error -2"
        return (exc.strerror or str(exc)).lower()
    return os.strerror(exc.errno).lower()
