"""One seat's table coordinated, sans-IO: its parts wired, each message dispatched to the part it belongs to,
one loop that advances whatever can, rounds begun and ended, stalls blamed (`TablePeer` in peer.py is its interface).

Each round's machines live in their own parts (see round.py): the log (log.py), the decks and
their passes (decks.py), the reveals (reveals.py) and the settlement (settle.py). Frames come in
through the signature chains (chains.py), are parsed into typed bodies where they arrive
(bodies.py) and dispatched here; then one loop, `_progress`, advances whatever can advance. The
game is reached through rules.py only. What outlasts a round has its parts too: who is ready,
aided, left or voted out, and the table that goes on without the seats voted out (seating.py, votes.py), the
journal and its replay (journal.py, resume.py), what we wait on and ask for again (waits.py), and
how we weigh another peer's fault report (reports.py). Only dispatch, what is owed and a fault
report cross the parts: they are here.
"""

from __future__ import annotations

from collections.abc import Callable

from ..crypto import deck as dk
from ..crypto.envelope import ChainTracker, Outbox, Signed, parse
from ..crypto.identity import Identity
from ..crypto.sealing import Opener
from ..errors import LocalError, MalformedMessage, RemoteProtocolError
from .absences import Absences
from .bodies import Body, Fault, RoundResult, parse_body
from .chains import ANY_ROUND, Chains
from .config import Game, TableConfig
from .journal import Journal
from .log import Log, Pace
from .outputs import Emitter, Output
from .reports import View, weigh
from .resume import Check, Hashes, Record, clock_record, frame_record
from .round import OWED, Parts, Round, Stage, Watchdog, new_round
from .rules import Rules, rules_for
from .seating import Seating, TableMessage
from .waits import Waits

TOLERANCE_S = 1.0  # how far an orderer's stamp may be from our own clock
SLACK_S = 1.5  # how much later than us a frame may reach the orderer, or reach us from it (a slow link)
TIMEOUT_S = 15.0  # how long a peer may owe a message before it is blamed


