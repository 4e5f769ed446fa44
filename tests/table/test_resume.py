"""A peer that crashes comes back from its journal into the same round, and the table finishes alike."""

from __future__ import annotations

import dataclasses
import os
import random
from pathlib import Path

import pytest

from p2pcards import files
from p2pcards.bots.base import RandomBot
from p2pcards.crypto.encoding import decode, encode
from p2pcards.crypto.envelope import parse
from p2pcards.errors import LocalError
from p2pcards.net.store import SeatStore
from p2pcards.sim.memnet import LinkModel, MemNet
from p2pcards.sim.table_game import make_table
from p2pcards.table.outputs import Send
from p2pcards.table.peer import TablePeer
from p2pcards.table.resume import Check, compact, whole_journal
from p2pcards.table.round import Stage

from test_lost_frames import CRISP, finished_alike


def crash_and_resume(net: MemNet, seat: int, records_of: list[list[tuple[str, int, bytes]]], down: float,
                     lost_tail: int = 0) -> None:
    """Seat `seat` dies now (its last `lost_tail` signed frames never left) and comes back `down` s later."""
    dead = net.peers[seat]
    records = list(dead.journal or [])
    records_of.append(records)
    if lost_tail:
        own = [r for r in records if r[0] == "frame" and parse(r[2]).envelope.sender == dead.identity.public]
        lost = {r[2] for r in own[-lost_tail:]}
        net.tap = lambda s, r, f: None if f in lost else f

    def back(net: MemNet) -> TablePeer:
        net.tap = None
        return TablePeer.resume(dead.cfg, dead.identity, records, net.now)

    net.crash(seat, down, back)


def mid_round(seat: int, applied: int) -> object:
    def stop(net: MemNet) -> bool:
        rs = net.peers[seat].rs
        return rs is not None and rs.stage is Stage.PLAYING and rs.applied >= applied
    return stop


def journal_mid_round(players: int, seeds: tuple[int, int], applied: int,
                      until: float) -> tuple[MemNet, TablePeer, list[tuple[str, int, bytes]]]:
    """A journaling Crisp table run until seat 1 has applied `applied` entries: the net, seat 1 and its journal."""
    peers = make_table("crisp", players, CRISP, random.Random(seeds[0]), journal=True)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(players)], random.Random(seeds[1]))
    net.start()
    net.run(until=until, stop=mid_round(1, applied))
    peer = net.peers[1]
    return net, peer, list(peer.journal or [])


@pytest.mark.parametrize("seat, lost_tail", [(1, 0), (0, 2)])  # seat 0 orders round 1's log
def test_a_crashed_peer_resumes_its_round_and_the_table_finishes_alike(seat: int, lost_tail: int) -> None:
    rng = random.Random(7 + seat)
    peers = make_table("crisp", 3, CRISP, random.Random(rng.random()), journal=True)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(3)], rng)
    net.start()
    net.run(until=300.0, stop=mid_round(seat, 6))
    before = net.peers[seat]
    rnd, signed = before.round, before.outbox.next_seq
    kept: list[list[tuple[str, int, bytes]]] = []
    crash_and_resume(net, seat, kept, down=3.0, lost_tail=lost_tail)
    net.run(until=600.0)
    after = net.peers[seat]
    assert after is not before and after.round >= rnd
    finished_alike(net)
    # The resumed peer signed on from where it stopped: every place of its chain holds one frame.
    assert after.outbox.next_seq > signed
    ours = {r[2] for r in kept[0] if r[0] == "frame" and parse(r[2]).envelope.sender == before.identity.public}
    assert all(after.frame(seat, parse(f).envelope.seq) in (f, None) for f in ours)


def test_resume_gives_back_the_frame_signed_at_a_place_never_a_new_one() -> None:
    net, peer, records = journal_mid_round(2, (3, 4), 2, 60.0)
    back = TablePeer.resume(peer.cfg, peer.identity, records, net.now)
    assert back.outbox.next_seq == peer.outbox.next_seq and back.outbox.head == peer.outbox.head
    assert back.round == peer.round and back.log_hash == peer.log_hash
    assert back.rs is not None and peer.rs is not None and back.rs.decks.secret.seed == peer.rs.decks.secret.seed
    assert back.take_journal() == []  # what it replayed is journaled already
    # A journal whose own frames were signed for another round cannot be resumed as if they were not.
    forged = [r for r in records if r[0] != "seed"]  # another seed: the round's own frames no longer follow
    with pytest.raises(LocalError):
        TablePeer.resume(peer.cfg, peer.identity, forged, net.now)


