"""Batches of simulated games: play them, judge each (honest agreement, the cheat's verdict), and report.

`play_batch` plays `games` seeded games over the in-memory network (one cheat, faults, or
neither) and returns a `GameReport` per game (`tcp.play_batch` does so over tcp, judged alike by
`report_from` from each peer's `Outcome`); `summary` and `report_lines` sum them up for
`p2pcards sim`, and `batch_json` gives them to a tester's tools.
"""

from __future__ import annotations

import random
import resource
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from ..bots.base import Bot
from ..errors import InputError
from ..table.peer import TablePeer
from .catalogue import CheatKind, cheat_moves, fired, judge, never_deals
from .outcome import Outcome, agreed
from .cheaters import Run, run_table
from .faults import FaultSpec, FaultTap, restart_last_seat
from .memnet import LinkModel, MemNet

TRIES = 30  # a cheat may need a chance (a drawn King) a given deal lacks: so many seeds are tried per game


@dataclass
class GameReport:
    """One simulated game: its traffic and cost, how the honest peers ended, and whom each blamed."""

    seed: int
    rounds: int
    moves: int
    frames: int
    bytes: int
    wall_s: float
    table_s: float
    cpu_s: list[float]  # per seat
    agreed: bool  # every honest peer ended alike (the same totals, or stopped with the same blame)
    ended: dict[str, str]  # honest peer -> "finished" or why it stopped
    blamed: dict[str, list[str]]  # honest peer -> whom its faults and rejections blamed, in order (first 5)
    fault_blame: dict[str, str | None]  # honest peer that stopped -> whom its first fault blamed
    totals: dict[str, list[int]]  # honest peer -> its totals
    # honest peer whose first fault blames no one, on a report's word only -> {"reporter": …, "blames": …}
    fault_claim: dict[str, dict[str, str]] = field(default_factory=dict)
    cheat: str | None = None
    cheater: int | None = None
    fired: bool = False  # the cheat had its chance
    verdict: str | None = None  # None when the cheat was caught as the catalogue says (or there was none)
    faults: dict[str, int] = field(default_factory=dict)  # fault kind -> frames it touched
    transport: str = "memory"
    rss_mib: list[float] = field(default_factory=list)  # per seat, its process's peak (tcp only: one process each)
    resent: int = 0  # copies of moves sent again because their order was slow to come (protocol.md §18.5)
    missed: list[str] = field(default_factory=list)  # the faults due at a time (restart, gone, partition) the game never reached

    @property
    def survived(self) -> bool:
        """The faults fell and changed no outcome: honest peers agreed and finished, or, when a cheat had its chance
        (a void one stops the table by design), ended as the catalogue says."""
        if self.missed:
            return False
        if self.cheat is None or not self.fired:
            return self.agreed and all(e == "finished" for e in self.ended.values())
        return self.agreed and self.verdict is None

    @property
    def ok(self) -> bool:
        """Honest peers agreed; with no cheat, they finished (faults survived); a cheat had its chance and was caught."""
        if self.missed:
            return False
        if self.cheat is None:
            return self.agreed and all(e == "finished" for e in self.ended.values())
        return self.agreed and self.fired and self.verdict is None


def not_survived(r: GameReport) -> str:
    """Why a game did not survive its faults: the honest peers that did not finish, and, when they disagreed, each
    one's totals (honest peers that all "finished" with different totals, a lone seat cut off past `gone_after`
    that ended the game alone, say, were reported with no reason at all)."""
    if r.cheat is not None and r.fired:  # a void cheat stops the honest peers by design: only its verdict counts
        return r.verdict or _disagreed(r)
    why = [f"{peer}: {e}" for peer, e in r.ended.items() if e != "finished"]  # "p0 p1 stopped …" read as two seats
    if not r.agreed:
        why.append(_disagreed(r))
    return "; ".join(why) or "the honest peers disagreed"


def _disagreed(r: GameReport) -> str:
    """How the honest peers disagreed: each one's totals, or, stopped, whom it named first (not its totals: all 0
    in round 1, alike for every peer)."""
    return "the honest peers disagreed: " + ", ".join(
        f"{peer} {r.totals.get(peer)}" if e == "finished" else f"{peer} named {_named(r, peer)}"
        for peer, e in r.ended.items())


def failure(r: GameReport) -> str:
    """Why a game did not come out right, in one line: a fault that never fell, the cheat's verdict, or why it
    did not survive (a load report's failures read "disagreed" for all but a cheat's)."""
    if r.missed:
        return f"a fault never fell: {', '.join(r.missed)}, but the game was over at {r.table_s:.1f} s of table time"
    return r.verdict or not_survived(r)


