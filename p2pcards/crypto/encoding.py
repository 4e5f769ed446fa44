"""One canonical msgpack encoding and a strict, bounded decoder that rejects everything else."""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Final, TypeAlias

import msgpack  # type: ignore[import-untyped]

from ..errors import MalformedMessage

# A value that can cross the wire: no floats, no extension types, maps keyed by str only.
Value: TypeAlias = None | bool | int | str | bytes | list["Value"] | tuple["Value", ...] | dict[str, "Value"]

MAX_FRAME: Final = 1 << 20  # bytes in one frame (signature + message)
MAX_STR: Final = 4096  # bytes in one str
MAX_BIN: Final = 1 << 19  # bytes in one bin
MAX_ARRAY: Final = 4096  # items in one array
MAX_MAP: Final = 64  # entries in one map
MAX_DEPTH: Final = 16  # nesting of arrays and maps
INT_MIN: Final = -(1 << 63)
INT_MAX: Final = (1 << 64) - 1


def _canonical(value: object, depth: int) -> object:
    """The value with maps rebuilt in sorted key order; TypeError/ValueError on anything not encodable."""
    if depth > MAX_DEPTH:
        raise ValueError("value nested too deeply")
    if value is None or isinstance(value, (bool, str, bytes)):
        return value
    if isinstance(value, int):
        if not INT_MIN <= value <= INT_MAX:
            raise ValueError(f"integer out of msgpack range: {value}")
        return value
    if isinstance(value, (list, tuple)):
        return [_canonical(v, depth + 1) for v in value]
    if isinstance(value, Mapping):
        out: dict[str, object] = {}
        for key in sorted(value):
            if not isinstance(key, str):
                raise TypeError(f"map key is not a str: {key!r}")
            out[key] = _canonical(value[key], depth + 1)
        return out
    raise TypeError(f"not encodable: {type(value).__name__}")


def encode(value: Value) -> bytes:
    """The canonical msgpack bytes of `value` (smallest formats, map keys in sorted order)."""
    packed: bytes = msgpack.packb(_canonical(value, 0), use_bin_type=True)
    return packed


def _reject_ext(code: int, data: bytes) -> object:
    """ext_hook: extension types are never accepted."""
    raise MalformedMessage(f"extension type {code} not allowed")


_SIZED = {"str": "a string", "bin": "a byte string", "array": "an array", "map": "a map"}


def _plain(said: str) -> str:
    """msgpack's words for bad input (e.g. "9 exceeds max_str_len(8)"), as a user reads them."""
    if "incomplete" in said:
        return "cut short"
    over = re.fullmatch(r"(\d+) exceeds max_(\w+)_len\((\d+)\)", said)
    if over and over[2] in _SIZED:
        return f"{_SIZED[over[2]]} of {over[1]}, over the limit of {over[3]}"
    return "not a valid encoding"


def _check(value: object, depth: int) -> None:
    """Raise MalformedMessage unless `value` is made only of the allowed types, within MAX_DEPTH."""
    if depth > MAX_DEPTH:
        raise MalformedMessage("nested too deeply")
    if value is None or isinstance(value, (bool, int, str, bytes)):
        return
    if isinstance(value, list):
        for v in value:
            _check(v, depth + 1)
        return
    if isinstance(value, dict):
        keys = list(value)
        if not all(isinstance(k, str) for k in keys):
            raise MalformedMessage("map key is not a str")
        if keys != sorted(keys):
            raise MalformedMessage("not in canonical encoding (map keys out of order)")
        for v in value.values():
            _check(v, depth + 1)
        return
    raise MalformedMessage(f"type not allowed: {type(value).__name__}")


def decode(data: bytes, max_size: int = MAX_FRAME, max_bin: int = MAX_BIN, max_array: int = MAX_ARRAY) -> Value:
    """Decode exactly one canonical msgpack value; MalformedMessage on anything else or over a cap (a file
    that holds frames raises the bin and array caps)."""
    if not isinstance(data, bytes):
        raise MalformedMessage("not bytes")
    if len(data) > max_size:
        raise MalformedMessage(f"{len(data)} bytes exceeds the cap of {max_size}")
    try:
        value = msgpack.unpackb(
            data,
            raw=False,
            use_list=True,
            strict_map_key=True,
            max_str_len=MAX_STR,
            max_bin_len=max_bin,
            max_array_len=max_array,
            max_map_len=MAX_MAP,
            max_ext_len=0,
            ext_hook=_reject_ext,
        )
    except MalformedMessage:
        raise
    except msgpack.StackError:  # its message is empty
        raise MalformedMessage(f"nested too deeply (more than {MAX_DEPTH} levels)") from None
    except msgpack.ExtraData:
        raise MalformedMessage("not msgpack: bytes after the end of the message") from None
    except Exception as exc:  # msgpack raises several unrelated types for bad input, in its own words
        raise MalformedMessage(f"not msgpack: {_plain(str(exc))}") from None
    _check(value, 0)
    # Types, depth and key order are checked: packing it as it is gives the canonical bytes.
    if msgpack.packb(value, use_bin_type=True) != data:
        raise MalformedMessage("not in canonical encoding")
    result: Value = value
    return result


def digest(person: bytes, data: bytes, size: int = 32) -> bytes:
    """BLAKE2b of `data` with `person` as personalisation (domain separation), `size` bytes out."""
    return hashlib.blake2b(data, digest_size=size, person=person).digest()


def transcript_hash(person: bytes, fields: Sequence[Value], size: int = 64) -> bytes:
    """BLAKE2b, personalised by `person`, of the canonical encoding of the array `fields`."""
    return hashlib.blake2b(encode(list(fields)), digest_size=size, person=person).digest()
