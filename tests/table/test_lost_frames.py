"""Nothing lost in transit: frames dropped, duplicated and reordered, and every game still completes alike."""

from __future__ import annotations

import functools
import random
from collections.abc import Callable

import pytest

from p2pcards.bots.base import RandomBot
from p2pcards.crypto.envelope import parse
from p2pcards.sim.memnet import LinkModel, MemNet, Tap
from p2pcards.sim.table_game import make_table, play_table
from p2pcards.table.peer import Note, TablePeer
from p2pcards.crypto.encoding import encode
from p2pcards.table.recovery import MAX_ASK, Recovery, pack_request, parse_request
from p2pcards.table.resume import FRAMES, record_time
from p2pcards.errors import MalformedMessage

CRISP = {"limit": 20}
LOSSY = LinkModel(delay=0.005, jitter=0.060, loss=0.05, dup=0.05)


def finished_alike(net: MemNet) -> None:
    """Every peer finished, nobody was blamed, and every peer holds the same signed results."""
    for i, peer in enumerate(net.peers):
        assert peer.finished, (i, peer.stopped, [n for n in peer.notes if n.kind != "event"][-5:])
        # A random bot's move the rules refuse is noted as usual; no frame was ever refused or blamed.
        assert not peer.faults and not [n for n in peer.notes if n.detail.startswith("message dropped")]
    first = net.peers[0]
    for peer in net.peers[1:]:
        assert peer.log_hash == first.log_hash
        assert peer.results == first.results
        assert [n.detail for n in peer.notes if n.kind == "round"] == [n.detail for n in first.notes if n.kind == "round"]


def tapped_game(seed: int, tap: Callable[[MemNet], Tap], journal: bool = False) -> MemNet:
    """A seeded 3-seat Crisp game of random bots, played to its end with every frame through `tap(net)`."""
    rng = random.Random(seed)
    peers = make_table("crisp", 3, CRISP, random.Random(rng.random()), journal=journal)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(3)], rng)
    net.tap = tap(net)
    net.start()
    net.run(until=300.0)
    return net


@pytest.mark.parametrize("game, players, options, seed", [
    ("crisp", 3, CRISP, 1), pytest.param("crisp", 4, CRISP, 2, marks=pytest.mark.slow),
    pytest.param("crescendo", 3, {}, 3, marks=pytest.mark.slow),  # about 15 s
])
def test_a_lossy_network_loses_no_game(game: str, players: int, options: dict[str, int], seed: int) -> None:
    net = play_table(game, players, options, seed=seed, link=LOSSY, until=600.0)
    assert net.stats.requests > 0 and net.stats.answers > 0  # frames were lost, asked for and sent again
    finished_alike(net)


def test_one_dropped_frame_no_longer_stalls_the_table() -> None:
    dropped: list[tuple[int, int]] = []

    def drop_first_key(sender: int, receiver: int, frame: bytes) -> bytes | None:
        env = parse(frame).envelope
        if env.type == "key" and not dropped:
            dropped.append((sender, receiver))
            return None  # the key announcement is the sender's last frame for a while: a lost tail
        return frame

    net = tapped_game(5, lambda net: drop_first_key)
    assert dropped
    finished_alike(net)


def test_a_duplicate_is_silent() -> None:
    peers = make_table("crisp", 3, CRISP, random.Random(7))
    ready = peers[1].start(0.0)
    frame = ready[0].frame  # type: ignore[union-attr]
    assert peers[0].receive(frame, 0.1) == peers[0].receive(frame, 0.2) == []
    assert peers[0].notes == [] and peers[0].frame(1, 0) == frame and peers[1].frame(1, 0) == frame
    assert peers[1].receive(frame, 0.3) == [] and peers[1].notes == []  # our own frame come back: no news
    forged = frame[:-1] + bytes([frame[-1] ^ 1])  # in our name, but not signed by us: dropped with a note
    [note] = peers[1].receive(forged, 0.4)
    assert isinstance(note, Note) and note.detail.startswith("message dropped") and note.blame is None


def test_a_gap_below_a_held_frame_is_missing_and_asked_of_its_sender_first() -> None:
    peers = make_table("crisp", 3, CRISP, random.Random(8))
    for p in peers:
        p.start(0.0)
    net = MemNet(peers, [None] * 3, random.Random(1))
    net.start()
    net.run(until=1.0)  # keys are out; passes begin
    a = peers[0]
    sender = 1
    head = a.chains.received(sender)
    later = peers[sender].frame(sender, head + 1)
    if later is None:  # seat 1 sent nothing more yet: sign one more of its frames by hand
        peers[sender].emit.send(peers[sender].round, "leave", {"why": "test"})
        peers[sender].emit.send(peers[sender].round, "leave", {"why": "test"})
        later = peers[sender].frame(sender, head + 1)
    assert later is not None
    a.receive(later, a.now)
    assert (sender, head, head) in a.missing()
    rec = Recovery(a.n, a.me, a.missing, a.frame)
    assert rec.requests(a.now) == []  # a frame merely overtaken gets its grace
    asks = rec.requests(a.now + 0.3)
    assert (sender, sender, head, 1) in asks
    retry = rec.requests(a.now + 0.9)
    assert (2, sender, head, 1) in retry  # then another seat


