"""One round at one peer: its stage, its parts, what is owed, and the watchdog that blames a stall.

A round is several machines running at once, each in its own part:

- the stage (`Stage`, one table of what follows what): keys, shuffling, playing, settling, done;
- each deck's chain of shuffle passes (`Decks`: deck 0, then every Crescendo reshuffle);
- the log (`Log`): moves arrive, the orderer places them, the engine applies the entries;
- each card's reveal (`Reveals`): granted, shares sent by every other seat, combined;
- the settlement (`Settlement`): openings, the audit, every seat's signed result.

Messages are recorded where they arrive and wait in the buffer of the machine they belong to
until it can take them: passes ahead of their stage (`Decks.early`), shares whose deck is not
final (`Reveals.early`), moves not yet ordered (`Log.moves`, the orderer's `Log.inbox`), orders
whose moves have not reached us or whose cards are not revealed yet (`Log.entries`). Before
the round there are two more, at the peer: frames ahead of their sender's chain (`held`) and
messages of a round not begun (`later`). One loop (`Coordinator._progress`) advances whatever can.
"""

from __future__ import annotations

import enum
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Final

from ..crypto import deck as dk
from ..crypto.encoding import decode
from ..crypto.envelope import Signed
from ..crypto.sealing import Opener
from ..errors import IllegalMove, MalformedMessage
from ..games.base import Move, ms_after
from .bodies import Body, EntryKind, Order, Private, Ref, RoundResult, Shares
from .config import Game, TableConfig
from .decks import Decks
from .log import Entry, Log
from .outputs import Port
from .reveals import Reveals
from .rules import Rules
from .settle import Settlement


class Stage(enum.IntEnum):
    """Where a round stands; each stage follows the one before it (`NEXT`), never skipping one."""

    KEYS = 1  # every seat announces its round key
    SHUFFLING = 2  # deck 0's passes, seat by seat, until the orderer deals
    PLAYING = 3  # dealt: moves are ordered and applied (reshuffles run within)
    SETTLING = 4  # the engine ended and scored the round: openings, audit, results
    DONE = 5  # every seat signed our verified result


NEXT: dict[Stage, Stage] = {Stage.KEYS: Stage.SHUFFLING, Stage.SHUFFLING: Stage.PLAYING,
                            Stage.PLAYING: Stage.SETTLING, Stage.SETTLING: Stage.DONE}


@dataclass
class Parts:
    """The classes a peer builds each round's parts from (sim/cheaters.py swaps in modified ones)."""

    reveals: Callable[[Decks, Game, tuple[bytes, ...], Port], Reveals] = Reveals
    settlement: Callable[[Decks, Reveals, Game, Port], Settlement] = Settlement


