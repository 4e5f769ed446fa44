"""The seat store: records come back as written, a torn tail is cut, it knows its table, no one else reads it."""

from __future__ import annotations

import os
import stat
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from p2pcards.crypto.encoding import decode, encode
from p2pcards.crypto.identity import KEY_FILE, Identity, generate
from p2pcards.errors import IdentityError, LocalError
from p2pcards.files import write_file
from p2pcards.net.store import BOT_KEY, FIELDS, HEADER, KINDS, LOCK_FILE, Lock, NodeState, SeatStore, bot_key, clear, parse_journal
from p2pcards.sim.table_game import make_table

store_file = partial(write_file, overwrite=True, private=True)  # as a seat writes its store's files


def test_records_come_back_in_order_and_a_torn_tail_is_cut(tmp_path: Path) -> None:
    cfg = make_table("crisp", 2)[0].cfg
    store = SeatStore(tmp_path, cfg, 1, compacting=False)  # its records are no peer's: a checkpoint of none
    assert store.load() == []
    records = [("outbox", 0, bytes(32)), ("seed", 1, b"s" * 32), ("frame", -1, b"x" * 70_000), ("check", 2, b"k")]
    store.append(records[:2], sync=False)
    store.append(records[2:])
    store.append([])
    store.close()
    with open(tmp_path / "journal", "ab") as f:
        f.write(b"\x00\x00\x01\x00f")  # a record cut short by a crash: it never left the peer
    again = SeatStore(tmp_path, cfg, 1, compacting=False)
    assert again.load() == records
    again.append([("seed", 2, b"t" * 32)])
    again.close()
    assert SeatStore(tmp_path, cfg, 1).load() == records + [("seed", 2, b"t" * 32)]


@pytest.mark.parametrize("tail", [
    b"\x00\x00\x01\x00f\x00\x00\x00\x00\x00\x00\x00\x01abc",  # a record cut short, its kind and number whole
    b"\x00\x00",  # a header cut short
    bytes(4096),  # zeros a file system may leave past the end of what was synced
])
def test_every_tail_a_crash_may_leave_is_cut(tmp_path: Path, tail: bytes) -> None:
    records = [("seed", 1, b"s" * 32), ("frame", 7, b"x" * 100)]
    assert parse_journal(_journal(records) + tail) == (records, len(_journal(records)))


@pytest.mark.parametrize("damage", ["kind", "short size", "huge size"])
def test_a_damaged_journal_is_refused_not_cut(tmp_path: Path, damage: str) -> None:
    """Cutting at damage would drop records of frames that left us: resumed, we would sign those places anew."""
    records = [("seed", 1, b"s" * 32), ("frame", 7, b"x" * 100), ("frame", 8, b"y" * 100)]
    data = bytearray(_journal(records))
    second = len(_journal(records[:1]))
    if damage == "kind":
        data[second + 4] = ord("z")
    elif damage == "short size":
        data[second:second + 4] = (3).to_bytes(4, "big")
    else:
        data[second:second + 4] = (1 << 30).to_bytes(4, "big")
    with pytest.raises(LocalError, match=f"damaged at byte {second}"):
        parse_journal(bytes(data))
    cfg = make_table("crisp", 2)[0].cfg
    SeatStore(tmp_path, cfg, 1).close()
    (tmp_path / "journal").write_bytes(bytes(data))
    with pytest.raises(LocalError):
        SeatStore(tmp_path, cfg, 1).load()
    assert (tmp_path / "journal").read_bytes() == bytes(data)  # nothing cut


def _journal(records: list[tuple[str, int, bytes]]) -> bytes:
    return b"".join(HEADER.pack(FIELDS.size + len(d)) + FIELDS.pack(KINDS[k], n) + d for k, n, d in records)

