"""Independent models for the property tests: card positions and knowledge, rebuilt from the
public events and the rules (docs/rules.md), never from the engine's own bookkeeping.

A model is synced after every step (a move or a wait).  It reads only
- the deck of each round (the engine's faces of handles 0..N-1, i.e. the deck as dealt),
- the events the engine published since the last sync,
and replays the card movements and who saw what by the rulebook.  Then it compares:
- every card position (property 1: nothing lost or duplicated, and each card where it belongs),
- every player's view against the model's knowledge (property 2, exactly: a face is shown
  iff the model says the player has seen it),
- each finished round's scores and the running totals (property 3).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from p2pcards.cards import CRESCENDO_DECK, CRISP_DECK, crescendo_back, crisp_value, is_joker
from p2pcards.games.crescendo import CrescendoGame
from p2pcards.games.crisp import CrispGame

SLOT = {"left": 0, "middle": 1, "right": 2}


class ModelError(AssertionError):
    """The engine disagrees with the model."""


def expect(cond: bool, msg: str) -> None:
    if not cond:
        raise ModelError(msg)


def face_multiset_ok(faces: list[Any], deck: tuple[Any, ...], what: str) -> None:
    """Property 1, engine side: every card of the deck exactly once."""
    c = Counter(faces)
    dup = sorted((str(f) for f, k in c.items() if k > 1))
    missing = sorted(str(f) for f in set(deck) - set(c))
    extra = sorted(str(f) for f in set(c) - set(deck))
    expect(not dup and not missing and not extra and len(faces) == len(deck),
           f"{what}: cards lost or duplicated: duplicated={dup} missing={missing} extra={extra}")


# ====================================================================== Crisp


class CrispModel:
    def __init__(self, game: CrispGame) -> None:
        self.n = game.n
        self.players = game.players
        self.opts = game.options
        self.first_dealer = game.first_dealer
        self.round = 0
        self.ended = True
        self.totals = [0] * self.n
        self.over = False
        self.winners: list[int] = []
        self.ev = 0
        self.rounds_checked = 0

    # ------------------------------------------------------------ replay

    def _deal(self, game: CrispGame) -> None:
        self.round += 1
        expect(game.round_no == self.round, f"engine is in round {game.round_no}, model deals round {self.round}")
        deck = [game.faces.known[h] for h in range(52)]
        expect(sorted(deck) == sorted(CRISP_DECK), "round deck is not the 52 cards")
        dealer = (self.first_dealer + self.round - 1) % self.n
        first = (dealer + 1) % self.n
        self.hands: list[list[str]] = [["", "", ""] for _ in range(self.n)]
        for k in range(3 * self.n):
            self.hands[(first + k) % self.n][k // self.n] = deck[k]
        self.pile = list(reversed(deck[3 * self.n:]))  # top at the end
        self.discard: list[str] = []
        self.drawn: str | None = None
        self.drawn_from: str | None = None
        self.turn = first
        self.caller: int | None = None
        self.ended_turns: list[int] = []  # the seat of each turn of the round that has ended, in order
        self.last_kind = ""
        self.seen = [set() for _ in range(self.n)]
        self.public: set[str] = set()
        for s in range(self.n):
            self.seen[s].add(self.hands[s][0])  # the first look: left and right
            self.seen[s].add(self.hands[s][2])
        self.ended = False

    def _pop_pile(self) -> str:
        if not self.pile:
            # Turnover: the discard pile turned over as it lies, bottom card on top.
            expect(bool(self.discard), "a draw from an empty draw pile and an empty discard pile")
            self.pile = self.discard[::-1]  # both lists keep their top at the end
            self.discard = []
        return self.pile.pop()

    def _to_discard(self, f: str) -> None:
        self.discard.append(f)
        self.public.add(f)

    def _event(self, game: CrispGame, e: Any) -> None:
        k = e.kind
        if k in ("deal", "turnover", "window_closed", "game_over"):
            return
        if self.ended:
            self._deal(game)
        who = self.players.index(e.player) if e.player else None
        if k != "round_end":
            self.last_kind = k
        if k == "turn":
            self.ended_turns.append(self.turn)
            self.turn = who
        elif k == "draw":
            expect(who == self.turn and self.drawn is None, f"draw by {e.player} out of turn in the model")
            src = e.detail[0]
            if src == "discard":
                f = self.discard.pop()
            else:
                f = self._pop_pile()
                self.seen[who].add(f)
            self.drawn, self.drawn_from = f, src
        elif k == "replace":
            slot = SLOT[e.detail[0]]
            old = self.hands[who][slot]
            assert self.drawn is not None
            self.hands[who][slot] = self.drawn
            self.drawn = None
            self._to_discard(old)
            expect(e.detail[1] == old, f"replace event names {e.detail[1]}, model has {old}")
        elif k in ("discard", "jack", "queen", "king"):
            f = self.drawn
            expect(f is not None, f"{k} without a drawn card in the model")
            assert f is not None
            if k == "jack":
                expect(f[:-1] == "J", f"jack played with {f}")
                self.seen[who].add(self.hands[who][1])
            elif k == "queen":
                expect(f[:-1] == "Q", f"queen played with {f}")
                pos, other, tpos = SLOT[e.detail[0]], self.players.index(e.detail[1]), SLOT[e.detail[2]]
                mine, theirs = self.hands[who][pos], self.hands[other][tpos]
                self.hands[who][pos], self.hands[other][tpos] = theirs, mine
                if pos != 1:
                    self.seen[who].add(theirs)
                if tpos != 1:
                    self.seen[other].add(mine)
            elif k == "king":
                expect(f[:-1] == "K", f"king played with {f}")
            else:
                expect(f[:-1] != "K", f"a drawn King {f} was discarded")
            self.drawn = None
            self._to_discard(f)
        elif k == "timeout":
            pass
        elif k == "forfeit_draw":
            f = self._pop_pile()
            expect(e.detail[0] == f, f"forfeit_draw names {e.detail[0]}, model has {f}")
            self._to_discard(f)
        elif k == "forfeit_discard":
            f = self.drawn
            expect(f is not None and e.detail[0] == f, f"forfeit_discard names {e.detail[0]}, model has {f}")
            assert f is not None
            self.drawn = None
            self._to_discard(f)
        elif k == "crisp":
            expect(self.caller is None, "two crisp calls in one round")
            self.caller = who
        elif k == "round_end":
            self._round_end(game, e)
        else:
            raise ModelError(f"unknown Crisp event {e}")

    def _round_end(self, game: CrispGame, e: Any) -> None:
        expect(self.drawn is None, "round ended with a card in hand")
        if self.caller is not None:
            # After a call, late or not, the round ends once every other seat has ended exactly one turn
            # after the caller's, in order: at the call itself when those turns had all ended already.
            ended = self.ended_turns + ([] if self.last_kind == "crisp" else [self.turn])
            c = self.caller
            last = len(ended) - 1 - ended[::-1].index(c)
            want = [(c + k) % self.n for k in range(1, self.n)]
            expect(ended[last + 1:] == want, f"final turns {ended[last + 1:]} after {c}'s call, want {want}")
        for h in self.hands:
            self.public.update(h)
        sums = [sum(crisp_value(f) for f in h) for h in self.hands]
        scores = list(sums)
        if self.caller is not None:
            c = self.caller
            scores[c] += -5 if all(sums[c] < s for i, s in enumerate(sums) if i != c) else 5
        res = game.results[self.round - 1]
        expect(res.caller == self.caller, f"round {self.round}: caller {res.caller} != {self.caller}")
        expect(tuple(map(tuple, self.hands)) == res.hands, f"round {self.round}: hands {res.hands} != {self.hands}")
        expect(tuple(scores) == res.scores and tuple(scores) == tuple(e.detail),
               f"round {self.round}: scores {res.scores} != formula {scores} (hands {self.hands}, caller {self.caller})")
        for i, s in enumerate(scores):
            self.totals[i] += s
        self.rounds_checked += 1
        self.ended = True
        if max(self.totals) >= self.opts.limit:
            self.over = True
            best = min(self.totals)
            self.winners = [i for i, t in enumerate(self.totals) if t == best]

    # ------------------------------------------------------------ compare

    def sync(self, game: CrispGame) -> None:
        evs = game.events
        while self.ev < len(evs):
            self._event(game, evs[self.ev])
            self.ev += 1
        if self.ended and not game.over and game.round_no == self.round + 1:
            self._deal(game)
        expect(game.round_no == self.round, f"engine round {game.round_no}, model round {self.round}")
        expect(len(game.results) == self.rounds_checked, "a round ended without a round_end event")
        expect(list(game.totals) == self.totals, f"totals {game.totals} != model {self.totals}")
        expect(game.over == self.over, f"over={game.over}, but totals {self.totals} vs limit {self.opts.limit}")
        if self.over:
            expect(list(game.winners) == self.winners, f"winners {game.winners} != lowest totals {self.winners}")
        self.compare(game)

    def compare(self, game: CrispGame) -> None:
        r = game.r
        assert r is not None
        F = game.faces.known
        hands = [[F[h] for h in hand] for hand in r.hands]
        pile = [F[h] for h in r.draw_pile]
        discard = [F[h] for h in r.discard]
        drawn = F[r.drawn] if r.drawn is not None else None
        allf = [f for h in hands for f in h] + pile + discard + ([drawn] if drawn is not None else [])
        face_multiset_ok(allf, CRISP_DECK, f"Crisp round {self.round}")
        expect(hands == self.hands, f"hands {hands} != model {self.hands}")
        expect(pile == self.pile, "draw pile differs from the model")
        expect(discard == self.discard, f"discard {discard} != model {self.discard}")
        expect(drawn == self.drawn, f"drawn {drawn} != model {self.drawn}")
        for me, p in enumerate(self.players):
            v = game.view(p)
            knows = lambda f: f in self.public or f in self.seen[me]  # noqa: E731
            want = tuple(tuple(f if knows(f) else None for f in h) for h in self.hands)
            expect(v.known == want, f"{p}'s view of the hands {v.known} != what {p} has seen {want}")
            want_pile = tuple(f if knows(f) else None for f in reversed(self.pile))
            expect(v.draw_pile == want_pile, f"{p}'s view of the draw pile differs from what {p} has seen")
            expect(v.discard == tuple(reversed(self.discard)), f"{p}'s view of the discard pile is wrong")
            if self.drawn is not None and r.turn == me and not r.ended:
                expect(v.drawn == (self.drawn if knows(self.drawn) else None),
                       f"{p}'s view of their drawn card is {v.drawn}, true {self.drawn}")
            else:
                expect(v.drawn is None, f"{p} sees a drawn card {v.drawn} that is not theirs")


# ====================================================================== Crescendo


class CrescendoModel:
    def __init__(self, game: CrescendoGame) -> None:
        self.n = game.n
        self.players = game.players
        self.first_dealer = game.first_dealer
        self.round = 0
        self.ended = True
        self.totals = [0] * self.n
        self.call_points = [0] * self.n
        self.last_scores = [0] * self.n
        self.over = False
        self.winners: list[int] = []
        self.ev = 0
        self.rounds_checked = 0

    def _deal(self, game: CrescendoGame) -> None:
        self.round += 1
        expect(game.round_no == self.round, f"engine is in round {game.round_no}, model deals round {self.round}")
        deck = [game.faces.known[h] for h in range(104)]
        per = 7 if self.n >= 5 else 8
        dealer = (self.first_dealer + self.round - 1) % self.n
        self.first = (dealer + 1) % self.n
        self.rows: list[list[Any]] = [[] for _ in range(self.n)]
        for k in range(per * self.n):
            self.rows[(self.first + k) % self.n].append(deck[k])
        self.locked = [[False] * per for _ in range(self.n)]
        self.discard = [deck[per * self.n]]
        self.reserve = list(reversed(deck[per * self.n + 1:]))  # top at the end
        self.piles: list[list[Any]] = [[] for _ in range(self.n)]
        self.drawn: Any = None
        self.caller: int | None = None
        self.passed: set[int] = set()
        self.seen = [set() for _ in range(self.n)]
        self.public = {self.discard[0]}
        self.ended = False

    def _take_reserve(self) -> Any:
        if not self.reserve:
            if len(self.discard) < 2:
                return None
            # Reshuffle: all but the top discard; the engine turns them over as they lie.
            moved = self.discard[:-1]
            self.reserve = list(reversed(moved))
            self.discard = self.discard[-1:]
            for f in moved:  # knowledge does not survive a shuffle
                self.public.discard(f)
                for s in self.seen:
                    s.discard(f)
        return self.reserve.pop()

    def _to_discard(self, f: Any) -> None:
        self.discard.append(f)
        self.public.add(f)

    def _event(self, game: CrescendoGame, e: Any) -> None:
        k = e.kind
        if k in ("deal", "reshuffle", "window_closed", "window_open", "turn", "withdrawn", "dropped", "game_over"):
            return
        if self.ended:
            self._deal(game)
        who = self.players.index(e.player) if e.player else None
        d = e.detail
        if k == "setup_look":
            self.seen[who].add(self.rows[who][d[0]])
        elif k == "setup_swap":
            row = self.rows[who]
            row[d[0]], row[d[1]] = row[d[1]], row[d[0]]
            lk = self.locked[who]
            lk[d[0]], lk[d[1]] = lk[d[1]], lk[d[0]]
        elif k == "setup_pass":
            pass
        elif k == "draw":
            if d[0] == "discard":
                self.drawn = self.discard.pop()
            else:
                self.drawn = self._take_reserve()
                expect(self.drawn is not None, "drew from an empty Reserve")
                self.seen[who].add(self.drawn)
        elif k == "replace":
            pos = d[0]
            old = self.rows[who][pos]
            expect(str(old) == d[1], f"replace event names {d[1]}, model has {old}")
            self.rows[who][pos] = self.drawn
            self.locked[who][pos] = False
            self.drawn = None
            self._to_discard(old)
        elif k == "discard":
            expect(self.drawn is not None and str(self.drawn) == d[0], f"discard names {d[0]}, model {self.drawn}")
            self._to_discard(self.drawn)
            self.drawn = None
        elif k == "crescendo":
            expect(self.caller is None, "two CRESCENDO calls in one round")
            self.caller = who
        elif k == "pass":
            self.passed.add(who)
        elif k in ("peek", "exchange", "lock"):
            top_before = self.reserve[-1] if self.reserve else (self.discard[0] if len(self.discard) >= 2 else None)
            expect(top_before is not None, f"{k} with no Reserve card")
            action = {"peek": "peek", "exchange": "swap", "lock": "lock"}[k]
            expect(crescendo_back(top_before).action == action, f"{k} while the Reserve's top shows {crescendo_back(top_before)}")
            if k == "peek":
                other, pos = self.players.index(d[0]), d[1]
                expect(not self.locked[other][pos], "peek at a locked card")
                self.seen[who].add(self.rows[other][pos])
            elif k == "exchange":
                pos, other, tpos = d[0], self.players.index(d[1]), d[2]
                expect(other != who and not self.locked[who][pos] and not self.locked[other][tpos],
                       "swap touched a locked card or the player's own row")
                mine, theirs = self.rows[who][pos], self.rows[other][tpos]
                self.rows[who][pos], self.rows[other][tpos] = theirs, mine
                self.seen[other].add(mine)  # the other player sees the card received; the swapper nothing
            else:
                pos = d[0]
                self.locked[who][pos] = True
                self.public.add(self.rows[who][pos])
            top = self._take_reserve()
            self._to_discard(top)
        elif k in ("number_right", "number_wrong"):
            face, top = d
            row = self.rows[who]
            expect(face in row, f"claim with {face}, not in {e.player}'s row {row}")
            expect(self.discard[-1] == top, f"claim against {top}, model top {self.discard[-1]}")
            pos = row.index(face)
            self.public.add(face)
            right = isinstance(face, int) and isinstance(top, int) and abs(face - top) <= 2
            expect(right == (k == "number_right"), f"claim {face} against {top} judged {k}")
            if right:
                del row[pos]
                del self.locked[who][pos]
                self.piles[who].append(face)
            else:
                pen = self._take_reserve()
                if pen is not None:
                    row.insert(pos + 1, pen)
                    self.locked[who].insert(pos + 1, False)
        elif k == "round_end":
            self._round_end(game, e)
        else:
            raise ModelError(f"unknown Crescendo event {e}")

    def _round_end(self, game: CrescendoGame, e: Any) -> None:
        expect(self.drawn is None, "round ended with a drawn card")
        start = self.caller if self.caller is not None else self.first
        for j in range(self.n):
            s = (start + j) % self.n
            keep, keep_l = [], []
            for f, lk in zip(self.rows[s], self.locked[s]):
                self.public.add(f)
                if is_joker(f):
                    self.discard.append(f)
                else:
                    keep.append(f)
                    keep_l.append(lk)
            self.rows[s], self.locked[s] = keep, keep_l
        res = game.results[self.round - 1]
        scores, cps, incs = [], [], []
        for s in range(self.n):
            row = self.rows[s]
            k = sum(1 for a, b in zip(row, row[1:]) if b < a)
            incs.append(k)
            if s == self.caller:
                base = 6 if k == 0 else -3 - k
                cps.append(base)
            else:
                base = 3 if k == 0 else -k
                cps.append(0)
            scores.append(base + (1 if s in self.passed else 0) + len(self.piles[s]))
        expect(res.caller == self.caller, f"round {self.round}: caller {res.caller} != {self.caller}")
        expect(res.rows == tuple(map(tuple, self.rows)), f"round {self.round}: rows {res.rows} != {self.rows}")
        expect(res.incorrect == tuple(incs), f"round {self.round}: incorrect {res.incorrect} != {incs}")
        expect(res.piles == tuple(len(p) for p in self.piles), f"round {self.round}: piles differ")
        expect(res.call_points == tuple(cps), f"round {self.round}: call points {res.call_points} != {cps}")
        expect(res.scores == tuple(scores) == tuple(e.detail),
               f"round {self.round}: scores {res.scores} != formula {scores} (rows {self.rows}, caller {self.caller},"
               f" passed {self.passed}, piles {self.piles})")
        for s in range(self.n):
            self.totals[s] += scores[s]
            self.call_points[s] += cps[s]
        self.last_scores = scores
        self.rounds_checked += 1
        self.ended = True
        if self.round >= 3:
            self.over = True
            key = lambda s: (self.totals[s], self.call_points[s], self.last_scores[s])  # noqa: E731
            best = max(key(s) for s in range(self.n))
            self.winners = [s for s in range(self.n) if key(s) == best]

    def sync(self, game: CrescendoGame) -> None:
        evs = game.events
        while self.ev < len(evs):
            self._event(game, evs[self.ev])
            self.ev += 1
        if self.ended and not game.over and game.round_no == self.round + 1:
            self._deal(game)
        expect(game.round_no == self.round, f"engine round {game.round_no}, model round {self.round}")
        expect(len(game.results) == self.rounds_checked, "a round ended without a round_end event")
        expect(list(game.totals) == self.totals, f"totals {game.totals} != model {self.totals}")
        expect(game.over == self.over, f"over={game.over} after {self.rounds_checked} rounds")
        if self.over:
            expect(list(game.winners) == self.winners, f"winners {game.winners} != model {self.winners}")
        self.compare(game)

    def compare(self, game: CrescendoGame) -> None:
        r = game.r
        assert r is not None
        F = game.faces.known
        rows = [[F[h] for h in row] for row in r.rows]
        reserve = [F[h] for h in r.reserve]
        discard = [F[h] for h in r.discard]
        piles = [[F[h] for h in p] for p in r.piles]
        drawn = F[r.drawn] if r.drawn is not None else None
        allf = [f for x in rows + piles for f in x] + reserve + discard + ([drawn] if drawn is not None else [])
        face_multiset_ok(allf, CRESCENDO_DECK, f"Crescendo round {self.round}")
        expect(rows == self.rows, f"rows {rows} != model {self.rows}")
        expect(reserve == self.reserve, "Reserve differs from the model")
        expect(discard == self.discard, f"discard {discard} != model {self.discard}")
        expect(piles == self.piles, f"own piles {piles} != model {self.piles}")
        expect(drawn == self.drawn, f"drawn {drawn} != model {self.drawn}")
        expect([list(x) for x in r.locked] == self.locked, f"locks {r.locked} != model {self.locked}")
        for me, p in enumerate(self.players):
            v = game.view(p)
            knows = lambda f: f in self.public or f in self.seen[me]  # noqa: E731
            want = tuple(tuple(f if knows(f) else None for f in row) for row in self.rows)
            expect(v.known == want, f"{p}'s view of the rows {v.known} != what {p} has seen {want}")
            expect(v.backs == tuple(tuple(crescendo_back(f) for f in row) for row in self.rows), "backs differ")
            expect(v.locked == tuple(map(tuple, self.locked)), f"{p}'s view of the locks is wrong")
            expect(v.discard == tuple(reversed(self.discard)), f"{p}'s view of the discard pile is wrong")
            expect(v.piles == tuple(len(x) for x in self.piles), "pile sizes in the view are wrong")
            expect(v.reserve == len(self.reserve), "Reserve size in the view is wrong")
            if self.drawn is not None and r.turn == me and not r.ended:
                expect(v.drawn == (self.drawn if knows(self.drawn) else None),
                       f"{p}'s view of their drawn card is {v.drawn}, true {self.drawn}")
            else:
                expect(v.drawn is None, f"{p} sees a drawn card {v.drawn} that is not theirs")


def model_for(game: Any) -> CrispModel | CrescendoModel:
    return CrispModel(game) if isinstance(game, CrispGame) else CrescendoModel(game)
