"""One peer at a table, sans-IO: frames and clock readings in, frames to broadcast and notes out.

Every peer runs the same engine on the same ordered log. The round's dealer is its *orderer*:
it stamps every move with its clock and puts it in the log (`order` messages); everyone checks
the stamps against their own clock. Cards are handles of the mental-poker deck: a face reaches
an engine only through decryption shares the rules entitle it to (see protocol.md).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Callable, Collection, Iterable, Iterator
from dataclasses import dataclass, field

from ..crypto import deck as dk
from ..crypto.encoding import Value, decode, digest, encode
from ..crypto.sealing import Opener, seal_to
from ..crypto.envelope import ChainTracker, Outbox, Signed, parse
from ..crypto.identity import Identity
from ..errors import (
    BrokenChain,
    DeckFault,
    Equivocation,
    Gap,
    IllegalMove,
    LocalError,
    MalformedMessage,
    RemoteProtocolError,
    Replay,
)
from ..games.audit import check_round
from ..games.base import HiddenFace, Move, NeedReshuffle
from ..games.crescendo import CrescendoGame, CrescendoView
from ..games.crisp import CrispView
from .config import Game, TableConfig, parse_back
from .messages import BODIES, ORDER_KINDS, check_body, move_from_wire, move_to_wire

LOG_PERSON = b"p2pc/log/v1"
LOBBY_TYPES = frozenset({"table", "join", "seats"})
MAX_WHY = 200
TOLERANCE_S = 1.0  # how far an orderer's stamp may be from our own clock
TIMEOUT_S = 15.0  # how long a peer may owe a message before it is blamed


@dataclass(frozen=True, slots=True)
class Send:
    """A frame to broadcast to every other peer at the table."""

    frame: bytes


@dataclass(frozen=True, slots=True)
class Note:
    """Something a user or a log should hear of: `kind` is event, rejected, audit, fault, void, round or over."""

    kind: str
    detail: str
    blame: str | None = None


Output = Send | Note
Ref = tuple[int, int]  # (seat, seq) of a move message


@dataclass(frozen=True, slots=True)
class Entry:
    """One place in a round's log, as the orderer stamped it."""

    index: int
    time: float
    kind: str
    refs: tuple[Ref, ...]


@dataclass
class _Round:
    number: int
    ctx: dk.RoundContext
    secret: dk.RoundSecret
    anns: dict[int, dk.KeyAnnouncement] = field(default_factory=dict)
    keys: dk.RoundKeys | None = None
    book: dk.CardBook | None = None
    decks: dict[int, list[dk.EncryptedDeck]] = field(default_factory=dict)
    early_passes: dict[tuple[int, int], dk.EncryptedDeck] = field(default_factory=dict)
    passed: set[int] = field(default_factory=set)  # decks we have made our pass on
    final_at: float | None = None  # our clock when the frame completing deck 0 reached us (before verifying it)
    deck_cards: dict[int, tuple[tuple[str | int, ...], tuple[str, ...] | None]] = field(default_factory=dict)
    loc: dict[int, tuple[int, int]] = field(default_factory=dict)  # handle -> (deck, position)
    moves: dict[Ref, Move] = field(default_factory=dict)
    frames: dict[Ref, bytes] = field(default_factory=dict)  # each move's signed frame, relayed in its order
    arrived: dict[Ref, float] = field(default_factory=dict)
    inbox: list[Ref] = field(default_factory=list)  # orderer only: moves not yet ordered
    ordered: set[Ref] = field(default_factory=set)
    last_seq: dict[int, int] = field(default_factory=dict)  # the last move of each seat that was ordered
    own_unordered: set[Ref] = field(default_factory=set)
    boxes_due: dict[tuple[int, int], int] = field(default_factory=dict)  # (prover, recipient) -> private boxes owed
    boxes_seen: dict[tuple[int, int], int] = field(default_factory=dict)
    issued: int = 0  # orderer only: orders sent so far
    issued_time: float = 0.0
    entries: deque[Entry] = field(default_factory=deque)
    next_index: int = 0
    last_time: float = 0.0
    log_hash: bytes = bytes(32)
    granted_public: set[int] = field(default_factory=set)
    learning: set[int] = field(default_factory=set)  # granted to us (or public), face not yet combined
    granted_private: dict[int, set[int]] = field(default_factory=dict)
    shares: dict[tuple[int, int], dict[int, bytes]] = field(default_factory=dict)
    reveals: list[dk.Reveal] = field(default_factory=list)
    early_shares: list[tuple[int, dk.Reveal]] = field(default_factory=list)
    reshuffling: int | None = None  # deck id of a fresh shuffle in progress
    openings: dict[int, dk.Opening] = field(default_factory=dict)
    opened: bool = False
    result: dict[str, Value] | None = None
    results: dict[int, dict[str, Value]] = field(default_factory=dict)
    dealt: bool = False


class _Rounds(Collection[int]):
    """The rounds a chain tracker accepts: the lobby's, the current one and the next."""

    def __init__(self, peer: TablePeer) -> None:
        self.peer = peer

    def __contains__(self, r: object) -> bool:
        return isinstance(r, int) and 0 <= r <= self.peer.round + 1

    def __iter__(self) -> Iterator[int]:
        return iter(range(self.peer.round + 2))

    def __len__(self) -> int:
        return self.peer.round + 2