def test_a_store_holds_one_seat_of_one_table(tmp_path: Path) -> None:
    cfg = make_table("crisp", 2)[0].cfg
    SeatStore(tmp_path, cfg, 0).close()
    with pytest.raises(LocalError):
        SeatStore(tmp_path, cfg, 1)
    with pytest.raises(LocalError):
        SeatStore(tmp_path, make_table("crisp", 2)[0].cfg, 0)


def test_a_seat_store_is_its_users_alone_whatever_the_umask(tmp_path: Path) -> None:
    """The journal holds the round seeds (every card of ours can be read from them) and the node file a
    bot's key: neither may be readable by another user, even in a directory that others can list."""
    cfg = make_table("crisp", 2)[0].cfg
    old = os.umask(0o022)
    try:
        shared = tmp_path / "shared"
        shared.mkdir(mode=0o755)
        (shared / "journal").write_bytes(b"")  # left by an older run, readable by all
        os.chmod(shared / "journal", 0o644)
        store = SeatStore(shared, cfg, 1)
        store.append([("seed", 1, b"s" * 32)])
        store.close()
        store_file(shared / "node", b"a key")
        made = SeatStore(tmp_path / "made" / "here", cfg, 1)
        made.close()
        with Lock(shared), Lock(tmp_path / "locked"):
            pass
    finally:
        os.umask(old)
    for path in [shared / "journal", shared / "table", shared / "node", tmp_path / "made" / "here" / "journal"]:
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
    assert stat.S_IMODE((tmp_path / "made" / "here").stat().st_mode) == 0o700
    assert stat.S_IMODE((tmp_path / "locked").stat().st_mode) == 0o700
    assert stat.S_IMODE((shared / LOCK_FILE).stat().st_mode) == 0o600
    # The user's own directory, named with --state, keeps its mode: it was set to 0700 behind their back.
    assert stat.S_IMODE(shared.stat().st_mode) == 0o755


def test_a_node_file_with_a_key_of_the_wrong_size_is_no_seat_to_come_back_to(tmp_path: Path) -> None:
    cfg = make_table("crisp", 2)[0].cfg
    SeatStore(tmp_path, cfg, 1).close()
    store_file(tmp_path / "node", NodeState(bytes(32), 4000, {}, cfg, 1).to_bytes())
    assert NodeState.load(tmp_path) is not None
    store_file(tmp_path / "node", NodeState(bytes(31), 4000, {}, cfg, 1).to_bytes())
    with pytest.raises(LocalError, match="32 bytes"):
        NodeState.load(tmp_path)
    for port, dial in ((70000, {}), (-5, {}), (4000, {bytes(32): [("127.0.0.1", 0)]})):
        store_file(tmp_path / "node", NodeState(bytes(32), port, dial, cfg, 1).to_bytes())
        with pytest.raises(LocalError, match="out of range"):
            NodeState.load(tmp_path)
    store_file(tmp_path / "node", NodeState(bytes(32), 4000, {}, cfg, 1).to_bytes())
    store_file(tmp_path / "table", encode([cfg.to_wire(), 99]))  # a seat the table does not have
    with pytest.raises(LocalError, match="out of range"):
        NodeState.load(tmp_path)


def test_a_node_keeps_where_the_seats_after_ours_listen_and_an_older_file_reads_without_it(tmp_path: Path) -> None:
    cfg = make_table("crisp", 3)[0].cfg
    SeatStore(tmp_path, cfg, 0).close()
    later = {cfg.keys[1]: [("10.0.0.2", 4001)], cfg.keys[2]: [("10.0.0.3", 4002), ("192.168.1.3", 4002)]}
    store_file(tmp_path / "node", NodeState(bytes(32), 4000, {}, cfg, 0, later=later).to_bytes())
    saved = NodeState.load(tmp_path)
    assert saved is not None and saved.later == later
    store_file(tmp_path / "node", NodeState(bytes(32), 4000, {}, cfg, 0).to_bytes())
    saved = NodeState.load(tmp_path)
    assert saved is not None and saved.later == {}
    store_file(tmp_path / "node", NodeState(bytes(32), 4000, {}, cfg, 0, later={cfg.keys[1]: [("10.0.0.2", 0)]})
               .to_bytes())
    with pytest.raises(LocalError, match="out of range"):
        NodeState.load(tmp_path)