class Round:
    """One round's parts and stage, for the peer at `decks.me`, played by `rules` and ordered by `log.orderer`."""

    def __init__(self, number: int, port: Port, log: Log, decks: Decks, reveals: Reveals,
                 settlement: Settlement, rules: Rules) -> None:
        self.number = number
        self.port = port
        self.stage = Stage.KEYS
        self.log = log
        self.decks = decks
        self.reveals = reveals
        self.settlement = settlement
        self.rules = rules
        self.orderer = log.orderer  # the round's dealer orders its log
        self.applied = 0  # log entries the engine has applied

    def enter(self, stage: Stage) -> None:
        """Move on to `stage`, the one after the current stage."""
        assert NEXT.get(self.stage) is stage, f"round {self.number}: {self.stage.name} is not followed by {stage.name}"
        self.stage = stage

    @property
    def dealt(self) -> bool:
        """The orderer's deal has been applied: the round is being played (or is over)."""
        return self.stage >= Stage.PLAYING

    def check_move(self, move: Move) -> None:
        """IllegalMove unless we may send `move` now: the round is being played, the move is our seat's,
        our engine has applied the log and does not refuse it (a face it cannot see or a reshuffle due is
        no refusal: the table sees to those)."""
        game = self.rules.game
        if self.stage is not Stage.PLAYING or game.r is None or game.r.ended:
            raise IllegalMove("the table is not playing a round")
        if move.player != self.decks.ctx.players[self.decks.me]:
            raise IllegalMove("a peer plays only its own seat's moves")
        if self.log.entries:
            raise IllegalMove("the log is still being applied: wait for it")
        game.check(move)

    def busy(self) -> bool:
        """True until the deal, and while our engine is behind the log, a reveal we are owed is on its way,
        or our move awaits order."""
        return not self.dealt or bool(self.log.entries or self.log.own_unordered or self.reveals.learning)

    @property
    def log_hash(self) -> bytes:
        """The hash of the round's log so far."""
        return self.log.log_hash

    @property
    def result(self) -> RoundResult | None:
        """Our result of the round, once our audit is done."""
        return self.settlement.result

    @property
    def results(self) -> dict[int, RoundResult]:
        """Every seat's signed result so far, by seat."""
        return self.settlement.results

    @property
    def ctx(self) -> dk.RoundContext:
        """The context every deck operation of this round is bound to."""
        return self.decks.ctx

    def take(self, seat: int, signed: Signed, body: Body, now: float,
             relay: Callable[[Log, Ref, bytes, int], None], opener: Opener, live: bool = True) -> None:
        """Record a message of this round from `seat` that came at `now` (not `live`: sent again) in its machine
        (`relay` checks each move an order relays, `opener` opens a box sealed to us); MalformedMessage or a
        DeckFault when it is bad."""
        me, orderer = self.decks.me, self.orderer
        match body:
            case dk.KeyAnnouncement():
                self.decks.take_key(seat, body)
                if self.stage is Stage.KEYS and self.decks.keys is not None:
                    self.enter(Stage.SHUFFLING)
                    self.decks.advance()
            case dk.EncryptedDeck():
                if seat == me and body.deck == 0 and self.log.passed_at is None:
                    self.log.passed_at = now
                self.decks.take_pass(seat, body, signed.frame)
                self.decks.advance()
            case Move():
                self.log.add_move((seat, signed.envelope.seq), body, signed.frame, now, seat == me, me == orderer, live)
            case Order():
                if seat != orderer:
                    raise MalformedMessage("only the round's orderer orders the log")
                self.log.take(body, signed.hash, now, live)
                for ref, frame in zip(body.refs, body.frames):
                    relay(self.log, ref, frame, orderer)
                self.log.forget(body.refs)  # ordered and relayed: the frames are in the order now
            case Shares():
                self.reveals.take(seat, None, body.reveals)
                self.reveals.take_early()
            case Private():
                self.reveals.box_seen(seat, body.to)
                if body.to == me:  # sealed to another seat: nothing we can or may read
                    self.reveals.take(seat, me, Shares.from_wire(decode(opener.open(body.box))).reveals, signed.frame)
                    self.reveals.take_early()
            case dk.Opening():
                self.settlement.take_opening(seat, body)
            case RoundResult():
                self.settlement.take_result(seat, body, signed.frame)

    def apply_entries(self, received: Callable[[int], int]) -> None:
        """Apply the log's entries to the engine in order, as far as reveals and reshuffles let us.

        `received(seat)` is how many messages of `seat`'s chain we hold: an entry naming one of
        them that is no move is the orderer's fault; one naming a message still to come waits.
        """
        rules, orderer, log, names = self.rules, self.orderer, self.log, self.decks.ctx.players
        game = rules.game
        while log.entries and not self.port.stopped:
            if self.decks.reshuffling is not None or game.awaiting:
                return
            e = log.entries[0]
            if self.dealt and game.r is not None and game.r.ended:
                self.port.fault(f"order {e.index} comes after the entry that ended the round", orderer)
                return
            if e.kind == "deal":
                final = self.decks.final(0)
                if final is None:
                    return
                rules.deal(e.time, final)
                self.enter(Stage.PLAYING)
            elif e.kind == "tick":
                game.tick(e.time)
            else:
                moves = log.head_moves()
                if moves is None:
                    seat, seq = log.awaited()[0]
                    if received(seat) > seq:
                        self.port.fault(f"order {e.index} names a message of {names[seat]} that is no move", orderer)
                    return  # a referenced move has not reached us yet
                if (e.kind == "move" and len(moves) != 1) or (e.kind == "tie" and (
                        len(moves) < 2 or not all(rules.ties(m) for m in moves)
                        or len({m.player for m in moves}) != len(moves))):
                    self.port.fault(f"order {e.index}: a move entry names one move, a tie two claims or more", orderer)
                    return
                if not self._apply_moves(e, moves):
                    return
            log.applied()
            self.applied += 1
            self.reveals.after_change(hurry=e.kind != "deal")  # the deal's looks: checked first, as set-up

    def _apply_moves(self, e: Entry, moves: list[Move]) -> bool:
        """Apply a move (or tied claims); False while a reveal or a reshuffle must come first.

        Every peer takes the same path whatever faces it can see: the cards the move turns face
        up are revealed first, then the rules judge it with those faces known to all.
        """
        rules = self.rules
        game = rules.game
        first = moves[0]
        need: tuple[int, ...] = ()
        try:
            if game.clock < e.time:
                game.tick(e.time)
            first = rules.winner(moves)
            needs = game.needs(first)
            need = needs.faces
            self.reveals.grant_public(need)
            if any(game.faces.get(h) is None for h in need):
                return False
            # Asked again: faces granted just now may already be known, and show a wrong claim's penalty due.
            if game.needs(first).reshuffle:
                self.decks.start_reshuffle(*rules.reshuffle_deck())
                return False
            rules.apply(moves, e.time)
        except IllegalMove as exc:
            for h in need:
                game.know.show_all(h)  # turned face up before the rules refused the move: everyone saw it
            self.port.note("rejected", f"{first}: {exc}", game.players.index(first.player))
        return True

    def deck_final(self, deck_id: int, now: float) -> None:
        """A deck's last pass is verified at `now`: deal it (deck 0; the orderer orders the deal) or hand the engine
        its fresh Reserve."""
        final = self.decks.final(deck_id)
        assert final is not None
        if deck_id == 0:
            self.decks.place(list(range(len(final))), 0)
            if self.decks.me == self.orderer:
                self.order("deal", (), now)
        else:
            self.decks.place(self.rules.reshuffled(final), deck_id)
            self.reveals.after_change()
        self.reveals.take_early()

    def log_open(self) -> bool:
        """The orderer adds to the log only once its engine has applied all of it, and only while the round lasts."""
        game = self.rules.game
        return (self.stage is Stage.PLAYING and self.log.settled and game.r is not None
                and not game.r.ended and game.round_no == self.number)

    def order(self, kind: EntryKind, refs: Iterable[Ref], time: float) -> None:
        """As the orderer: stamp the log's next entry at `time` and send its order."""
        self.port.send("order", self.log.stamp(kind, refs, time).to_wire())

    def order_next(self, now: float) -> None:
        """As the orderer, at `now`: order what is due (a move, tied claims, or a tick once a deadline passed)."""
        if self.port.stopped or not self.log_open():
            return
        nxt = self.log.next_order(now)
        if nxt is not None:
            self.order(*nxt)
        elif self.log_open() and not self.log.inbox:
            # Every engine's clock moves only with the log: the orderer ticks it at each
            # moment the clock alone changes something (a turn opening, a window, a time-out).
            d = self.rules.game.wake_time()
            if d is not None and d < now:
                self.order("tick", (), max(now, ms_after(d)))  # strictly after the deadline, in whole ms

    def wakes(self) -> list[float]:
        """As the orderer: when there is something to order even if nothing arrives (a deadline, a tie window's end)."""
        times = []
        d = self.rules.game.wake_time()
        if d is not None:
            times.append(d + 1e-3)
        claims = self.log.claims_due()
        if claims is not None:
            times.append(claims)
        return times

    def settle(self) -> bool:
        """Once the engine has ended and scored the round: open, audit, compare results; True when all signed ours."""
        game = self.rules.game
        if self.stage is Stage.PLAYING:
            if game.round_no != self.number or game.r is None or not game.r.ended or game.awaiting or self.log.entries:
                return False
            self.reveals.prove()  # no result is signed on a share not proved
            if self.port.stopped:
                return False
            self.enter(Stage.SETTLING)
            self.settlement.open()
        if self.stage is not Stage.SETTLING or self.port.stopped or not self.settlement.advance(self.log_hash):
            return False
        self.enter(Stage.DONE)
        return True

    def owed(self, now: float, tolerance: float) -> tuple[set[int], tuple[int, ...]]:
        """The seats that hold up what we are waiting for, by what blocks first, and a count of that thing delivered.

        The count grows only when what those seats owe comes in: a seat that withholds it cannot
        keep its clock young by sending something else (moves, orders, extra boxes or shares).
        """
        owed = self.decks.owed()
        if owed:
            return owed, (1, *self.decks.progress())
        # A share of a card turned face up withheld stalls every seat that has not seen it, and every grant its
        # face decides (a private look among them): the root cause first.
        owed = self.reveals.public_owed()
        if owed:
            return owed, (7, self.reveals.publics_delivered())
        # A private look withheld stalls its recipient, and through it everyone.
        owed = self.reveals.boxes_owed()
        if owed:
            return owed, (2, self.reveals.boxes_delivered())
        missing_shares = self.reveals.shares_owed()
        log = self.log
        movers = {seat for seat, _ in log.awaited()}
        if movers:
            return movers, (3, self.applied)
        if log.entries or missing_shares:
            return missing_shares, (4, self.reveals.taken())
        game = self.rules.game
        live = game.r is not None and not game.r.ended and game.round_no == self.number
        # The orderer owes an order: of a move we hold (our log is applied, so its can be too), of a
        # deadline passed long ago, or of the deal.
        if (live and log.unordered()) or (not self.dealt) or (
                live and (wake := game.wake_time()) is not None and wake < now - tolerance):
            return {self.orderer}, (5, log.next_index)
        return self.settlement.owed(opened=self.stage >= Stage.SETTLING), \
            (6, len(self.settlement.openings), len(self.settlement.signed))


