"""Frames in, on their own: each seat's chain in order, frames ahead of their chain held, a rival frame blamed."""

from __future__ import annotations

from p2pcards.crypto.envelope import Outbox, Signed
from p2pcards.crypto.identity import generate
from p2pcards.table.chains import Chains, Precedence, frame_head, private_to
from p2pcards.table.config import TableConfig
from p2pcards.table.outputs import Emitter

IDS = [generate(f"p{i}") for i in range(3)]
CFG = TableConfig(bytes(16), "crisp", {}, tuple(i.public for i in IDS), tuple(i.name for i in IDS))


def seat_zero() -> tuple[Chains, Emitter, list[Signed]]:
    taken: list[Signed] = []
    emitter = Emitter(Outbox(IDS[0], CFG.context), CFG.names, lambda: 1)
    return Chains(CFG, 0, emitter, taken.append, lambda: 1), emitter, taken


def frames(seat: int, count: int) -> list[bytes]:
    out = Outbox(IDS[seat], CFG.context)
    return [out.seal(1, "move", {"m": {"a": "draw", "p": k}}).frame for k in range(count)]


def test_frames_in_order_are_taken_and_a_replay_is_dropped() -> None:
    chains, emitter, taken = seat_zero()
    f = frames(1, 2)
    for frame in f + f[:1]:
        chains.accept(frame)
    assert [s.envelope.seq for s in taken] == [0, 1] and chains.received(1) == 2
    assert emitter.stopped is None and not emitter.notes


def test_a_frame_ahead_of_its_chain_waits_for_the_ones_before_it() -> None:
    chains, emitter, taken = seat_zero()
    f = frames(2, 3)
    chains.accept(f[2])
    chains.accept(f[1])
    assert not taken and len(chains.held) == 2
    chains.accept(f[0])
    assert [s.envelope.seq for s in taken] == [0, 1, 2] and not chains.held


def test_two_frames_for_one_place_in_a_chain_stop_the_table_blaming_their_signer() -> None:
    chains, emitter, taken = seat_zero()
    rival = Outbox(IDS[1], CFG.context)
    rival.seal(1, "move", {"m": {"a": "draw"}})  # seq 0, never delivered
    a = rival.seal(1, "move", {"m": {"a": "draw", "p": 1}}).frame
    again = Outbox(IDS[1], CFG.context)
    again.seal(1, "move", {"m": {"a": "draw"}})
    b = again.seal(1, "move", {"m": {"a": "draw", "p": 2}}).frame
    chains.accept(a)
    chains.accept(b)
    assert emitter.stopped is not None and emitter.faults[0].blame == "p1"
    assert emitter.own[-1].envelope.type == "fault"  # the others are told


def test_a_stranger_is_noted_never_blamed() -> None:
    chains, emitter, taken = seat_zero()
    stranger = generate("zed")
    chains.accept(Outbox(stranger, CFG.context).seal(1, "move", {"m": {"a": "draw"}}).frame)
    assert not taken and emitter.stopped is None
    assert [n.kind for n in emitter.notes] == ["rejected"] and emitter.notes[0].blame is None


def test_an_accepted_message_is_handled_now_kept_for_its_round_or_dropped() -> None:
    chains, emitter, taken = seat_zero()
    out = Outbox(IDS[1], CFG.context)
    now, ahead, lobby = out.seal(1, "move", {"m": {"a": "draw"}}), out.seal(2, "key", {}), out.seal(0, "table", {})
    aid = Outbox(IDS[2], CFG.context).seal(5, "aid", {"on": True})
    stranger = Outbox(generate("zed"), CFG.context).seal(1, "move", {"m": {"a": "draw"}})
    assert chains.route(now) == 1 and chains.route(aid) == 2  # an aid has no round to wait for
    assert chains.route(ahead) is None and chains.later == [ahead]
    assert chains.route(lobby) is None and chains.route(stranger) is None and len(chains.later) == 1
    assert [n.detail for n in emitter.notes] == [
        "message dropped: its sender has no seat at this table (more like it are dropped unnoted)"]