@pytest.mark.parametrize("game, players, options", [
    ("crisp", 3, {"limit": 30}), pytest.param("crescendo", 2, {}, marks=pytest.mark.slow)])
def test_a_whole_games_journal_replays_to_the_same_end_at_every_seat(game: str, players: int,
                                                                       options: dict[str, int]) -> None:
    """Replay is exact: the same frames at the same times make the same orders, stamps and ties (a
    time rounded on its way to the journal made an orderer's stamp another millisecond)."""
    rng = random.Random(5)
    peers = make_table(game, players, options, random.Random(rng.random()), journal=True)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(players)], rng)
    net.start()
    net.run(until=3600.0)
    for peer in net.peers:
        again = TablePeer.resume(peer.cfg, peer.identity, list(peer.journal or []), net.now)
        assert again.finished and again.log_hash == peer.log_hash and again.results == peer.results
        assert again.game.totals == peer.game.totals and again.outbox.head == peer.outbox.head


@pytest.fixture(scope="module")
def three_rounds() -> tuple[TablePeer, list[tuple[str, int, bytes]], float]:
    """Seat 1 of a journaling Crisp table in round 3, with a vote and an aid in its checkpoints, and its journal."""
    rng = random.Random(8)
    peers = make_table("crisp", 3, {"limit": 100}, random.Random(rng.random()), journal=True)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(3)], rng)
    net.start()
    net.run(until=600.0, stop=mid_round(0, 2))
    net.send_as(0, net.peers[0].gone(2, net.now, "p2 was missing"))  # a vote that stands, in the checkpoints
    net.send_as(0, net.peers[0].aid(True, net.now))
    net.run(until=600.0, stop=lambda n: n.peers[1].round == 3 and mid_round(1, 4)(n))
    return net.peers[1], list(net.peers[1].journal or []), net.now


@pytest.mark.slow
def test_a_peer_resumes_from_its_last_checkpoint_as_from_its_whole_journal(
        three_rounds: tuple[TablePeer, list[tuple[str, int, bytes]], float]) -> None:
    peer, records, now = three_rounds
    assert peer.votes.held() == ((2, 0, 1),) and peer.aided == {0}
    # The same journal with no checkpoint (and the chain positions they hold) is replayed whole.
    whole = whole_journal(records)
    assert len(whole) == len(records) - 2
    for back in (TablePeer.resume(peer.cfg, peer.identity, records, now),
                 TablePeer.resume(peer.cfg, peer.identity, whole, now)):
        assert back.round == 3 and back.log_hash == peer.log_hash and back.results == peer.results
        assert back.game.totals == peer.game.totals and back.outbox.head == peer.outbox.head
        assert back.emit.sent == peer.emit.sent and back.chains.received(0) == peer.chains.received(0)
        assert back.game.results == peer.game.results and len(back.game.results) == 2
        assert back.votes.held() == peer.votes.held() and back.aided == peer.aided
    # A crash just before the last checkpoint was stored, or just after it (before the round's seed):
    # either way the peer comes back into round 3 (with a new seed: nothing of round 3 had left it).
    at = max(i for i, r in enumerate(records) if r[0] == "check")
    for cut in (at, at + 1):
        back = TablePeer.resume(peer.cfg, peer.identity, records[:cut], now)
        assert back.round == 3 and back.stopped is None


def _resumed_state(peer: TablePeer) -> tuple[object, ...]:
    """What a resume must give back alike: the round, the game, our chain, and every place of the others' chains."""
    chains = {k: (c.next_seq, c.head, c.kept, {q: (h, r) for q, (h, _, r) in c.seen.items()},
                  {q for q, (_, f, _) in c.seen.items() if f is not None}) for k, c in peer.tracker._chains.items()}
    return (peer.round, peer.log_hash, peer.results, peer.game.totals, peer.game.results, peer.outbox.next_seq,
            peer.outbox.head, peer.emit.sent, peer.votes.held(), peer.aided, chains,
            [signed.frame for signed in peer.chains.later])


