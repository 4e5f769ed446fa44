"""What outlasts a round, on its own: readiness, memory aids, leaves, the votes that put a seat out, checkpoints."""

from __future__ import annotations

import pytest

from p2pcards.crypto.envelope import Outbox
from p2pcards.crypto.identity import generate
from p2pcards.errors import MalformedMessage
from p2pcards.table.bodies import Aid, Gone, Leave, Out, Ready
from p2pcards.table.config import Game, TableConfig
from p2pcards.table.outputs import Emitter
from p2pcards.table.seating import Seating

IDS = [generate(f"p{i}") for i in range(4)]


def config(seats: int = 3) -> TableConfig:
    return TableConfig(bytes(16), "crisp", {}, tuple(i.public for i in IDS[:seats]), tuple(i.name for i in IDS[:seats]))


def seating(me: int = 0, seats: int = 3, rnd: int = 0,
            carry: tuple[tuple[int, ...], int] | None = None) -> tuple[Seating, Emitter]:
    cfg = config(seats)
    emit = Emitter(Outbox(IDS[me], cfg.context), cfg.names, lambda: rnd)
    return Seating(cfg, me, emit, carry), emit


def sent(emit: Emitter) -> list[tuple[str, int, dict[str, object]]]:
    return [(s.envelope.type, s.envelope.round, dict(s.envelope.body)) for s in emit.own]


def cut_off_seating(back_at: float | None = None) -> tuple[Seating, Emitter, Game]:
    """Seat 0 of three in round 2, both others missing to its network at once (from `back_at`, when it came back
    from its journal then; else 1 s apart in play), and voted gone by it."""
    part, emit = seating(me=0, rnd=2)
    game = part.cfg.new_game()
    if back_at is None:
        part.began(2, game)
    part.back_at = back_at
    for seat in (1, 2):
        part.absences.missing(seat, 10.0 + seat if back_at is None else back_at)
    for seat in (1, 2):
        part.vote_gone(seat, "missing")
        part.take(0, 2, Gone(seat), game, False)
    return part, emit, game


def test_the_first_round_is_due_once_every_seat_agreed_to_the_exact_config() -> None:
    part, emit = seating()
    game = part.cfg.new_game()
    part.start()
    assert sent(emit) == [("ready", 0, {"config": part.cfg.digest()})]
    ready = Ready(part.cfg.digest())
    assert not part.take(0, 0, ready, game, True) and not part.take(2, 0, ready, game, True)
    assert part.take(1, 0, ready, game, True) and part.first == 1
    with pytest.raises(MalformedMessage):
        part.take(1, 0, Ready(bytes(32)), game, True)  # another config
    with pytest.raises(MalformedMessage):
        part.take(1, 3, ready, game, True)  # a ready belongs before the first round


def test_a_table_that_went_on_starts_its_engine_and_votes_from_what_it_carries() -> None:
    part, _ = seating(carry=((4, -2, 7), 3))
    game = part.cfg.new_game()
    part.seat_game(game)
    assert game.totals == [4, -2, 7] and game.round_no == 3
    assert part.first == 4 and part.votes.first == 4


def test_an_aid_is_noted_only_when_it_changes_and_ours_is_sent_only_when_it_changes() -> None:
    part, emit = seating(me=0, rnd=2)
    game = part.cfg.new_game()
    part.take(1, 2, Aid(True), game, False)
    part.take(1, 2, Aid(True), game, False)
    part.take(2, 2, Aid(False), game, False)
    assert part.aided == {1} and [n.detail for n in emit.notes] == ["p1 turned the memory aid on"]
    part.aid(False)
    part.aid(True)
    assert sent(emit) == [("aid", 2, {"on": True})]


def test_a_seat_that_leaves_is_voted_gone_once_and_the_table_goes_on_without_it() -> None:
    part, emit = seating(me=0, rnd=2)
    game = part.cfg.new_game()
    game.totals = [5, 1, -6]
    part.began(2, game)
    part.take(2, 2, Leave("dinner"), game, False)
    part.take(0, 2, Gone(2), game, False)  # our own vote, applied as everyone's
    part.take(2, 2, Leave("again"), game, False)
    assert part.left == {2: (2, "dinner")} and sent(emit) == [("gone", 2, {"seat": 2})]
    assert not part.finished  # seat 1 has not voted yet
    part.take(1, 2, Gone(2), game, False)
    assert part.finished and part.successor is not None and part.successor.names == ("p0", "p1")
    assert part.passed_on == ((5, 1), 1)  # the totals round 2 began with; round 2 is void
    assert sent(emit)[-1] == ("out", 2, {"seats": [2]})
    assert [n.detail for n in emit.notes if n.kind in ("void", "over")] == [
        "p2 is out: round 2 is void", "the table goes on without p2 from round 2"]


def test_a_seat_voted_out_of_a_table_of_two_ends_the_game_and_we_never_vote_when_it_is_over() -> None:
    part, emit = seating(me=0, seats=2, rnd=1)
    game = part.cfg.new_game()
    part.began(1, game)
    part.take(0, 1, Gone(1), game, False)
    assert part.finished and part.successor is None
    assert emit.notes[-1].detail == "too few seats remain without p1: the game ends"
    part.vote_gone(1, "again")
    # our vote came in as seat 0's; our `out` is our last frame at the table: nothing more is sent
    assert sent(emit) == [("out", 1, {"seats": [1]})]


