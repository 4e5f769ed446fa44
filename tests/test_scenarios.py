"""Every scenario file (the shared examples and our own) gives the result its `expect` names."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from p2pcards.scenario import run_scenario

HERE = Path(__file__).parent / "scenarios"
FILES = sorted(HERE.rglob("*.json"))


def matches(expected: Any, actual: Any, where: str = "") -> list[str]:
    """Differences between `expect` and the output, by FORMAT.md's rule (objects key by key, lists item by item)."""
    if isinstance(expected, dict):
        if not isinstance(actual, dict):
            return [f"{where}: expected an object, got {actual!r}"]
        out: list[str] = []
        for key, value in expected.items():
            if key not in actual:
                out.append(f"{where}.{key}: missing")
            else:
                out += matches(value, actual[key], f"{where}.{key}")
        return out
    if isinstance(expected, list):
        if not isinstance(actual, list) or len(actual) != len(expected):
            return [f"{where}: expected {expected!r}, got {actual!r}"]
        return [d for i, (e, a) in enumerate(zip(expected, actual)) for d in matches(e, a, f"{where}[{i}]")]
    if expected != actual or type(expected) is bool and type(actual) is not bool:
        return [f"{where}: expected {expected!r}, got {actual!r}"]
    return []


def test_there_are_scenarios() -> None:
    assert len([f for f in FILES if "examples" in f.parts]) >= 6


@pytest.mark.parametrize("path", FILES, ids=[str(f.relative_to(HERE)) for f in FILES])
def test_scenario(path: Path) -> None:
    data = json.loads(path.read_text())
    result = run_scenario(data)
    diffs = matches(data["expect"], result, "")
    assert not diffs, "\n".join(diffs) + "\nrejected: " + json.dumps(result["rejected"])


def test_matcher_can_fail() -> None:
    assert matches({"a": [1, 2]}, {"a": [1, 2, 3]})
    assert matches({"a": {"b": None}}, {"a": {"b": 0}})
    assert not matches({"a": {"b": 1}}, {"a": {"b": 1, "c": 2}})


def test_the_format_page_gives_every_options_bounds_as_the_engine_checks_them() -> None:
    # docs/scenarios.md said "seconds ≥ 0" and "a whole number ≥ 1": a file with a two-day window was refused
    # on a bound the page did not give.
    from p2pcards.games.base import MAX_SECONDS
    from p2pcards.games.crisp import MAX_LIMIT
    page = (Path(__file__).parent.parent / "docs" / "scenarios.md").read_text(encoding="utf-8")
    rows = {line.split("|")[2].strip(" `"): line for line in page.splitlines() if line.startswith(("| Crisp |", "| Crescendo |"))}
    assert f"from 1 to {MAX_LIMIT}" in rows["limit"]
    for name in ("draw_seconds", "crisp_window_s", "next_start_s", "number_window_s"):
        assert f"{MAX_SECONDS:g}" in rows[name], name
    assert f"{MAX_SECONDS * 1000:.0f}" in rows["number_tie_ms"]