def test_requests_are_checked_and_answers_rate_limited() -> None:
    table = bytes(range(16))
    assert parse_request(pack_request(table, 1, 5, 3)) == (table, 1, 5, 3)
    for size in (1, 32, 64):  # any table id a config may have (§6.1)
        assert parse_request(pack_request(bytes(size), 2 ** 31, 2 ** 32 - 1, MAX_ASK))[0] == bytes(size)
    for bad in (pack_request(table, -1, 0, 1), pack_request(table, 0, -1, 1), pack_request(table, 0, 0, MAX_ASK + 1),
                pack_request(b"", 0, 0, 1), pack_request(bytes(65), 0, 0, 1), encode([0, 0, 1]), b"\x93", b"\xc0"):
        with pytest.raises(MalformedMessage):
            parse_request(bad)
    rec = Recovery(3, 0, list, lambda seat, seq: b"f%d" % seq)
    answered = [rec.answer(1, 0, 0, 2, 0.0) for _ in range(40)]
    assert answered[0] == [b"f0", b"f1"] and answered[-1] == []  # a flood gets nothing past the burst
    assert rec.answer(2, 0, 0, 1, 0.0) == [b"f0"]  # another asker has its own budget
    assert rec.answer(1, 0, 0, 1, 1.0) == [b"f0"]  # and the budget comes back with time


def test_peer_frame_refuses_places_out_of_range() -> None:
    peer: TablePeer = make_table("crisp", 3, CRISP, random.Random(9))[0]
    assert peer.frame(5, 0) is None and peer.frame(1, -1) is None and peer.frame(1, 0) is None


@pytest.mark.parametrize("mtype, nth", [
    ("order", 5),
    *(pytest.param(t, n, marks=pytest.mark.slow)  # about 4 s each
      for t, n in [("ready", 0), ("key", 2), ("pass", 1), ("move", 3), ("shares", 3), ("private", 2), ("open", 0),
                   ("result", 0)]),
])
def test_one_frame_of_any_type_lost_on_one_link_stalls_nothing_and_blames_no_one(mtype: str, nth: int) -> None:
    seen: list[int] = []

    def drop_one(sender: int, receiver: int, frame: bytes) -> bytes | None:
        if parse(frame).envelope.type == mtype and receiver == (sender + 1) % 3:
            seen.append(sender)
            if len(seen) == nth + 1:
                return None
        return frame

    rng = random.Random(11)
    peers = make_table("crisp", 3, {"limit": 10}, random.Random(rng.random()))
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(3)], rng, tap=drop_one)
    net.start()
    net.run(until=600.0)
    assert len(seen) > nth, f"no {mtype} frame number {nth} went by"
    finished_alike(net)


def test_gaps_lie_below_held_frames_and_after_a_silent_seats_head() -> None:
    from p2pcards.table.recovery import MAX_ASK, find_gaps
    heads = {1: 3, 2: 10, 3: 0}
    # Seat 1: frames 5 and 7 held ahead of 3; seat 2 silent and owed; seat 3 holds nothing and is not.
    assert find_gaps({1: {5, 7, 2}}, heads.__getitem__, {2}) == [(1, 3, 4), (1, 6, 6), (2, 10, 10 + MAX_ASK - 1)]
    assert find_gaps({1: {3}}, heads.__getitem__, {1}) == []  # the next frame is held: nothing to ask


def test_a_frame_that_a_later_one_of_its_chain_came_before_is_judged_by_when_that_one_came() -> None:
    # The first tick the orderer sends to p1 is lost on that link for 3 s, asked for and lost again: the
    # orderer's next frames reach p1 meanwhile. Judged by its own late arrival, the tick would look stamped
    # long before p1's clock (an honest orderer blamed); it was on its way before the frames that came first.
    held: list[float] = []
    held_seq: list[int] = []
    overtaken: list[bool] = []

    def hold_first_tick(net: MemNet, sender: int, receiver: int, frame: bytes) -> bytes | None:
        env = parse(frame).envelope
        if receiver == 1 and env.type == "order" and env.body.get("k") == "tick" and env.round == 1 and (
                not held or env.seq == held_seq[0]):
            held.append(held[0] if held else net.now)
            held_seq.append(env.seq)
            if net.now < held[0] + 3.0:
                return None
            overtaken.append(bool(net.peers[1].chains.held))
        return frame

    net = tapped_game(11, lambda net: functools.partial(hold_first_tick, net))
    assert held and overtaken and overtaken[0]  # it came late, after later frames of its chain
    finished_alike(net)