class TablePeer:
    """The table protocol for one seat: feed it frames and the time, broadcast what it returns."""

    def __init__(self, config: TableConfig, identity: Identity, draw_seed: Callable[[], bytes] = dk.draw_seed,
                 tolerance: float = TOLERANCE_S, timeout: float = TIMEOUT_S,
                 outbox: Outbox | None = None, tracker: ChainTracker | None = None) -> None:
        if identity.public not in config.keys:
            raise LocalError("this identity has no seat at the table")
        self.cfg = config
        self.identity = identity
        self.me = config.keys.index(identity.public)
        self.names = config.names
        self.n = config.seats
        self.seat_of = {name: i for i, name in enumerate(config.names)}
        self.draw_seed = draw_seed
        self.tolerance = tolerance
        self.timeout = timeout
        # A lobby hands over the chains it began; a table set up in advance starts them here.
        self.outbox = outbox or Outbox(identity, config.table)
        self.tracker = tracker or ChainTracker(config.table, config.keys, BODIES, check_body=check_body)
        self.tracker.rounds = _Rounds(self)
        self.game: Game = config.new_game()
        self.round = 0
        self.rs: _Round | None = None
        self.ready: set[int] = set()
        # Frames that came before the ones they follow, by (sender, seq): each is offered again
        # only when its sender's chain reaches it, so no signature is checked twice in vain.
        self.held: dict[tuple[bytes, int], bytes] = {}
        self.later: list[Signed] = []  # accepted messages of a round not begun yet
        self.stopped: str | None = None
        self.finished = False
        self.faults: list[Note] = []
        self.notes: list[Note] = []
        self._out: list[Output] = []
        self._own: list[Signed] = []
        self.now = 0.0
        self._opener = Opener(identity)
        self._owed_before: frozenset[int] = frozenset()
        self._mark_before: tuple[int, ...] = ()
        self._stalled_since: float | None = None

    # ------------------------------------------------------------ the interface

    def start(self, now: float) -> list[Output]:
        """Say we are ready to play at this table (agreeing on its exact config)."""
        self.now = now
        self._send(0, "ready", {"config": self.cfg.digest()})
        return self._flush()

    def receive(self, frame: bytes, now: float) -> list[Output]:
        """Take one frame from the network; never raises on what another peer sent."""
        self.now = max(self.now, now)
        if self.stopped is None:
            self._accept(frame)
            self._progress()
        return self._flush()

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
        game = self.game
        if self.stopped is not None or self.rs is None or not self.rs.dealt or game.r is None or game.r.ended:
            raise IllegalMove("the table is not playing a round")
        if move.player != self.names[self.me]:
            raise IllegalMove("a peer plays only its own seat's moves")
        if self.rs.entries:
            raise IllegalMove("the log is still being applied: wait for it")
        try:
            self.game.check(move)
        except (HiddenFace, NeedReshuffle):
            pass
        self._send(self.round, "move", {"m": move_to_wire(move, self.seat_of)})
        self._progress()
        return self._flush()

    def leave(self, now: float, why: str = "left") -> list[Output]:
        """Leave the table for good: the round in play is void and the table stops for everyone."""
        self.now = max(self.now, now)
        if self.stopped is None:
            self._send(self.round, "leave", {"why": why[:MAX_WHY]})
            self.stopped = f"we left: {why}"
            self._note("void", f"we left; round {self.round} is void")
        return self._flush()

    def busy(self) -> bool:
        """True while our engine is behind the log, a reveal we are owed is on its way, or our move awaits order."""
        rs = self.rs
        if rs is None or not rs.dealt or rs.entries or self.stopped:
            return True
        if rs.own_unordered:
            return True
        return bool(rs.learning)

    def view(self) -> CrispView | CrescendoView:
        """Our own player's view of the game (the only view a peer can compute)."""
        return self.game.view(self.names[self.me])

    def wake_time(self) -> float | None:
        """When this peer next wants `tick` even if nothing arrives."""
        times = [self.now + 0.5] if self.stopped is None and not self.finished else []
        rs = self.rs
        if rs is not None and self.me == self._orderer():
            d = self.game.wake_time()
            if d is not None:
                times.append(d + 1e-3)
            tie_s = getattr(self.game.options, "number_tie_ms", 0) / 1000
            claims = [rs.arrived[r] for r in rs.inbox if rs.moves[r].action == "number"]
            if claims:
                times.append(min(claims) + tie_s)
        # A moment already past (we wait on the log first) is asked for again a little later.
        return max(min(times), self.now + 0.01) if times else None

    # ------------------------------------------------------------ plumbing

    def _flush(self) -> list[Output]:
        # We apply our own messages like everyone else's, once the step that sent them is done.
        while self._own and self.stopped is None:
            self._handle(self._own.pop(0))
            self._progress()
        out, self._out = self._out, []
        return out

    def _send(self, rnd: int, mtype: str, body: dict[str, Value]) -> None:
        signed = self.outbox.seal(rnd, mtype, body)
        self._out.append(Send(signed.frame))
        self._own.append(signed)

    def _note(self, kind: str, detail: str, blame: int | None = None) -> None:
        note = Note(kind, detail, None if blame is None else self.names[blame])
        self.notes.append(note)
        self._out.append(note)

    def _fault(self, detail: str, blame: int | None) -> None:
        """A peer broke the protocol: the round is void and the table stops (protocol.md, Failures)."""
        note = Note("fault", detail, None if blame is None else self.names[blame])
        self.faults.append(note)
        self.notes.append(note)
        self._out.append(note)
        if self.stopped is None:
            self.stopped = detail
            self._note("void", f"round {self.round} is void; the table stops")
            # Tell the others: a fault one peer sees (a share withheld from it) must stop every peer.
            self._send(self.round, "fault", {"blame": blame, "why": detail[:MAX_WHY]})

    def _deck_fault(self, exc: DeckFault, fallback: int | None) -> None:
        """A proof, pass or point that failed: blame the seat the deck names (its prover or passer)."""
        seat = exc.seat if isinstance(exc.seat, int) and 0 <= exc.seat < self.n else fallback
        self._fault(f"{type(exc).__name__}: {exc}", seat)

    def _orderer(self) -> int:
        return self.game.dealer_of(max(self.round, 1))

    def _accept(self, frame: bytes) -> None:
        try:
            signed = self.tracker.accept(frame)
        except BrokenChain as exc:
            self._fault(str(exc), self._seat_of_blame(exc))
            return
        except Gap:
            self._hold(frame)
            return
        except Replay:
            return
        except Equivocation as exc:
            self._fault(str(exc), self._seat_of_blame(exc))
            return
        except RemoteProtocolError as exc:
            self._note("rejected", f"message dropped: {exc}", self._seat_of_blame(exc))
            return
        self._handle(signed)
        self._retry_held()

    def _hold(self, frame: bytes) -> None:
        env = parse(frame).envelope  # it parsed (and its signature verified) before the tracker found the gap
        place = (env.sender, env.seq)
        other = self.held.get(place)
        if env.sender not in self.cfg.keys:
            return  # followed since the lobby, never seated: nothing of it is ours to take
        if other is not None and other != frame:
            self._fault(f"two different signed messages at seq {env.seq} from {env.sender.hex()}",
                        self.cfg.keys.index(env.sender))
        elif len(self.held) < 10_000:
            self.held[place] = frame

    def _retry_held(self) -> None:
        progress = True
        while progress and self.held:
            progress = False
            for place in sorted(self.held, key=lambda p: p[1]):
                sender, seq = place
                if seq > self.tracker.head(sender)[0]:
                    continue
                frame = self.held.pop(place)  # its turn, or a place filled meanwhile (a replay or a rival)
                try:
                    signed = self.tracker.accept(frame)
                except (BrokenChain, Equivocation) as exc:
                    self._fault(str(exc), self._seat_of_blame(exc))
                    return
                except RemoteProtocolError:
                    continue  # a replay of what we took meanwhile
                self._handle(signed)
                if self.stopped is not None:
                    return
                progress = True

    def _seat_of_blame(self, exc: RemoteProtocolError) -> int | None:
        if exc.blame is None:
            return None
        try:
            return self.cfg.keys.index(bytes.fromhex(exc.blame))
        except ValueError:
            return self.names.index(exc.blame) if exc.blame in self.names else None

    def _handle(self, signed: Signed) -> None:
        env = signed.envelope
        if env.sender not in self.cfg.keys:
            self._note("rejected", "message dropped: its sender has no seat at this table")
            return
        seat = self.cfg.keys.index(env.sender)
        if env.type in LOBBY_TYPES:
            return  # the lobby's messages, seen again at the table: already taken by the lobby
        if env.round > self.round and env.type not in ("ready", "fault"):
            self.later.append(signed)
            return
        try:
            self._dispatch(seat, signed)
        except MalformedMessage as exc:
            self._fault(f"malformed {env.type} from {self.names[seat]}: {exc}", seat)
        except DeckFault as exc:
            self._deck_fault(exc, seat)
        except (LocalError, ValueError, KeyError, IndexError, TypeError) as exc:
            # Whatever a signed message makes us trip over is its sender's doing: never crash on it.
            self._fault(f"{env.type} from {self.names[seat]} cannot be applied: {exc!r}", seat)

    def _dispatch(self, seat: int, signed: Signed) -> None:
        env = signed.envelope
        body = env.body
        if env.type == "ready":
            if env.round != 0 or body["config"] != self.cfg.digest():
                raise MalformedMessage("agreed to another table config")
            self.ready.add(seat)
            if len(self.ready) == self.n and self.round == 0:
                self._begin_round(1)
            return
        if env.type == "fault":  # whatever its round: a peer that stopped tells everyone
            blame, why = body["blame"], body["why"]
            if not (blame is None or (type(blame) is int and 0 <= blame < self.n)) or not isinstance(why, str):
                raise MalformedMessage("bad fault report")
            # The report is its sender's word. A wait of our own that has lasted is evidence we hold;
            # a wait of a moment is only traffic in flight.
            stalled = self._stalled_since is not None and self.now - self._stalled_since >= self.timeout / 2
            waiting = sorted(self._owed_before) if stalled else []
            if waiting:
                self._fault(f"{self.names[seat]} stopped the table ({why[:MAX_WHY]}); we were waiting on "
                            f"{', '.join(self.names[s] for s in waiting)}", waiting[0])
            else:
                self._fault(f"{self.names[seat]} stopped the table: {why[:MAX_WHY]}", blame)
            return
        rs = self.rs
        if rs is not None and env.round < self.round and env.type == "move":
            self._note("rejected", f"a move of round {env.round} came after its end", seat)
            return
        if rs is None or env.round != self.round:
            raise MalformedMessage(f"{env.type} for round {env.round} during round {self.round}")
        if env.type == "key":
            ann = dk.KeyAnnouncement.from_wire(dict(body))
            if ann.seat != seat or seat in rs.anns:
                raise MalformedMessage("a key for another seat, or a second key")
            dk.verify_announcement(rs.ctx, ann)
            rs.anns[seat] = ann
            if len(rs.anns) == self.n:
                self._keys_complete(rs)
        elif env.type == "pass":
            new = dk.EncryptedDeck.from_wire(dict(body))
            if new.stage != seat + 1:
                raise MalformedMessage("a pass for another seat's stage")
            rs.early_passes[(new.deck, new.stage)] = new
            self._take_passes(rs)
        elif env.type == "move":
            move = move_from_wire(body["m"], self.names[seat], self.names)
            ref = (seat, env.seq)
            rs.moves[ref] = move
            rs.frames[ref] = signed.frame
            if seat == self.me:
                rs.own_unordered.add(ref)
            rs.arrived[ref] = self.now
            if self.me == self._orderer():
                rs.inbox.append(ref)
        elif env.type == "order":
            if seat != self._orderer():
                raise MalformedMessage("only the round's orderer orders the log")
            self._take_order(rs, signed)
        elif env.type in ("shares", "private"):
            recipient: int | None = None
            if env.type == "private":
                to, box = body["to"], body["box"]
                if type(to) is not int or not 0 <= to < self.n or to == seat or not isinstance(box, bytes):
                    raise MalformedMessage("a private message names another seat and carries a box")
                # Everyone sees every box go by: who owes whom a private look is public knowledge.
                rs.boxes_seen[(seat, to)] = rs.boxes_seen.get((seat, to), 0) + 1
                if to != self.me:
                    return  # sealed to another seat: nothing we can or may read
                recipient = to
                opened = decode(self._opener.open(box))
                if not isinstance(opened, dict) or set(opened) != {"reveals"}:
                    raise MalformedMessage("a private box holds a map of reveals")
                body = opened
            reveals = body["reveals"]
            if not isinstance(reveals, list) or not reveals:
                raise MalformedMessage("shares carry a list of reveals")
            for v in reveals:
                rv = dk.Reveal.from_wire(v)
                if rv.prover != seat or rv.recipient != recipient:
                    raise MalformedMessage("shares proved for another seat, or for another recipient")
                rs.early_shares.append((seat, rv))
            self._take_shares(rs)
        elif env.type == "open":
            op = dk.Opening.from_wire(dict(body))
            if op.seat != seat or seat in rs.openings:
                raise MalformedMessage("an opening for another seat, or a second one")
            rs.openings[seat] = op
        elif env.type == "result":
            if seat in rs.results:
                raise MalformedMessage("a second result for one round")
            rs.results[seat] = dict(body)
        elif env.type == "leave":
            why = body["why"]
            reason = why[:MAX_WHY] if isinstance(why, str) else ""
            self._fault(f"{self.names[seat]} left the table ({reason})", seat)

    # ------------------------------------------------------------ rounds, keys and shuffles

    def _begin_round(self, number: int) -> None:
        self.round = number
        ctx = dk.RoundContext(self.cfg.table, number, self.names)
        secret = dk.round_secret(ctx, self.me, self.draw_seed())
        self.rs = _Round(number, ctx, secret)
        self._note("round", f"round {number} begins")
        self._send(number, "key", dk.announce(ctx, secret).to_wire())
        later, self.later = self.later, []
        for signed in later:
            self._handle(signed)

    def _keys_complete(self, rs: _Round) -> None:
        rs.keys = dk.round_keys(rs.ctx, [rs.anns[s] for s in range(self.n)])
        cards, tags = self.cfg.cards(), self.cfg.tags()
        rs.book = dk.card_book(rs.ctx, cards)
        self._start_deck(rs, 0, cards, tags)

    def _start_deck(self, rs: _Round, deck_id: int, cards: tuple[str | int, ...], tags: tuple[str, ...] | None) -> None:
        assert rs.keys is not None and rs.book is not None
        rs.deck_cards[deck_id] = (cards, tags)
        rs.decks[deck_id] = [dk.initial_deck(rs.ctx, rs.keys, rs.book, cards, tags, deck_id)]
        self._take_passes(rs)

    def _take_passes(self, rs: _Round) -> None:
        """Verify passes in seat order as they become checkable; make ours when it is our stage."""
        progress = True
        while progress:
            progress = False
            for deck_id, chain in rs.decks.items():
                stage = len(chain) - 1
                if stage == self.n:
                    continue
                if stage == self.me and deck_id not in rs.passed:
                    rs.passed.add(deck_id)
                    assert rs.keys is not None
                    mine = dk.shuffle_pass(rs.ctx, rs.keys, rs.secret, chain[-1])
                    self._send(rs.number, "pass", mine.to_wire())
                new = rs.early_passes.pop((deck_id, stage + 1), None)
                if new is None:
                    continue
                assert rs.keys is not None
                try:
                    dk.verify_pass(rs.ctx, rs.keys, chain[-1], new)
                except DeckFault as exc:
                    self._deck_fault(exc, stage)
                    return
                chain.append(new)
                progress = True
                if len(chain) - 1 == self.n:
                    self._deck_final(rs, deck_id)

    def _deck_final(self, rs: _Round, deck_id: int) -> None:
        final = rs.decks[deck_id][-1]
        if deck_id == 0:
            rs.final_at = self.now
            for pos in range(len(final)):
                rs.loc[pos] = (0, pos)
            if self.me == self._orderer():
                self._order(rs, "deal", ())
        else:
            assert isinstance(self.game, CrescendoGame) and final.tags is not None
            fresh = self.game.reshuffle([parse_back(t) for t in final.tags])
            for pos, h in enumerate(fresh):
                rs.loc[h] = (deck_id, pos)
            rs.reshuffling = None
            self._after_change(rs)
        self._take_shares(rs)

    # ------------------------------------------------------------ the log

    def _order(self, rs: _Round, kind: str, refs: Iterable[Ref], time: float | None = None) -> None:
        t = max(self.now if time is None else time, rs.issued_time)
        t = math.ceil(t * 1000) / 1000
        refs = list(refs)
        # The order carries the moves' own signed frames: every peer holds exactly what was ordered,
        # and a mover who signed two versions of one move is caught by whoever holds the other.
        body: dict[str, Value] = {"i": rs.issued, "t": int(round(t * 1000)), "k": kind,
                                  "refs": [[s, q] for s, q in refs], "frames": [rs.frames[r] for r in refs],
                                  "why": ""}
        rs.issued += 1
        rs.issued_time = t
        self._send(rs.number, "order", body)

    def _take_order(self, rs: _Round, signed: Signed) -> None:
        body = signed.envelope.body
        i, t_ms, kind, refs = body["i"], body["t"], body["k"], body["refs"]
        if type(i) is not int or type(t_ms) is not int or kind not in ORDER_KINDS or not isinstance(refs, list):
            raise MalformedMessage("bad order")
        if i != rs.next_index:
            raise MalformedMessage(f"order {i} where {rs.next_index} is due")
        t = t_ms / 1000
        if t < rs.last_time:
            raise MalformedMessage("an order stamped before the one it follows")
        if t > self.now + self.tolerance:
            raise MalformedMessage(f"an order stamped {t:.3f} s when our clock reads {self.now:.3f} s")
        # The deal follows the last pass, whose proof we may have spent a while checking: judge it from that pass's arrival.
        since = self.now if kind != "deal" or rs.final_at is None else min(self.now, rs.final_at)
        if kind not in ("move", "tie") and t < since - self.tolerance:
            raise MalformedMessage(f"a {kind} stamped {t:.3f} s, long before our clock's {self.now:.3f} s")
        if (kind == "deal") != (i == 0) or (kind in ("move", "tie")) != bool(refs) or len(refs) > self.n:
            raise MalformedMessage("the deal comes first and once; moves and ties name their moves")
        parsed: list[Ref] = []
        for ref in refs:
            if not (isinstance(ref, list) and len(ref) == 2 and all(type(x) is int for x in ref)):
                raise MalformedMessage("bad order reference")
            seat_ref, seq_ref = ref
            assert isinstance(seat_ref, int) and isinstance(seq_ref, int)
            if not 0 <= seat_ref < self.n or (seat_ref, seq_ref) in rs.ordered or (seat_ref, seq_ref) in parsed:
                raise MalformedMessage("an order names no seat, or a move already ordered")
            if seq_ref <= rs.last_seq.get(seat_ref, -1):
                raise MalformedMessage("an order puts a player's moves out of the order they were sent in")
            rs.last_seq[seat_ref] = seq_ref
            parsed.append((seat_ref, seq_ref))
        frames = body["frames"]
        if not isinstance(frames, list) or len(frames) != len(parsed) or not all(isinstance(f, bytes) for f in frames):
            raise MalformedMessage("an order carries the frame of each move it names")
        tie_s = getattr(self.game.options, "number_tie_ms", 0) / 1000 if kind == "tie" else 0.0
        for ref in parsed:
            seen = rs.arrived.get(ref)
            # The orderer stamps a move when it arrived (a tie: when its first claim did), and never
            # before the entry it follows; we saw the same broadcast about then.
            if seen is not None and not seen - self.tolerance - tie_s <= t <= max(seen, rs.last_time) + self.tolerance:
                raise MalformedMessage(f"move {ref} stamped {t:.3f} s; it reached us at {seen:.3f} s")
        rs.next_index += 1
        rs.last_time = t
        rs.ordered.update(parsed)
        rs.own_unordered.difference_update(parsed)
        rs.log_hash = digest(LOG_PERSON, rs.log_hash + signed.hash)
        rs.entries.append(Entry(i, t, str(kind), tuple(parsed)))
        for ref, frame in zip(parsed, frames):
            assert isinstance(frame, bytes)
            self._take_relayed(rs, ref, frame)

    def _take_relayed(self, rs: _Round, ref: Ref, frame: bytes) -> None:
        """A move frame the orderer relayed: it must be the move named, signed by its player."""
        orderer = self._orderer()
        try:
            env = parse(frame).envelope
        except MalformedMessage:
            env = None
        if env is None or env.type != "move" or env.sender != self.cfg.keys[ref[0]] or env.seq != ref[1]:
            self._fault(f"order names {ref} but relays another message", orderer)
            return
        if ref[0] == self.me:
            if rs.frames.get(ref) != frame:
                self._fault("the orderer relayed a move of ours that we never sent", orderer)
            return
        if rs.frames.get(ref) == frame:
            return  # the very frame we took directly: its signature was checked then
        try:
            signed = self.tracker.accept(frame)
        except Replay:
            return  # we have it already, byte for byte
        except Equivocation as exc:
            self._fault(str(exc), ref[0])
            return
        except Gap:
            self._hold(frame)
            return
        except RemoteProtocolError as exc:
            self._fault(f"the orderer relayed a bad frame: {exc}", orderer)
            return
        self._handle(signed)

    def _progress(self) -> None:
        """Do everything that has become possible, in order."""
        rs = self.rs
        if rs is None or self.stopped is not None:
            return
        self._take_shares(rs)
        self._apply_entries(rs)
        if self.me == self._orderer() and self.stopped is None and self._log_open(rs):
            self._order_inbox(rs)
            if self._log_open(rs) and not rs.inbox:
                # Every engine's clock moves only with the log: the orderer ticks it at each
                # moment the clock alone changes something (a turn opening, a window, a time-out).
                d = self.game.wake_time()
                if d is not None and d < self.now:
                    # Stamped strictly after the deadline, in whole milliseconds.
                    self._order(rs, "tick", (), max(self.now, (math.floor(d * 1000) + 1) / 1000))
        self._round_end(rs)

    def _log_open(self, rs: _Round) -> bool:
        """The orderer adds to the log only once its engine has applied all of it, and only while the round lasts."""
        game = self.game
        return (rs.dealt and not rs.entries and rs.issued == rs.next_index and game.r is not None
                and not game.r.ended and game.round_no == rs.number)

    def _order_inbox(self, rs: _Round) -> None:
        tie_s = getattr(self.game.options, "number_tie_ms", 0) / 1000
        if rs.inbox and rs.dealt:
            ref = rs.inbox[0]
            move = rs.moves[ref]
            t0 = rs.arrived[ref]
            if move.action == "number":
                if self.now < t0 + tie_s:
                    return  # wait for claims that tie with this one
                claims = []
                for r in rs.inbox:  # the claims at the head of the inbox: never one behind another move
                    if rs.moves[r].action != "number" or rs.arrived[r] > t0 + tie_s:
                        break
                    claims.append(r)
                players = {rs.moves[r].player for r in claims}
                if len(claims) > 1 and len(players) == len(claims):
                    for r in claims:
                        rs.inbox.remove(r)
                    self._order(rs, "tie", claims, t0)
                    return
            rs.inbox.pop(0)
            self._order(rs, "move", [ref], t0)

    def _apply_entries(self, rs: _Round) -> None:
        game = self.game
        while rs.entries and self.stopped is None:
            if rs.reshuffling is not None or game.awaiting:
                return
            e = rs.entries[0]
            if rs.dealt and game.r is not None and game.r.ended:
                self._fault(f"order {e.index} comes after the entry that ended the round", self._orderer())
                return
            if e.kind == "deal":
                if len(rs.decks.get(0, ())) != self.n + 1:
                    return
                backs = None
                if isinstance(game, CrescendoGame):
                    tags = rs.decks[0][-1].tags
                    assert tags is not None
                    backs = {k: parse_back(tag) for k, tag in enumerate(tags)}
                    game.deal({}, e.time, backs)
                else:
                    game.deal({}, e.time)
                rs.dealt = True
            elif e.kind == "tick":
                game.tick(e.time)
            elif e.kind in ("move", "tie"):
                for seat, seq in e.refs:
                    if (seat, seq) in rs.moves:
                        continue
                    if self._received(seat) > seq:
                        self._fault(f"order {e.index} names a message of {self.names[seat]} that is no move",
                                    self._orderer())
                    return  # a referenced move has not reached us yet
                moves = [rs.moves[ref] for ref in e.refs]
                if (e.kind == "move" and len(moves) != 1) or (e.kind == "tie" and (
                        len(moves) < 2 or any(m.action != "number" for m in moves)
                        or len({m.player for m in moves}) != len(moves))):
                    self._fault(f"order {e.index}: a move entry names one move, a tie two claims or more",
                                self._orderer())
                    return
                if not self._apply_moves(rs, e, moves):
                    return
            rs.entries.popleft()
            self._after_change(rs)

    def _apply_moves(self, rs: _Round, e: Entry, moves: list[Move]) -> bool:
        """Apply a move (or tied claims); False while a reveal or a reshuffle must come first.

        Every peer takes the same path whatever faces it can see: the cards the move turns face
        up are revealed first, then the rules judge it with those faces known to all.
        """
        game = self.game
        first = moves[0]
        need: list[int] = []
        try:
            if game.clock < e.time:
                game.tick(e.time)
            if e.kind == "tie":
                assert isinstance(game, CrescendoGame)
                first = game.tie_winner([(m.player, m.pos if m.pos is not None else -1) for m in moves])
            need = game.public_before(first)
            self._grant_public(rs, need)
            if any(game.faces.get(h) is None for h in need):
                return False
            if e.kind == "tie":
                assert isinstance(game, CrescendoGame)
                game.number_tie([(m.player, m.pos if m.pos is not None else -1) for m in moves], now=e.time)
            else:
                game.apply(first, now=e.time)
        except NeedReshuffle:
            self._start_reshuffle(rs)
            return False
        except IllegalMove as exc:
            for h in need:
                game.know.show_all(h)  # turned face up before the rules refused the move: everyone saw it
            self._note("rejected", f"{first}: {exc}", self.seat_of[first.player])
        return True

    def _received(self, seat: int) -> int:
        """How many messages of `seat`'s chain we have taken (ours: how many we sent)."""
        if seat == self.me:
            return self.outbox.next_seq
        return self.tracker.head(self.cfg.keys[seat])[0]

    def _start_reshuffle(self, rs: _Round) -> None:
        assert isinstance(self.game, CrescendoGame)
        if rs.reshuffling is not None:
            return
        handles = self.game.reshuffle_cards()
        faces = [self.game.faces.need(h) for h in handles]  # all face up on the discard pile
        deck_id = max(rs.decks) + 1
        rs.reshuffling = deck_id
        self._start_deck(rs, deck_id, tuple(faces), tuple(str(self.game.backs[h]) for h in handles))

    # ------------------------------------------------------------ reveals

    def _after_change(self, rs: _Round) -> None:
        """After the engine moved on: grant every reveal its knowledge now entitles, and learn what we can."""
        game = self.game
        know = game.know
        self._grant_public(rs, [h for h in know.public if h not in rs.granted_public])
        for seat in range(self.n):
            granted = rs.granted_private.setdefault(seat, set())
            new = [h for h in know.seen[seat] if h not in granted and h not in know.public]
            if not new:
                continue
            granted.update(new)
            for prover in range(self.n):
                if prover != seat:
                    rs.boxes_due[(prover, seat)] = rs.boxes_due.get((prover, seat), 0) + 1
            if seat != self.me:
                self._send_shares(rs, new, seat)
            else:
                rs.learning.update(new)
        self._learn(rs)

    def _grant_public(self, rs: _Round, handles: Iterable[int]) -> None:
        new = [h for h in handles if h not in rs.granted_public]
        if not new:
            return
        rs.granted_public.update(new)
        rs.learning.update(new)
        self._send_shares(rs, new, None)
        self._learn(rs)

    def _send_shares(self, rs: _Round, handles: list[int], recipient: int | None) -> None:
        reveals: list[Value] = [rv.to_wire() for rv in self._make_reveals(rs, handles, recipient)]
        if recipient is None:
            self._send(rs.number, "shares", {"reveals": reveals})
        else:
            # Sealed: a share is the same value for every recipient (see crypto/sealing.py).
            box = seal_to(self.cfg.keys[recipient], encode({"reveals": reveals}))
            self._send(rs.number, "private", {"to": recipient, "box": box})

    def _make_reveals(self, rs: _Round, handles: list[int], recipient: int | None) -> list[dk.Reveal]:
        """Our shares of `handles` for `recipient` (None: everyone), one reveal per deck."""
        assert rs.keys is not None
        by_deck: dict[int, list[int]] = {}
        for h in sorted(handles):
            d, pos = rs.loc[h]
            by_deck.setdefault(d, []).append(pos)
        return [dk.make_reveal(rs.ctx, rs.keys, rs.secret, rs.decks[d][-1], positions, recipient)
                for d, positions in by_deck.items()]

    def _take_shares(self, rs: _Round) -> None:
        if rs.keys is None:
            return
        waiting: list[tuple[int, dk.Reveal]] = []
        for seat, rv in rs.early_shares:
            chain = rs.decks.get(rv.deck)
            if chain is None or len(chain) != self.n + 1:
                waiting.append((seat, rv))
                continue
            try:
                dk.verify_reveal(rs.ctx, rs.keys, chain[-1], rv, prover=seat, recipient=rv.recipient,
                                 positions=rv.positions)
            except DeckFault as exc:
                self._deck_fault(exc, seat)
                return
            rs.reveals.append(rv)
            for pos, d in zip(rv.positions, rv.shares):
                rs.shares.setdefault((rv.deck, pos), {})[seat] = d
        rs.early_shares = waiting
        self._learn(rs)

    def _learn(self, rs: _Round) -> None:
        """Decrypt every card we are entitled to and hold every other seat's share of."""
        if rs.book is None:
            return
        game = self.game
        learned = False
        for h in list(rs.learning):
            if game.faces.get(h) is not None:
                rs.learning.discard(h)
                continue
            d, pos = rs.loc[h]
            got = rs.shares.get((d, pos), {})
            if len(got) + (self.me not in got) < self.n:
                continue
            final = rs.decks[d][-1]
            shares = [got[s] if s != self.me else dk.own_share(rs.secret, final, pos) for s in range(self.n)]
            try:
                face = dk.combine(rs.ctx, rs.book, final, pos, shares)
            except DeckFault as exc:
                self._fault(f"{exc} (the audit will name the seat)", None)
                return
            game.learn(h, face)  # type: ignore[arg-type]
            rs.learning.discard(h)
            learned = True
        if learned and game.awaiting and all(game.faces.get(h) is not None for h in game.awaiting):
            for note in game.finish_round():
                self._note("event", str(note))

    # ------------------------------------------------------------ the end of a round

    def _round_end(self, rs: _Round) -> None:
        game = self.game
        if not rs.dealt or game.round_no != rs.number or game.r is None or not game.r.ended:
            return
        if game.awaiting or rs.entries:
            return
        if not rs.opened:
            rs.opened = True
            self._send(rs.number, "open", dk.open_commitment(rs.secret).to_wire())
        if rs.result is None and len(rs.openings) == self.n:
            rs.result = self._audit(rs)
            self._send(rs.number, "result", rs.result)
        if rs.result is None or len(rs.results) < self.n or self.stopped is not None:
            return
        for seat, res in rs.results.items():
            if res != rs.result:
                self._fault(f"{self.names[seat]} signed another result for round {rs.number}", seat)
                return
        if rs.result["audit"] != "verified":
            blame = rs.result["blame"]
            assert blame is None or isinstance(blame, int)
            self._fault(f"round {rs.number} audit found a {rs.result['audit']!s} fault", blame)
            return
        self._note("round", f"round {rs.number} verified and signed by all: {rs.result['scores']!s}")
        if game.over:
            self.finished = True
            self._note("over", "winners: " + ", ".join(self.names[w] for w in game.winners))
            return
        self._begin_round(rs.number + 1)

    def _audit(self, rs: _Round) -> dict[str, Value]:
        """Replay the round's crypto from every opening, then its rules with every face known."""
        game = self.game
        assert rs.book is not None
        records = [dk.DeckRecord(d, rs.deck_cards[d][0], rs.deck_cards[d][1], tuple(chain[1:]))
                   for d, chain in sorted(rs.decks.items())]
        report = dk.audit(rs.ctx, [rs.anns[s] for s in range(self.n)], [rs.openings[s] for s in range(self.n)],
                          rs.book, records, rs.reveals)
        blame: int | None = None
        verdict, at = "verified", None
        if report.fault is None:
            faces = {h: report.faces[d][pos] for h, (d, pos) in rs.loc.items() if d in report.faces}
            fault = check_round(game, faces)
            if fault is not None:
                blame, verdict, at = self.seat_of[fault.player], "rules", fault.index
                self._note("audit", f"round {rs.number}: illegal move {fault}", blame)
        else:
            blame, verdict = report.fault.seat, report.fault.kind
            self._note("audit", f"round {rs.number}: {report}", blame)
        totals: list[Value] = list(game.totals)
        scores: list[Value] = list(game.results[-1].scores) if game.results else []
        # Only what every honest peer computes alike: no free text another implementation could word otherwise.
        return {"round": rs.number, "scores": scores, "totals": totals, "over": game.over,
                "log": rs.log_hash, "audit": verdict, "at": at, "blame": blame}

    # ------------------------------------------------------------ time-outs

    def _owed(self) -> frozenset[int]:
        """The other seats that hold up what we are waiting for, by what blocks first."""
        rs = self.rs
        if rs is None:
            owed = {s for s in range(self.n) if s not in self.ready}
        else:
            owed = self._owed_in_round(rs)
        owed.discard(self.me)
        return frozenset(owed)

    def _owed_in_round(self, rs: _Round) -> set[int]:
        if len(rs.anns) < self.n:
            return {s for s in range(self.n) if s not in rs.anns}
        passes = {len(chain) - 1 for chain in rs.decks.values() if len(chain) - 1 < self.n}
        if passes:
            return passes
        # A private look withheld stalls its recipient, and through it everyone: the root cause first.
        boxes = {prover for (prover, to), due in rs.boxes_due.items()
                 if rs.boxes_seen.get((prover, to), 0) < due and prover != self.me}
        if boxes:
            return boxes
        missing_shares: set[int] = set()
        for h in rs.learning:
            got = rs.shares.get(rs.loc[h], {})
            missing_shares |= {s for s in range(self.n) if s not in got}
        if rs.entries:
            first = rs.entries[0]
            movers = {seat for seat, seq in first.refs if (seat, seq) not in rs.moves}
            return movers or missing_shares
        if missing_shares:
            return missing_shares
        game = self.game
        live = game.r is not None and not game.r.ended and game.round_no == rs.number
        if live and any(ref not in rs.ordered for ref in rs.moves):
            return {self._orderer()}  # our log is applied, so the orderer's can be too: it owes an order
        wake = game.wake_time() if live else None
        if wake is not None and wake < self.now - self.tolerance:
            return {self._orderer()}  # a deadline passed long ago and the orderer has not ticked it
        if not rs.dealt:
            return {self._orderer()}
        if rs.opened and len(rs.openings) < self.n:
            return {s for s in range(self.n) if s not in rs.openings}
        if rs.result is not None and len(rs.results) < self.n:
            return {s for s in range(self.n) if s not in rs.results}
        return set()

    def _progress_mark(self) -> tuple[int, ...]:
        rs = self.rs
        if rs is None:
            return (len(self.ready),)
        return (len(rs.anns), sum(len(c) for c in rs.decks.values()), rs.next_index, len(rs.entries),
                len(rs.reveals), len(rs.moves), len(rs.openings), len(rs.results))

    def _watch(self) -> None:
        """Blame whoever holds everything up for longer than the time-out."""
        if self.finished:
            return
        owed = self._owed()
        mark = self._progress_mark()
        if not owed or owed != self._owed_before or mark != self._mark_before:
            self._owed_before, self._mark_before = owed, mark
            self._stalled_since = self.now if owed else None
            return
        assert self._stalled_since is not None
        if self.now - self._stalled_since > self.timeout:
            late = sorted(owed)
            self._fault(f"{', '.join(self.names[s] for s in late)} sent nothing owed for {self.timeout:g} s", late[0])
