"""A host opens a table, guests join, the host seats them, and the seated peers play a game."""

from __future__ import annotations

import random
import secrets

import pytest

from p2pcards.bots.base import RandomBot
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from p2pcards.crypto.identity import Identity, generate
from p2pcards.errors import InputError, MalformedMessage
from p2pcards.sim.memnet import MemNet
from p2pcards.table.config import TableConfig
from p2pcards.table.lobby import Lobby


def test_lobby_seats_guests_in_join_order_and_the_table_plays() -> None:
    rng = random.Random(5)
    table = secrets.token_bytes(16)
    host_id, ann_id, bob_id = generate("host"), generate("ann"), generate("bob")
    host, opened = Lobby.open(host_id, table, "crisp", {"limit": 15, "discard_draw": True, "draw_seconds": 30})
    ann = Lobby(ann_id, table, host_id.public)
    bob = Lobby(bob_id, table, host_id.public)
    frames = [opened, ann.join(), bob.join()]
    for lobby in (host, ann, bob):
        for frame in frames:
            lobby.receive(frame)
    seats = host.seat()
    for lobby in (ann, bob):
        lobby.receive(seats)
    assert all(not lobby.errors for lobby in (host, ann, bob))
    assert host.config == ann.config == bob.config
    assert host.config is not None and host.config.names == ("host", "ann", "bob")
    assert host.config.options == {"limit": 15, "discard_draw": True, "draw_seconds": 30}
    peers = [lobby.table_peer() for lobby in (host, ann, bob)]
    net = MemNet(peers, [RandomBot(random.Random(i)) for i in range(3)], rng)
    net.start()
    net.run(until=3600)
    assert all(p.finished and p.stopped is None for p in peers), [p.stopped for p in peers]
    assert len({tuple(p.game.totals) for p in peers}) == 1


def test_lobby_refuses_strangers_bad_options_and_duplicate_names() -> None:
    table = secrets.token_bytes(16)
    host_id = generate("host")
    with pytest.raises(InputError):
        Lobby.open(host_id, table, "crisp", {"limit": 0})
    with pytest.raises(InputError):
        Lobby.open(host_id, table, "chess", {})
    with pytest.raises(InputError):
        Lobby.open(host_id, table, "crisp", {"draw_seconds": 20})
    with pytest.raises(InputError):
        Lobby.open(host_id, table, "crisp", {"crisp_window_s": 0})
    host, _ = Lobby.open(host_id, table, "crescendo", {})
    twin = Lobby(generate("host"), table, host_id.public)
    host.receive(twin.join())
    assert host.errors and "name" in host.errors[-1]
    host.receive(b"\x00" * 80)
    assert len(host.errors) == 2
    with pytest.raises(InputError):
        twin.table_peer()


@pytest.mark.parametrize("seats", [3, 2])
def test_a_peer_that_leaves_is_voted_gone_at_once_and_the_others_go_on_or_end(seats: int) -> None:
    from p2pcards.sim.table_game import make_table

    rng = random.Random(9)
    peers = make_table("crisp", seats, {"limit": 100}, random.Random(3))
    net = MemNet(peers, [RandomBot(random.Random(i)) for i in range(seats)], rng)
    net.start()
    net.run(until=2.0)
    assert not any(p.stopped for p in peers)
    for out in peers[1].leave(net.now, "dinner is ready"):
        net._outputs(1, [out])
    net.run(until=4.0)  # well within gone_after: the leave itself is the reason to vote
    assert peers[1].stopped and "we left" in peers[1].stopped
    others = [p for i, p in enumerate(peers) if i != 1]
    for p in others:
        assert p.stopped is None and not p.faults and p.finished
        assert any("p1 left the table (dinner is ready)" in n.detail for n in p.notes)
        assert any(n.detail == "p1 is out: round 1 is void" for n in p.notes)
    if seats == 3:  # the two left go on at the same new table, without p1
        assert all(p.successor is not None and p.successor.names == ("p0", "p2") for p in others)
        assert others[0].successor == others[1].successor
    else:
        assert all(p.successor is None and p.notes[-1].detail.startswith("too few seats remain") for p in others)


