"""Canonical msgpack: one encoding per value, and a decoder that accepts nothing else."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from p2pcards.crypto.encoding import MAX_BIN, MAX_DEPTH, MAX_FRAME, MAX_STR, decode, encode
from p2pcards.errors import MalformedMessage

values = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(1 << 63), (1 << 64) - 1)
    | st.text(max_size=20)
    | st.binary(max_size=40),
    lambda kids: st.lists(kids, max_size=5) | st.dictionaries(st.text(max_size=8), kids, max_size=5),
    max_leaves=20,
)


@settings(max_examples=150, deadline=None)
@given(values)
def test_round_trip(v: object) -> None:
    """decode(encode(v)) == v and encoding is stable."""
    data = encode(v)  # type: ignore[arg-type]
    assert decode(data) == v
    assert encode(decode(data)) == data


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(st.text(max_size=6), st.integers(-1000, 1000), min_size=2, max_size=8))
def test_map_order_does_not_matter(d: dict[str, int]) -> None:
    """Insertion order never changes the bytes."""
    assert encode(d) == encode(dict(reversed(list(d.items()))))


def test_smallest_formats() -> None:
    """Integers, strings and containers use the smallest msgpack format (hand-checked bytes)."""
    assert encode(0) == b"\x00"
    assert encode(127) == b"\x7f"
    assert encode(128) == b"\xcc\x80"
    assert encode(256) == b"\xcd\x01\x00"
    assert encode(-1) == b"\xff"
    assert encode(-33) == b"\xd0\xdf"
    assert encode("a") == b"\xa1a"
    assert encode(b"a") == b"\xc4\x01a"
    assert encode({"b": 1, "a": 2}) == b"\x82\xa1a\x02\xa1b\x01"
    assert encode([None, True, False]) == b"\x93\xc0\xc3\xc2"


@pytest.mark.parametrize(
    "data",
    [
        b"\xcc\x05",  # 5 as uint8: not the smallest format
        b"\xd9\x01a",  # "a" as str8
        b"\xc5\x00\x01a",  # bin16 for one byte
        b"\xdc\x00\x00",  # array16 for an empty array
        b"\x82\xa1b\x01\xa1a\x02",  # map keys out of order
        b"\x82\xa1a\x01\xa1a\x02",  # duplicate key
        b"\xcb" + b"\x00" * 8,  # float64
        b"\xca" + b"\x00" * 4,  # float32
        b"\xd4\x01\x00",  # fixext1
        b"\xd6\xff\x00\x00\x00\x00",  # timestamp ext
        b"\x81\x01\x02",  # int key
        b"\x81\xc4\x01a\x02",  # bin key
        b"\xa2\xff\xfe",  # invalid UTF-8
        b"\x01\x02",  # trailing data
        b"\xc1",  # never-used byte
        b"\x92\x01",  # truncated
        b"",
    ],
)
def test_rejects(data: bytes) -> None:
    """Non-canonical, float, ext, odd keys, bad UTF-8, trailing and truncated input: MalformedMessage."""
    with pytest.raises(MalformedMessage):
        decode(data)


def test_caps() -> None:
    """Every length is capped, and so is nesting and the frame."""
    with pytest.raises(MalformedMessage):
        decode(encode("x" * (MAX_STR + 1)))
    decode(encode("x" * MAX_STR))
    with pytest.raises(MalformedMessage):
        decode(b"\xc6" + (MAX_BIN + 1).to_bytes(4, "big") + b"\x00" * (MAX_BIN + 1))
    with pytest.raises(MalformedMessage):
        decode(b"\xdd\xff\xff\xff\xff")  # array claiming 4 billion items
    with pytest.raises(MalformedMessage):
        decode(b"\xdf\x00\x01\x00\x00")  # map claiming 65536 entries
    deep: object = 1
    for _ in range(MAX_DEPTH + 2):
        deep = [deep]
    with pytest.raises(MalformedMessage):
        decode(b"\x91" * (MAX_DEPTH + 2) + b"\x01")
    with pytest.raises(MalformedMessage):
        decode(b"\xc0" * (MAX_FRAME + 1))
    with pytest.raises(ValueError):
        encode(deep)  # type: ignore[arg-type]


def test_encode_refuses_what_decode_would() -> None:
    """Our own side never produces a float, an int key or an out-of-range int."""
    for bad in (1.5, {1: 2}, 1 << 64, -(1 << 63) - 1, {1, 2}):
        with pytest.raises((TypeError, ValueError)):
            encode(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize("data, words", [
    (b"\x92\x01", "not msgpack: cut short"),
    (b"\x01\x02", "not msgpack: bytes after the end of the message"),
    (b"\xc1", "not msgpack: not a valid encoding"),
    (b"\xda\x10\x01" + b"a" * 4097, "not msgpack: a string of 4097, over the limit of 4096"),
])
def test_bad_bytes_are_named_in_plain_words(data: bytes, words: str) -> None:
    # A peer shows these to its user ("bo is missing: …"): msgpack's own words were "unpack(b) received extra data."
    with pytest.raises(MalformedMessage) as err:
        decode(data)
    assert str(err.value) == words
