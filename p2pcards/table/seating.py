"""What outlasts a round at one seat's table, sans-IO: who is ready, whose memory aid is on, who left,
the votes that put a seat out and the table that goes on without it (protocol.md §14.9), and the
checkpoint a journal keeps of it all at the start of a round (resume.py).

The table's messages of no round but a fault report land here (`ready`, `gone`, `out`, `leave`, `aid`);
a fault report crosses every part, so it is the peer's. What the rounds before left is handed over
as the game's engine (its totals and results), which the peer owns and passes in.
"""

from __future__ import annotations

import math

from ..crypto.envelope import Outbox
from ..errors import MalformedMessage
from .absences import Absences
from .bodies import Aid, Gone, Leave, Out, Ready
from .config import Game, TableConfig
from .messages import reason
from .outputs import CUT_OFF, WE_LEFT, Cut, Emitter
from .resume import Check, restore_results, results_to_wire
from .votes import Votes, going_on

TableMessage = Ready | Gone | Out | Leave | Aid
AT_ONCE_S = 5.0  # seats whose links went missing this close together were lost at once (a link is quiet after 5 s)
# How `cut_off` ends: every other seat went missing at once while we played, or none was back since we came back.
NETWORK_LOST = "it looks like our own network was lost, not that they all left"
AWAY_TOO_LONG = "they most likely went on without us while we were away, or our own network is lost"