def new_round(cfg: TableConfig, number: int, me: int, seed: bytes | None, port: Port, rules: Rules, parts: Parts,
              log: Log, clock: Callable[[], float]) -> Round:
    """Round `number`'s parts for seat `me`: its secret drawn from `seed`, ordered by `log.orderer`, its deal
    stamped at the time `clock` reads.

    With no seed, a witness's (no seat, nothing sent): a placeholder secret, and a log that judges no stamp
    by when its order reached the recorder (who may have been away, or on a slow link: the seats there judged that).
    """
    ctx = dk.RoundContext(cfg.context, number, cfg.names)
    secret = dk.round_secret(ctx, 0, bytes(32)) if seed is None else dk.round_secret(ctx, me, seed)
    decks = Decks(ctx, secret, me, port, cfg.cards(), cfg.tags(), lambda deck_id: rs.deck_final(deck_id, clock()))
    reveals = parts.reveals(decks, rules.game, cfg.keys, port)
    if seed is None:
        log.back = math.inf
    rs = Round(number, port, log, decks, reveals, parts.settlement(decks, reveals, rules.game, port), rules)
    return rs


# What `Round.owed` found missing, by the first number of its mark (0: the table's `ready`).
OWED: Final = ("ready", "a key or shuffle pass", "a private box", "a move the log names",
               "decryption shares", "an order", "an opening or result", "a share of a card turned face up")


