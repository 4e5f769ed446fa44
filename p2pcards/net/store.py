"""A seat's journal on disk (write-ahead), so that a peer killed mid-round comes back into it.

A store is a directory of the files `table` and `journal`, the networked peer's `node` (NodeState)
and a bot's key, and one directory within it per table that went on without a seat
(`SeatStore.successor`). Each file is written whole (files.write_file) but the journal, which is
appended to. `table` names what the journal belongs to (the table's config and our seat), written
once. `journal` is the peer's records (table/resume.py; a resume replays from the last checkpoint
among them), appended as
[4-byte length N][1-byte kind][8-byte number][N - 9 bytes of data], big-endian, and fsync'd
before the step that made them sends anything (a step that sends nothing only writes them: a
killed process loses nothing written, and the next fsync covers them too). A record cut short by
a crash (a torn tail) never left the peer: it is dropped on load. A journal damaged anywhere else is
refused: going on from a part of it could sign a place of our chain that was signed and sent before.
So is a journal whose first record is not the `begin` record each journal starts with, synced before
the `table` file is written (an emptied journal, or one cut at its start). At each checkpoint the
journal begins anew (`SeatStore.compact`): the one that resume.compact makes of it is written whole
in its place, so it holds about one round, not the game.
"""

from __future__ import annotations

import fcntl
import io
import os
import struct
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import IO, Any, BinaryIO, Final

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..crypto.encoding import MAX_FRAME, Value, decode, encode
from ..crypto.identity import private_dir, read_key
from ..files import is_temporary, write_file
from ..errors import InputError, LocalError, MalformedMessage
from ..table.config import TableConfig
from ..table.resume import Record, compact

HEADER: Final = struct.Struct(">I")
FIELDS: Final = struct.Struct(">cq")
KINDS: Final = {"seed": b"s", "frame": b"f", "again": b"a", "outbox": b"o", "carry": b"c", "check": b"k",
                "begin": b"b", "absent": b"m", "silent": b"q", "clock": b"t", "hashes": b"h"}
BEGIN: Final = ("begin", 0, b"p2pc/journal/v1")  # a journal's first record, synced as the store is made
NAMES: Final = {code: kind for kind, code in KINDS.items()}
MAX_RECORD: Final = FIELDS.size + MAX_FRAME  # a frame, its kind and number: no record is longer
BOT_KEY: Final = "bot.key"  # a bot's signing key, in its store: never the identity.key a user may keep in that directory
STORE_FILES: Final = ("journal", "node", "table", BOT_KEY)  # what a seat keeps in its store (clear removes them)
OLD_TEMPORARIES: Final = ("node.tmp", "table.tmp")  # what a crash mid-write left before files.write_file wrote them
LOCK_FILE: Final = "lock"  # held (flock) by the one process that uses a state directory
BOTS: Final = ("random", "good")  # the bots `p2pcards peer --bot` names


def _private(path: str, flags: int) -> int:
    """Open (or make) a file its user alone may read: a seat's store holds its round seeds, from which
    every card it was dealt can be read, and a bot's signing key."""
    fd = os.open(path, flags, 0o600)
    os.fchmod(fd, 0o600)  # a file left by an older run keeps the mode it was made with
    return fd


