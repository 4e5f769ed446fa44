"""The package stays typed: mypy --strict finds nothing (the configuration is in pyproject.toml)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


@pytest.mark.slow  # a lint, 10 s of CPU from a clean checkout: CI runs it with the slow set
def test_mypy_strict_is_clean() -> None:
    run = subprocess.run([sys.executable, "-m", "mypy", "p2pcards"], cwd=ROOT, capture_output=True, text=True)
    assert run.returncode == 0, run.stdout + run.stderr