def _named(r: GameReport, peer: str) -> str:
    """The seat a stopped honest peer named first: whom its first fault blamed, or a report's claim it stopped on."""
    claim = r.fault_claim.get(peer)
    return r.fault_blame.get(peer) or (claim["blames"] if claim is not None else "nobody")


def mark_missed(reports: Sequence[GameReport], faults: FaultSpec | None) -> None:
    """Note in each report the faults due at a time that never fell because the game was over first: a run
    asked to crash a seat at 1000 s of a 5 s game has tested nothing, and must not pass as if it had."""
    if faults is None:
        return
    due = [(kind, at) for kind, at in (("restart", faults.restart), ("gone", faults.gone)) if at]
    if faults.partition is not None:
        due.append(("partition", faults.partition.at))
    for r in reports:
        r.missed = [f"{kind} at {at:g} s" for kind, at in due if kind not in r.faults and at >= r.table_s]


def report_from(outcomes: Sequence[Outcome], seed: int, cheat: CheatKind | None, cheater: int | None,
                fired: bool, played: Sequence[str] = (), restarted: Sequence[str] = (), **traffic: Any) -> GameReport:
    """Judge a finished game from every peer's outcome (`cheater`'s is left out); `played` are the cheating bot's
    moves as text (`cheat_moves`), `restarted` the peers a fault crashed and brought back, `traffic` fills the
    rest."""
    honest = [o for i, o in enumerate(outcomes) if i != cheater]
    report = GameReport(
        seed=seed, rounds=max(o.rounds for o in outcomes), agreed=agreed(honest),
        ended={o.name: o.ended for o in honest},
        blamed={o.name: o.blames[:5] for o in honest},
        fault_blame={o.name: o.faults[0].blame for o in honest if o.faults},
        fault_claim={o.name: claim.to_json() for o in honest if o.faults and (claim := o.faults[0].claim) is not None},
        totals={o.name: list(o.totals) for o in honest}, **traffic)
    if cheat is not None and cheater is not None:
        report.cheat, report.cheater, report.fired = cheat.name, cheater, fired
        report.verdict = (judge(honest, outcomes[cheater].name, cheat.expect, played, restarted) if fired
                          else "the cheat had no chance" + (f" ({cheat.chance})" if cheat.chance else ""))
    return report


def report_of(run: Run, seed: int, wall: float, cheat: CheatKind | None, cheater: int | None,
              restarted: Sequence[str] = ()) -> GameReport:
    """Judge a finished run over the in-memory network (`restarted`: the peers a fault crashed and brought back)."""
    net = run.net
    return report_from([Outcome.of(p) for p in run.peers], seed, cheat, cheater,
                       cheat is not None and cheater is not None and fired(run, cheater),
                       cheat_moves([run.bots[cheater]]) if cheater is not None else [], restarted,
                       moves=net.stats.by_type.get("move", 0), resent=net.stats.resent, frames=net.stats.frames,
                       bytes=net.stats.bytes,
                       wall_s=wall, table_s=net.now, cpu_s=list(net.cpu))


def seeded(games: int, seed: int, tries: int, play: Callable[[int], GameReport],
           on_game: Callable[[GameReport], None] | None = None,
           on_try: Callable[[int, int], None] | None = None) -> list[GameReport]:
    """Play `games` games from `seed` on; a game whose cheat had no chance is played again on the next seed,
    up to `tries` seeds in all (`on_try(seed, k)` hears of the `k`th, from 1)."""
    reports: list[GameReport] = []
    cursor = seed
    for _ in range(games):
        for attempt in range(cursor, cursor + tries):
            if on_try is not None:
                on_try(attempt, attempt - cursor + 1)
            report = play(attempt)
            if report.fired or report.cheat is None:
                break
        cursor = attempt + 1
        reports.append(report)
        if on_game is not None:
            on_game(report)
    return reports


Setup = Callable[[MemNet, list[TablePeer]], None]