class Lock:
    """A state directory made when missing (mode 0700) and held by this process alone while the block runs: two processes on one
    journal would each sign places of one chain (InputError when another holds it)."""

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self._file: IO[str] | None = None

    def __enter__(self) -> Lock:
        path = self.directory / LOCK_FILE
        if self.directory.exists() and not self.directory.is_dir():
            raise InputError(f"the state directory {self.directory}: not a directory")
        try:
            private_dir(self.directory)  # an existing directory keeps its mode: our files in it are 0600
            self._file = open(path, "a", encoding="utf-8", opener=_private)
        except OSError as exc:
            raise InputError(f"the state directory {self.directory}: {exc.strerror or exc}") from None
        try:
            fcntl.flock(self._file.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._file.close()
            raise InputError(f"another p2pcards process of yours is using {self.directory} (it holds {path}): "
                             "give this one its own --state DIR") from None
        return self

    def __exit__(self, et: type[BaseException] | None, e: BaseException | None, tb: TracebackType | None) -> None:
        if self._file is not None:
            self._file.close()  # closing it lets the lock go


def read_owner(path: Path) -> tuple[TableConfig, int]:
    """The table and our seat at it, from a store's `table` file ([config, seat], as SeatStore writes it);
    ValueError (or MalformedMessage, OSError) when it holds no such pair."""
    owner: Any = decode(path.read_bytes())
    if not (isinstance(owner, list) and len(owner) == 2):
        raise ValueError("its table file is not [config, seat]")
    cfg, seat = TableConfig.from_wire(owner[0]), owner[1]
    if not (type(seat) is int and 0 <= seat < cfg.seats):
        raise ValueError("a seat out of range")
    return cfg, seat


def parse_journal(data: bytes) -> tuple[list[Record], int]:
    """The whole records at the start of a journal's bytes, and how many bytes they take; what follows them
    is a torn tail (a record cut short by a crash, or the zeros a file system may leave there). LocalError
    for a damaged journal: a whole record that is not one, or a tail that no crash leaves."""
    records: list[Record] = []
    at = 0
    while at < len(data):
        rest = len(data) - at
        if rest < HEADER.size + FIELDS.size or not data[at:].strip(b"\0"):
            break
        (size,) = HEADER.unpack_from(data, at)
        start, end = at + HEADER.size, at + HEADER.size + size
        code, number = FIELDS.unpack_from(data, start)
        if size < FIELDS.size or size > MAX_RECORD or code not in NAMES:
            raise LocalError(f"the journal is damaged at byte {at}: not a record (a crash leaves none such)")
        if end > len(data):
            break
        records.append((NAMES[code], number, data[start + FIELDS.size:end]))
        at = end
    return records, at


class SeatStore:
    """The journal of seat `seat` at the table `config`, in `directory` (made if need be, mode 0700);
    every file in it is its user's alone (mode 0600). Not `compacting`: the journal keeps every frame of the
    game (a client that records the game makes its recording again from it when it comes back)."""

    def __init__(self, directory: Path, config: TableConfig, seat: int, compacting: bool = True) -> None:
        self.directory = directory
        self.compacting = compacting
        private_dir(directory)
        owner = encode([config.to_wire(), seat])
        table = directory / "table"
        self.path = directory / "journal"
        made = not table.exists()
        if not made and table.read_bytes() != owner:
            raise LocalError(f"{directory} holds the journal of another table or seat")
        if made:
            # The journal begins with a record of its own, synced before the table file names it: a journal
            # whose first record is not that one was emptied or cut at its start, not torn by a crash.
            with open(self.path, "wb", opener=_private) as f:
                self._write(f, [BEGIN])
                os.fsync(f.fileno())
            write_file(table, owner, overwrite=True, private=True)
        for child in directory.iterdir():
            if is_temporary(child.name, "journal"):  # a compaction a crash cut short: the journal is whole
                child.unlink()
        self.ours = config.keys[seat]
        self._file = open(self.path, "ab", opener=_private)
        self._dirty = False  # records written since the last fsync

    def load(self) -> list[Record]:
        """Every whole record in the journal, in order (a torn tail is cut off the file); LocalError when
        the journal is damaged (going on from a part of it could sign a place of our chain again)."""
        data = self.path.read_bytes()
        records, size = parse_journal(data)
        if not records or records[0] != BEGIN:
            # Whatever it held is lost: coming back from it, we would sign again places of our chain we signed
            # and sent before, and be blamed for two frames at one place.
            raise LocalError(f"the journal {self.path} is damaged: it does not begin as a journal (emptied, or cut "
                             "at its start); this seat cannot come back into its round")
        if size < len(data):
            self._file.truncate(size)
        return records[1:]

    def successor(self, config: TableConfig, seat: int) -> SeatStore:
        """The store of our seat at the table that goes on without the seats voted out (protocol.md §14.9),
        within this one."""
        return SeatStore(self.directory / config.table.hex(), config, seat, self.compacting)

    def append(self, records: list[Record], sync: bool = True) -> None:
        """Add records (written to the system at once, so a killed process loses none); `sync`: make
        them and every record before them durable before returning, as anything sent needs. A checkpoint
        among them begins the journal anew (`compact`)."""
        if records:
            self._write(self._file, records)
            self._file.flush()
            self._dirty = True
        if self.compacting and any(kind == "check" for kind, _, _ in records):
            self.compact()
        elif sync and self._dirty:
            os.fsync(self._file.fileno())
            self._dirty = False

    def compact(self) -> None:
        """Replace the journal, whole and synced, with the one that begins anew at its last checkpoint
        (resume.compact): a crash at any point leaves the old journal or the new one, which resume alike."""
        records = self.load()
        kept = compact(records, self.ours)
        if kept is None:
            return
        self._file.close()  # renamed over while open, it would take no more records (and Windows refuses)
        try:
            buffer = io.BytesIO()
            self._write(buffer, [BEGIN, *kept])
            write_file(self.path, buffer.getvalue(), overwrite=True, private=True)
        finally:
            self._file = open(self.path, "ab", opener=_private)
        self._dirty = False

    @staticmethod
    def _write(f: BinaryIO, records: list[Record]) -> None:
        f.write(b"".join(HEADER.pack(FIELDS.size + len(data)) + FIELDS.pack(KINDS[kind], number) + data
                         for kind, number, data in records))

    def close(self) -> None:
        """Close the journal file."""
        self._file.close()


@dataclass(frozen=True)
class NodeState:
    """What a networked peer keeps beside its journal (file `node`) to come back after a crash: the public key it
    signs with (the secret stays in its own file: the user's identity key, or a bot's in the store, `bot_key`),
    the port it listened on, where the other seats listen (those before ours, which it dials, and those after,
    which it dials only when it comes back on another port, its own taken, or is cut off from every seat), and the
    options it was started with that a resume needs again (None: not given; a file without them reads so)."""

    public: bytes
    port: int
    dial: dict[bytes, list[tuple[str, int]]]
    config: TableConfig  # these two are not in the file: read from the store's `table` file, the first table's (a
    seat: int  # journal of a table that went on is within it, SeatStore.successor, and links say the first id, §14.9)
    interfaces: tuple[str, ...] | None = None  # where it listened (`--interface`; None: every interface)
    gone_after: float | None = None  # `--gone-after`
    bot: str | None = None  # who plays the seat (`p2pcards peer --bot`)
    announced: bool = False  # it announced itself by multicast DNS (so it does again when it comes back)
    later: dict[bytes, list[tuple[str, int]]] = field(default_factory=dict)  # where the seats after ours listen

    def to_bytes(self) -> bytes:
        """The `node` file."""
        data: dict[str, Value] = {"public": self.public, "port": self.port,
                                  "dial": [[k, [[h, p] for h, p in where]] for k, where in self.dial.items()]}
        if self.interfaces is not None:
            data["interfaces"] = list(self.interfaces)
        if self.gone_after is not None:
            data["gone_after_ms"] = max(1, round(self.gone_after * 1000))  # the encoding has no floats
        if self.bot is not None:
            data["bot"] = self.bot
        if self.announced:
            data["mdns"] = True
        if self.later:
            data["later"] = [[k, [[h, p] for h, p in where]] for k, where in self.later.items()]
        return encode(data)

    @classmethod
    def load(cls, directory: Path) -> NodeState | None:
        """The seat to come back to in `directory`, or None when it holds none; LocalError when it is not ours to read."""
        node, table = directory / "node", directory / "table"
        if not (node.is_file() and table.is_file()):
            return None
        try:
            v: Any = decode(node.read_bytes())
            cfg, seat = read_owner(table)
            dial = {bytes(k): [(str(h), int(p)) for h, p in where] for k, where in v["dial"]}
            later = {bytes(k): [(str(h), int(p)) for h, p in where] for k, where in v.get("later", [])}
            if "key" in v:  # written before the key stayed in its own file: the secret is not taken from a copy
                raise ValueError("its node file is of an older p2pcards, which kept a copy of the signing key")
            if not (isinstance(v["public"], bytes) and len(v["public"]) == 32):
                raise ValueError("its public key is not 32 bytes")
            port = int(v["port"])
            if not (0 <= port < 65536
                    and all(0 < p < 65536 for book in (dial, later) for where in book.values() for _, p in where)):
                raise ValueError("a seat or a port out of range")
            interfaces, gone_after_ms, bot = v.get("interfaces"), v.get("gone_after_ms"), v.get("bot")
            announced = v.get("mdns", False)
            if interfaces is not None and not (isinstance(interfaces, list)
                                               and all(isinstance(i, str) for i in interfaces)):
                raise ValueError("its interfaces are not names")
            if gone_after_ms is not None and not (type(gone_after_ms) is int and gone_after_ms > 0):
                raise ValueError("its gone-after is out of range")
            if bot is not None and bot not in BOTS:
                raise ValueError(f"no bot {bot!r}")
            if type(announced) is not bool:
                raise ValueError("its mdns flag is not true or false")
            return cls(v["public"], port, dial, cfg, seat, None if interfaces is None else tuple(interfaces),
                       None if gone_after_ms is None else gone_after_ms / 1000, bot, announced, later)
        except (MalformedMessage, InputError, KeyError, TypeError, ValueError) as exc:
            raise LocalError(f"{directory} holds no seat we can come back to ({exc})") from None


def not_a_seat(directory: Path) -> str | None:
    """Why `directory` holds files of a seat's store's names that are no seat to come back to (so not ours to
    write over or clear: a directory of someone else's); None when it holds a seat, or none of those files."""
    present = [name for name in STORE_FILES if (directory / name).exists()]
    if not present:
        return None
    try:
        if NodeState.load(directory) is not None:
            return None
    except LocalError as exc:
        return str(exc)
    return f"{directory} holds {', '.join(present)} but no seat to come back to: remove them or give another directory"


def bot_key(directory: Path, saved: NodeState) -> Ed25519PrivateKey:
    """The signing key of the bot whose store is `directory` (its own file there, mode 0600); IdentityError when
    it cannot be read, LocalError when it is not the key the node file names."""
    key = read_key(directory / BOT_KEY)
    if key.public_key().public_bytes_raw() != saved.public:
        raise LocalError(f"{directory / BOT_KEY} is not the key of the seat {directory} holds")
    return key


def begun_anew(directory: Path) -> bool:
    """True when a journal of the store `directory` (or of one within it) was begun anew at a checkpoint
    (`SeatStore.compact`), so no longer holds every frame of its game; LocalError for a damaged one."""
    for path in sorted(directory.rglob("journal")):
        records, _ = parse_journal(path.read_bytes())
        if any(kind == "hashes" for kind, _, _ in records):
            return True
    return False


def clear(directory: Path) -> None:
    """Remove a seat's journal and what was kept beside it (the table is over: nothing to come back to)."""
    for child in directory.iterdir() if directory.is_dir() else ():
        if child.is_dir() and len(child.name) == 32:  # the store of a table that went on without a seat
            clear(child)
            child.rmdir()
        elif child.name in STORE_FILES or child.name in OLD_TEMPORARIES or any(
                is_temporary(child.name, name) for name in STORE_FILES):  # a temporary: a crash mid-write
            child.unlink()