def _staged(records: list[tuple[str, int, bytes]], ours: bytes) -> list[tuple[str, int, bytes]]:
    """The journal as a store keeps it: begun anew at each checkpoint as it is written."""
    journal: list[tuple[str, int, bytes]] = []
    for record in records:
        journal.append(record)
        if record[0] == "check":
            journal = compact(journal, ours) or journal
    return journal


def test_a_journal_begun_anew_at_each_checkpoint_resumes_as_the_whole_one_and_holds_about_a_round(
        three_rounds: tuple[TablePeer, list[tuple[str, int, bytes]], float]) -> None:
    """The journal used to keep every frame of the game: it grew with every round until the table was over."""
    peer, records, now = three_rounds
    ours = peer.identity.public
    staged = _staged(records, ours)
    assert compact(records, ours) == staged and compact(records[:5], ours) is None  # no checkpoint: nothing to do
    assert _resumed_state(TablePeer.resume(peer.cfg, peer.identity, staged, now)) == \
        _resumed_state(TablePeer.resume(peer.cfg, peer.identity, records, now))
    # Of frames before round 2 (round 3's checkpoint keeps the round before whole), only our own of round 0 are kept;
    # the others' places there are hashes, 32 bytes and a round each.
    frames = [parse(d).envelope for k, _, d in staged if k in ("frame", "again")]
    assert all(e.round >= 2 or (e.round == 0 and e.sender == ours) for e in frames)
    assert sum(len(d) for _, _, d in staged) < 0.7 * sum(len(d) for _, _, d in records)
    # A frame journaled out of its chain is damage, not something to compact.
    at = next(i for i, r in enumerate(records) if r[0] == "frame" and parse(r[2]).envelope.sender != ours)
    with pytest.raises(LocalError, match="does not follow its chain"):
        compact(records[:at] + records[at + 1:], ours)


class Crash(BaseException):
    """The process dies here (nothing catches it, as nothing runs after a SIGKILL)."""


@pytest.mark.parametrize("point", ["before the new file is written", "after it is written, before the rename",
                                   "after the rename, before the directory is synced", "none"])
def test_a_store_crashed_at_any_point_of_compaction_keeps_a_journal_that_resumes_alike(
        three_rounds: tuple[TablePeer, list[tuple[str, int, bytes]], float], point: str, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    peer, records, _ = three_rounds
    at = max(i for i, r in enumerate(records) if r[0] == "check") + 1  # stored with the checkpoint of round 3
    store = SeatStore(tmp_path, peer.cfg, peer.me)
    for record in records[:at - 1]:  # as a shell stores them, the first checkpoint compacting as it goes
        store.append([record], sync=False)

    def crash(*args: object) -> None:
        raise Crash(point)

    target = {"before the new file is written": (files, "_temporary"),
              "after it is written, before the rename": (os, "replace"),
              "after the rename, before the directory is synced": (files, "fsync_dir")}.get(point)
    if target is not None:
        monkeypatch.setattr(*target, crash)
        with pytest.raises(Crash):
            store.append(records[at - 1:at])
        monkeypatch.undo()
    else:
        store.append(records[at - 1:at])
    store.close()
    old = _staged(records[:at - 1], peer.identity.public) + records[at - 1:at]
    new = _staged(records[:at], peer.identity.public)
    again = SeatStore(tmp_path, peer.cfg, peer.me)  # restarted: what a crash left is the old journal or the new
    crashed_before = [(files, "_temporary"), (os, "replace")]
    assert again.load() == (old if target in crashed_before else new)
    assert [p.name for p in tmp_path.iterdir() if p.name not in ("journal", "table")] == []  # no temporary left
    again.append(records[at:])
    again.close()
    # Either resumes as the whole journal does (the test above): each is the journal begun anew at a checkpoint.
    assert SeatStore(tmp_path, peer.cfg, peer.me).load() == (old if target in crashed_before else new) + records[at:]


@pytest.mark.parametrize("seat", [0, pytest.param(2, marks=pytest.mark.slow)])
def test_a_peer_crashed_in_a_later_round_resumes_from_its_checkpoint_and_the_table_finishes_alike(seat: int) -> None:
    rng = random.Random(9 + seat)
    peers = make_table("crisp", 3, {"limit": 40}, random.Random(rng.random()), journal=True)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(3)], rng)
    net.start()
    net.run(until=600.0, stop=lambda n: n.peers[seat].round == 2 and mid_round(seat, 3)(n))
    assert any(r[0] == "check" for r in net.peers[seat].journal or [])
    crash_and_resume(net, seat, [], down=3.0, lost_tail=1)
    net.run(until=1200.0)
    for peer in net.peers:
        assert peer.finished and not peer.faults, peer.notes[-4:]
    # The resumed peer's notes begin at its checkpoint; what the game holds is the same everywhere.
    first = net.peers[0]
    for peer in net.peers[1:]:
        assert (peer.log_hash, peer.results, peer.game.totals) == (first.log_hash, first.results, first.game.totals)
        assert peer.game.results == first.game.results and peer.game.winners == first.game.winners