def test_a_move_and_its_order_lost_on_their_way_to_one_seat_come_sent_again_and_blame_no_one() -> None:
    # Seed 309 of `sim crisp --players 8 --faults reorder=0.2,dup=0.1,drop=0.05`: a move, the last frame of
    # its player for a while, and the order placing it were both lost on their way to one seat. No later
    # frame showed the gaps; the probes found them seconds on, and the move, answered first, came long
    # after its stamp: the honest orderer was blamed. Frames sent again (§18.5) are not judged by when
    # they came. Here every copy of p1's frames to p2 is lost for 3 s from p1's first move, and of the
    # orderer's for 4 s, so that the move comes sent again before the order that places it.
    cut: list[float] = []
    came: list[tuple[str, str]] = []

    def lose_tail(net: MemNet, sender: int, receiver: int, frame: bytes) -> bytes | None:
        env = parse(frame).envelope
        author = net.peers[0].cfg.keys.index(env.sender)
        if not cut and author == 1 and env.type == "move" and env.round == 1:
            cut.append(net.now)
        if cut and receiver == 2 and author in (0, 1):
            if net.now < cut[0] + (4.0 if author == 0 else 3.0):
                return None
            came.append((env.type, net._kind))  # pylint: disable=protected-access
        return frame

    net = tapped_game(12, lambda net: functools.partial(lose_tail, net), journal=True)
    assert cut and came[:2] == [("move", "again"), ("order", "again")]
    finished_alike(net)
    # p2 journaled them as sent again: coming back from its journal, it judges them alike.
    peer = net.peers[2]
    records = list(peer.journal or [])
    assert sum(kind == "again" for kind, _, _ in records) >= 2
    back = TablePeer.resume(peer.cfg, peer.identity, records, net.now)
    assert back.finished and back.log_hash == peer.log_hash and back.results == peer.results


def test_a_stamp_is_judged_by_a_frame_that_came_first_hand_never_by_one_sent_again() -> None:
    from p2pcards.games.base import Move
    from p2pcards.table.bodies import Order
    from p2pcards.table.log import Log

    def log_with(move_came: float, live: bool) -> Log:
        log = Log(3, tolerance=1.0, slack=1.5)
        log.add_move((1, 4), Move("b", "draw", source="pile"), b"move", move_came, mine=False, ordering=False,
                     live=live)
        return log

    order = Order(0, 1000, "deal", (), ())
    moved = Order(1, 1500, "move", ((1, 4),), (b"move",))
    late = log_with(9.0, live=True)
    late.take(order, b"h0", 1.0)
    with pytest.raises(MalformedMessage, match="stamped 1.500 s; it reached us at 9.000 s"):
        late.take(moved, b"h1", 9.0)
    again = log_with(9.0, live=False)  # the same move, asked for 7.5 s after the orderer stamped it
    again.take(order, b"h0", 1.0)
    assert again.take(moved, b"h1", 9.0).refs == ((1, 4),)
    tick = Order(1, 1000, "tick", (), ())
    with pytest.raises(MalformedMessage, match="a tick stamped 1.000 s, long before our clock's 9.000 s"):
        late.take(tick, b"h1", 9.0)
    assert again.take(Order(2, 1500, "tick", (), ()), b"h2", 9.0, live=False).time == 1.5  # and one sent again
    # A deal is judged by our own pass of deck 0, however it came: no orderer back-dates it by sending it again.
    for live in (True, False):
        dealt = Log(3, tolerance=1.0, slack=1.5)
        dealt.passed_at = 130.0
        with pytest.raises(MalformedMessage, match="a deal stamped 100.000 s"):
            dealt.take(Order(0, 100_000, "deal", (), ()), b"h0", 131.0, live)
    # A move taken sent again whose player's own copy comes before the order is judged by that copy: a
    # seat that relays another's move as sent again, ahead of it, does not free the orderer from the bound.
    raced = log_with(1.2, live=False)
    assert raced.first_hand((1, 4), 9.0) and not raced.first_hand((1, 4), 9.5)
    ordering = Log(3, tolerance=1.0, slack=1.5)  # the orderer keeps its first copy's time for the stamp
    ordering.add_move((1, 4), Move("b", "draw", source="pile"), b"move", 1.2, mine=False, ordering=True, live=False)
    assert not ordering.first_hand((1, 4), 9.0) and ordering.next_order(9.0) == ("move", [(1, 4)], 1.2)
    raced.take(order, b"h0", 1.0)
    with pytest.raises(MalformedMessage, match="it reached us at 9.000 s"):
        raced.take(moved, b"h1", 9.0)


def test_a_frame_is_taken_at_when_it_came_not_at_the_peers_later_clock() -> None:
    # A shell that let a frame wait (a box for another seat, up to 20 ms) hands it on with when it came;
    # the peer judges and journals it at that time, even when its clock has moved on meanwhile (§18.4).
    peers = make_table("crisp", 3, CRISP, random.Random(7), journal=True)
    peers[0].keep_journal()
    ready = peers[1].start(0.0)[0].frame  # type: ignore[union-attr]
    peers[0].tick(6.0)
    peers[0].receive(ready, 5.0)
    peers[0].receive(peers[2].start(0.0)[0].frame, 7.0, live=False)  # type: ignore[union-attr]
    records = [(kind, record_time(number)) for kind, number, data in peers[0].take_journal() if kind in FRAMES]
    assert records[-2:] == [("frame", 5.0), ("again", 7.0)]
