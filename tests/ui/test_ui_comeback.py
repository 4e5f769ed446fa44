"""Coming back after a crash: where the client journals its seat, what it makes of what it finds there at start,
and the lobby's offer (headless: pipe input, no terminal). The whole story between processes is in
test_ui_terminal.py (a client killed with SIGKILL mid-round)."""

from __future__ import annotations

import asyncio
import random
import secrets
import time
from dataclasses import replace
from functools import partial
from pathlib import Path
from typing import Any

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pcards.crypto.encoding import decode, encode
from p2pcards.crypto.identity import Identity, generate
from p2pcards.errors import InputError, LocalError
from p2pcards.files import write_file
from p2pcards.bots.base import RandomBot
from p2pcards.net.store import Lock, NodeState, SeatStore, begun_anew
from p2pcards.sim.memnet import MemNet
from p2pcards.sim.table_game import make_table
from p2pcards.table.config import TableConfig
from p2pcards.ui.client import plain
from p2pcards.ui.comeback import STALE_S, Saved, default_state_dir, find
from p2pcards.ui.lobby import LobbyClient, NoDirectory, run_lobby, run_lobby_app
from p2pcards.ui.session import NetTable

store_file = partial(write_file, overwrite=True, private=True)  # as a seat writes its store's files


def journal(directory: Path, me: Identity, public: bytes | None = None, records: int = 1) -> TableConfig:
    """What a seat at a Crisp table with Bo and Cy leaves in `directory` when its client is killed (as Node writes it)."""
    bo, cy = generate("Bo"), generate("Cy")
    cfg = TableConfig(secrets.token_bytes(16), "crisp", {"limit": 50}, (bo.public, me.public, cy.public),
                      ("Bo", me.name, "Cy"))
    store = SeatStore(directory, cfg, 1)
    store.append([("seed", 1, secrets.token_bytes(32))] * records)
    store.close()
    store_file(directory / "node", NodeState(me.public if public is None else public, 0, {bo.public: [("127.0.0.1", 9)]}, cfg, 1).to_bytes())
    return cfg


def test_the_state_directory_follows_p2pcards_home_then_xdg() -> None:
    assert default_state_dir({"P2PCARDS_HOME": "/h"}) == Path("/h/state")  # beside the identity it belongs to
    assert default_state_dir({"XDG_STATE_HOME": "/x"}) == Path("/x/p2pcards")
    assert default_state_dir({"XDG_STATE_HOME": "rel"}) == Path.home() / ".local" / "state" / "p2pcards"
    assert default_state_dir({}) == Path.home() / ".local" / "state" / "p2pcards"


def test_one_client_at_a_time_holds_the_state_directory_and_it_is_the_users_alone(tmp_path: Path) -> None:
    state = tmp_path / "deep" / "state"
    with Lock(state):
        assert state.stat().st_mode & 0o777 == 0o700  # the journal holds the round seeds
        assert all(f.stat().st_mode & 0o777 == 0o600 for f in state.iterdir())  # the lock too, whatever the umask
        with pytest.raises(InputError, match="another p2pcards process of yours is using"):
            with Lock(state):
                pass
    with Lock(state):  # let go when the first ended
        pass