def play_batch(game: str, players: int, options: Mapping[str, Any], seed: int, games: int, *,
               cheat: CheatKind | None = None, cheater: int = 1, faults: FaultSpec | None = None,
               bots: Callable[[int], Sequence[Bot | None] | None] = lambda seed: None,
               link: LinkModel | None = None, timeout: float = 15.0, until: float = 36000.0,
               prepare: Setup | None = None, setup: Callable[[int], Setup | None] = lambda seed: None,
               on_game: Callable[[GameReport, Run], None] | None = None) -> list[GameReport]:
    """Play `games` seeded games (a cheating one needs its chance: up to TRIES seeds each) and judge each.

    `faults` are injected on every link (their counts go in each report), after any cheat's tap.
    """
    check_cheat(cheat, game, players, cheater)
    if faults is not None and faults.gone:
        raise InputError("--faults gone=T is over tcp only (--transport tcp): in memory a seat can restart=T")
    check_crash(cheat, faults, players, cheater)

    def play(attempt: int) -> GameReport:
        start = time.perf_counter()
        rig: dict[str, Any] = cheat.rig(cheater, players) if cheat is not None else {}
        own_setup = rig.pop("setup", None)
        extra = setup(attempt)
        taps: list[FaultTap] = []

        def before(net: MemNet, peers: list[TablePeer]) -> None:
            if faults is not None:
                taps.append(FaultTap(net, faults, random.Random(f"faults/{attempt}")))
                net.faults = taps[0]
                restart_last_seat(taps[0], peers)
            if prepare is not None:
                prepare(net, peers)

        def both(net: MemNet, peers: list[TablePeer]) -> None:
            for s in (own_setup, extra):
                if s is not None:
                    s(net, peers)
        run = run_table(game, players, options, attempt, seat=cheater if cheat is not None else None,
                        bots=bots(attempt), link=link if faults is None else faults.link(link or LinkModel()),
                        timeout=timeout, until=until, prepare=before, setup=both, **rig)
        restarted = [run.peers[-1].names[-1]] if taps and taps[0].counts.get("restart") else []
        report = report_of(run, attempt, time.perf_counter() - start, cheat, cheater if cheat else None, restarted)
        if faults is not None:
            report.faults = dict(taps[0].counts)
        runs[:] = [run]
        return report

    runs: list[Run] = []
    return seeded(games, seed, TRIES if cheat is not None else 1, play,
                  None if on_game is None else lambda report: on_game(report, runs[0]))


def check_cheat(cheat: CheatKind | None, game: str, players: int, cheater: int) -> None:
    """InputError (one line) when the cheat does not fit the game or the cheater has no seat."""
    if cheat is not None:
        if game not in cheat.games:
            raise InputError(f"--cheat {cheat.name} is a cheat at {' and '.join(cheat.games)}, not at {game}")
        if not 0 <= cheater < players:
            raise InputError(f"--cheater: a seat from 0 to {players - 1}, not {cheater}")
        if cheat.not_at is not None and cheat.not_at[0] == cheater:
            raise InputError(f"--cheat {cheat.name} --cheater {cheater}: {cheat.not_at[1]}")
        if (why := never_deals(cheat, game, cheater)) is not None:
            raise InputError(f"--cheat {cheat.name} --cheater {cheater}: {why}")


def check_crash(cheat: CheatKind | None, faults: FaultSpec | None, players: int, cheater: int) -> None:
    """InputError (one line) when a seat that --faults crashes is the cheater (it comes back an honest peer from a
    journal its cheat wrote: in memory, a traceback)."""
    killed = faults.crashing if faults is not None else 0
    if killed and cheat is not None and cheater >= players - killed:
        raise InputError("--faults restart/gone: a seat that crashes cannot be the cheater too")


def peak_memory_mib() -> float:
    """This process's peak resident memory (every simulated peer lives in it)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def summary(reports: Sequence[GameReport]) -> dict[str, Any]:
    """The batch's totals and means."""
    n = len(reports)
    seats = len(reports[0].cpu_s) if reports else 0
    return {
        "games": n, "rounds": sum(r.rounds for r in reports), "moves": sum(r.moves for r in reports),
        "resent": sum(r.resent for r in reports),
        "frames": sum(r.frames for r in reports), "bytes": sum(r.bytes for r in reports),
        "wall_s_per_game": sum(r.wall_s for r in reports) / max(n, 1),
        "table_s_per_game": sum(r.table_s for r in reports) / max(n, 1),
        "cpu_s_per_seat_per_game": [sum(r.cpu_s[i] for r in reports) / max(n, 1) for i in range(seats)],
        "peak_memory_mib": peak_memory_mib(),
        "peak_memory_mib_per_seat": [max(r.rss_mib[i] for r in reports) for i in range(seats)]
        if reports and all(r.rss_mib for r in reports) else None,
        "honest_agreed": sum(r.agreed for r in reports),
        "cheat_caught": sum(1 for r in reports if r.cheat is not None and r.fired and r.verdict is None),
        "ok": all(r.ok for r in reports),
    }