def test_voted_out_ourselves_we_are_finished_with_no_table_to_go_on_at() -> None:
    part, emit = seating(me=2, rnd=1)
    game = part.cfg.new_game()
    part.began(1, game)
    part.take(0, 1, Gone(2), game, False)
    part.take(1, 1, Gone(2), game, False)
    assert not part.finished  # every vote is in, but no seat has said it decided: it might vote us more
    part.take(1, 1, Out((2,)), game, False)
    assert part.finished and part.voted_out and part.successor is None and sent(emit) == []
    assert emit.notes[-1].detail == "every other seat voted us gone: the table goes on without us"


def test_voted_out_of_a_table_of_two_we_hear_that_the_game_ends() -> None:
    part, emit = seating(me=1, seats=2, rnd=1)
    game = part.cfg.new_game()
    part.began(1, game)
    part.take(0, 1, Gone(1), game, False)
    part.take(0, 1, Out((1,)), game, False)
    assert part.finished and part.successor is None and sent(emit) == []
    assert emit.notes[-1].detail == "every other seat voted us gone: too few seats remain, the game ends"


def test_leaving_stops_us_once() -> None:
    part, emit = seating(rnd=3)
    part.leave("bye")
    part.leave("twice")
    assert emit.stopped == "we left: bye" and sent(emit) == [("leave", 3, {"why": "bye"})]


def test_a_checkpoint_gives_a_fresh_seating_back_what_the_rounds_before_left() -> None:
    part, emit = seating(me=0, rnd=2)
    game = part.cfg.new_game()
    game.totals = [3, 0, -3]
    part.began(2, game)
    part.take(1, 2, Aid(True), game, False)
    part.take(1, 2, Gone(2), game, False)
    part.take(2, 2, Out((1,)), game, False)  # held, though no set it names qualifies yet
    game.totals = [6, 1, -7]
    check = part.check(3, 12.5, emit.outbox, game)
    assert (check.round, check.now, check.totals, check.before) == (3, 12.5, (6, 1, -7), (3, 0, -3))
    again, _ = seating(me=0, rnd=2)
    fresh = again.cfg.new_game()
    again.restore(check, fresh)
    assert fresh.totals == [6, 1, -7] and fresh.round_no == 2 and fresh.results == game.results
    assert again.ready == {0, 1, 2} and again.aided == {1}
    assert again.votes.held() == part.votes.held() == ((2, 1, 2),)
    assert again.votes.outs == part.votes.outs == {2: (1,)}
    assert again.votes.totals_at[2] == (3, 0, -3)


def test_a_seat_cut_off_stays_no_witness_of_its_own_votes_after_a_checkpoint() -> None:
    # Cut off in round 2, its votes on both other seats stand when the cut heals; a peer that crashed and came
    # back from the next round's checkpoint took itself for their witness again and put both out at its next vote.
    part, emit, game = cut_off_seating()
    assert part.cut_off is not None and not part.finished and "out" not in [t for t, _, _ in sent(emit)]
    check = part.check(3, 40.0, emit.outbox, game)
    assert check.cut_off
    again, again_emit = seating(me=0, rnd=3)
    fresh = again.cfg.new_game()
    again.restore(check, fresh)
    again.take(1, 3, Gone(2), fresh, True)  # any vote makes it look at the votes again
    assert again.cut_off is not None and not again.finished and not again_emit.own


def test_a_seat_back_from_its_journal_that_no_seat_came_back_to_says_it_was_away_too_long() -> None:
    # Every seat missing from the moment it came back is not "our own network lost": it came back too late, most likely.
    part, emit, game = cut_off_seating(back_at=50.0)
    assert part.cut_off == ("no other seat was back since we came back (p1, p2): they most likely went on without us "
                            "while we were away, or our own network is lost")
    assert not part.finished and "out" not in [t for t, _, _ in sent(emit)]


def test_a_seat_cut_off_that_hears_the_others_voted_it_out_is_voted_out_not_cut_off() -> None:
    # It voted both others gone, so it took neither one's `out` as a witness: it stayed "cut off", then gave up, when
    # the truth was that the others voted it out while it was away and went on without it.
    part, emit, game = cut_off_seating()
    assert part.cut_off is not None
    part.take(1, 2, Gone(0), game, False)
    part.take(2, 2, Gone(0), game, False)
    assert not part.finished  # the votes alone: it is no witness of its own
    part.take(1, 2, Out((0,)), game, False)
    assert part.finished and part.voted_out == "every other seat voted us gone: the table goes on without us"
    assert part.cut_off is None and "out" not in [t for t, _, _ in sent(emit)]


def test_an_out_from_a_seat_we_voted_gone_naming_others_than_us_is_still_no_witness() -> None:
    part, _ = seating(me=0, seats=4, rnd=2)
    game = part.cfg.new_game()
    part.began(2, game)
    part.vote_gone(1, "missing")
    part.take(0, 2, Gone(1), game, False)
    for voter in (2, 3):
        part.take(voter, 2, Gone(1), game, False)
    part.take(2, 2, Out((1,)), game, False)
    assert part.finished  # our own votes are exactly {1}: we are our witness
    other, _ = seating(me=0, seats=4, rnd=2)
    other.began(2, game)
    for seat in (1, 2):
        other.vote_gone(seat, "missing")
        other.take(0, 2, Gone(seat), game, False)
    for voter in (2, 3):
        other.take(voter, 2, Gone(1), game, False)
    other.take(2, 2, Out((1,)), game, False)
    assert not other.finished  # we voted seat 2 gone: its `out` is no witness to us