def test_two_peers_that_leave_at_once_are_put_out_together_and_the_other_two_go_on() -> None:
    from p2pcards.sim.table_game import make_table

    peers = make_table("crisp", 4, {"limit": 100}, random.Random(4))
    net = MemNet(peers, [RandomBot(random.Random(i)) for i in range(4)], random.Random(10))
    net.start()
    net.run(until=2.0)
    for seat in (1, 3):  # both leave before either's leave reaches the other
        net._outputs(seat, peers[seat].leave(net.now, "time for bed"))
    net.run(until=4.0)
    others = [peers[0], peers[2]]
    for p in others:
        assert p.stopped is None and not p.faults and p.finished, p.notes[-4:]
        assert any(n.detail == "p1, p3 are out: round 1 is void" for n in p.notes)
        assert p.successor is not None and p.successor.names == ("p0", "p2")
    assert others[0].successor == others[1].successor


def test_names_are_checked_in_utf8_bytes_where_they_arrive() -> None:
    table = secrets.token_bytes(16)
    host_id = generate("host")
    host, opened = Lobby.open(host_id, table, "crisp", {"limit": 15, "draw_seconds": None})
    long = Identity(Ed25519PrivateKey.generate(), "€" * 11)  # 11 code points, 33 bytes: made past `generate`'s check
    fine = generate("é" * 16)  # 32 bytes
    guests = [Lobby(g, table, host_id.public) for g in (long, fine)]
    for guest in guests:
        host.receive(guest.join())
    assert list(host.names.values()) == ["host", "é" * 16]
    assert len(host.errors) == 1 and "bytes" in host.errors[0]
    wire = host.seat()
    guest = guests[1]
    for frame in (opened, wire):
        guest.receive(frame)
    assert guest.config == host.config and not guest.errors


def test_a_config_whose_names_are_not_names_is_malformed() -> None:
    keys = [generate(n).public for n in ("a", "b")]
    base = TableConfig(bytes(16), "crisp", {}, tuple(keys), ("a", "b")).to_wire()
    for names in ([1, 2], ["a", "b\x00"], ["a", "x" * 33], ["a", " b"]):
        with pytest.raises(MalformedMessage):
            TableConfig.from_wire({**base, "names": names})  # type: ignore[dict-item]


def test_a_config_reads_its_dealer_and_game_only_as_the_int_and_str_they_are() -> None:
    keys = [generate(n).public for n in ("a", "b")]
    base = TableConfig(bytes(16), "crisp", {}, tuple(keys), ("a", "b"), 1).to_wire()
    assert TableConfig.from_wire(base).first_dealer == 1
    for bad in ({"dealer": "1"}, {"dealer": b"1"}, {"dealer": True}, {"game": b"crisp"}):
        with pytest.raises(MalformedMessage):
            TableConfig.from_wire({**base, **bad})  # type: ignore[dict-item]


def test_a_guest_refuses_seats_that_do_not_carry_the_nonce_it_sent() -> None:
    table = secrets.token_bytes(16)
    host_id, ann_id = generate("host"), generate("ann")
    host, opened = Lobby.open(host_id, table, "crescendo", {})
    ann = Lobby(ann_id, table, host_id.public)
    for frame in (opened, ann.join()):
        host.receive(frame)
        ann.receive(frame)
    assert host.nonces[ann_id.public] == ann.nonce
    host.nonces[ann_id.public] = bytes(32)  # a host that would replay ann's frames of another table
    ann.receive(host.seat())
    assert ann.config is None and ann.errors and "nonce" in ann.errors[-1]
    with pytest.raises(InputError):
        ann.table_peer()


@pytest.mark.parametrize("dealer, order", [(1, (0, 1, 2)), (0, (1, 0, 2))])
def test_a_guest_refuses_seats_where_the_host_is_not_seat_0_and_first_dealer(dealer: int, order: tuple[int, ...]) -> None:
    # Every seat's rules say the host, the first seat, deals round 1 (p2pcards rules, the `?` screen): a host
    # that seats itself elsewhere, or names another dealer, would deal a game its guests' rules do not describe.
    table = secrets.token_bytes(16)
    ids = [generate("host"), generate("ann"), generate("bob")]
    host, opened = Lobby.open(ids[0], table, "crisp", {})
    ann, bob = Lobby(ids[1], table, ids[0].public), Lobby(ids[2], table, ids[0].public)
    frames = [opened, ann.join(), bob.join()]
    for lobby in (host, ann):
        for frame in frames:
            lobby.receive(frame)
    seated = [ids[i] for i in order]
    config = TableConfig(table, "crisp", {}, tuple(i.public for i in seated), tuple(i.name for i in seated), dealer,
                         tuple(host.nonces[i.public] for i in seated))
    ann.receive(host.outbox.seal(0, "seats", {"config": config.to_wire()}).frame)
    assert ann.config is None and ann.errors and "seat 0" in ann.errors[-1]


