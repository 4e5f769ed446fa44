"""Property: on any table hypothesis picks, the peers agree on everything and nobody learns a card early."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from table_harness import Spec, play


@st.composite
def tables(draw: st.DrawFn) -> Spec:
    """A small game of either kind with random options, bots and seed."""
    game = draw(st.sampled_from(["crisp", "crescendo"]))
    if game == "crisp":
        players = draw(st.integers(2, 5))
        options: dict[str, object] = {"limit": draw(st.sampled_from([20, 30])),
                                      "discard_draw": draw(st.booleans())}
        if draw(st.booleans()):
            options["draw_seconds"] = 30
    else:
        players = draw(st.integers(2, 4))
        options = {"number_window_s": draw(st.sampled_from([0, 0.5]))}
    bots = draw(st.sampled_from(["random", "showoff"]))
    return Spec(game, players, tuple(sorted(options.items())), bots, draw(st.integers(1, 10**6)))


@pytest.mark.slow  # ten whole games at random tables
@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(tables())
def test_any_table_agrees_and_leaks_nothing(spec: Spec) -> None:
    played = play(spec)
    peers = played.net.peers
    assert all(p.finished and p.stopped is None and not p.faults for p in peers), [p.stopped for p in peers]
    assert len({p.rs.log_hash for p in peers if p.rs is not None}) == 1
    assert len({tuple(p.game.totals) for p in peers}) == 1
    assert not played.knowledge.leaks, played.knowledge.report()