def report_lines(reports: Sequence[GameReport], cheat: CheatKind | None, faults: FaultSpec | None = None) -> list[str]:
    """The human report: totals, cost, agreement, and each game's verdict on the cheat."""
    s = summary(reports)
    n = s["games"]
    cpu = ", ".join(f"p{i} {c:.2f}" for i, c in enumerate(s["cpu_s_per_seat_per_game"]))
    rss = s["peak_memory_mib_per_seat"]
    memory = (f"peak memory {s['peak_memory_mib']:.0f} MiB (one process holds every peer)" if rss is None else
              "peak memory per peer (MiB, each its own process): " + ", ".join(f"p{i} {m:.0f}" for i, m in enumerate(rss)))
    lines = [
        f"games {n}, rounds {s['rounds']}, moves {s['moves']}"
        + (f" (and {s['resent']} {'copy' if s['resent'] == 1 else 'copies'} sent again: orders slow to come)"
           if s["resent"] else "")
        + f", frames {s['frames']}, "
        f"{s['bytes'] / 1024:.0f} KiB",
        f"per game: {s['wall_s_per_game']:.2f} s on this machine, {s['table_s_per_game']:.1f} s of table time",
        f"CPU per peer per game (s): {cpu}; {memory}",
        f"honest peers agreed on every result: {'yes' if s['honest_agreed'] == n else 'NO'} "
        f"({s['honest_agreed']}/{n} games)",
    ]
    if faults is not None:
        missed = sum(bool(r.missed) for r in reports)
        lines.append(f"faults ({faults.text() or 'none'}): survived in {sum(r.survived for r in reports)}/{n} games"
                     + (f" ({missed} where a fault never fell)" if missed else ""))
    for r in reports:
        if r.faults or faults is not None:
            counts = ", ".join(f"{k} {v}" for k, v in sorted(r.faults.items()))
            slow = _slowed(faults)  # a delay falls on every frame: it is not counted, but it did not fail to fall
            counts = "; ".join(filter(None, (slow, counts))) or "none fell"
            if r.missed:
                fell = "" if not r.faults else f"faults injected: {counts}: "
                lines.append(f"  seed {r.seed}: {fell}NEVER FELL: {', '.join(r.missed)}, but the "
                             f"game was over at {r.table_s:.1f} s of table time (give an earlier time)")
                continue
            lines.append(f"  seed {r.seed}: faults injected: {counts}: "
                         + ("survived" if r.survived else "NOT survived: " + not_survived(r)))
    if cheat is not None:
        lines.append(f"cheat {cheat.name} ({cheat.what}; expected: {cheat.expect}): "
                     f"caught in {s['cheat_caught']}/{n} games")
        for r in reports:
            # "; " between peers: "p0 rejected moves of p1, p3, p1 rejected moves of …" read as one list
            who = "; ".join(f"{peer} blamed {r.fault_blame[peer] or 'nobody'}" + _claimed(r.fault_claim.get(peer))
                            if peer in r.fault_blame
                            else f"{peer} rejected moves of {_and(sorted(set(b))) or 'nobody'}"
                            for peer, b in r.blamed.items())
            state = "caught" if r.fired and r.verdict is None else f"NOT CAUGHT: {r.verdict}"
            lines.append(f"  seed {r.seed}: {state}; {who}")
    return lines


def _and(names: Sequence[str]) -> str:
    """Names as a list in words: "p1", "p1 and p3", "p0, p1 and p3"."""
    return " and ".join(filter(None, (", ".join(names[:-1]), names[-1]))) if names else ""


def _slowed(faults: FaultSpec | None) -> str:
    """What a spec's delay and jitter did to every frame, in words ("" when it sets neither)."""
    if faults is None or (faults.delay is None and faults.jitter is None):
        return ""
    parts = ([] if faults.delay is None else [f"{faults.delay:g} ms"]) + \
        ([] if faults.jitter is None else [f"up to {faults.jitter:g} ms more"])
    return "every frame delayed " + " + ".join(parts)


def _claimed(claim: Mapping[str, str] | None) -> str:
    """What a report's claim adds to whom a peer blamed: whom its reporter blamed, on its word only."""
    return "" if claim is None else f" ({claim['reporter']} blamed {claim['blames']}, on its word only)"


def batch_json(params: Mapping[str, Any], reports: Sequence[GameReport]) -> dict[str, Any]:
    """The batch as `sim --json` writes it: the parameters, every game, the summary."""
    return {"params": dict(params), "games": [asdict(r) | {"survived": r.survived, "ok": r.ok} for r in reports],
            "summary": summary(reports)}