class Watchdog:
    """Blames whoever holds everything up, unchanged and with no progress, for longer than `timeout`."""

    def __init__(self, timeout: float) -> None:
        self.timeout = timeout
        self.owed: frozenset[int] = frozenset()  # the seats owed when we last looked
        self.mark: tuple[int, ...] = ()
        self.since: float | None = None  # when the current stall began
        # Whom the stall is blamed on instead of the seats owed, when the votes answer for them (waits.py).
        self.instead: frozenset[int] = frozenset()

    def watch(self, now: float, owed: frozenset[int], mark: tuple[int, ...],
              instead: frozenset[int] = frozenset()) -> list[int]:
        """The seats to blame now (sorted), or none while things move or the stall is young; `instead`, when
        not empty, is blamed in place of the seats owed."""
        self.instead = instead
        if not owed or owed != self.owed or mark != self.mark:
            self.owed, self.mark = owed, mark
            self.since = now if owed else None
            return []
        assert self.since is not None
        return sorted(instead or owed) if now - self.since > self.timeout else []

    def waited(self, now: float) -> list[int]:
        """The seats we have waited on for half the time-out or more: evidence of our own, beyond a report."""
        stalled = self.since is not None and now - self.since >= self.timeout / 2
        return sorted(self.instead or self.owed) if stalled else []
