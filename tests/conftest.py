"""Shared test set-up: a proof checked once per test process, however many in-memory peers check it.

A table in memory runs every seat in one process, so each proof of shuffle and each DLEQ proof of a
share is verified by every other seat on the very same input. The verifiers are pure functions of their
arguments, so outside tests/crypto a proof found valid is remembered for the process, keyed by the whole
of the arguments: it is still checked for real the first time, any other input (a cheater's pass, a
forged share) is checked afresh, and a failure is never remembered. A shuffle pass is a pure function
of its arguments too (the seat's seed fixes its permutation, its randomness and its proof's nonces):
one made again on the same input (a journal replayed, a resumed seat) is the one made the first time.
The crypto core's own tests (tests/crypto, which count primitive calls) and every peer process see the
verifiers and the shuffle as they are.
"""

from __future__ import annotations

import os
import pickle
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from p2pcards.crypto import deck, proofs, shuffle

_CRYPTO_TESTS = Path(__file__).parent / "crypto"


def pytest_xdist_auto_num_workers(config: pytest.Config) -> int:
    """`-n auto` (pyproject's addopts): two workers per core the process may use. Much of the suite waits rather than
    computes (real peer processes, sockets, timers, terminals), so one worker per core left the cores a third idle:
    the slow set took 16 minutes with 2 workers on 2 cores, 12 with 4."""
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return 2 * cores


_valid: set[bytes] = set()
_made: dict[bytes, Any] = {}


def _once(verifier: Callable[..., bool]) -> Callable[..., bool]:
    """`verifier` with the arguments it found valid remembered (pickled whole); anything else checked afresh."""

    def remembered(*args: Any) -> bool:
        key = pickle.dumps((verifier.__module__, verifier.__qualname__, args))
        if key in _valid:
            return True
        ok = verifier(*args)
        if ok is True:
            _valid.add(key)
        return ok

    return remembered


def _made_once(maker: Callable[..., Any]) -> Callable[..., Any]:
    """`maker`, a pure function, with what it made remembered by its arguments (pickled whole)."""

    def remembered(*args: Any) -> Any:
        key = pickle.dumps((maker.__module__, maker.__qualname__, args))
        if key not in _made:
            _made[key] = maker(*args)
        return _made[key]

    return remembered


# (module, name) -> the function as it is, and how it is remembered
_REMEMBERED: dict[tuple[Any, str], tuple[Callable[..., Any], Callable[..., Callable[..., Any]]]] = {
    (shuffle, "verify"): (shuffle.verify, _once), (proofs, "verify_share"): (proofs.verify_share, _once),
    (deck, "shuffle_pass"): (deck.shuffle_pass, _made_once)}


@pytest.fixture(scope="session", autouse=True)
def _proofs_checked_once() -> Iterator[None]:
    # Session-wide, so that the games a session- or module-scoped fixture plays are covered too.
    with pytest.MonkeyPatch.context() as patch:
        for (module, name), (original, remember) in _REMEMBERED.items():
            patch.setattr(module, name, remember(original))
        yield


@pytest.fixture(autouse=True)
def _crypto_tests_see_the_verifiers_as_they_are(request: pytest.FixtureRequest,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    if _CRYPTO_TESTS in Path(str(request.node.path)).parents:
        for (module, name), (original, _) in _REMEMBERED.items():
            monkeypatch.setattr(module, name, original)