def test_the_first_client_makes_the_identity_directory_its_users_alone_too(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # With $P2PCARDS_HOME not made yet, the lobby's lock makes $P2PCARDS_HOME/state first: the identity directory
    # it makes on the way must be 0700 as protocol.md §3 says, not left at the umask's 0755 for the key to go in.
    from p2pcards.crypto.identity import KEY_FILE, load_or_create

    home = tmp_path / "new" / "home"
    monkeypatch.setenv("P2PCARDS_HOME", str(home))
    with Lock(default_state_dir()):
        load_or_create()
    assert (home / KEY_FILE).is_file()
    assert {p.name: p.stat().st_mode & 0o777 for p in (tmp_path / "new", home, home / "state")} == {
        "new": 0o700, "home": 0o700, "state": 0o700}


def test_an_unfinished_game_of_ours_is_offered_with_who_was_there(tmp_path: Path) -> None:
    me = generate("Tess")
    cfg = journal(tmp_path, me)
    saved, why = find(tmp_path, me)
    assert why is None and saved is not None and saved.node.config == cfg and saved.node.seat == 1
    assert "You were playing Crisp with Bo, Cy" in saved.summary() and not saved.late()
    assert (tmp_path / "journal").exists()  # offered, not yet touched
    later, _ = find(tmp_path, me, now=time.time() + 300)
    assert later is not None and later.late() and "5 min ago" in later.summary()


def test_a_game_gone_on_without_a_seat_is_as_old_as_its_last_journal_write_not_the_first_tables(
        tmp_path: Path) -> None:
    # A LAN table voted a seat out and went on; our seat journals the table that goes on in a directory within
    # (SeatStore.successor). Killed in it, the client said "29 s ago" when it was 13, and after 10 minutes in
    # the table that went on, it cleared the game as long over while the others were waiting for us.
    import os
    me = generate("Tess")
    cfg = journal(tmp_path, me)
    old = time.time() - (STALE_S + 60)
    for name in ("journal", "node", "table"):
        os.utime(tmp_path / name, (old, old))
    after = SeatStore(tmp_path, cfg, 1).successor(replace(cfg, table=secrets.token_bytes(16)), 1)
    after.append([("seed", 1, secrets.token_bytes(32))])
    after.close()
    saved, why = find(tmp_path, me)
    assert why is None and saved is not None and saved.age < 5 and not saved.late(), why


def test_the_offer_names_who_sits_at_the_table_that_went_on_not_who_left(tmp_path: Path) -> None:
    # Bob quit (Q) and the table went on with Ann and Cat; Cat's client, killed, offered "You were playing Crisp
    # with Ann, Bob". It now names whom she was playing with when it stopped.
    me = generate("Tess")
    cfg = journal(tmp_path, me)  # Bo, Tess, Cy
    after = SeatStore(tmp_path, cfg, 1).successor(
        replace(cfg, table=secrets.token_bytes(16), keys=cfg.keys[1:], names=cfg.names[1:]), 0)
    after.close()
    saved, _ = find(tmp_path, me)
    assert saved is not None and "You were playing Crisp with Cy (table" in saved.summary(), saved.summary()
    fresh = tmp_path / "fresh"
    fresh.mkdir()
    journal(fresh, me)
    again, _ = find(fresh, me)
    assert again is not None and "with Bo, Cy (table" in again.summary()


@pytest.mark.parametrize("damage, message", [
    ("other", "another identity"),
    ("node", "could not be read"),
    ("key", "its public key is not 32 bytes"),
    ("older", "older p2pcards, which kept a copy of the signing key"),
    ("stale", "long over"),
    ("no node", None),
])
def test_a_journal_not_ours_unreadable_or_long_over_is_cleared_with_a_clear_message(
        tmp_path: Path, damage: str, message: str | None) -> None:
    me = generate("Tess")
    journal(tmp_path, me, generate("Tess").public if damage == "other" else b"\x01" * 7 if damage == "key" else None)
    if damage == "node":
        (tmp_path / "node").write_bytes(b"\xc1 not msgpack")
    if damage == "older":  # it held a copy of the identity key: not taken from there, and cleared with it
        node: Any = decode((tmp_path / "node").read_bytes())
        (tmp_path / "node").write_bytes(encode({**node, "key": me.key.private_bytes_raw()}))
    if damage == "no node":  # killed between seating and writing where it listens
        (tmp_path / "node").unlink()
    saved, why = find(tmp_path, me, now=time.time() + (STALE_S + 1 if damage == "stale" else 0))
    assert saved is None
    assert (why is None) if message is None else (why is not None and message in why), why
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing left to trip the next table


def test_a_journal_that_cannot_be_replayed_is_a_local_error_not_a_traceback(tmp_path: Path) -> None:
    me = generate("Tess")
    journal(tmp_path, me)
    store_path = tmp_path / "journal"
    store_path.write_bytes(store_path.read_bytes() + b"\x00\x00\x00\x0cf" + bytes(8) + b"\x01\x02\x03")  # a cut frame
    saved = NodeState.load(tmp_path)
    assert saved is not None

    async def main() -> None:
        table = NetTable(me, state=tmp_path, saved=saved, interfaces=["127.0.0.1"])
        try:
            with pytest.raises(LocalError, match="the saved game cannot be taken up again"):
                await table.start()
        finally:
            await table.leave()

    asyncio.run(main())
    assert not (tmp_path / "journal").exists()  # left: cleared


def offer(tmp_path: Path, keys: str) -> tuple[object, LobbyClient]:
    """The lobby showing our saved game; `keys` pressed; what the lobby answered."""
    me = generate("Tess")
    journal(tmp_path, me)
    saved, _ = find(tmp_path, me)
    lobby = LobbyClient(me, NoDirectory(), joinable=True, comeback=saved)
    screen = "".join(text for line in lobby.lines(80, 24) for _, text in line)
    assert "Your game is not over" in screen and "Enter go back into the game" in screen

    async def main() -> object:
        with create_pipe_input() as inp:
            task = asyncio.create_task(run_lobby_app(lobby, inp, DummyOutput()))
            for k in keys:
                await asyncio.sleep(0.1)
                inp.send_text(k)
            return await asyncio.wait_for(task, 10)

    return asyncio.run(main()), lobby


def test_enter_at_the_offer_goes_back_into_the_game(tmp_path: Path) -> None:
    choice, lobby = offer(tmp_path, "\r")
    assert isinstance(choice, Saved) and choice is lobby.comeback and (tmp_path / "journal").exists()


def test_d_at_the_offer_discards_the_game_and_shows_the_lobby(tmp_path: Path) -> None:
    choice, lobby = offer(tmp_path, "xdQ")
    assert choice is None and lobby.comeback is None
    assert "discarded" in lobby.status[1] and not (tmp_path / "journal").exists()
    screen = "".join(text for line in lobby.lines(80, 24) for _, text in line)
    assert "Tables on this network" in screen


def test_q_at_the_offer_quits_and_keeps_the_game_for_later(tmp_path: Path) -> None:
    choice, lobby = offer(tmp_path, "Q")
    assert choice is None and lobby.comeback is not None and (tmp_path / "journal").exists()


def test_the_client_clears_a_journal_of_another_identity_at_start_and_says_so(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("P2PCARDS_HOME", str(tmp_path / "home"))
    state = tmp_path / "state"
    state.mkdir()
    journal(state, generate("Tess"))  # a key that is not the one `run_lobby` makes for Tess

    async def main() -> int:
        with create_pipe_input() as inp:
            task = asyncio.create_task(run_lobby("Tess", None, peer=("127.0.0.1", 9), state=state,
                                                 input=inp, output=DummyOutput()))
            await asyncio.sleep(0.3)
            inp.send_text("Q")
            return await asyncio.wait_for(task, 10)

    assert asyncio.run(main()) == 0
    assert sorted(p.name for p in state.iterdir()) == ["lock"]


def test_a_seat_taken_up_again_in_round_3_keeps_one_view_per_round_ended_so_round_3_is_the_third() -> None:
    from types import SimpleNamespace
    from p2pcards.games.crisp import CrispGame, CrispOptions
    game = CrispGame(("Bo", "Tess"), CrispOptions(), 0)
    mid = game.view("Tess")
    peer = SimpleNamespace(view=lambda: mid, carry=((0, 0), 0))
    table = NetTable(generate("Tess"), node=SimpleNamespace(seat=SimpleNamespace(peer=peer)))  # type: ignore[arg-type]
    mid = replace(mid, round=3, rounds_played=2)  # back mid-round 3: our journal replays that round only
    table._snapshot()
    assert table.round_views() == [mid, mid]
    ended = replace(mid, rounds_played=3)
    peer.view = lambda: ended
    table._snapshot()
    assert table.round_views()[2] is ended


def test_a_table_gone_on_without_a_seat_counts_the_rounds_played_before_it() -> None:
    # The table that goes on (protocol.md §14.9) has a fresh engine: its own rounds only, the rounds before carried.
    from types import SimpleNamespace
    from p2pcards.games.crisp import CrispGame, CrispOptions
    game = CrispGame(("Bo", "Tess"), CrispOptions(), 0)
    dealt = replace(game.view("Tess"), round=3, rounds_played=0)  # its first round is the game's third
    peer = SimpleNamespace(view=lambda: dealt, carry=((20, 30), 2), finished=False, stopped=None, rs=None)
    table = NetTable(generate("Tess"), node=SimpleNamespace(seat=SimpleNamespace(peer=peer)),  # type: ignore[arg-type]
                     _started=True)
    view = table.view()
    assert view is not None and view.rounds_played == 2
    assert table.progress() is None  # a round is being played, not shuffled
    peer.view = lambda: replace(dealt, rounds_played=1)  # that round ended
    table._snapshot()
    assert len(table.round_views()) == 3 and table.round_views()[2].rounds_played == 3


def replayable_seat(tmp_path: Path, announced: bool = False) -> tuple[Any, Path, NodeState]:
    """Seat 1 of a Crisp game in memory, journaled as `play` without --record keeps it past round 1's checkpoint:
    the peer, its state directory, and its node file as loaded (`announced`: it used multicast)."""
    rng = random.Random(4)
    peers = make_table("crisp", 2, {"limit": 200}, random.Random(rng.random()), journal=True)
    net = MemNet(peers, [RandomBot(random.Random(i), 0.05) for i in range(2)], rng)
    net.start()
    net.run(until=600.0, stop=lambda n: any(r[0] == "check" for r in n.peers[1].journal or []))
    peer = net.peers[1]
    state = tmp_path / "state"
    store = SeatStore(state, peer.cfg, 1)  # as `play` without --record keeps it
    store.append(list(peer.journal or []))
    store.close()
    store_file(state / "node", NodeState(peer.identity.public, 0, {peer.cfg.keys[0]: [("127.0.0.1", 9)]}, peer.cfg,
                                         1, announced=announced).to_bytes())
    saved = NodeState.load(state)
    assert saved is not None
    return peer, state, saved


def test_a_game_journaled_without_record_is_not_recorded_on_a_comeback_with_it_and_the_player_is_told(
        tmp_path: Path) -> None:
    """Its journal was begun anew each round: a recording made from it missed the rounds before (verify: incomplete)."""
    peer, state, saved = replayable_seat(tmp_path)
    assert begun_anew(state) and not begun_anew(tmp_path / "state" / "no such store")
    record = tmp_path / "game.p2pt"

    async def main() -> None:
        table = NetTable(peer.identity, state=state, saved=saved, interfaces=["127.0.0.1"], record=str(record))
        try:
            await table.open()
            assert table.record is None
            # Told so (the log's other lines are the game's, as who deals the round it takes up again).
            assert [n.kind for n in table.take_notes() if n.kind != "event"] == ["local"]
            assert table.node is not None and table.node.seat is not None
            assert table.node.seat.store is not None and table.node.seat.store.compacting  # begun anew still
        finally:
            await table.leave()

    asyncio.run(main())
    assert not record.exists()


@pytest.mark.parametrize("announced,mdns", [(True, True), (False, True), (True, False)])
def test_a_seat_taken_up_again_uses_multicast_only_if_it_did_and_the_lobby_does(
        tmp_path: Path, announced: bool, mdns: bool) -> None:
    # protocol.md §17: a seat back from its journal announces its peer ad again, if it used multicast before.
    peer, state, saved = replayable_seat(tmp_path, announced)

    async def main() -> None:
        table = NetTable(peer.identity, state=state, saved=saved, interfaces=["127.0.0.1"], mdns=mdns)
        try:
            await table.open()
            assert table.node is not None and (table.node.disco is not None) == (announced and mdns)
        finally:
            await table.leave()

    asyncio.run(main())


def test_the_offer_to_go_back_is_wrapped_not_cut_in_40_columns(tmp_path: Path) -> None:
    # In 40 columns it read "You were playing Crisp with Ada (ta" and "Enter go back into the game  d discard".
    me = generate("Tess")
    journal(tmp_path, me)
    saved, _ = find(tmp_path, me)
    lobby = LobbyClient(me, NoDirectory(), joinable=True, comeback=saved)
    text = plain(lobby.lines(40, 24))
    words = " ".join(line.strip() for line in text.splitlines())
    assert "then go on without it." in words and "Q quit (keep it for later)" in words
    assert f"(table {saved.node.config.table.hex()[:8]})" in words
