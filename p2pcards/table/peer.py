"""One peer at a table, sans-IO: frames and clock readings in, frames to broadcast and notes out.

Every peer runs the same engine on the same ordered log. The round's dealer is its *orderer*:
it stamps every move with its clock and puts it in the log (`order` messages); everyone checks
the stamps against their own clock. Cards are handles of the mental-poker deck: a face reaches
an engine only through decryption shares the rules entitle it to (see protocol.md).

`TablePeer` is the interface a shell, a client, a simulator or a test drives: the inputs (frames,
the time, our user's moves and choices, what the network layer sees of the links), what a shell
asks (what to ask for again, when to wake, whether we are busy) and what drivers read. Behind it,
coordinator.py wires the table's parts and drives them.
"""

from __future__ import annotations

from collections.abc import Callable

from ..crypto import deck as dk
from ..crypto.envelope import ChainTracker
from ..crypto.identity import Identity
from ..errors import IllegalMove, LocalError, RemoteProtocolError
from ..games.base import Move
from ..games.crescendo import CrescendoView
from ..games.crisp import CrispView
from .bodies import Ref, RoundResult
from .chains import Precedence
from .config import TableConfig
from .coordinator import SLACK_S, TIMEOUT_S, TOLERANCE_S, Coordinator
from .log import Entry
from .messages import move_to_wire
from .outputs import Cut, Note, NoteKind, Output, Send
from .resume import (Record, ResumeOutbox, absence, absent_record, carried, closed_absence, frame_record,
                     replayed_seeds, silent_record)
from .recovery import find_gaps
from .round import OWED, Stage
from .votes import Votes

__all__ = ["Entry", "Note", "NoteKind", "Output", "Ref", "RoundResult", "Send", "Stage", "TablePeer"]
OUR_VOTE = "we vote it gone"  # how the note of our own vote that a seat is gone ends