class Coordinator:
    """The parts of one seat's table and what drives them; a `TablePeer` is one, with its interface."""

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
        self.chains = Chains(config, self.me, self.emit, self._accepted, lambda: self.round, tracker,
                             self._first_hand)
        self.rules: Rules = rules_for(config.new_game())
        # A table that goes on without a seat (§14.9) carries the totals of the rounds played before.
        self.absences = Absences()  # when our network layer missed each seat's link
        self.seating = Seating(config, self.me, self.emit, carry, self.absences)
        self.seating.seat_game(self.game)
        self.parts = parts or Parts()
        self.round = 0
        self.rs: Round | None = None
        self.now = 0.0
        self._replay_at = 0.0  # a journal's record time, while it is replayed
        self._opener = Opener(identity)
        self.waits = Waits(self.n, self.me, timeout)
        self.pace = Pace()  # how long our moves' orders take to come back, from round to round (log.py)
        # What we must not lose in a crash (table/resume.py), for the shell to store before it sends.
        self._journal = Journal()
        if journal:
            self.keep_journal()
        self.emit.on_sign = self._record_frame
        # Set by a shell that calls `go_on` while `pending`: a step that signs an order hands it back before
        # we apply it ourselves, so that it leaves at once (the seats that answer it wait on nothing of ours).
        self.order_first = False
        self.settled: list[RoundResult] = []  # every round we settled at this table, in order (since a resume)

    # ------------------------------------------------------------ what every part reads

    @property
    def game(self) -> Game:
        """Our engine (it sees the faces the protocol revealed to us)."""
        return self.rules.game

    @property
    def stopped(self) -> str | None:
        """Why the table stopped for us (a fault, or our leaving), or None while it goes on."""
        return self.emit.stopped

    @property
    def journal(self) -> list[Record] | None:
        """The journal's records not yet taken (None when we do not journal)."""
        return self._journal.records

    @property
    def watchdog(self) -> Watchdog:
        """What blames a stall (waits.py)."""
        return self.waits.dog

    # ------------------------------------------------------------ the journal and resuming

    def keep_journal(self) -> None:
        """Journal from now on (call before `start`): what our table carries, where our chain begins,
        the lobby's frames we hold, then all that follows."""
        self._journal.keep(self.seating.carry, self.outbox, self.chains.taken())

    def _record_frame(self, frame: bytes) -> None:
        self._journal.record(frame_record(self.now, frame))

    def _accepted(self, signed: Signed) -> None:
        """A frame of another seat, accepted into its chain: journal it (at when it came, and our clock first when
        we take it later than that: held ahead of its chain, or overtaken), then handle it."""
        came = self._came()
        if came < self.now:
            self._journal.record(clock_record(self.now))
        self._journal.record(frame_record(came, signed.frame, self.chains.live))
        self._handle_in_hand(signed)

    def _handle_in_hand(self, signed: Signed) -> None:
        """Handle a frame of another seat with it in hand: a fault it shows carries it as the evidence, not the frame
        whose taking let it through (one that filled the gap it was held at, or began the round it waited for)."""
        outer, self.emit.in_hand = self.emit.in_hand, signed.frame
        try:
            self._handle(signed)
        finally:
            self.emit.in_hand = outer

    def _first_hand(self, frame: bytes, came: float) -> None:
        """A frame we took sent again came first hand at `came`: a move not ordered yet is judged by that
        (journaled so: a replay takes this copy again, as a replay of the frame, and judges alike)."""
        rs = self.rs
        if rs is None or not rs.log.unseen:
            return
        env = parse(frame).envelope
        seat = self.chains.seat(env.sender)
        if env.type != "move" or env.round != self.round or seat is None:
            return
        if rs.log.first_hand((seat, env.seq), came):
            self._journal.record(frame_record(came, frame))

    def _came(self) -> float:
        """When the frame being handled came (a replay: when it came the first time)."""
        return self.now if self.chains.came is None else self.chains.came

    def _at(self, came: float, clock: float | None = None) -> None:
        """A journal's frame is taken again: it came at `came`, and we took it at `clock` if the journal says."""
        self.now = max(self.now, came if clock is None else clock)
        self._replay_at = came

    def _replayed(self, frame: bytes, live: bool) -> None:
        """A journal's frame taken again, as it came the first time."""
        self.chains.accept(frame, self._replay_at, live)

    def _step(self) -> None:
        """One step of a replay: what it makes stays in `emit.out` (the journal sorts it once replayed)."""
        self._progress()
        self._apply_pending()

    def _restore(self, check: Check, frames: list[bytes], hashes: Hashes) -> None:
        """Back where we began round `check.round` (resume): the checkpoint's state, the older places of the chains
        by their hash (`hashes`) and the frames before it taken into their chains only (what they did is in the
        checkpoint), and the round begun again."""
        self.now = max(self.now, check.now)
        self.round = check.round - 1
        self.seating.restore(check, self.game)
        self.chains.rebuild(frames, check.round, hashes)
        self._begin_round(check.round)

    # ------------------------------------------------------------ plumbing

    @property
    def pending(self) -> bool:
        """True while an order we signed and handed back waits to be applied by us, or shares we showed unproved
        wait for their proofs to be checked (`go_on` does both)."""
        if self.emit.stopped is not None:
            return False
        return bool(self.emit.own) or (self.rs is not None and self.rs.reveals.proving_due())

    def _prove(self) -> None:
        """Check the proofs of the shares we combined unproved (a bad one stops the table)."""
        if self.rs is not None and self.emit.stopped is None:
            self.rs.reveals.prove()

    def _flush(self) -> list[Output]:
        # We apply our own messages like everyone else's, once the step that sent them is done (an order
        # of ours, once it is sent, when `order_first`; never so while the journal is replayed).
        self._apply_pending()
        out, self.emit.out = self.emit.out, []
        return out

    def _apply_pending(self) -> None:
        emit = self.emit
        while emit.own and emit.stopped is None:
            if self.order_first and not self._journal.replaying and emit.own[0].envelope.type == "order":
                break
            self._apply_own()

    def _apply_own(self) -> None:
        """Apply the first of our own messages not applied yet, and all it makes possible."""
        self._handle(self.emit.own.pop(0))
        self._progress()

    def _input(self, now: float) -> None:
        """Before any input at `now`: the clock moves on, and what we signed and handed back is applied."""
        self.now = max(self.now, now)
        self._own_first()

    def _own_first(self) -> None:
        """Apply what we signed and handed back before applying it (`pending`)."""
        for _ in range(len(self.emit.own)):
            if self.emit.stopped is None:
                self._apply_own()

    def _take(self, frame: bytes, came: float, live: bool) -> None:
        """Take one frame that came at `came` (not `live`: sent again, or relayed as evidence) and all it makes
        possible; a fault found meanwhile carries it as evidence."""
        outer, self.emit.in_hand = self.emit.in_hand, frame
        try:
            self.chains.accept(frame, came, live)
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
        rs.take(seat, signed, body, self._came(), self.chains.take_relayed, self._opener, self.chains.live)

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
        for frame in self._evidence(body):
            self._take(frame, self.now, False)  # relayed by the reporter: when it came times nothing
            if self.stopped is not None:
                return
        ours = self.rs.result if self.rs is not None else None
        if ours is not None and ours.audit != "verified" and ours.blame is not None:
            # Our own audit found the fault already: a report that every result agrees on it may come before the
            # last results do, and our verdict is our own check (protocol.md §14, step 1).
            self.emit.fault(f"{self.names[seat]} stopped the table ({body.why}); our audit of round {ours.round} "
                            f"found a {ours.audit} fault", ours.blame)
            return
        what = f" ({OWED[self.watchdog.mark[1]]})" if self.watchdog.mark else ""
        view = View(self.watchdog.waited(self.now), sorted(self._owed()[0]), self.absences.now, what)
        # Our own report carries this one (the frame in hand) as its evidence, for a peer it reaches first.
        detail, blame, claim = weigh(self.names, seat, body, view)
        self.emit.fault(detail, blame, claim=claim)

    def _evidence(self, body: Fault) -> list[bytes]:
        """The frames a report relays as evidence, each other seat's report among them preceded by what it relays
        in turn: that report may be ahead of its sender's chain here, held unchecked (what it carries is checked
        when taken, each frame as any frame is)."""
        frames: list[bytes] = []
        for frame in body.evidence:
            try:
                env = parse(frame).envelope
                seat = self.chains.seat(env.sender)
                if env.type == "fault" and seat is not None and seat != self.me:
                    inner = parse_body("fault", env.body, self.names, seat)
                    assert isinstance(inner, Fault)
                    frames += inner.evidence
            except RemoteProtocolError:
                pass  # taken below as any frame is: dropped, and counted
            frames.append(frame)
        return frames

    # ------------------------------------------------------------ rounds

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
                  self.absences.since, self.game.dealer_of(number),  # the round's dealer orders its log
                  start=self.game.clock, pace=self.pace)
        self.rs = rs = new_round(self.cfg, number, self.me, seed, self.emit.port(number), self.rules, self.parts,
                                 log, lambda: self.now)
        self.emit.note("round", f"round {number} begins")
        self.seating.began(number, self.game)
        if seated:
            self.chains.keep_from(number)
            self.emit.send(number, "key", rs.decks.announcement().to_wire())
        later, self.chains.later = self.chains.later, []
        for signed in later:
            self._handle_in_hand(signed)

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
        self.settled.append(result)
        self.emit.note("round", f"round {rs.number} verified and signed by all: {list(result.scores)}")
        if self.game.over:
            self.seating.finished = True
            self.emit.note("over", "winners: " + ", ".join(self.names[w] for w in self.game.winners))
            return
        # The votes held may void the next round: then it is not begun here.
        self.seating.vote_out(self.game, self._done())
        if not self.seating.finished:
            self._begin_round(rs.number + 1)

    # ------------------------------------------------------------ time-outs

    def _owed(self) -> tuple[frozenset[int], tuple[int, ...]]:
        """The other seats that hold up what we are waiting for, and the mark of what they owe (waits.py)."""
        return self.waits.owed(self.round, self.rs, self.seating.ready, self.now, self.tolerance)

    def _watch(self) -> None:
        """Blame whoever holds everything up for longer than the time-out (only what they owe restarts it)."""
        self.waits.heard(tuple(self.chains.received(s) for s in range(self.n)), self.now)
        # A seat we voted gone, or whose link is missing now, is the vote's to settle, not the time-out's:
        # one that crashed gets its `gone_after` to come back (§14.4).
        voted = self.seating.votes.by(self.me)
        absent = {s for s in range(self.n) if self.absences.now(s)}
        ahead = frozenset() if self.seating.finished else self.seating.votes.ahead(self.round)
        late = [] if self.seating.finished else self.waits.late(self.now, *self._owed(), voted, absent, ahead)
        if self.watchdog.waited(self.now):  # so too whenever a seat is `late`, past the whole time-out
            # Waited on for half the time-out: a lie among the shares that did come (shown unproved while the
            # rest was awaited) is named first, its box the evidence, before any seat blames the stall.
            self._prove()
            if self.emit.stopped is not None:
                return
        if late and self.watchdog.instead:  # our round waits on seats voted gone from a round after it (§14.9)
            self.emit.fault(f"{', '.join(self.names[s] for s in late)} voted seats gone in a round after round"
                            f" {self.round}, yet that round has not ended here for {self.timeout:g} s", late[0],
                            stall=True)
        elif late:
            self.emit.fault(f"{', '.join(self.names[s] for s in late)} sent nothing owed for {self.timeout:g} s"
                            f" ({OWED[self.watchdog.mark[1]]})", late[0], stall=True)
