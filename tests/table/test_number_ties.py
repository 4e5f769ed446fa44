"""NUMBER claims that tie at a real table (signed messages, real deck crypto, in-memory network):
an invalid claim in a tie is dropped and the valid ones go by the tie order; a tie with no valid
claim is rejected with blame on its first claimant. The table judges ties with the engine, so it
agrees with the scenario runner (tests/scenarios/crescendo/number-tie-*.json).
"""

from __future__ import annotations

import random
from collections.abc import Callable, Sequence

from p2pcards.bots.base import Bot, RandomBot, View
from p2pcards.errors import IllegalMove
from p2pcards.games.base import Event, Move
from p2pcards.games.crescendo import CrescendoGame, CrescendoView
from p2pcards.sim.cheaters import CheatBot, CheatingPeer, make_seeded_table, replace_peer
from p2pcards.sim.memnet import MemNet
from p2pcards.table.peer import TablePeer

OPTIONS = {"number_window_s": 0.5}


class InvalidClaim:
    """A cheat: once per NUMBER window, a claim naming a position past the end of its own row."""

    def __init__(self) -> None:
        self.windows: set[tuple[object, ...]] = set()

    def __call__(self, view: View) -> Move | None:
        if not isinstance(view, CrescendoView) or not view.window_open or view.over:
            return None
        window = (view.round, view.turn_number, len(view.discard))
        if window in self.windows:
            return None
        self.windows.add(window)
        return Move(view.players[view.me], "number", pos=len(view.known[view.me]))


# (claims, each claimant's row length then, the events or the reason the tie was refused)
TieRecord = tuple[list[tuple[str, int]], list[int], list[Event] | str]


def record_ties(peer: TablePeer) -> list[TieRecord]:
    """Every tie `peer`'s engine is given, with its outcome (the engine itself is unchanged)."""
    game = peer.game
    assert isinstance(game, CrescendoGame)
    seen: list[TieRecord] = []
    inner: Callable[[Sequence[tuple[str, int]], float | None], list[Event]] = game.number_tie

    def number_tie(claims: Sequence[tuple[str, int]], now: float | None = None) -> list[Event]:
        assert game.r is not None
        sizes = [len(game.r.rows[game.seat(p)]) for p, _ in claims]
        try:
            events = inner(claims, now)
        except IllegalMove as exc:
            seen.append((list(claims), sizes, str(exc)))
            raise
        seen.append((list(claims), sizes, events))
        return events

    setattr(game, "number_tie", number_tie)
    return seen


def play(seed: int, cheaters: Sequence[int], done: Callable[[list[TablePeer], list[TieRecord]], bool]
         ) -> tuple[list[TablePeer], list[TieRecord]]:
    """Two seats; `cheaters` make an invalid claim in every window, the others claim eagerly.

    Runs until `done`, then 3 virtual seconds more, so that every peer has applied what one has.
    """
    rng = random.Random(f"ties/{seed}")
    peers = make_seeded_table("crescendo", 2, OPTIONS, seed, timeout=5.0)
    bots: list[Bot | None] = [RandomBot(random.Random(rng.random()), 0.9) for _ in peers]
    for seat in cheaters:
        replace_peer(peers, seat, CheatingPeer)
        inner = bots[seat]
        assert inner is not None
        bots[seat] = CheatBot(inner, InvalidClaim(), limit=10_000)
    ties = record_ties(peers[0])
    net = MemNet(peers, bots, rng)
    net.start()
    net.run(until=400.0, stop=lambda _: done(peers, ties))
    assert done(peers, ties), "the game ended before the case came up"
    net.run(until=net.now + 3.0)
    for p in peers:
        assert p.stopped is None, (p.names[p.me], p.notes[-5:])
    return peers, ties


def with_dropped_claim(ties: list[TieRecord]) -> list[TieRecord]:
    """The ties in which p1 named a position past the end of its row."""
    return [t for t in ties if any(p == "p1" and pos >= size for (p, pos), size in zip(t[0], t[1]))]


def refused_ties(peer: TablePeer) -> list[tuple[str, str | None]]:
    return [(n.detail, n.blame) for n in peer.notes if n.kind == "rejected" and "no valid claim" in n.detail]


def test_invalid_claim_in_a_tie_is_dropped_and_a_valid_one_resolved() -> None:
    peers, ties = play(3, [1], lambda peers, ties: bool(with_dropped_claim(ties)))
    for claims, sizes, out in with_dropped_claim(ties):
        assert not isinstance(out, str), out  # resolved, not rejected: another claim was valid
        resolved = [e.player for e in out if e.kind in ("number_right", "number_wrong")]
        assert resolved == ["p0"]
        # dropped as invalid, not withdrawn as a valid claim that lost the tie
        assert [(e.kind, e.player) for e in out if e.kind in ("withdrawn", "dropped")] == [("dropped", "p1")]
    for p in peers:  # a dropped claim is no rejected move: p1 is blamed only for invalid claims made alone
        assert not refused_ties(p)
        assert all("no such position" in n.detail for n in p.notes if n.kind == "rejected" and n.blame == "p1")


def test_tie_of_invalid_claims_only_is_rejected_with_blame_on_the_first() -> None:
    peers, _ = play(4, [0, 1], lambda peers, ties: bool(refused_ties(peers[0])))
    first = refused_ties(peers[0])[0]
    assert all(refused_ties(p)[:1] == [first] for p in peers)  # every peer rejected it, blaming the same player
    detail, blame = first
    assert blame in ("p0", "p1") and detail.startswith(f"{blame} number ")  # the tie's first claim, and its player