def test_a_peer_whose_shares_were_made_ahead_resumes_with_the_very_frames_it_signed() -> None:
    # Shares made ahead carry proofs with a random nonce: made again on resume, they differ from the
    # journaled ones but for the proofs, and the journaled frames are the ones given back.
    rng = random.Random(11)
    peers = make_table("crisp", 3, CRISP, random.Random(rng.random()), journal=True)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(3)], rng)
    made = [0]

    def prepared_until(stop: object) -> object:
        def step(net: MemNet) -> bool:
            made[0] += sum(p.prepare() for p in net.peers)  # as a shell does while idle
            return stop(net)  # type: ignore[operator]
        return step

    net.start()
    net.run(until=300.0, stop=prepared_until(mid_round(1, 10)))
    assert made[0] > 0
    kept: list[list[tuple[str, int, bytes]]] = []
    crash_and_resume(net, 1, kept, down=3.0)
    net.run(until=600.0, stop=prepared_until(lambda net: False))
    finished_alike(net)


def test_a_frame_signed_anew_on_resume_is_journaled_and_sent_so_a_second_restart_gives_it_back() -> None:
    # Killed after a step signed a sealed box but before the box was stored: the replay signs it anew
    # (sealing is random). That box must be journaled before it leaves, or a second restart would sign
    # yet another box at that place of our chain (two frames for one place: equivocation).
    net, peer, records = journal_mid_round(3, (21, 22), 6, 300.0)
    boxes = [i for i, r in enumerate(records) if r[0] == "frame" and parse(r[2]).envelope.sender == peer.identity.public
             and parse(r[2]).envelope.type == "private"]
    cut = records[:boxes[-1]]  # the last box we sealed, and all after it, never reached the disk
    seq = parse(records[boxes[-1]][2]).envelope.seq
    back = TablePeer.resume(peer.cfg, peer.identity, cut, net.now)
    anew = back.emit.sent[seq][1]
    assert anew != records[boxes[-1]][2]  # sealed again: another box for the same shares
    stored = back.take_journal()
    assert ("frame", anew) in {(kind, data) for kind, _, data in stored}  # journaled before it is sent ...
    assert anew in [out.frame for out in back.go_on(net.now) if isinstance(out, Send)]  # ... and then sent
    again = TablePeer.resume(peer.cfg, peer.identity, cut + stored, net.now)
    assert again.emit.sent[seq][1] == anew and again.outbox.head == back.outbox.head
    assert again.take_journal() == []


def test_a_damaged_journal_is_a_local_error_not_a_crash() -> None:
    net, peer, records = journal_mid_round(2, (3, 4), 2, 60.0)
    at = next(i for i, r in enumerate(records) if r[0] == "frame")
    garbled = records[:at] + [("frame", records[at][1], b"not a frame")] + records[at + 1:]
    with pytest.raises(LocalError, match="damaged"):
        TablePeer.resume(peer.cfg, peer.identity, garbled, net.now)
    check = Check(2, 1.0, 0, bytes(32), (0, 0), (0, 0), (), (), [])
    kind, rnd, data = check.record()
    with pytest.raises(LocalError):
        Check.parse((kind, rnd, encode([(1 << 64) - 1, *decode(data)[1:]])))  # a time no clock gives


