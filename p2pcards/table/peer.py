"""One peer at a table, sans-IO: frames and clock readings in, frames to broadcast and notes out.

Every peer runs the same engine on the same ordered log. The round's dealer is its *orderer*:
it stamps every move with its clock and puts it in the log (`order` messages); everyone checks
the stamps against their own clock. Cards are handles of the mental-poker deck: a face reaches
an engine only through decryption shares the rules entitle it to (see protocol.md).

`TablePeer` coordinates; each round's machines live in their own parts (see round.py): the
log (log.py), the decks and their passes (decks.py), the reveals (reveals.py) and the
settlement (settle.py). Frames come in through the signature chains (chains.py), are parsed
into typed bodies where they arrive (bodies.py) and dispatched here; then one loop,
`_progress`, advances whatever can advance. The game is reached through rules.py only. What
outlasts a round has its parts too: who is ready, aided, left or voted out, and the table that
goes on without a seat (seating.py, votes.py), the journal and its replay (journal.py,
resume.py), what we wait on and ask for again (waits.py), and how we weigh another peer's fault
report (reports.py).
"""

from __future__ import annotations

from collections.abc import Callable

from ..crypto import deck as dk
from ..crypto.envelope import ChainTracker, Outbox, Signed, parse
from ..crypto.identity import Identity
from ..crypto.sealing import Opener
from ..errors import (DeckFault, EquivocationEvidence, IllegalMove, LocalError, MalformedMessage,
                      RemoteProtocolError)
from ..games.base import Move
from ..games.crescendo import CrescendoView
from ..games.crisp import CrispView
from .absences import Absences
from .bodies import Aid, Body, Fault, Ref, RoundResult, parse_body
from .chains import ANY_ROUND, Chains
from .config import Game, TableConfig
from .journal import Journal
from .log import Entry, Log
from .messages import move_to_wire, reason
from .outputs import Emitter, Note, NoteKind, Output, Send
from .reports import View, weigh
from .resume import Check, Record, ResumeOutbox, carried, frame_record, replayed_seeds
from .round import OWED, Parts, Round, Stage, Watchdog, new_round
from .rules import Rules, rules_for
from .seating import Seating, TableMessage
from .votes import Votes
from .waits import Waits

__all__ = ["Entry", "Note", "NoteKind", "Output", "Ref", "RoundResult", "Send", "Stage", "TablePeer"]

TOLERANCE_S = 1.0  # how far an orderer's stamp may be from our own clock
SLACK_S = 1.5  # how much later than us a frame may reach the orderer, or reach us from it (a slow link)
TIMEOUT_S = 15.0  # how long a peer may owe a message before it is blamed


