"""Files written whole or not at all: the user's (a transcript, a report: never over one they have unless told) and a
seat's store and identity (readable by their user alone)."""

from __future__ import annotations

import contextlib
import errno
import json
import math
import os
import secrets
import sys
from collections.abc import Callable, Iterator, Mapping

from .errors import InputError

STDOUT = "-"  # a file to write by this name is standard output (a report's --json only)


def overwrite_help(*options: str) -> str:
    """The help of `--overwrite` for a command whose `options` write files."""
    return f"replace a FILE of {' or '.join(options)} that already exists (default: refuse it before anything starts)"


def refuse_lone_overwrite(overwrite: bool, files: Mapping[str, str | None]) -> None:
    """InputError for `--overwrite` given with none of the options (`files`: each option and its FILE, or None) whose
    file it lets replace one that exists: the user meant a file that is not there."""
    if overwrite and all(path is None for path in files.values()):
        raise InputError(f"--overwrite: only with {' or '.join(files)}, whose FILE it lets replace one that exists")


def refuse_existing(path: str | None, option: str, overwrite: bool) -> None:
    """InputError naming `path` when it already exists and `overwrite` was not given (checked before any work)."""
    if path is not None and path != STDOUT and not overwrite and os.path.lexists(path):
        raise InputError(f"{option}: {path} already exists: give another file, or --overwrite to replace it")


def _finite(data: object) -> object:
    """`data` with every NaN or infinite number null: a figure that could not be measured (JSON has no NaN)."""
    if isinstance(data, float) and not math.isfinite(data):
        return None
    if isinstance(data, dict):
        return {k: _finite(v) for k, v in data.items()}
    if isinstance(data, (list, tuple)):
        return [_finite(v) for v in data]
    return data


@contextlib.contextmanager
def json_output(path: str | None, overwrite: bool = False) -> Iterator[Callable[[object], None]]:
    """A function that writes a report as JSON to `path` (whole, as `write_file`; STDOUT: standard output), and,
    while the block runs with `path` STDOUT, what it prints going to standard error, so that the JSON stands alone."""
    out = sys.stdout

    def write(data: object) -> None:
        if path is None:
            return
        text = json.dumps(_finite(data), indent=1, allow_nan=False) + "\n"
        if path == STDOUT:
            out.write(text)
            out.flush()
        else:
            write_file(path, text.encode(), overwrite)

    with contextlib.redirect_stdout(sys.stderr) if path == STDOUT else contextlib.nullcontext():
        yield write


def numbered(path: str, n: int, overwrite: bool = False) -> str:
    """Where the `n`th of several files of one run goes: `path` first, then `stem-2.ext`, `stem-3.ext` … (without
    `overwrite`, counting on past a name already taken, so that no file is refused once its work is done)."""
    if n <= 1:
        return path
    root, ext = os.path.splitext(path)
    while not overwrite and os.path.lexists(f"{root}-{n}{ext}"):
        n += 1
    return f"{root}-{n}{ext}"


def fsync_dir(directory: str | os.PathLike[str]) -> None:
    """Make a rename or a new file in `directory` durable (where the file system can)."""
    with contextlib.suppress(OSError):  # a file system without directory fsync: the rename is still atomic
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def temporary_name(path: str) -> str:
    """A name for a temporary file beside `path` (same directory, so a rename is atomic) that `is_temporary` knows."""
    parent, name = os.path.split(path)
    return os.path.join(parent, f".{name}.{secrets.token_hex(4)}.tmp")


def is_temporary(name: str, of: str) -> bool:
    """True when `name` is that of a temporary file for the file named `of` (one a crash mid-write left)."""
    return name.startswith(f".{of}.") and name.endswith(".tmp") and len(name) == len(of) + 14


def _temporary(path: str, private: bool) -> tuple[str, int]:
    """A new file beside `path`, made with the mode `open` would give it, or its user's alone when `private`."""
    while True:
        tmp = temporary_name(path)
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600 if private else 0o666)
        except FileExistsError:
            continue
        if private:
            try:
                os.fchmod(fd, 0o600)  # a umask may take more than the group's and others' bits away
            except OSError:
                os.close(fd)
                os.unlink(tmp)
                raise
        return tmp, fd


def write_file(path: str | os.PathLike[str], data: bytes, overwrite: bool = False, private: bool = False) -> None:
    """Write `data` to `path` all at once: into a temporary file beside it, synced, renamed to `path`, the directory
    synced (a crash leaves the old file or the new one, never half of one). Without `overwrite` a file at `path` is
    never replaced: one that appeared since the start is an InputError naming the temporary file that keeps `data`.
    `private`: readable by its user alone (mode 0600). InputError too when it cannot be written."""
    path = os.fspath(path)
    try:
        tmp, fd = _temporary(path, private)
    except OSError as exc:
        raise InputError(f"{path}: {exc.strerror or exc}") from None
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        if overwrite:
            os.replace(tmp, path)
        else:
            _link_new(tmp, path)
    except FileExistsError:
        raise InputError(f"{path} appeared while we worked and was not replaced; what we wrote is in {tmp}") from None
    except OSError as exc:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise InputError(f"{path}: {exc.strerror or exc}") from None
    fsync_dir(os.path.dirname(path) or ".")


def _link_new(tmp: str, path: str) -> None:
    """Give `tmp` the name `path` unless a file has it (FileExistsError): a hard link, which never replaces."""
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise
    except OSError as exc:
        if exc.errno not in (errno.EPERM, errno.ENOTSUP, errno.EOPNOTSUPP, errno.EMLINK, errno.EXDEV):
            raise
        if os.path.lexists(path):  # no hard links here: look, then rename (a race is left open only on such a system)
            raise FileExistsError(errno.EEXIST, "exists", path) from None
        os.replace(tmp, path)
        return
    os.unlink(tmp)