def test_clearing_a_store_takes_what_a_crash_mid_write_left_too(tmp_path: Path) -> None:
    cfg = make_table("crisp", 2)[0].cfg
    SeatStore(tmp_path, cfg, 1).close()
    (tmp_path / "node.tmp").write_bytes(b"a key half written")
    clear(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_node_keeps_the_options_it_runs_with_for_a_resume_and_an_older_file_reads_without_them(
        tmp_path: Path) -> None:
    import asyncio
    from types import SimpleNamespace

    from p2pcards.crypto.identity import generate
    from p2pcards.net.node import Node

    cfg = make_table("crisp", 2)[0].cfg
    SeatStore(tmp_path, cfg, 1).close()

    async def save() -> None:
        node = Node(generate("x"), ["127.0.0.1"], gone_after=9.25, state=tmp_path, bot="good")
        node.seat = SimpleNamespace(peer=SimpleNamespace(cfg=cfg, me=1))  # type: ignore[assignment]
        node._save_state()

    async def save_announcing() -> None:
        node = Node(generate("x"), ["127.0.0.1"], state=tmp_path, disco=SimpleNamespace())  # type: ignore[arg-type]
        node.seat = SimpleNamespace(peer=SimpleNamespace(cfg=cfg, me=1))  # type: ignore[assignment]
        node._save_state()

    asyncio.run(save())
    saved = NodeState.load(tmp_path)
    assert saved is not None and (saved.interfaces, saved.gone_after, saved.bot) == (("127.0.0.1",), 9.25, "good")
    assert not saved.announced  # no multicast: it does not start when the seat comes back
    asyncio.run(save_announcing())
    saved = NodeState.load(tmp_path)
    assert saved is not None and saved.announced
    store_file(tmp_path / "node", encode({"public": bytes(32), "port": 4000, "dial": []}))  # before they were kept
    older = NodeState.load(tmp_path)
    assert older is not None and (older.interfaces, older.gone_after, older.bot, older.announced) == (
        None, None, None, False)
    store_file(tmp_path / "node", encode({"public": bytes(32), "port": 4000, "dial": [], "bot": "cheater"}))
    with pytest.raises(LocalError, match="no bot"):
        NodeState.load(tmp_path)
    store_file(tmp_path / "node", encode({"public": bytes(32), "port": 4000, "dial": [], "mdns": 1}))
    with pytest.raises(LocalError, match="mdns"):
        NodeState.load(tmp_path)


@pytest.mark.parametrize("cut", [0, 5, 30])
def test_a_journal_emptied_or_cut_at_its_start_is_refused(tmp_path: Path, cut: int) -> None:
    """An emptied journal used to read as a seat that had signed nothing yet: coming back, the peer signed its
    chain's first places anew, and every other seat blamed it for two frames at one place and stopped."""
    cfg = make_table("crisp", 2)[0].cfg
    store = SeatStore(tmp_path, cfg, 1)
    assert store.load() == []  # a journal made and nothing in it yet: the seat has sent nothing
    store.append([("seed", 1, b"s" * 32), ("frame", 7, b"x" * 100)])
    store.close()
    data = (tmp_path / "journal").read_bytes()
    (tmp_path / "journal").write_bytes(data[cut:] if cut else b"")  # cut 0: emptied
    with pytest.raises(LocalError, match="damaged"):
        SeatStore(tmp_path, cfg, 1).load()


def _saved_by_a_node(directory: Path, bot: str | None) -> Identity:
    """What Node writes beside a seat's journal as it is seated (a bot's, or a client's with `bot` None)."""
    import asyncio
    from types import SimpleNamespace

    from p2pcards.net.node import Node

    cfg = make_table("crisp", 2)[0].cfg
    SeatStore(directory, cfg, 1).close()
    me = generate("x")

    async def save() -> None:
        node = Node(me, ["127.0.0.1"], state=directory, bot=bot)
        node.seat = SimpleNamespace(peer=SimpleNamespace(cfg=cfg, me=1))  # type: ignore[assignment]
        node._save_state()

    asyncio.run(save())
    return me


@pytest.mark.parametrize("bot", ["good", None])
def test_the_node_file_names_the_key_and_the_secret_stays_in_its_one_file(tmp_path: Path, bot: str | None) -> None:
    """The node file kept a copy of the signing key: the user's identity key was in two files, one of them not
    its own (and left behind by a crash or a copy of the state directory)."""
    old = os.umask(0o022)
    try:
        me = _saved_by_a_node(tmp_path, bot)
    finally:
        os.umask(old)
    secret = me.key.private_bytes_raw()
    assert secret not in (tmp_path / "node").read_bytes()
    saved = NodeState.load(tmp_path)
    assert saved is not None and saved.public == me.public
    if bot is None:  # the client's key is the user's identity key, in the user's data directory
        assert not (tmp_path / BOT_KEY).exists() and not (tmp_path / KEY_FILE).exists()
        return
    for name in ("node", BOT_KEY):
        assert stat.S_IMODE((tmp_path / name).stat().st_mode) == 0o600, name
    assert bot_key(tmp_path, saved).private_bytes_raw() == secret
    clear(tmp_path)
    assert list(tmp_path.iterdir()) == []


def test_a_bots_key_file_open_to_others_or_of_another_seat_is_refused(tmp_path: Path) -> None:
    _saved_by_a_node(tmp_path, "good")
    saved = NodeState.load(tmp_path)
    assert saved is not None
    (tmp_path / BOT_KEY).chmod(0o644)
    with pytest.raises(IdentityError, match="readable by others"):
        bot_key(tmp_path, saved)
    (tmp_path / BOT_KEY).chmod(0o600)
    with pytest.raises(LocalError, match="not the key of the seat"):
        bot_key(tmp_path, replace(saved, public=generate("y").public))
    (tmp_path / BOT_KEY).unlink()
    with pytest.raises(IdentityError, match="no identity key"):
        bot_key(tmp_path, saved)


def test_a_node_file_that_copied_the_key_is_refused_in_one_line(tmp_path: Path) -> None:
    """Written before this change, it holds the key itself: refused, not read (it goes when the store is cleared)."""
    _saved_by_a_node(tmp_path, None)
    node: Any = decode((tmp_path / "node").read_bytes())
    store_file(tmp_path / "node", encode({**{k: v for k, v in node.items() if k != "public"}, "key": bytes(32)}))
    with pytest.raises(LocalError, match=r"^\S+ holds no seat we can come back to \(its node file is of an older "
                                         r"p2pcards, which kept a copy of the signing key\)$"):
        NodeState.load(tmp_path)


def test_clearing_a_store_never_takes_the_users_identity_key_kept_in_the_same_directory(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A bot's key was `identity.key` in its store, and clear() took that name: `play --state` given the identity's
    directory ($P2PCARDS_HOME) lost the user's key for good when the client looked for a saved game there."""
    from p2pcards.crypto.identity import HOME_ENV, load_or_create
    from p2pcards.ui.comeback import find

    monkeypatch.setenv(HOME_ENV, str(tmp_path))
    me = load_or_create()
    key = (tmp_path / KEY_FILE).read_bytes()
    assert find(tmp_path, me) == (None, None)  # nothing saved there: what is a store's is cleared, and only that
    _saved_by_a_node(tmp_path, "good")
    clear(tmp_path)
    assert (tmp_path / KEY_FILE).read_bytes() == key and not (tmp_path / BOT_KEY).exists()