def test_a_checkpoint_keeps_the_games_clock_so_a_resumed_round_is_judged_from_the_same_time() -> None:
    check = Check(3, 100.5, 7, bytes(32), (1, 2), (0, 1), (1,), ((2, 0, 1),), [], ((0, (2,)),), 98.25)
    assert Check.parse(check.record()) == check
    kind, rnd, data = check.record()
    older = Check.parse((kind, rnd, encode(decode(data)[:9])))  # written before checkpoints kept the clock
    assert older == dataclasses.replace(check, clock=0.0)


def test_a_peer_that_took_late_orders_while_it_found_the_orderer_missing_resumes_alike() -> None:
    """A seat frozen a while (kill -STOP, then -CONT) finds every link missing when it wakes, then takes the
    orders stamped while it slept, late: fine, its orderer was missing to it (protocol.md §14.10). Killed
    later, it replays its journal, and must judge those orders alike: it did not (the absences were not
    journaled), signed a fault where it had signed a private box, and could never come back."""
    rng = random.Random(21)
    peers = make_table("crisp", 3, {"limit": 20, "crisp_window_s": 0.5}, random.Random(rng.random()), journal=True)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(3)], rng)
    net.start()
    net.run(until=300.0, stop=mid_round(1, 6))
    start = net.now
    net.seat_links[1] = LinkModel(delay=8.0)  # seat 1 sleeps: what it sends and what is sent to it waits

    def wakes(net: MemNet) -> None:  # its network layer finds the links quiet first, then takes what waited
        for j in (0, 2):
            net.peers[1].absent(j, True, net.now)
            net.peers[1].silent(j, start, net.now)

    def healed(net: MemNet) -> None:
        del net.seat_links[1]
        for j in (0, 2):
            net.peers[1].absent(j, False, net.now)

    net.call_at(start + 7.9, wakes)
    net.call_at(start + 8.5, healed)
    net.run(until=900.0)
    finished_alike(net)
    peer = net.peers[1]
    again = TablePeer.resume(peer.cfg, peer.identity, list(peer.journal or []), net.now)
    assert not again.faults and again.finished and again.log_hash == peer.log_hash
    assert again.game.totals == peer.game.totals and again.outbox.head == peer.outbox.head


def test_a_store_that_keeps_the_whole_game_is_never_begun_anew(
        three_rounds: tuple[TablePeer, list[tuple[str, int, bytes]], float], tmp_path: Path) -> None:
    """A client that records the game (`play --record`) makes its recording again from its journal on a comeback."""
    peer, records, _ = three_rounds
    store = SeatStore(tmp_path, peer.cfg, peer.me, compacting=False)
    store.append(records)
    assert store.successor(dataclasses.replace(peer.cfg, table=bytes(16)), peer.me).compacting is False
    assert store.load() == records
    store.close()


@pytest.mark.parametrize("damage", ["a sender twice", "a short hash", "a round held whole", "a round below 0"])
def test_a_hashes_record_no_compaction_writes_is_refused_not_resumed_from(
        three_rounds: tuple[TablePeer, list[tuple[str, int, bytes]], float], damage: str) -> None:
    """Each was taken: a hash there is checked only by a frame that follows it, and the middle ones have none."""
    peer, records, now = three_rounds
    staged = _staged(records, peer.identity.public)
    at = next(i for i, r in enumerate(staged) if r[0] == "hashes")
    wire = decode(staged[at][2])
    assert isinstance(wire, list) and wire
    sender, places = wire[0]
    assert isinstance(places, list) and len(places) > 3
    middle = places[1]
    assert isinstance(middle, list)
    changed = {"a sender twice": [*wire, [sender, places]],
               "a short hash": [[sender, [places[0], [middle[0][:31], middle[1]], *places[2:]]], *wire[1:]],
               "a round held whole": [[sender, [places[0], [middle[0], 2], *places[2:]]], *wire[1:]],
               "a round below 0": [[sender, [places[0], [middle[0], -1], *places[2:]]], *wire[1:]]}[damage]
    damaged = staged[:at] + [("hashes", 0, encode(changed))] + staged[at + 1:]
    with pytest.raises(LocalError, match="hashes"):
        TablePeer.resume(peer.cfg, peer.identity, damaged, now)


