"""One writer of whole files, for the user's files and a seat's store alike: synced, renamed, never half written."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

import p2pcards
from p2pcards.errors import InputError
from p2pcards.files import is_temporary, temporary_name, write_file
from p2pcards.net.store import SeatStore, clear
from p2pcards.sim.table_game import make_table


def test_only_the_one_writer_renames_a_file_into_place() -> None:
    """A second writer (the store's, the identity's) had drifted: no directory sync, a fixed temporary name."""
    root = Path(p2pcards.__file__).parent
    renaming = [str(p.relative_to(root)) for p in root.rglob("*.py")
                if any(call in p.read_text(encoding="utf-8") for call in ("os.replace(", "os.rename("))]
    assert renaming == ["files.py"]


def test_a_file_and_its_directory_are_synced(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    synced: list[bool] = []  # a directory?
    real = os.fsync

    def fsync(fd: int) -> None:
        synced.append(stat.S_ISDIR(os.fstat(fd).st_mode))
        real(fd)

    monkeypatch.setattr(os, "fsync", fsync)
    write_file(tmp_path / "a", b"data", private=True)
    assert synced == [False, True]
    synced.clear()
    SeatStore(tmp_path / "store", make_table("crisp", 2)[0].cfg, 1).close()  # its journal, then its table file
    assert synced == [False, False, True]


def test_a_private_file_is_its_users_alone_whatever_the_umask_and_the_file_it_replaces(tmp_path: Path) -> None:
    target = tmp_path / "secret"
    target.write_bytes(b"old")
    target.chmod(0o644)
    old = os.umask(0o277)  # would leave the file unwritable by its user: 0400
    try:
        write_file(target, b"new", overwrite=True, private=True)
        write_file(tmp_path / "user", b"a report")
    finally:
        os.umask(old)
    assert target.read_bytes() == b"new" and stat.S_IMODE(target.stat().st_mode) == 0o600
    assert stat.S_IMODE((tmp_path / "user").stat().st_mode) == 0o400  # a user's file: the mode their umask gives


def test_a_store_file_that_cannot_be_written_is_a_one_line_error_and_leaves_no_temporary(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    cfg = make_table("crisp", 2)[0].cfg
    monkeypatch.setattr(os, "replace", full)
    with pytest.raises(InputError, match=r"table: No space left on device$"):
        SeatStore(tmp_path, cfg, 1)
    monkeypatch.undo()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["journal"]
    store = SeatStore(tmp_path, cfg, 1)  # made again: a journal no table file names holds nothing sent
    assert store.load() == []
    store.close()


def test_clearing_a_store_takes_the_temporaries_a_crash_mid_write_left(tmp_path: Path) -> None:
    SeatStore(tmp_path, make_table("crisp", 2)[0].cfg, 1).close()
    left = Path(temporary_name(str(tmp_path / "node")))
    left.write_bytes(b"half a node file")
    assert is_temporary(left.name, "node") and not is_temporary(left.name, "table")
    (tmp_path / "notes.txt").write_bytes(b"the user's")
    clear(tmp_path)
    assert [p.name for p in tmp_path.iterdir()] == ["notes.txt"]