def test_a_guest_that_left_the_lobby_joins_again_with_a_fresh_join_and_is_seated() -> None:
    # A player who pressed Esc in a table's lobby and chose the table again was refused for good: the host still
    # followed its chain, so the new join was "two different signed messages at seq 0" (§6.1: it joins anew).
    table = secrets.token_bytes(16)
    host_id, ann_id, bob_id = generate("host"), generate("ann"), generate("bob")
    host, opened = Lobby.open(host_id, table, "crisp", {})
    ann, bob = Lobby(ann_id, table, host_id.public), Lobby(bob_id, table, host_id.public)
    first, bob_join = ann.join(), bob.join()
    for lobby in (host, ann, bob):
        for frame in (opened, first, bob_join):
            lobby.receive(frame)
    host.drop(ann_id.public)  # ann's link ended before the seats
    assert "ann" not in host.names.values()
    again = Lobby(ann_id, table, host_id.public)  # ann's client joins anew: a new chain, a new nonce
    second = again.join()
    host.receive(second)
    assert not host.errors and host.names[ann_id.public] == "ann" and host.nonces[ann_id.public] == again.nonce
    bob.receive(second)  # the host relays it: bob, who holds ann's first join, takes it as ann having come back
    for frame in (opened, bob_join, second):
        again.receive(frame)
    host.receive(first)  # the old join again changes nothing: the new chain is followed now
    assert host.errors and host.nonces[ann_id.public] == again.nonce
    seats = host.seat()
    for lobby in (again, bob):
        lobby.receive(seats)
    assert not bob.errors and not again.errors, (bob.errors, again.errors)
    assert again.config == bob.config == host.config and host.config is not None
    assert host.config.names == ("host", "bob", "ann")


def test_every_guest_is_told_who_left_the_lobby_and_its_list_is_the_hosts() -> None:
    # A guest's list and count of seats kept a guest that had left until the seats came: only the host was told.
    table = secrets.token_bytes(16)
    host_id, ann_id, bob_id, cy_id = generate("host"), generate("ann"), generate("bob"), generate("cy")
    host, opened = Lobby.open(host_id, table, "crisp", {})
    ann, bob = Lobby(ann_id, table, host_id.public), Lobby(bob_id, table, host_id.public)
    history = [opened, ann.join(), bob.join()]
    for lobby in (host, ann, bob):
        for frame in history:
            lobby.receive(frame)
    left = host.leave(ann_id.public)  # ann's link ended before the seats
    bob.receive(left)
    assert host.names == bob.names == {host_id.public: "host", bob_id.public: "bob"} and not bob.errors
    # A guest who comes later is sent the host's chain (table, left) and the joins of those still there.
    cy = Lobby(cy_id, table, host_id.public)
    for frame in (opened, left, history[2], cy.join()):
        cy.receive(frame)
    assert list(cy.names.values()) == ["host", "bob", "cy"] and not cy.errors
    # ann, back under the same key, is sent the host's record of its earlier visit: it changes nothing for ann.
    again = Lobby(ann_id, table, host_id.public)
    second = again.join()
    for lobby in (host, bob):
        lobby.receive(second)
    for frame in (opened, left, history[2], second):
        again.receive(frame)
    assert not again.errors and list(again.names.values()) == ["host", "bob", "ann"]
    assert list(bob.names.values()) == list(host.names.values()) == ["host", "bob", "ann"]


@pytest.mark.parametrize("named", ["host", "short", "after the seats"])
def test_a_left_that_names_the_host_or_no_key_or_comes_after_the_seats_is_malformed(named: str) -> None:
    table = secrets.token_bytes(16)
    host_id, ann_id, bob_id = generate("host"), generate("ann"), generate("bob")
    host, opened = Lobby.open(host_id, table, "crisp", {})
    ann, bob = Lobby(ann_id, table, host_id.public), Lobby(bob_id, table, host_id.public)
    frames = [opened, ann.join(), bob.join()]
    for lobby in (host, ann):
        for frame in frames:
            lobby.receive(frame)
    if named == "after the seats":
        ann.receive(host.seat())
        key = bob_id.public
    else:
        key = host_id.public if named == "host" else bob_id.public[:31]
    names = dict(ann.names)
    ann.receive(host.outbox.seal(0, "left", {"key": key}).frame)
    assert ann.errors and ann.names == names