def test_a_peer_that_left_before_a_restart_resumes_stopped_in_words_that_say_so() -> None:
    # It said "stopped before the restart (leave)": a frame type in brackets, not why the table stopped for us.
    net, peer, _ = journal_mid_round(2, (3, 4), 2, 600.0)
    net.send_as(1, peer.leave(net.now, "quit"))
    back = TablePeer.resume(peer.cfg, peer.identity, list(peer.journal or []), net.now)
    assert back.stopped == "we left before the restart"



@pytest.mark.parametrize("went", ["closed", "left"])
def test_a_seat_that_closed_its_link_or_left_stays_so_when_we_come_back_from_our_journal(went: str) -> None:
    # Seat 1's process killed (its kernel closed the link) or gone by its `leave`, seat 2 silent; then we crash and
    # come back, and the network layer finds both missing again ("no link since we came back"). Taken as silence,
    # both missing at once since we came back read "cut off", not "too few seats remain" (protocol.md §14.9).
    from test_cut_off import types, vote
    from test_going_on import new_table, playing

    net = new_table(3, 25, journal=True)
    net.start()
    net.run(until=300.0, stop=playing(0, 1))
    if went == "left":
        net.send_as(1, net.peers[1].leave(net.now, "bye"))
    net.dead.update({1, 2})
    net.peers[0].absent(1, True, net.now, closed=went == "closed")
    net.peers[0].absent(2, True, net.now + 0.1)
    net.run(until=net.now + 5.0)
    peer = net.peers[0]
    back = TablePeer.resume(peer.cfg, peer.identity, list(peer.journal or []), net.now)
    net.revive(0, back)
    for seat in (1, 2):
        back.absent(seat, True, net.now)
    assert back.absences.closed == ({1} if went == "closed" else set())
    net.run(until=net.now + 10.0)
    assert types(vote(net, 0, [1, 2] if went == "closed" else [2]))[-1] == "out"
    assert back.finished and back.cut_off is None and back.gave_up is None
    assert any(n.kind == "over" and "too few seats remain" in n.detail for n in back.notes)


def test_a_resumed_seat_journals_the_frames_its_replay_signs_once_and_no_copy_sent_again(
        monkeypatch: pytest.MonkeyPatch) -> None:
    # What the replay leaves to send may hold copies (our pass shown again to the table, another seat's frame
    # relayed): only what we signed is journaled as signed, once; a copy went in too, our frame twice.
    from p2pcards.table.journal import Journal

    net, peer, records = journal_mid_round(3, (21, 22), 6, 300.0)
    boxes = [i for i, r in enumerate(records) if r[0] == "frame" and parse(r[2]).envelope.sender == peer.identity.public
             and parse(r[2]).envelope.type == "private"]
    cut = records[:boxes[-1]]  # the last box we sealed never reached the disk: the replay seals it anew
    theirs = next(r[2] for r in records if r[0] == "frame" and parse(r[2]).envelope.sender != peer.identity.public)
    replay = Journal.replay

    def with_copies(self: Journal, *args: object, **kwargs: object) -> None:
        replay(self, *args, **kwargs)  # type: ignore[arg-type]
        emit = args[2]
        fresh = [out.frame for out in emit.out if isinstance(out, Send)]  # type: ignore[attr-defined]
        emit.out += [Send(frame, again=True) for frame in [*fresh, theirs]]  # type: ignore[attr-defined]
    monkeypatch.setattr(Journal, "replay", with_copies)
    back = TablePeer.resume(peer.cfg, peer.identity, cut, net.now)
    signed = [out.frame for out in back.emit.out if isinstance(out, Send) and not out.again]
    assert signed and all(parse(f).envelope.sender == peer.identity.public for f in signed)
    assert [data for kind, _, data in back.take_journal() if kind in ("frame", "again")] == signed
