"""Red-team: shares nobody granted, colluders pooling their shares (protocol.md §4.11, §10.4, §15),
results and openings out of place (§13)."""

from __future__ import annotations

import functools
from typing import Any

from table_harness import decryptable, entitled

from p2pcards.sim.cheaters import replace_peer, run_table
from p2pcards.sim.memnet import MemNet
from p2pcards.table.config import TableConfig
from p2pcards.crypto.identity import Identity
from p2pcards.table.peer import TablePeer
from p2pcards.table.reveals import Reveals
from p2pcards.table.round import Parts
from p2pcards.table.settle import Settlement

CRISP = {"limit": 20}


class GenerousReveals(Reveals):
    """Sends, with its first shares of a round, public shares of every card of deck 0 (none granted)."""

    def __init__(self, *args: Any, owner: TablePeer) -> None:
        super().__init__(*args)
        self.owner = owner
        self.spilled = False

    def send_shares(self, handles: list[int], recipient: int | None) -> None:
        super().send_shares(handles, recipient)
        if not self.spilled and len(self.decks.loc) >= 52:
            self.spilled = True
            self.port.send("shares", {"reveals": [rv.to_wire() for rv in self.make_reveals(list(range(52)), None)]})
            self.owner.spilled += 1  # type: ignore[attr-defined]


class Spiller(TablePeer):
    def __init__(self, config: TableConfig, identity: Identity, **kw: Any) -> None:
        super().__init__(config, identity, **kw)
        self.spilled = 0
        self.parts = Parts(reveals=functools.partial(GenerousReveals, owner=self))


def test_two_colluders_spilling_every_share_learn_only_their_own_cards_and_nobody_is_blamed() -> None:
    colluders = (1, 2)
    pooled_leaks: list[Any] = []

    def watch(net: MemNet, receiver: int) -> None:
        peers = net.peers
        rss = [peers[c].rs for c in colluders]
        if any(rs is None for rs in rss) or len({rs.number for rs in rss}) != 1:  # type: ignore[union-attr]
            return
        rnd = rss[0].number  # type: ignore[union-attr]
        held: dict[tuple[int, int], set[int]] = {}
        for c in colluders:
            rs = peers[c].rs
            assert rs is not None
            for where, seats in rs.reveals.shares.items():
                held.setdefault(where, set()).update(seats)
            for seat, rv, _ in rs.reveals.early:
                for pos in rv.positions:
                    held.setdefault((rv.deck, pos), set()).add(seat)
        handle_at = {where: h for h, where in peers[1].rs.decks.loc.items()}  # type: ignore[union-attr]
        honest = [s for s in range(len(peers)) if s not in colluders]
        opened = {handle_at.get(w, w) for w, seats in held.items() if all(s in seats for s in honest)}
        allowed = entitled(peers, rnd, 1) | entitled(peers, rnd, 2)
        if opened - allowed:  # type: ignore[operator]
            pooled_leaks.append((rnd, sorted(map(str, opened - allowed))))  # type: ignore[operator]
        for s in honest:  # and the honest seats gain nothing from the spilled shares either
            if peers[s].rs is not None and peers[s].rs.number == rnd:  # type: ignore[union-attr]
                extra = decryptable(peers[s]) - entitled(peers, rnd, s)  # type: ignore[operator]
                assert not extra, (s, extra)

    def prepare(net: MemNet, peers: list[TablePeer]) -> None:
        for c in colluders:
            replace_peer(peers, c, Spiller)
        net.peers = peers
        net.on_deliver = watch

    run = run_table("crisp", 4, CRISP, seed=7, prepare=prepare, until=60.0)
    assert all(isinstance(run.peers[c], Spiller) and run.peers[c].spilled for c in colluders)  # type: ignore[attr-defined]
    assert not pooled_leaks, pooled_leaks[:3]
    for p in run.peers:
        assert not p.faults, p.faults


# ---------------------------------------------------------------- results and openings out of place


class EarlyResult(TablePeer):
    """Signs a result claiming the round for itself (scores 0 for it) as soon as the round is dealt."""

    sent = False

    def tick(self, now: float) -> list[Any]:
        out = super().tick(now)
        rs = self.rs
        if not self.sent and rs is not None and rs.dealt and self.stopped is None:
            self.sent = True
            self.emit.send(rs.number, "result", {"at": None, "audit": "verified", "blame": None, "log": bytes(32),
                                                 "over": True, "round": rs.number, "scores": [0] * self.n,
                                                 "totals": [0] * self.n})
            out += self._flush()
        return out


def test_a_result_signed_before_the_round_ended_is_kept_and_blamed_when_the_results_are_compared() -> None:
    run = run_table("crisp", 3, CRISP, seed=4, seat=1, peer_class=EarlyResult, timeout=3.0, until=120.0)
    cheat = run.peers[1]
    assert isinstance(cheat, EarlyResult) and cheat.sent
    for p in run.honest([1]):
        assert p.faults and p.faults[0].blame == "p1", p.notes[-4:]
        assert all(n.blame != p.names[p.me] for n in p.faults)


class NoOpening(Settlement):
    """Never opens its round secret (dodging the audit of a round it is losing)."""

    def open(self) -> None:
        return None


class Dodger(TablePeer):
    def __init__(self, config: TableConfig, identity: Identity, **kw: Any) -> None:
        super().__init__(config, identity, **kw)
        self.parts = Parts(settlement=NoOpening)


def test_an_opening_withheld_to_dodge_the_audit_is_timed_out_on_the_withholder() -> None:
    run = run_table("crisp", 3, CRISP, seed=4, seat=2, peer_class=Dodger, timeout=2.0, until=120.0)
    for p in run.honest([2]):
        assert p.faults and p.faults[0].blame == "p2" and p.faults[0].detail.endswith("(an opening or result)"), \
            p.faults