class TablePeer:
    """The table protocol for one seat: feed it frames and the time, broadcast what it returns."""

    def __init__(self, config: TableConfig, identity: Identity, draw_seed: Callable[[], bytes] = dk.draw_seed,
                 tolerance: float = TOLERANCE_S, timeout: float = TIMEOUT_S, slack: float = SLACK_S,
                 outbox: Outbox | None = None, tracker: ChainTracker | None = None,
                 journal: bool = False, carry: tuple[tuple[int, ...], int] | None = None, *,
                 emitter: type[Emitter] = Emitter, parts: Parts | None = None) -> None:
        seated = identity.public in config.keys
        if not seated and emitter is Emitter:
            raise LocalError("this identity has no seat at the table")
        self.cfg = config
        self.identity = identity
        self.me = config.keys.index(identity.public) if seated else config.seats  # a witness: past the last seat
        self.names = config.names
        self.n = config.seats
        self.seat_of = {name: i for i, name in enumerate(config.names)}
        self.draw_seed = draw_seed
        self.tolerance = tolerance
        self.slack = slack
        self.timeout = timeout
        # Our chain at the table, in its context (a peer resuming from disk hands over the one it had).
        self.outbox = outbox or Outbox(identity, config.context)
        self.emit = emitter(self.outbox, config.names, lambda: self.round)
        self.chains = Chains(config, self.me, self.emit, self._accepted, lambda: self.round, tracker)
        self.rules: Rules = rules_for(config.new_game())
        # A table that goes on without a seat (§14.9) carries the totals of the rounds played before.
        self.seating = Seating(config, self.me, self.emit, carry)
        self.seating.seat_game(self.game)
        self.parts = parts or Parts()
        self.round = 0
        self.rs: Round | None = None
        self.absences = Absences()  # when our network layer missed each seat's link
        self.now = 0.0
        self._opener = Opener(identity)
        self.waits = Waits(self.n, self.me, timeout)
        # What we must not lose in a crash (table/resume.py), for the shell to store before it sends.
        self._journal = Journal()
        if journal:
            self.keep_journal()
        self.emit.on_sign = self._record_frame

    @classmethod
    def resume(cls, config: TableConfig, identity: Identity, records: list[Record], now: float,
               draw_seed: Callable[[], bytes] = dk.draw_seed, tolerance: float = TOLERANCE_S,
               timeout: float = TIMEOUT_S, slack: float = SLACK_S) -> TablePeer:
        """The peer whose journal is `records`, back where it was: the journal replayed, our own
        frames given back as signed (never signed anew), every round seed as drawn; it journals on.

        LocalError when the journal does not lead where it led before (another config or identity).
        """
        peer = cls(config, identity, draw_seed=replayed_seeds(records, draw_seed),
                   tolerance=tolerance, timeout=timeout, slack=slack,
                   outbox=ResumeOutbox(identity, config.context, records), carry=carried(records))
        peer._journal.replay(records, peer.outbox, peer.emit, peer._at, peer.chains.accept, peer._step, peer._restore)
        peer._journal.records = []
        peer.now = max(peer.now, now)
        if peer.rs is not None:
            peer.rs.log.back = peer.now
        peer.waits.quiet_since = peer.now
        return peer

    # ------------------------------------------------------------ the interface

    @property
    def game(self) -> Game:
        """Our engine (it sees the faces the protocol revealed to us)."""
        return self.rules.game

    @property
    def journal(self) -> list[Record] | None:
        """The journal's records not yet taken (None when we do not journal)."""
        return self._journal.records

    @property
    def watchdog(self) -> Watchdog:
        """What blames a stall (waits.py)."""
        return self.waits.dog

    @property
    def stopped(self) -> str | None:
        """Why the table stopped for us (a fault, or our leaving), or None while it goes on."""
        return self.emit.stopped

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
        """The table that goes on without a seat voted out, once there is one (protocol.md §14.9)."""
        return self.seating.successor

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

    def start(self, now: float) -> list[Output]:
        """Say we are ready to play at this table (agreeing on its exact config)."""
        self.now = now
        self.seating.start()
        return self._flush()

    def receive(self, frame: bytes, now: float) -> list[Output]:
        """Take one frame from the network; never raises on what another peer sent."""
        self.now = max(self.now, now)
        if self.stopped is None:
            self._take(frame)
            if self.waits.due(self.now):
                self._watch()
        return self._flush()

    def can_wait(self, frame: bytes) -> bool:
        """True for a frame nobody waits on us for (a private box to another seat): a shell may take it a little later."""
        return self.chains.can_wait(frame)

    def tick(self, now: float) -> list[Output]:
        """Let time pass: the orderer announces time-outs; everyone watches for peers that owe too long."""
        self.now = max(self.now, now)
        if self.stopped is None:
            self._progress()
            self._watch()
        return self._flush()

    def play(self, move: Move, now: float) -> list[Output]:
        """Send our own move; IllegalMove (nothing sent) when our engine already knows it is not allowed."""
        self.now = max(self.now, now)
        if self.stopped is not None or self.rs is None:
            raise IllegalMove("the table is not playing a round")
        self.rs.check_move(move)
        return self.send_move(move)

    def send_move(self, move: Move) -> list[Output]:
        """Sign and send `move` as ours, whatever our engine thinks of it (a modified client's door)."""
        self.emit.send(self.round, "move", {"m": move_to_wire(move, self.seat_of)})
        self._progress()
        return self._flush()

    def leave(self, now: float, why: str = "left") -> list[Output]:
        """Leave the table for good: the others vote us gone, and go on without us from the round in play."""
        self.now = max(self.now, now)
        self.seating.leave(why)
        return self._flush()

    def aid(self, on: bool, now: float) -> list[Output]:
        """Tell every seat we turned our memory aid on or off (nothing is sent when it is so already)."""
        self.now = max(self.now, now)
        self.seating.aid(on)
        return self._flush()

    def gone(self, seat: int, now: float, why: str) -> list[Output]:
        """Seat `seat` is gone from the network (its link ended or fell silent, and stayed so), as
        `why` says: we vote it gone; once every other seat has, the round is void and the table goes
        on without it (protocol.md §14.9)."""
        self.now = max(self.now, now)
        if 0 <= seat < self.n and seat != self.me:
            self.seating.vote_gone(seat, f"{why}: we vote it gone")
        return self._flush()

    def next_peer(self, records: list[Record] | None = None) -> TablePeer | None:
        """Our peer at the table that goes on without a seat voted out, once there is one; it journals
        if we do, and is resumed from `records` if its journal has some (we came back from a crash)."""
        if self.successor is None:
            return None
        if records:
            return TablePeer.resume(self.successor, self.identity, records, self.now, self.draw_seed,
                                    self.tolerance, self.timeout, self.slack)
        return TablePeer(self.successor, self.identity, self.draw_seed, self.tolerance, self.timeout, self.slack,
                         journal=self.journal is not None, carry=self.seating.passed_on)

    def absent(self, seat: int, missing: bool, now: float) -> None:
        """The network layer found `seat`'s link missing (lost or quiet), or back: an orderer that was
        missing stamps the moves it gets when it is back (protocol.md §14.10)."""
        self.now = max(self.now, now)
        (self.absences.missing if missing else self.absences.back)(seat, self.now)

    def silent(self, seat: int, since: float, until: float) -> None:
        """The network layer heard nothing at all on `seat`'s link from `since` to `until`: it was
        missing for that while, though too briefly to be called missing (protocol.md §18.6)."""
        self.absences.silent(seat, since, until)

    def busy(self) -> bool:
        """True while our engine is behind the log, a reveal we are owed is on its way, or our move awaits order."""
        return self.rs is None or self.stopped is not None or self.rs.busy()

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
        # A moment already past (we wait on the log first) is asked for again a little later.
        return max(min(times), self.now + 0.01) if times else None

    def keep_journal(self) -> None:
        """Journal from now on (call before `start`): what our table carries, where our chain begins,
        the lobby's frames we hold, then all that follows."""
        self._journal.keep(self.carry, self.outbox, [self.frame(seat, seq) or b"" for seat in range(self.n)
                                                     if seat != self.me for seq in range(self.chains.received(seat))])

    def take_journal(self) -> list[Record]:
        """The journal's records since the last call (the shell stores them before it sends what the step made)."""
        return self._journal.take()

    # ------------------------------------------------------------ resuming

    def _record_frame(self, frame: bytes) -> None:
        self._journal.record(frame_record(self.now, frame))

    def _accepted(self, signed: Signed) -> None:
        """A frame of another seat, accepted into its chain: journal it, then handle it."""
        self._record_frame(signed.frame)
        self._handle(signed)

    def _at(self, now: float) -> None:
        self.now = max(self.now, now)

    def _step(self) -> None:
        self._progress()
        self._flush()

    def _restore(self, check: Check, frames: list[bytes]) -> None:
        """Back where we began round `check.round` (resume): the checkpoint's state, the frames before it taken
        into their chains only (what they did is in the checkpoint), and the round begun again."""
        self.now = max(self.now, check.now)
        self.round = check.round - 1
        self.seating.restore(check, self.game)
        self.chains.rebuild(frames, check.round)
        self._begin_round(check.round)

    # ------------------------------------------------------------ plumbing

    def _flush(self) -> list[Output]:
        # We apply our own messages like everyone else's, once the step that sent them is done.
        emit = self.emit
        while emit.own and emit.stopped is None:
            self._handle(emit.own.pop(0))
            self._progress()
        out, emit.out = emit.out, []
        return out

    def _take(self, frame: bytes) -> None:
        """Take one frame and all it makes possible; a fault found meanwhile carries it as evidence."""
        outer, self.emit.in_hand = self.emit.in_hand, frame
        try:
            self.chains.accept(frame)
            self._progress()
        finally:
            self.emit.in_hand = outer

    # ------------------------------------------------------------ dispatch

    def _handle(self, signed: Signed) -> None:
        """Take one accepted message: what it carries is recorded in its machine; blame its sender if bad."""
        seat = self.chains.route(signed)
        if seat is None:
            return
        try:
            self._dispatch(seat, signed)
        except RemoteProtocolError as exc:
            self.emit.blame(exc, signed.envelope.type, seat)

    def _dispatch(self, seat: int, signed: Signed) -> None:
        env = signed.envelope
        if env.type in ANY_ROUND:
            self._table_message(seat, env.round, parse_body(env.type, env.body, self.names, seat))
            return
        rs = self.rs
        if rs is not None and env.round < self.round and env.type == "move":
            self.emit.note("rejected", f"a move of round {env.round} came after its end", seat)
            return
        if rs is None or env.round != self.round:
            raise MalformedMessage(f"{env.type} for round {env.round} during round {self.round}")
        body = parse_body(env.type, env.body, self.names, seat)
        rs.take(seat, signed, body, self.now, self.chains.take_relayed, self._opener)

    def _table_message(self, seat: int, rnd: int, body: Body) -> None:
        """A message of no round: a fault report (a peer that stopped tells everyone), or the seating's
        (a ready, a vote, a leave or an aid)."""
        if isinstance(body, Fault):
            self._fault_report(seat, body)
        elif isinstance(body, TableMessage) and self.seating.take(seat, rnd, body, self.game, self._done()):
            self._begin_round(self.seating.first)

    def _fault_report(self, seat: int, body: Fault) -> None:
        """Another peer stopped the table: we stop too, blaming only whom our own checks or view name."""
        # The evidence first: the frames that showed the reporter its fault, taken as any frame is,
        # so that a fault we can check is found by our own checks, with our own blame.
        for frame in body.evidence:
            self._take(frame)
            if self.stopped is not None:
                return
        what = f" ({OWED[self.watchdog.mark[1]]})" if self.watchdog.mark else ""
        view = View(self.watchdog.waited(self.now), sorted(self._owed()[0]), self.absences.now, what)
        # Our own report carries this one (the frame in hand) as its evidence, for a peer it reaches first.
        self.emit.fault(*weigh(self.names, seat, body, view))

    # ------------------------------------------------------------ rounds and decks

    def _begin_round(self, number: int) -> None:
        """Begin round `number`: its checkpoint (if we journal), its seed and parts, our key, and what waited for it.

        A witness (no seat) draws no seed and sends nothing: its round has a placeholder secret (round.py)."""
        self.round = number
        seated = self.me < self.n
        if self.journal is not None and number > self.seating.first:
            self._journal.record(self.seating.check(number, self.now, self.outbox, self.game).record())
        seed = self.draw_seed() if seated else None
        if seed is not None:
            self._journal.record(("seed", number, seed))
        log = Log(self.n, self.tolerance, self.rules.tie_window, self.rules.ties, self.slack,
                  self.absences.since, self.game.dealer_of(number))  # the round's dealer orders its log
        self.rs = rs = new_round(self.cfg, number, self.me, seed, self.emit.port(number), self.rules, self.parts,
                                 log, lambda: self.now)
        self.emit.note("round", f"round {number} begins")
        self.seating.began(number, self.game)
        if seated:
            self.chains.keep_from(number)
            self.emit.send(number, "key", rs.decks.announcement().to_wire())
        later, self.chains.later = self.chains.later, []
        for signed in later:
            self._handle(signed)

    # ------------------------------------------------------------ the loop

    def _progress(self) -> None:
        """Do everything that has become possible, in order."""
        rs = self.rs
        if rs is None or self.stopped is not None:
            return
        rs.reveals.take_early()
        rs.apply_entries(self.chains.received)
        if self.me == rs.orderer:
            rs.order_next(self.now)
        self._round_end(rs)

    def _done(self) -> bool:
        """Our current round is settled (or none has begun)."""
        return self.rs is None or self.rs.stage is Stage.DONE

    def _round_end(self, rs: Round) -> None:
        if not rs.settle():
            return
        result = rs.settlement.result
        assert result is not None
        self.emit.note("round", f"round {rs.number} verified and signed by all: {list(result.scores)}")
        if self.game.over:
            self.seating.finished = True
            self.emit.note("over", "winners: " + ", ".join(self.names[w] for w in self.game.winners))
            return
        self.seating.vote_out(self.game, self._done())  # the votes held may void the next round: then it is not begun here
        if not self.finished:
            self._begin_round(rs.number + 1)

    # ------------------------------------------------------------ time-outs

    def _owed(self) -> tuple[frozenset[int], tuple[int, ...]]:
        """The other seats that hold up what we are waiting for, and the mark of what they owe (waits.py)."""
        return self.waits.owed(self.round, self.rs, self.seating.ready, self.now, self.tolerance)

    def _watch(self) -> None:
        """Blame whoever holds everything up for longer than the time-out (only what they owe restarts it)."""
        self.waits.heard(tuple(self.chains.received(s) for s in range(self.n)), self.now)
        late = [] if self.finished else self.waits.late(self.now, *self._owed(), self.votes.by(self.me))
        if late:
            self.emit.fault(f"{', '.join(self.names[s] for s in late)} sent nothing owed for {self.timeout:g} s"
                            f" ({OWED[self.watchdog.mark[1]]})", late[0], stall=True)
