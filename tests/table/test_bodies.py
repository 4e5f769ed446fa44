"""The table's typed bodies: what the wire holds parses to a frozen value and back; anything else is malformed."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from p2pcards.crypto.encoding import Value
from p2pcards.errors import MalformedMessage
from p2pcards.games.base import Move
from p2pcards.table.bodies import Aid, Fault, Leave, Order, Out, Private, Ready, RoundResult, Shares, parse_body

NAMES = ("ann", "bob", "cy")
ints = st.integers(-(2**31), 2**31)

orders = st.builds(
    lambda i, t, kind, refs: Order(i, t, kind, tuple(refs), tuple(b"f%d" % k for k in range(len(refs)))),
    st.integers(0, 10**6), st.integers(0, 10**12), st.sampled_from(["deal", "move", "tie", "tick"]),
    st.lists(st.tuples(st.integers(0, 2), st.integers(0, 10**6)), max_size=3, unique_by=lambda r: r))
results = st.builds(RoundResult, st.integers(0, 100), st.tuples(ints, ints, ints), st.tuples(ints, ints, ints),
                    st.booleans(), st.binary(min_size=32, max_size=32), st.sampled_from(["verified", "rules", "pass"]),
                    st.none() | st.integers(0, 500), st.none() | st.integers(0, 2))


@given(orders)
def test_an_order_round_trips(order: Order) -> None:
    assert Order.from_wire(order.to_wire(), 3) == order
    assert parse_body("order", order.to_wire(), NAMES, 0) == order


@given(results)
def test_a_result_round_trips(result: RoundResult) -> None:
    assert RoundResult.from_wire(result.to_wire(), 3) == result


@pytest.mark.parametrize("change", [
    {"k": "deal!"}, {"i": "0"}, {"t": 1.5}, {"refs": [[3, 0]]}, {"refs": [[0, 1], [0, 1]]}, {"refs": [[0]]},
    {"refs": [[0, 1]], "frames": []}, {"refs": [[0, 1]], "frames": ["x"]}, {"refs": [[0, 1]] * 4},
])
def test_a_bad_order_is_malformed(change: dict[str, Value]) -> None:
    body: dict[str, Value] = {"i": 0, "t": 0, "k": "move", "refs": [], "frames": [], "why": ""}
    with pytest.raises(MalformedMessage):
        Order.from_wire({**body, **change}, 3)


@pytest.mark.parametrize("mtype, body", [
    ("ready", {"config": "abc"}),
    ("fault", {"blame": 3, "why": "x", "stall": False, "evidence": []}), ("fault", {"blame": True, "why": "x", "stall": False, "evidence": []}),
    ("fault", {"blame": None, "why": 1, "stall": False, "evidence": []}), ("fault", {"blame": None, "why": "x", "stall": 1, "evidence": []}),
    ("fault", {"blame": None, "why": "x", "stall": False, "evidence": [b"a", b"b", b"c"]}),
    ("fault", {"blame": None, "why": "x", "stall": False, "evidence": ["a"]}),
    ("private", {"to": 0, "box": b"x"}), ("private", {"to": 5, "box": b"x"}), ("private", {"to": 1, "box": "x"}),
    ("result", {"round": 1, "scores": [1.5], "totals": [], "over": False, "log": b"", "audit": "v", "at": None,
                "blame": None}),
    ("result", {"round": 1, "scores": [], "totals": [], "over": 0, "log": b"", "audit": "v", "at": None,
                "blame": None}),
    ("shares", {"reveals": []}), ("shares", {"reveals": [1]}),
    ("move", {"m": {"a": 7}}), ("move", {"m": {"a": "é" * 11}}),  # 11 code points, 22 bytes: over 20 bytes
    ("key", {"seat": 0}), ("nonsense", {}), ("aid", {"on": 1}), ("aid", {"on": None}),
    ("gone", {"seat": 0}), ("gone", {"seat": 3}), ("gone", {"seat": True}),
    ("out", {"seats": []}), ("out", {"seats": [0]}), ("out", {"seats": [2, 1]}), ("out", {"seats": [1, 1]}),
    ("out", {"seats": [3]}), ("out", {"seats": [-1]}), ("out", {"seats": 1}), ("out", {"seats": [True]}),
])
def test_bad_bodies_are_malformed_never_another_error(mtype: str, body: dict[str, Value]) -> None:
    with pytest.raises(MalformedMessage):
        parse_body(mtype, body, NAMES, 0)


def test_good_bodies_parse_to_their_types() -> None:
    assert parse_body("ready", {"config": b"c"}, NAMES, 0) == Ready(b"c")
    assert parse_body("fault", {"blame": 2, "why": "w" * 500, "stall": False, "evidence": []}, NAMES, 0) == Fault(2, "w" * 200)
    assert parse_body("fault", {"blame": 2, "why": "é" * 150, "stall": True, "evidence": []}, NAMES, 0) == Fault(2, "é" * 100, True)
    assert parse_body("leave", {"why": 7}, NAMES, 1) == Leave("")
    assert parse_body("move", {"m": {"a": "é" * 10}}, NAMES, 0).action == "é" * 10  # 20 bytes: a shape, the engine judges
    assert parse_body("aid", Aid(True).to_wire(), NAMES, 2) == Aid(True)
    assert parse_body("out", Out((0, 2)).to_wire(), NAMES, 1) == Out((0, 2))
    assert parse_body("private", {"to": 2, "box": b"b"}, NAMES, 0) == Private(2, b"b")
    assert parse_body("move", {"m": {"a": "draw", "s": "pile"}}, NAMES, 1) == Move("bob", "draw", source="pile")
    with pytest.raises(MalformedMessage):
        Shares.from_wire({"reveals": [{}]})
