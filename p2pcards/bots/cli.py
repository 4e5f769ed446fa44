"""`p2pcards botgame {crisp,crescendo}`: watch good and random bots play one whole game, move by move."""

from __future__ import annotations

import argparse
import random
import sys
import time
from collections.abc import Callable
from typing import TextIO

from ..cards import CrescendoCard, crisp_value
from ..cli import add_game_options, amount, check_good, check_seats, seed_of
from ..games.base import CRISP_SLOTS, Event, Move
from ..games.crescendo import CrescendoGame
from ..games.crisp import CrispGame
from .base import Bot, Game, RandomBot, View, play_game
from .crescendo_bot import CrescendoBot
from .crisp_bot import CrispBot

NAMES = ("Ann", "Bob", "Cat", "Dan", "Eve", "Fay", "Gus", "Hal")


def add_arguments(parser: argparse.ArgumentParser) -> None:
    """`botgame GAME [--players N] [--good K] [--seed S] [--delay SECONDS]`."""
    add_game_options(parser, "the decks and the random bots")
    parser.add_argument("--delay", type=amount(0), default=0.0,
                        help="seconds to wait after each move, for watching (default 0)")


class Narrator:
    """Turns moves and the engine's events into lines a person can follow (every face is shown)."""

    def __init__(self, game: Game, good: set[int], out: TextIO, delay: float) -> None:
        self.game = game
        self.good = good
        self.out = out
        self.delay = delay
        self.seen_events = 0
        self.round_shown = 0

    def who(self, seat: int) -> str:
        """A player's name, marked when it is a good bot."""
        return self.game.players[seat] + ("*" if seat in self.good else "")

    def name(self, player: str | None) -> str:
        """The marked name of a player given by name."""
        if player is None:
            return ""
        return self.who(self.game.players.index(player))

    def say(self, line: str) -> None:
        """Print one line."""
        print(line, file=self.out)

    def start(self) -> None:
        """The header: who plays what."""
        g = self.game
        title = "Crisp" if isinstance(g, CrispGame) else "Crescendo"
        kinds = ", ".join(f"{self.who(s)} ({'good bot' if s in self.good else 'random bot'})" for s in range(g.n))
        self.say(f"{title} with {g.n} players: {kinds}.")
        self.say("You watch as a spectator: every face is shown, although the bots see only their own view.")
        if isinstance(g, CrispGame):
            self.say(f"Lowest score wins; the game ends when someone reaches {g.options.limit} points.")
        else:
            self.say("Highest score after three rounds wins.")

    def before(self) -> None:
        """Before a bot is asked: narrate what time alone did, and show a new round's deal."""
        self.after(self.game, None)
        if self.round_shown != self.game.round_no and self.game.r is not None and not self.game.r.ended:
            self.round_start()

    def after(self, game: Game, move: Move | None) -> None:
        """Narrate what happened since the last call: the move and the events it caused."""
        new = game.events[self.seen_events:]
        self.seen_events = len(game.events)
        if move is not None:
            # A reshuffle happens before the move takes its card from the new Reserve: say it first.
            for event in new:
                if event.kind == "reshuffle":
                    self.event(event)
            new = [e for e in new if e.kind != "reshuffle"]
            line = self.describe(move, new)
            if line:
                self.say(line)
        for event in new:
            self.event(event)
        if move is not None and self.delay > 0:
            self.out.flush()
            time.sleep(self.delay)

    def round_start(self) -> None:
        """Show the deal of a new round."""
        g = self.game
        self.round_shown = g.round_no
        self.say("")
        self.say(f"=== Round {g.round_no} ===")
        if isinstance(g, CrispGame):
            assert g.r is not None
            for s, hand in enumerate(g.r.hands):
                cards = " ".join(f"{g.faces.need(h):>3}" for h in hand)
                self.say(f"  {self.who(s):<5} {cards}")
            self.say(f"  {g.players[g.r.turn or 0]} begins.")
        else:
            assert g.r is not None
            for s, row in enumerate(g.r.rows):
                self.say(f"  {self.who(s):<5} {_row(g, row)}")
            self.say(f"  Discard pile starts with {g.faces.need(g.r.discard[-1])}. {g.players[g.r.turn]} begins.")

    def event(self, e: Event) -> None:
        """Narrate one engine event that a move's own line does not cover."""
        who = self.name(e.player)
        if e.kind == "turnover":
            self.say(f"  (the draw pile ran out: the discard pile is turned over, {e.detail[0]} cards)")
        elif e.kind == "reshuffle":
            self.say(f"  (the Reserve ran out: the discard pile is shuffled into a new Reserve, {e.detail[0]} cards)")
        elif e.kind == "timeout":
            self.say(f"  {who} ran out of time")
        elif e.kind == "round_end":
            self.round_end()
        elif e.kind == "game_over":
            winners = [self.name(str(p)) for p in e.detail]
            self.say("")
            if len(winners) == 1:
                self.say(f"*** {winners[0]} wins the game. ***")
            else:
                self.say(f"*** {' and '.join(winners)} share the win. ***")

    def round_end(self) -> None:
        """The revealed hands, the round's scores and the running totals."""
        g = self.game
        self.say(f"--- Round {len(g.results)} is over ---")
        if isinstance(g, CrispGame):
            res = g.results[-1]
            for s, hand in enumerate(res.hands):
                note = ""
                if res.caller == s:
                    raw = sum(crisp_value(c) for c in hand)
                    note = f" (called crisp: {raw} {'-' if res.scores[s] < raw else '+'} 5)"
                self.say(f"  {self.who(s):<5} {' '.join(f'{c:>3}' for c in hand)}  scores {res.scores[s]:>3}{note}"
                          f"  total {g.totals[s]:>3}")
        else:
            cres = g.results[-1]
            for s, row in enumerate(cres.rows):
                note = " (called CRESCENDO)" if cres.caller == s else ""
                self.say(f"  {self.who(s):<5} {' '.join(f'{c:>3}' for c in row)}")
                self.say(f"        {cres.incorrect[s]} wrong, {cres.piles[s]} in own pile: scores {cres.scores[s]:+d}"
                         f"{note}, total {g.totals[s]}")

    def describe(self, move: Move, events: list[Event]) -> str:
        """One line for one move."""
        g = self.game
        if isinstance(g, CrispGame):
            return self._crisp(g, move, events)
        return self._crescendo(g, move, events)

    def _crisp(self, g: CrispGame, m: Move, events: list[Event]) -> str:
        who = self.name(m.player)
        r = g.r
        if m.action == "draw":
            assert r is not None and r.drawn is not None
            face = g.faces.need(r.drawn)
            where = "the discard pile" if m.source == "discard" else "the draw pile"
            return f"{who} draws {face} from {where}"
        if m.action == "replace":
            old = next((e.detail[1] for e in events if e.kind == "replace"), "?")
            new = g.faces.need(r.hands[g.seat(m.player)][m.pos or 0]) if r is not None and not r.ended else "it"
            return f"    {who} keeps {new} as their {CRISP_SLOTS[m.pos or 0]} card, discarding {old}"
        if m.action == "discard":
            face = next((str(e.detail[0]) for e in events if e.kind == "discard"), "it")
            return f"    {who} discards {face}"
        if m.action == "jack":
            mid = r.hands[g.seat(m.player)][1] if r is not None and not r.ended else None
            peek = f" ({g.faces.need(mid)})" if mid is not None else ""
            return f"    {who} plays the Jack: peeks at their middle card{peek}"
        if m.action == "queen":
            return (f"    {who} plays the Queen: swaps their {CRISP_SLOTS[m.pos or 0]} card with "
                    f"{self.name(m.target)}'s {CRISP_SLOTS[m.target_pos or 0]} card")
        if m.action == "king":
            return f"    {who} plays the King: two extra draws follow"
        if m.action == "crisp":
            return self._crisp_call(g, m.player)
        return str(m)

    def _crisp_call(self, g: CrispGame, player: str) -> str:
        """A crisp call; a late one says which turns, played or under way since the caller's, are final turns."""
        r = g.r
        who = self.name(player)
        if r is None:
            return f"{who} calls CRISP!"
        caller = g.seat(player)
        owed = 0 if r.ended else r.finals_left  # final turns still to end, the one under way included
        played = [self.who((caller + 1 + k) % g.n) for k in range(g.n - 1 - owed)]
        turns = f"the turn{'s' if len(played) > 1 else ''} played since theirs ({', '.join(played)})"
        if r.ended:
            return f"{who} calls CRISP, late: {turns} {'were the final turns' if len(played) > 1 else 'was the final turn'}."
        if played:
            return f"{who} calls CRISP, late: {turns} count{'' if len(played) > 1 else 's'} as final; the others have one final turn each."
        if r.began and r.turn is not None and r.turn != caller:
            return f"{who} calls CRISP, late: {self.who(r.turn)}'s turn is the first final turn."
        return f"{who} calls CRISP! Everyone else has one final turn."

    def _crescendo(self, g: CrescendoGame, m: Move, events: list[Event]) -> str:
        who = self.name(m.player)
        r = g.r
        if m.action == "setup_look":
            return f"{who} sets up: looks at card {m.pos}"
        if m.action == "setup_swap":
            return f"{who} sets up: swaps cards {m.pos} and {m.pos2}"
        if m.action == "setup_pass":
            return f"{who} sets up: does nothing"
        if m.action == "draw":
            assert r is not None and r.drawn is not None
            where = "the discard pile" if m.source == "discard" else "the Reserve"
            return f"{who} draws {g.faces.need(r.drawn)} from {where}"
        if m.action == "replace":
            old = next((e.detail[1] for e in events if e.kind == "replace"), "?")
            return f"    {who} puts it at position {m.pos}, discarding {old}" + self._row_of(g, m.player)
        if m.action == "discard":
            face = next((str(e.detail[0]) for e in events if e.kind == "discard"), "it")
            return f"    {who} discards {face}"
        if m.action == "peek":
            assert r is not None and m.target is not None and m.pos is not None
            peeked = g.faces.need(r.rows[g.seat(m.target)][m.pos])
            whose = "their own" if m.target == m.player else f"{self.name(m.target)}'s"
            return f"{who} peeks at {whose} card {m.pos} ({peeked})"
        if m.action == "exchange":
            return (f"{who} swaps their card {m.pos} with {self.name(m.target)}'s card {m.target_pos}"
                    + self._row_of(g, m.player))
        if m.action == "lock":
            shown = next((e.detail[1] for e in events if e.kind == "lock"), "?")
            return f"{who} locks card {m.pos} face up: {shown}"
        if m.action == "crescendo":
            return f"{who} calls CRESCENDO! Everyone else has one final turn." + self._row_of(g, m.player)
        if m.action == "pass":
            return f"{who} passes (+1 point)"
        if m.action == "number":
            for e in events:
                if e.kind == "number_right":
                    return f"  NUMBER! {who} shows {e.detail[0]} against {e.detail[1]}: right, one card fewer"
                if e.kind == "number_wrong":
                    return f"  NUMBER! {who} shows {e.detail[0]} against {e.detail[1]}: wrong, a penalty card"
        return str(m)

    def _row_of(self, g: CrescendoGame, player: str) -> str:
        r = g.r
        if r is None or r.ended:
            return ""
        return f"   [{_row(g, r.rows[g.seat(player)])}]"