def test_a_box_to_another_seat_or_a_move_we_do_not_order_can_wait_and_a_box_to_us_comes_soon() -> None:
    chains, _, _ = seat_zero()
    out = Outbox(IDS[1], CFG.context)
    now, soon, later = Precedence.NOW, Precedence.SOON, Precedence.LATER
    for ordering in (True, False):
        assert chains.precedence(out.seal(1, "private", {"to": 2, "box": b"x"}).frame, ordering) is later
        assert chains.precedence(out.seal(1, "private", {"to": 0, "box": b"x"}).frame, ordering) is soon
        assert chains.precedence(out.seal(1, "move", {"m": {"a": "draw"}}).frame, ordering) is (now if ordering else later)
        assert chains.precedence(out.seal(1, "order", {"e": []}).frame, ordering) is now
        assert chains.precedence(out.seal(1, "shares", {"reveals": []}).frame, ordering) is now
        assert chains.precedence(b"garbage", ordering) is now
    named = out.seal(1, "move", {"m": {"a": "draw"}})
    assert chains.precedence(named.frame, False, [(2, 0)]) is later
    assert chains.precedence(named.frame, False, [(1, named.envelope.seq)]) is now
    assert private_to(out.seal(1, "private", {"to": 2, "box": b"x"}).frame) == 2
    assert private_to(out.seal(1, "private", {"to": True, "box": b"x"}).frame) is None
    assert frame_head(out.seal(1, "aid", {"on": True}).frame) == (IDS[1].public, "aid") and frame_head(b"x") is None


def test_the_frames_we_hold_are_given_back_and_only_the_last_two_rounds_kept_whole() -> None:
    rnd = [1]
    emitter = Emitter(Outbox(IDS[0], CFG.context), CFG.names, lambda: rnd[0])
    chains = Chains(CFG, 0, emitter, lambda signed: None, lambda: rnd[0])
    ours = [emitter.outbox.seal(r, "aid", {"on": r % 2 == 0}) for r in (0, 1, 2, 3)]
    emitter.sent = {s.envelope.seq: (s.envelope.round, s.frame) for s in ours}
    theirs = Outbox(IDS[1], CFG.context)
    sealed = []
    for r in (1, 2, 3):
        rnd[0] = r
        sealed.append(theirs.seal(r, "aid", {"on": r % 2 == 0}).frame)
        chains.accept(sealed[-1])
    assert chains.frame(0, 1) == ours[1].frame and chains.frame(1, 2) == sealed[2]
    assert chains.frame(2, 0) is None and chains.frame(3, 0) is None and chains.frame(1, -1) is None
    assert chains.taken() == sealed
    chains.keep_from(3)  # round 3 begins: rounds 2 and 3 are kept whole (and our ready, of round 0)
    assert sorted(emitter.sent) == [0, 2, 3]
    assert chains.frame(1, 0) is None and chains.frame(1, 1) == sealed[1]


def test_where_the_frames_held_ahead_of_their_chains_go() -> None:
    chains, _, _ = seat_zero()
    f = frames(2, 3)
    chains.accept(f[2])
    assert chains.ahead() == [(2, 2)]


def test_a_frame_sent_again_is_taken_as_such_held_or_not_and_a_first_hand_copy_says_when_it_came() -> None:
    # protocol.md §7.2: what came sent again (R) times no stamp; a frame filling the gap below it is still
    # judged by when it came, and a later first-hand copy (held, or a replay) says when it came after all.
    taken: list[tuple[int, float | None, bool]] = []
    replays: list[tuple[int, float]] = []
    emitter = Emitter(Outbox(IDS[0], CFG.context), CFG.names, lambda: 1)
    chains: Chains

    def take(signed: Signed) -> None:
        taken.append((signed.envelope.seq, chains.came, chains.live))

    chains = Chains(CFG, 0, emitter, take, lambda: 1,
                    first_hand=lambda frame, came: replays.append((frames_of[frame], came)))
    f = frames(1, 5)
    frames_of = {frame: k for k, frame in enumerate(f)}
    chains.accept(f[2], 5.0, live=False)  # held, sent again
    chains.accept(f[1], 6.0)  # held, first hand
    chains.accept(f[0], 9.0)  # first hand, late: it was on its way before 5.0, when frame 2 came
    assert taken == [(0, 5.0, True), (1, 6.0, True), (2, 5.0, False)]
    chains.accept(f[4], 10.0, live=False)  # held sent again, then its first-hand copy comes while held
    chains.accept(f[4], 11.0)
    chains.accept(f[3], 12.0, live=False)  # sent again: not judged, whatever came after it
    assert taken[3:] == [(3, 12.0, False), (4, 10.0, True)]
    chains.accept(f[3], 13.0)  # a first-hand copy of a frame taken: its time is handed on
    chains.accept(f[3], 14.0, live=False)  # another copy sent again: nothing to say
    assert replays == [(3, 13.0)] and emitter.stopped is None