class TablePeer(Coordinator):
    """The table protocol for one seat: feed it frames and the time, broadcast what it returns."""

    @classmethod
    def resume(cls, config: TableConfig, identity: Identity, records: list[Record], now: float,
               draw_seed: Callable[[], bytes] = dk.draw_seed, tolerance: float = TOLERANCE_S,
               timeout: float = TIMEOUT_S, slack: float = SLACK_S) -> TablePeer:
        """The peer whose journal is `records`, back where it was: the journal replayed, our own
        frames given back as signed (never signed anew), every round seed as drawn; it journals on.

        LocalError when the journal does not lead where it led before (another config or identity).
        """
        try:
            outbox = ResumeOutbox(identity, config.context, records)
            peer = cls(config, identity, draw_seed=replayed_seeds(records, draw_seed),
                       tolerance=tolerance, timeout=timeout, slack=slack, outbox=outbox, carry=carried(records))
            peer._journal.replay(records, outbox, peer.emit, peer._at, peer._replayed, peer._step, peer._restore,
                                 peer._absence)
        except RemoteProtocolError as exc:  # our own records: a frame in them that is not one is damage here
            raise LocalError(f"the journal is damaged: {exc}") from None
        # Signed by the replay beyond the journal: journaled before the shell sends them (`go_on`) or a seat
        # asks for them, so that a second restart gives back these very frames.
        peer._journal.records = [frame_record(peer.now, out.frame) for out in peer.emit.out
                                 if isinstance(out, Send) and not out.again]  # a copy or a relay signs nothing new
        peer.now = max(peer.now, now)
        peer.seating.back_at = peer.now  # a seat not heard from since then may be at a table that went on
        if peer.rs is not None:
            peer.rs.log.back = peer.now
        peer.waits.quiet_since = peer.now
        return peer

    # ------------------------------------------------------------ what drivers and tests read

    @property
    def notes(self) -> list[Note]:
        """Every note so far (faults included)."""
        return self.emit.notes

    @property
    def faults(self) -> list[Note]:
        """Every fault noted so far."""
        return self.emit.faults

    @property
    def evidence(self) -> list[tuple[bytes, bytes]]:
        """The two signed frames for one place of each equivocation found."""
        return self.emit.evidence

    @property
    def tracker(self) -> ChainTracker:
        """Every seat's signature chain as we have taken it."""
        return self.chains.tracker

    @property
    def finished(self) -> bool:
        """The game is over for us: won, or a seat voted out (then maybe a `successor` table goes on)."""
        return self.seating.finished

    @property
    def successor(self) -> TableConfig | None:
        """The table that goes on without the seats voted out, once there is one (protocol.md §14.9)."""
        return self.seating.successor

    @property
    def cut_off(self) -> str | None:
        """Why we take it that our own network was lost (every other seat went missing at once), or None."""
        return self.seating.cut_off

    @property
    def cut(self) -> Cut | None:
        """How we take it that our own network was lost (the structured `cut_off`), or None."""
        return self.seating.cut

    @property
    def gave_up(self) -> Cut | None:
        """How we were cut off when we gave the table up, none back in time (protocol.md §14.9), or None."""
        return self.seating.gave_up

    @property
    def carry(self) -> tuple[tuple[int, ...], int]:
        """What our table carries from the one it went on from: the totals before, and the rounds played."""
        return self.seating.carry

    @property
    def aided(self) -> set[int]:
        """The seats whose memory aid is on, as they announced it."""
        return self.seating.aided

    @property
    def votes(self) -> Votes:
        """The votes that put a seat out (votes.py)."""
        return self.seating.votes

    @property
    def log_hash(self) -> bytes | None:
        """The hash of the current round's log so far (None before the first round)."""
        return None if self.rs is None else self.rs.log_hash

    @property
    def results(self) -> dict[int, RoundResult]:
        """Every seat's signed result of the current round so far, by seat."""
        return {} if self.rs is None else dict(self.rs.results)

    # ------------------------------------------------------------ inputs

    def start(self, now: float) -> list[Output]:
        """Say we are ready to play at this table (agreeing on its exact config)."""
        self._input(now)
        self.seating.start()
        return self._flush()

    def receive(self, frame: bytes, now: float, live: bool = True) -> list[Output]:
        """Take one frame from the network that came at `now` (not `live`: sent again, protocol.md §18.5);
        never raises on what another peer sent."""
        self._input(now)
        if self.stopped is None:
            self._take(frame, now, live)
            if self.waits.due(self.now):
                self._watch()
        return self._flush()

    def tick(self, now: float) -> list[Output]:
        """Let time pass: the orderer announces time-outs; everyone watches for peers that owe too long."""
        self._input(now)
        if self.stopped is None:
            self._progress()
            self._watch()
            rs = self.rs
            if rs is not None and rs.orderer != self.me and self.stopped is None:
                self.emit.out += [Send(frame, again=True) for frame in rs.log.unordered_again(self.now)]
        return self._flush()

    def go_on(self, now: float) -> list[Output]:
        """Apply what we signed and handed back first, and check the shares shown unproved (`pending`): a shell
        calls it once the outputs are sent."""
        self._input(now)
        self._prove()
        return self._flush()

    def play(self, move: Move, now: float) -> list[Output]:
        """Send our own move; IllegalMove (nothing sent) when our engine already knows it is not allowed."""
        self._input(now)
        if self.stopped is not None or self.rs is None:
            raise IllegalMove("the table is not playing a round")
        self.rs.check_move(move)
        return self.send_move(move)

    def send_move(self, move: Move) -> list[Output]:
        """Sign and send `move` as ours, whatever our engine thinks of it (a modified client's door)."""
        self._own_first()
        self._prove()  # no move rests on a share not proved
        if self.stopped is not None:
            return self._flush()
        self.emit.send(self.round, "move", {"m": move_to_wire(move, self.seat_of)})
        self._progress()
        return self._flush()

    def leave(self, now: float, why: str = "left") -> list[Output]:
        """Leave the table for good: the others vote us gone, and go on without us from the round in play."""
        self._input(now)
        self.seating.leave(why)
        return self._flush()

    def aid(self, on: bool, now: float) -> list[Output]:
        """Tell every seat we turned our memory aid on or off (nothing is sent when it is so already)."""
        self._input(now)
        self.seating.aid(on)
        return self._flush()

    def gone(self, seat: int, now: float, why: str) -> list[Output]:
        """Seat `seat` is gone from the network (its link ended or fell silent, and stayed so), as
        `why` says: we vote it gone; once every other seat has, the round is void and the table goes
        on without it (protocol.md §14.9)."""
        self._input(now)
        if 0 <= seat < self.n and seat != self.me:
            self.seating.vote_gone(seat, f"{why}: {OUR_VOTE}")
        return self._flush()

    def give_up(self, now: float) -> list[Output]:
        """Cut off from every other seat (`cut_off`) and none back in time: we leave, the game unfinished here."""
        self._input(now)
        self.seating.give_up()
        return self._flush()

    def next_peer(self, records: list[Record] | None = None) -> TablePeer | None:
        """Our peer at the table that goes on without the seats voted out, once there is one; it journals
        if we do, and is resumed from `records` if its journal has some (we came back from a crash)."""
        if self.successor is None:
            return None
        if records:
            return TablePeer.resume(self.successor, self.identity, records, self.now, self.draw_seed,
                                    self.tolerance, self.timeout, self.slack)
        return TablePeer(self.successor, self.identity, self.draw_seed, self.tolerance, self.timeout, self.slack,
                         journal=self.journal is not None, carry=self.seating.passed_on)

    def absent(self, seat: int, missing: bool, now: float, closed: bool = False) -> None:
        """The network layer found `seat`'s link missing (lost or quiet; `closed`: closed by the other end, whose
        end of stream or reset reached us), or back: an orderer that was missing stamps the moves it gets when it
        is back (protocol.md §14.10), and links closed by the other end tell no lost network of ours (§14.9)."""
        self.now = max(self.now, now)
        if missing:
            self.absences.missing(seat, self.now, closed)
        else:
            self.absences.back(seat, self.now)
        self._journal.record(absent_record(seat, missing, self.now, closed))  # it judges what comes after

    def silent(self, seat: int, since: float, until: float) -> None:
        """The network layer heard nothing at all on `seat`'s link from `since` to `until`: it was
        missing for that while, though too briefly to be called missing (protocol.md §18.6)."""
        self.absences.silent(seat, since, until)
        self._journal.record(silent_record(seat, since, until))

    def _absence(self, record: Record) -> None:
        """A journal's record of what our network layer found of a link, taken again (resume)."""
        seat, a, b = absence(record)
        if not 0 <= seat < self.n or seat == self.me:
            raise LocalError(f"a journal's {record[0]} record names no other seat: {seat}")
        if record[0] == "silent":
            self.absences.silent(seat, float(a), b)
        else:
            if a:
                self.absences.missing(seat, b, closed_absence(record))
            else:
                self.absences.back(seat, b)

    # ------------------------------------------------------------ what a shell asks

    def busy(self) -> bool:
        """True while our engine is behind the log, a reveal we are owed is on its way, or our move awaits order."""
        return self.rs is None or self.stopped is not None or self.rs.busy()

    def precedence(self, frame: bytes) -> Precedence:
        """How soon a shell must take `frame`: NOW when another seat may wait on us for it; SOON for a
        private box to us (we alone wait on it); LATER when nobody does (a private box to another seat, a
        move we do not order and no order we hold names). The shell never takes a frame before an earlier
        one of its sender."""
        rs = self.rs
        return self.chains.precedence(frame, rs is None or rs.orderer == self.me, () if rs is None else rs.log.awaited())

    def prepare(self) -> bool:
        """While idle: make ahead our shares of the cards likely revealed next (the one a draw takes, the
        one drawn), each with a one-time commitment of its proof, so that showing them waits on no
        multiplication of ours; True when one was made."""
        rs = self.rs
        if rs is None or rs.stage is not Stage.PLAYING or self.stopped is not None:
            return False
        return rs.reveals.prepare(self.rules.next_revealed())

    def missing(self) -> list[tuple[int, int, int]]:
        """What we miss of the other seats' chains: (seat, first seq, last seq), gaps and stalled tails.

        A gap lies below a frame we hold ahead of its chain, or is a move an order names that we
        never took. A seat we have waited on for PROBE_S with nothing of it held may have sent a
        frame that never reached us: its next MAX_ASK places are asked for (a seat with nothing
        more answers with nothing).
        """
        if self.stopped is not None or self.finished:
            return []
        named = [] if self.rs is None else self.rs.log.awaited()
        return self.waits.gaps(self.now, self.chains.ahead(), named, self.chains.received)

    def waiting(self) -> str:
        """What holds us up now, for a tester: whom we wait on for what (§12.4) and how long, frames missed, links."""
        owed, mark = self._owed()
        dog = self.watchdog
        since = f" for {self.now - dog.since:.1f} s" if dog.since is not None and dog.owed == owed else ""
        parts = [f"round {self.round}"]
        if owed:
            parts.append(f"waiting on {', '.join(self.names[s] for s in sorted(owed))} for {OWED[mark[1]]}{since}")
        else:
            parts.append("waiting on no seat" + self._idle_words())
        ahead: dict[int, set[int]] = {}
        for seat, seq in self.chains.ahead():
            ahead.setdefault(seat, set()).add(seq)
        for seat, seq in [] if self.rs is None else self.rs.log.awaited():
            ahead.setdefault(seat, set()).add(seq + 1)  # a move an order names that we never took
        holes = find_gaps(ahead, self.chains.received, set())
        if holes:
            parts.append("missing " + ", ".join(f"{self.names[s]}'s frame{'s' if b > a else ''} {a}"
                                                 + (f" to {b}" if b > a else "") for s, a, b in holes))
        missing = [self.names[s] for s in range(self.n) if s != self.me and self.absences.now(s)]
        if missing:
            parts.append(f"link missing to {', '.join(missing)}")
        return "; ".join(parts)

    def _idle_words(self) -> str:
        """What we wait for when no seat owes us anything: a player's move, a deadline, our own move's order."""
        rs = self.rs
        if rs is None:
            return " (before the first round)"
        if rs.log.own_unordered:
            return f" (our move is not ordered yet, {len(rs.log.own_unordered)} of them)"
        wake = rs.rules.game.wake_time()
        if wake is not None:
            return f" (the game's next deadline is at {wake:.1f} s, {wake - self.now:+.1f} s from now)"
        return " (a player's move)"

    def frame(self, seat: int, seq: int) -> bytes | None:
        """The frame we accepted (or sent) at place `seq` of `seat`'s chain, if we hold it."""
        return self.chains.frame(seat, seq)

    def view(self) -> CrispView | CrescendoView:
        """Our own player's view of the game (the only view a peer can compute)."""
        return self.game.view(self.names[self.me])

    def wake_time(self) -> float | None:
        """The earliest time at which `tick` has something to do even if nothing arrives, or None."""
        times = [self.now + 0.5] if self.stopped is None and not self.finished else []
        rs = self.rs
        if rs is not None and self.me == rs.orderer:
            times += rs.wakes()
        elif rs is not None and times and (due := rs.log.resend_due()) is not None:
            times.append(due)  # a copy of our move goes when it is due, not at the next half second
        # A moment already past (we wait on the log first) is asked for again a little later.
        return max(min(times), self.now + 0.01) if times else None

    def take_journal(self) -> list[Record]:
        """The journal's records since the last call (the shell stores them before it sends what the step made)."""
        return self._journal.take()
