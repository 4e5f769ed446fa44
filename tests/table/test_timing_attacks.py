"""Attacks on time: an orderer moving stamps within (and just past) its bounds, moves landing on a
deadline, ticks withheld, doubled or late, old frames replayed, the memory aid toggled.

Each test names its outcome: caught and blamed on the cheater, rejected harmlessly, or (where the
protocol admits it, §15) an advantage the orderer really has, pinned down so that it cannot grow.
"""

from __future__ import annotations

import pytest

from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK
from p2pcards.games.base import Move
from p2pcards.games.crescendo import CrescendoGame, CrescendoOptions
from p2pcards.games.crisp import CrispGame, CrispOptions

# Plain cards first: every draw below may simply be discarded.
PLAIN_CRISP = [c for c in CRISP_DECK if c[:-1] not in ("J", "Q", "K")] + [c for c in CRISP_DECK if c[:-1] in ("J", "Q", "K")]


# ---------------------------------------------------------------- deadlines on the millisecond grid
#
# Stamps are whole milliseconds read as seconds (t / 1000); a deadline is a stamp plus a time
# option. In binary floating point 0.119 + 3.0 is just below 3.119 and 0.131 + 2.0 just above
# 2.131, so without care a move stamped exactly at a deadline would be late (or early) for about
# one stamp in a hundred, against §12.1 ("deadlines are inclusive"), and an implementation that
# counts in integer milliseconds would part ways with this one.

GRID_EDGES = [119, 131, 236, 256, 500]


def _crisp_engine() -> CrispGame:
    game = CrispGame(["p0", "p1", "p2"], CrispOptions())
    game.queue_deck(PLAIN_CRISP)
    game.apply(Move("p1", "draw", source="pile"), now=0.0)
    return game


@pytest.mark.parametrize("end_ms", GRID_EDGES)
def test_a_crisp_call_stamped_exactly_at_its_windows_end_is_in_time(end_ms: int) -> None:
    game = _crisp_engine()
    game.apply(Move("p1", "discard"), now=end_ms / 1000)
    game.apply(Move("p1", "crisp"), now=(end_ms + 3000) / 1000)
    assert game.r is not None and game.r.caller == 1


@pytest.mark.parametrize("end_ms", GRID_EDGES)
def test_a_draw_stamped_exactly_at_the_turns_opening_is_allowed(end_ms: int) -> None:
    game = _crisp_engine()
    game.apply(Move("p1", "discard"), now=end_ms / 1000)
    game.apply(Move("p2", "draw", source="pile"), now=(end_ms + 2000) / 1000)  # "may be stamped exactly then"


@pytest.mark.parametrize("end_ms", [26, 29, 96, 99, 500])  # (0.026 + 2.0) + 30.0 is not 32.026, nor near it
def test_a_crisp_time_out_is_dated_on_the_grid(end_ms: int) -> None:
    game = CrispGame(["p0", "p1", "p2"], CrispOptions(draw_seconds=30.0))
    game.queue_deck(PLAIN_CRISP)
    game.apply(Move("p1", "draw", source="pile"), now=0.0)
    game.apply(Move("p1", "discard"), now=end_ms / 1000)
    # p2's turn opens at end + 2 s and times out at end + 32 s: a draw stamped exactly then is in time.
    game.apply(Move("p2", "draw", source="pile"), now=(end_ms + 32000) / 1000)


def _crescendo_discarded(end_ms: int) -> CrescendoGame:
    game = CrescendoGame(["p0", "p1"], CrescendoOptions())
    game.queue_deck(list(CRESCENDO_DECK))
    for p in ("p1", "p0"):
        game.apply(Move(p, "setup_pass"))
    game.apply(Move("p1", "draw", source="reserve"))
    game.apply(Move("p1", "discard"), now=end_ms / 1000)
    return game


@pytest.mark.parametrize("end_ms", GRID_EDGES)
def test_a_number_claim_stamped_exactly_at_the_windows_end_is_in_time(end_ms: int) -> None:
    game = _crescendo_discarded(end_ms)
    game.apply(Move("p0", "number", pos=0), now=(end_ms + 2000) / 1000)  # right or wrong, in time
    assert game.r is not None and game.r.window is not None and game.r.window.claimed


@pytest.mark.parametrize("end_ms", GRID_EDGES)
def test_the_next_crescendo_turn_may_begin_exactly_at_the_windows_end(end_ms: int) -> None:
    game = _crescendo_discarded(end_ms)
    game.apply(Move("p0", "draw", source="reserve"), now=(end_ms + 2000) / 1000)
