"""The README stands on its own and its commands are the ones CI runs."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text()


def blocks() -> list[str]:
    """The README's command lines (indented code), in order."""
    return [line.strip() for line in README.splitlines() if line.startswith("    ") and line.strip()]


def test_the_readme_links_only_files_of_the_repository() -> None:
    assert "../" not in README and "shared/" not in README
    for target in re.findall(r"\]\(([^)]+)\)", README):
        assert not target.startswith(("http:", "https:", "/")), target
    for path in ("protocol.md", "docs/scenarios.md"):
        assert f"]({path})" in README


def test_the_readme_says_which_python_and_to_use_a_virtual_environment() -> None:
    needs = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["requires-python"]
    assert needs == ">=3.11" and "Python 3.11 or later" in README
    assert blocks()[0] == "python3 -m venv .venv && . .venv/bin/activate"


def test_the_first_commands_install_and_play_then_install_and_test() -> None:
    assert blocks()[1:3] == ["pip install . && p2pcards play --bots 2", "pip install -e '.[test]' && python -m pytest"]


def test_ci_runs_the_readme_test_command_and_then_the_slow_tests() -> None:
    ci = [line.strip() for line in (ROOT / ".ci" / "run").read_text().splitlines()
          if line.strip() and not line.lstrip().startswith("#")]
    test = ci.index(blocks()[2])
    assert ci[test + 1].startswith("python -m pytest -m slow")


def test_the_default_run_is_parallel_and_leaves_out_the_slow_tests() -> None:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert any(dep.startswith("pytest-xdist") for dep in project["project"]["optional-dependencies"]["test"])
    pytest_options = project["tool"]["pytest"]["ini_options"]
    assert "-n auto" in pytest_options["addopts"] and "-m 'not slow'" in pytest_options["addopts"]
    assert any(marker.startswith("slow:") for marker in pytest_options["markers"])


def test_the_command_table_names_only_options_its_commands_take_and_every_one_of_id() -> None:
    # `p2pcards id` has --dir, where the key lives, which the table left out.
    import argparse

    from p2pcards.cli import load_command
    rows = [line for line in README.splitlines() if line.startswith("| `p2pcards ")]
    assert rows
    for row in rows:
        usage = row.split("`")[1]
        words = usage.split()
        parser = load_command(words[1])
        if words[1] == "bench":
            sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
            parser = sub.choices[words[2]]
        known = {o for a in parser._actions for o in a.option_strings}
        named = set(re.findall(r"--[a-z][a-z-]*", usage))
        assert named <= known, (usage, named - known)
        if words[1] == "id":
            assert named == known - {"-h", "--help"}, usage


def test_no_file_of_the_repository_points_at_the_developers_rulings() -> None:
    # Code, tests and scenario files cited "RULINGS" and "RULINGS.md", a document a reader of the repository
    # does not have: docs/rules.md is the rules as played here.
    import subprocess
    listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout.split()
    here = Path(__file__).resolve()
    for name in listed:
        path = ROOT / name
        if path.resolve() == here or not path.is_file():
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        assert "RULINGS" not in text and "/work/" not in text and "shared/rules" not in text, name