class Seating:
    """The table beyond its rounds, for seat `me` of `cfg` (a witness: past the last seat), speaking through `emit`.

    `carry` is what the table carries from the one it went on from: the totals of the rounds played
    before, and how many (protocol.md §14.9).
    """

    def __init__(self, cfg: TableConfig, me: int, emit: Emitter, carry: tuple[tuple[int, ...], int] | None,
                 absences: Absences | None = None) -> None:
        self.cfg = cfg
        self.absences = absences or Absences()  # when our network layer missed each seat's link
        self.me = me
        self.emit = emit
        totals, played = carry or ((0,) * cfg.seats, 0)
        self.carry = (tuple(totals), played)
        self.votes = Votes(cfg.seats, played + 1, me)
        self.ready: set[int] = set()
        self.aided: set[int] = set()  # the seats whose memory aid is on, as they announced it
        self.left: dict[int, tuple[int, str]] = {}  # the seats that left for good: their round and reason
        self.finished = False  # the game is over for us: won, or a seat voted out (then maybe a `successor`)
        self.successor: TableConfig | None = None  # the table that goes on without the seats voted out
        self.voted_out: str | None = None  # who voted us out, and what follows: the game is over for us, not finished
        self.passed_on = self.carry  # what the successor table carries
        self.cut_off: str | None = None  # why we take it that our own network was lost: we decide nothing ourselves
        self.cut: Cut | None = None  # how (`cut_off` in words)
        self.gave_up: Cut | None = None  # we left the table cut off, none back in time: how we were cut off
        self.back_at: float | None = None  # when we came back from our journal, if we did

    @property
    def first(self) -> int:
        """Our table's first round."""
        return self.carry[1] + 1

    def seat_game(self, game: Game) -> None:
        """Give a fresh engine the totals and rounds played our table carries."""
        game.totals, game.round_no = list(self.carry[0]), self.carry[1]

    def start(self) -> None:
        """Say we are ready to play at this table, agreeing on its exact config."""
        self.emit.send(0, "ready", {"config": self.cfg.digest()})

    def leave(self, why: str) -> None:
        """Leave the table for good, as `why` says: the others vote us gone; we stop."""
        if self.emit.stopped is None:
            self.emit.send(self.emit.round(), "leave", {"why": reason(why)})
            self.emit.stopped = f"{WE_LEFT}: {why}"
            self.emit.note("void", f"we left in round {self.emit.round()}")

    def aid(self, on: bool) -> None:
        """Tell every seat we turned our memory aid on or off (nothing is sent when it is so already)."""
        if self.emit.stopped is None and on != (self.me in self.aided):
            self.emit.send(self.emit.round(), "aid", Aid(on).to_wire())

    def take(self, seat: int, rnd: int, body: TableMessage, game: Game, done: bool) -> bool:
        """Take `seat`'s table message signed in round `rnd` (`done`: our current round is settled in `game`);
        True when every seat is ready now and the first round is due. MalformedMessage when it is bad."""
        names = self.cfg.names
        match body:
            case Ready():
                if rnd != 0 or body.config != self.cfg.digest():
                    raise MalformedMessage("agreed to another table config")
                self.ready.add(seat)
                return len(self.ready) == self.cfg.seats and self.emit.round() == 0
            case Gone():
                self.votes.take(seat, body.seat, rnd)
                if seat != self.me:  # ours was noted with its reason when we cast it (`vote_gone`)
                    self.emit.note("missing", f"{names[seat]} votes {names[body.seat]} gone", body.seat)
                else:
                    self._cut_off()
                self.vote_out(game, done)
            case Out():
                if self.votes.take_out(seat, body.seats) and seat != self.me:
                    self.emit.note("missing", f"{names[seat]} says {self._are_out(body.seats)}")
                    self.vote_out(game, done)
            case Leave():  # gone for good by its own word: no need to wait `gone_after` to vote
                self.left.setdefault(seat, (rnd, body.why))
                self.vote_gone(seat, f"{names[seat]} left the table ({body.why}): we vote it gone")
            case Aid():
                # Not in the log: it changes no move and no result, only what every screen shows.
                if body.on != (seat in self.aided):
                    (self.aided.add if body.on else self.aided.discard)(seat)
                    self.emit.note("aid", f"{names[seat]} turned the memory aid {'on' if body.on else 'off'}")
        return False

    def vote_gone(self, seat: int, why: str) -> None:
        """Vote `seat` gone (noting `why`), unless we did already or the table is over for us."""
        if self.emit.stopped is None and not self.finished and seat not in self.votes.by(self.me):
            self.emit.note("missing", why, seat)
            self.emit.send(self.emit.round(), "gone", {"seat": seat})

    def _cut_off(self) -> None:
        """Be cut off once our votes name every other seat, all missing at once, none by its `leave` nor by closing
        its link (§14.9)."""
        # At a table of three or more, every other seat missing to our network layer since within AT_ONCE_S of the
        # others is our own network lost, most likely, not all of theirs. We decide nothing on our own votes then:
        # the seats that still reach each other vote us gone and go on, and an `out` of ours could end their game.
        # A link the other end closed (its end of stream or reset reached us) shows our network working: its process
        # ended, its machine's kernel said so. Silence or an error of our own network's shows nothing of the kind.
        others = [s for s in range(self.cfg.seats) if s != self.me]
        if self.cut_off is not None or len(others) < 2 or self.votes.by(self.me) != set(others):
            return
        spans = [self.absences.spans.get(s) for s in others]
        if any(s in self.left or s in self.absences.closed for s in others):
            return
        if any(span is None or span[1] != math.inf for span in spans):
            return
        starts = [span[0] for span in spans if span is not None]
        if max(starts) - min(starts) > AT_ONCE_S:
            return
        self._cut(self.back_at is not None and min(starts) >= self.back_at)
        self.emit.note("missing", f"{self.cut_off}; unless one is back in time, we leave the table", cut=self.cut)

    def _cut(self, away: bool = False) -> None:
        """No witness of our own at this table from now on (`away`: no seat was back since we resumed)."""
        names = ", ".join(self.cfg.names[s] for s in range(self.cfg.seats) if s != self.me)
        self.votes.cut_off = True
        self.cut = Cut.AWAY_TOO_LONG if away else Cut.NETWORK_LOST
        self.cut_off = (f"no other seat was back since we came back ({names}): {AWAY_TOO_LONG}" if away else
                        f"every other seat went missing at once ({names}): {NETWORK_LOST}")

    def give_up(self) -> None:
        """Cut off, and no seat back in time: leave the table, the game unfinished here, none of our votes deciding."""
        if self.cut_off is not None and self.emit.stopped is None and not self.finished:
            self.emit.send(self.emit.round(), "leave", {"why": reason(CUT_OFF)})
            self.emit.stopped = f"{CUT_OFF}: {self.cut_off}"
            self.gave_up = self.cut
            self.emit.note("void", f"{CUT_OFF}, we leave the table in round {self.emit.round()}: the game did not "
                                   "finish here", cut=self.cut)

    def vote_out(self, game: Game, done: bool) -> None:
        """Put out the seats the votes decide, once we may (`done`: our current round is settled in `game`),
        saying so in our last frame here: their round is void and the table goes on without them, as
        `successor`, if enough seats remain."""
        due = None if self.finished else self.votes.due(self.emit.round(), done, game.totals)
        if due is None:
            return
        dep, totals = due
        names = ", ".join(self.cfg.names[s] for s in dep.out)
        if self.me not in dep.out:
            self.emit.send(self.emit.round(), "out", Out(dep.out).to_wire())
        self.finished = True
        self.emit.note("void", f"{self._are_out(dep.out)}: round {dep.void} is void")
        nxt = going_on(self.cfg, dep, totals, game.dealer_of(dep.void))
        if self.me in dep.out:
            # Only the seats outside the set voted; the others put out with us may be here and have voted nothing.
            rest = [s for s in range(self.cfg.seats) if s not in dep.out]
            others = [s for s in dep.out if s != self.me]
            who = ("every other seat voted us gone" if not others else
                   f"{', '.join(self.cfg.names[s] for s in rest)} voted us and "
                   f"{', '.join(self.cfg.names[s] for s in others)} gone")
            self.cut_off = self.cut = None  # not our network lost after all: the others went on without us, and said so
            self.voted_out = f"{who}: " + (
                "the table goes on without us" if nxt is not None else "too few seats remain, the game ends")
            self.emit.note("over", self.voted_out)
            return
        if nxt is None:
            self.emit.note("over", f"too few seats remain without {names}: the game ends")
            return
        self.successor, self.passed_on = nxt
        self.emit.note("over", f"the table goes on without {names} from round {dep.void}")

    def _are_out(self, seats: tuple[int, ...]) -> str:
        """'p1 is out', 'p1, p3 are out'."""
        return f"{', '.join(self.cfg.names[s] for s in seats)} {'is' if len(seats) == 1 else 'are'} out"

    def began(self, number: int, game: Game) -> None:
        """Round `number` began with the totals of `game`."""
        self.votes.began(number, game.totals)

    def check(self, number: int, now: float, outbox: Outbox, game: Game) -> Check:
        """The checkpoint of what the rounds before round `number` left us (begun at `now`, our chain at `outbox`)."""
        return Check(number, now, outbox.next_seq, outbox.head, tuple(game.totals), self.votes.totals_at[number - 1],
                      tuple(sorted(self.aided)), self.votes.held(), results_to_wire(game),
                     tuple(sorted(self.votes.outs.items())), game.clock, self.votes.cut_off)

    def restore(self, check: Check, game: Game) -> None:
        """Back where we were, with `game`, when the rounds before round `check.round` were done (resume)."""
        game.totals, game.round_no, game.clock = list(check.totals), check.round - 1, check.clock
        restore_results(game, check.results)
        self.ready, self.aided = set(range(self.cfg.seats)), set(check.aided)
        for seat, voter, rnd in check.votes:
            self.votes.take(voter, seat, rnd)
        for seat, out in check.outs:
            self.votes.take_out(seat, out)
        if check.cut_off:  # its votes stand, and still decide nothing on our own witness
            self._cut()
        self.votes.began(check.round - 1, check.before)