def _row(g: CrescendoGame, row: list[int]) -> str:
    faces: list[CrescendoCard] = [g.faces.need(h) for h in row]
    return " ".join(f"{f!s:>3}" for f in faces)


class Watched:
    """A bot passed through unchanged (it still gets only its view); the narrator catches up first."""

    def __init__(self, bot: Bot, narrator: Narrator) -> None:
        self.bot = bot
        self.narrator = narrator

    def choose(self, view: View) -> Move | None:
        """The wrapped bot's choice, after the narrator has shown what came before."""
        self.narrator.before()
        return self.bot.choose(view)


def make_bots(game_name: str, players: int, good: int, rng: random.Random) -> tuple[list[Bot], set[int]]:
    """Good bots in the first `good` seats, random bots in the rest."""
    good_seats = set(range(good))
    bots: list[Bot] = []
    for s in range(players):
        if s in good_seats:
            bots.append(CrispBot() if game_name == "crisp" else CrescendoBot())
        else:
            bots.append(RandomBot(random.Random(rng.random())))
    return bots, good_seats


def make_game(game_name: str, names: list[str]) -> Game:
    """The referee engine for a bot game; Crescendo's empty Reserve is shuffled afresh, as at a table."""
    return CrispGame(names) if game_name == "crisp" else CrescendoGame(names, auto_reshuffle=False)


def play(game_name: str, players: int, good: int, seed: int, delay: float, out: TextIO) -> int:
    """Play and narrate one game; returns 0."""
    check_seats(game_name, players)
    check_good(good, players)
    rng = random.Random(seed)
    names = list(NAMES[:players])
    game = make_game(game_name, names)
    bots, good_seats = make_bots(game_name, players, good, rng)
    narrator = Narrator(game, good_seats, out, delay)
    narrator.start()
    hook: Callable[[Game, Move], None] = narrator.after
    watched: list[Bot] = [Watched(b, narrator) for b in bots]
    play_game(game, watched, rng, on_move=hook)
    narrator.after(game, None)
    out.flush()
    print(f"(seed {seed}; * marks a good bot)", file=out)
    return 0


def run(args: argparse.Namespace) -> int:
    """Run `p2pcards botgame`."""
    return play(args.game, args.players, args.good, seed_of(args), args.delay, sys.stdout)
