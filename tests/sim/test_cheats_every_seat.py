"""Every cheat from the first and the last seat too (the catalogue's own test plays seat 1): the orderer of the
first round, and a seat after everyone, are caught and blamed alike (protocol.md §12.4, §14)."""

from __future__ import annotations

import pytest

from p2pcards.sim.batch import play_batch
from p2pcards.sim.catalogue import CATALOGUE, cheat_limit

CASES = [(kind, game, seat) for kind, cheat in CATALOGUE.items() for game in cheat.games for seat in (0, 2)
         if cheat.not_at is None or cheat.not_at[0] != seat]


@pytest.mark.slow  # one game per cheat, game and seat
@pytest.mark.parametrize("kind, game, seat", CASES)
def test_every_cheat_from_the_first_or_the_last_seat_is_caught_and_blamed_on_it(kind: str, game: str,
                                                                                 seat: int) -> None:
    cheat = CATALOGUE[kind]
    # A cheat of the orderer needs its seat to order a round: seat 2 does so only in a game long enough.
    options = {} if game == "crescendo" else {"limit": cheat_limit(cheat, seat)}
    [report] = play_batch(game, 3, options, 1, 1, cheat=cheat, cheater=seat, timeout=3.0, until=1800.0)
    assert report.fired, (kind, game, seat)
    assert report.verdict is None and report.agreed, report.verdict
