"""The lobby lists the tables a directory announces, live, and leads to a game against bots."""

from __future__ import annotations

import asyncio
from dataclasses import replace
from collections.abc import Sequence

import pytest
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput

from p2pcards.crypto.identity import generate
from p2pcards.errors import InputError
from p2pcards.net.node import Node
from p2pcards.rulestext import rules_text
from p2pcards.ui.client import plain
from p2pcards.ui.lobby import BotGame, Lan, LobbyClient, NoDirectory, PeerDirectory, TableAd, run_lobby_app
from p2pcards.ui.session import NetTable
from ui_harness import ragged  # tests/ui is on sys.path (prepend mode)


class Directory:
    """Tables announced by the test, with the change signal the lobby waits on."""

    def __init__(self) -> None:
        self.ads: dict[str, TableAd] = {}
        self.event = asyncio.Event()

    def tables(self) -> Sequence[TableAd]:
        return sorted(self.ads.values(), key=lambda ad: ad.key)

    async def changed(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self.event.wait(), timeout)
        except TimeoutError:
            pass
        self.event.clear()

    def announce(self, ad: TableAd) -> None:
        self.ads[ad.key] = ad
        self.event.set()

    def withdraw(self, key: str) -> None:
        del self.ads[key]
        self.event.set()


KITCHEN = TableAd("t1", "kitchen", "crisp", {"limit": 50}, 2, 8, "ann", "12345 67890 11111 22222 33333")


def test_tables_appear_and_vanish_with_their_announcements() -> None:
    directory = Directory()
    me = generate("zoe")
    lobby = LobbyClient(me, directory)
    text = plain(lobby.lines(80, 24))
    assert "zoe" in text and me.fingerprint in text and "No table announced" in text
    directory.announce(KITCHEN)
    text = plain(lobby.lines(80, 24))
    assert "kitchen" in text and "crisp" in text and "2 of 8 seats taken" in text and "limit 50" in text and "12345" in text
    directory.withdraw("t1")
    assert "kitchen" not in plain(lobby.lines(80, 24))


def test_a_lobby_without_a_network_says_so_and_offers_bots() -> None:
    directory = Directory()
    directory.announce(KITCHEN)
    lobby = LobbyClient(generate("zoe"), directory)
    assert lobby.key("enter") is None and lobby.key("n") is None
    assert "no network" in lobby.status[1] and "b to play against bots" in lobby.status[1]


def test_joining_asks_for_the_selected_table() -> None:
    directory = Directory()
    directory.announce(KITCHEN)
    directory.announce(TableAd("t2", "porch", "crescendo", {}, 6, 6, "bo", "99999"))
    lobby = LobbyClient(generate("zoe"), directory, joinable=True)
    assert lobby.key("enter") == "join" and lobby.selected_table() == KITCHEN
    lobby.key("down")
    assert lobby.key("enter") is None and "porch has no free seat" in lobby.status[1]


def test_a_new_table_sets_its_name_game_seats_and_every_host_option() -> None:
    lobby = LobbyClient(generate("zoe"), Directory(), joinable=True)
    lobby.key("n")
    assert "zoe's table" in plain(lobby.lines(80, 24))
    for _ in "zoe's table":
        lobby.key("backspace")
    for k in "den":
        lobby.key(k)
    lobby.key("enter")
    lobby.key("1")
    text = plain(lobby.lines(80, 24))
    assert "game ends at: 100 points" in text and "time per draw: no limit" in text and "seats offered: 4" in text
    for k in ("l", "t", "t", "p", "+", "+"):
        lobby.key(k)
    text = plain(lobby.lines(80, 24))
    assert "150 points" in text and "45 s" in text and "discard pile: yes" in text and "seats offered: 6" in text
    assert lobby.key("enter") == "host"
    assert lobby.new is not None and lobby.new.name == "den" and lobby.new.seats == 6
    assert lobby.new.options() == {"limit": 150, "draw_seconds": 45, "discard_draw": True}


def test_keys_while_a_new_table_opens_do_not_act_on_the_list_behind_its_screen() -> None:
    # Enter pressed again while "Opening den …" joined (or tried to join) the table under the list's cursor,
    # and b, n, a opened dialogues, all behind the new table's screen that stays up until it is open.
    directory = Directory()
    directory.announce(KITCHEN)
    lobby = LobbyClient(generate("zoe"), directory, joinable=True)
    lobby.key("n")
    lobby.key("enter")
    lobby.key("1")
    assert lobby.key("enter") == "host"
    for k in ("enter", "b", "n", "a", "down"):
        assert lobby.key(k) is None and lobby.asking is None, k
    assert "Opening zoe's table" in lobby.status[1]
    assert lobby.key("Q") == "quit"


class Room:
    """A table's lobby as the lobby screen sees it."""

    table_name = "den"
    game = "crisp"
    options = {"limit": 50}
    is_host = True
    port = 4242
    addresses: tuple[str, ...] = ()
    offered: int | None = 4

    def __init__(self, players: list[tuple[str, str]]) -> None:
        self.players = players

    def lobby_players(self) -> list[tuple[str, str]]:
        return self.players

    def can_seat(self) -> str | None:
        return None if len(self.players) >= 2 else "Crisp needs at least 2 players"

    def take_off(self, fpr: str) -> None:
        if not any(f == fpr for _, f in self.players[1:]):
            raise InputError("no such guest in the lobby")
        self.players = [p for p in self.players if p[1] != fpr]

    def offer(self, seats: int) -> None:
        if not 2 <= seats <= 8:
            raise InputError("a table of Crisp seats 2 to 8 players")
        if seats < len(self.players):
            raise InputError(f"{len(self.players)} players have joined: the table cannot offer fewer seats")
        self.offered = seats


def test_the_host_changes_the_seats_it_offers_with_plus_and_minus_never_below_who_joined() -> None:
    me = generate("zoe")
    room = Room([("zoe", me.fingerprint), ("ann", "12345 67890"), ("bo", "22345 67890")])
    lobby = LobbyClient(me, Directory(), joinable=True, room=room)
    assert "+ - seats offered" in plain(lobby.lines(80, 24)) and "3 of 4 seats taken: waiting for 1 more" in plain(
        lobby.lines(80, 24))
    assert lobby.key("+") is None and room.offered == 5 and lobby.status[1] == "The table offers 5 seats now."
    assert "3 of 5 seats taken: waiting for 2 more" in plain(lobby.lines(80, 24))
    for _ in range(3):
        lobby.key("-")
    assert room.offered == 3 and "the table is full" in plain(lobby.lines(80, 24))
    assert lobby.status == ("class:warn", "3 players have joined: the table cannot offer fewer seats.")
    room.offered = 8
    lobby.key("+")
    assert room.offered == 8 and lobby.status == ("class:warn", "A table of Crisp seats 2 to 8 players.")
    room.is_host = False  # a guest's + and - do nothing, and no key says they would
    assert lobby.key("+") is None and room.offered == 8 and "does nothing here" in lobby.status[1]
    assert "seats offered" not in plain(lobby.lines(80, 24))


def test_a_tables_lobby_shows_every_player_with_a_fingerprint_and_starts_when_it_can() -> None:
    me = generate("zoe")
    room = Room([("zoe", me.fingerprint)])
    lobby = LobbyClient(me, Directory(), joinable=True, room=room)
    text = plain(lobby.lines(80, 24))
    assert "den · Crisp" in text and "limit 50" in text and "(host) (you)" in text and "--peer ADDRESS:4242" in text
    assert lobby.key("s") is None and "at least 2 players" in lobby.status[1]
    room.players.append(("ann", "12345 67890"))
    assert "ann" in plain(lobby.lines(80, 24)) and "12345 67890" in plain(lobby.lines(80, 24))
    assert lobby.key("s") == "start"
    assert lobby.key("escape") == "leave"


def test_the_hosts_open_word_gives_way_to_who_joined_and_left() -> None:
    # "den is open." stayed under the players after Ann and Bo had joined: a word of the past as the last line.
    me = generate("zoe")
    room = Room([("zoe", me.fingerprint)])
    lobby = LobbyClient(me, Directory(), joinable=True, room=room)
    lobby.room_changed()  # as the app does once the table is open
    lobby.status = ("class:good", "den is open.")
    assert plain(lobby.lines(80, 24)).rstrip().endswith("den is open.")
    room.players += [("ann", "12345 67890"), ("bo", "22345 67890")]
    lobby.room_changed()
    text = plain(lobby.lines(80, 24))
    assert "den is open." not in text and text.rstrip().endswith("ann and bo joined.")
    room.players.pop(1)
    lobby.room_changed()
    assert plain(lobby.lines(80, 24)).rstrip().endswith("ann left.")
    lobby.room_changed()
    assert plain(lobby.lines(80, 24)).rstrip().endswith("ann left.")  # nothing new: the same word


def test_drawing_the_lobby_changes_nothing() -> None:
    # Drawing a table's lobby said who joined: the status changed inside the render path, and the cursor on a list
    # that had shrunk was moved there too. Drawing is pure now: the news waits for room_changed, the cursor for a key.
    me = generate("zoe")
    room = Room([("zoe", me.fingerprint)])
    lobby = LobbyClient(me, Directory(), joinable=True, room=room)
    lobby.room_changed()
    room.players.append(("ann", "12345 67890"))
    before = repr(lobby)
    assert "ann" in plain(lobby.lines(80, 24)) and repr(lobby) == before and lobby.status == ("", "")
    lobby.room_changed()
    assert lobby.status == ("", "ann joined.")
    directory = Directory()
    listing = LobbyClient(me, directory, joinable=True, selected=1)
    directory.announce(KITCHEN)
    before = repr(listing)
    assert "▶ kitchen" in plain(listing.lines(80, 24)) and repr(listing) == before
    assert listing.key("?") is None and listing.pager.game == "crisp" and listing.selected == 0


def test_the_lobby_app_redraws_on_a_change_and_returns_a_bot_game() -> None:
    directory = Directory()
    lobby = LobbyClient(generate("zoe"), directory)
    drawn: list[str] = []
    original = lobby.lines

    def spy(width: int, height: int) -> list:  # type: ignore[type-arg]
        lines = original(width, height)
        drawn.append(plain(lines))
        return lines

    lobby.lines = spy  # type: ignore[method-assign]

    async def main() -> BotGame | None:
        with create_pipe_input() as inp:
            task = asyncio.create_task(run_lobby_app(lobby, inp, DummyOutput()))
            await asyncio.sleep(0.2)
            directory.announce(KITCHEN)
            await asyncio.sleep(0.3)
            assert any("kitchen" in d for d in drawn)  # redrawn without a key press
            for key in ("b", "2", "9", "3"):
                inp.send_text(key)
                await asyncio.sleep(0.05)
            return await asyncio.wait_for(task, 5)

    assert asyncio.run(main()) == BotGame("crescendo", 3)
    assert any("Crescendo takes 1 to 5 bots" in d for d in drawn)


def test_the_first_run_asks_for_a_name() -> None:
    made: list[str] = []

    def make(name: str):  # type: ignore[no-untyped-def]
        if not name.strip():
            from p2pcards.errors import InputError
            raise InputError("a name must be 1 to 32 printable characters: ''")
        made.append(name)
        return generate(name)

    lobby = LobbyClient(None, Directory(), make_identity=make)
    assert "Your name" in plain(lobby.lines(80, 24))
    lobby.key("enter")
    assert lobby.status[1] == "Type a name first, then Enter." and lobby.identity is None
    for k in "Zoe Q":
        lobby.key(k)
    lobby.key("backspace")
    lobby.key("backspace")
    lobby.key("enter")
    assert made == ["Zoe"] and lobby.identity is not None
    assert "Zoe" in plain(lobby.lines(80, 24)) and "Tables on this network" in plain(lobby.lines(80, 24))


def test_the_lobby_offers_only_the_keys_open_now() -> None:
    directory = Directory()
    lobby = LobbyClient(generate("zoe"), directory, joinable=True)
    text = plain(lobby.lines(80, 24))
    assert "b play against bots" in text and "n new table" in text and "join a table" not in text
    directory.announce(KITCHEN)
    assert "↑↓ Enter join a table" in plain(lobby.lines(80, 24))
    offline = plain(LobbyClient(generate("zoe"), directory).lines(80, 24))
    assert "join a table" not in offline and "new table" not in offline and "play against bots" in offline


def test_the_rules_of_a_table_are_its_own_and_scrolling_stops_at_their_end() -> None:
    me = generate("zoe")
    directory = Directory()
    directory.announce(KITCHEN)
    lobby = LobbyClient(me, directory, rules_text, joinable=True)
    lobby.key("?")
    for _ in range(40):
        lobby.key(" ")
    text = plain(lobby.lines(80, 24))
    assert "limit = 50:" in text  # the kitchen's limit, not the default 100
    lobby.key("up")
    lines = plain(lobby.lines(80, 24)).splitlines()
    assert len(lines) == 24 and lines[-1].endswith(" Esc back")  # one line up from the end, not 40 pages past it
    lobby.key("escape")
    lobby.room = Room([("zoe", me.fingerprint)])
    lobby.key("?")
    for _ in range(40):
        lobby.key("pagedown")
    assert "limit = 50:" in plain(lobby.lines(80, 24)) and "Rules of Crisp" in plain(lobby.lines(80, 24))


def test_a_tables_options_read_as_words_in_one_order_for_host_and_guest() -> None:
    me = generate("zoe")
    host, guest = Room([("zoe", me.fingerprint)]), Room([("zoe", me.fingerprint)])
    host.options = {"limit": 150, "draw_seconds": None, "discard_draw": False}  # type: ignore[assignment]
    guest.options = {"discard_draw": False, "draw_seconds": None, "limit": 150}  # type: ignore[assignment]
    shown = [plain(LobbyClient(me, Directory(), joinable=True, room=room).lines(80, 24)) for room in (host, guest)]
    assert all(" limit 150, no time limit per draw, no discard draws" in text for text in shown)
    assert "None" not in shown[0] + shown[1] and "False" not in shown[0] + shown[1]


def test_a_host_given_by_address_shows_no_seats_or_options_it_does_not_know() -> None:
    text = plain(LobbyClient(generate("zoe"), PeerDirectory("10.0.0.2", 4242), joinable=True).lines(100, 24))
    assert "10.0.0.2:4242" in text and "its table shows when you join" in text
    assert "0/0" not in text and "no options" not in text


def test_a_table_joined_by_address_is_named_after_its_host() -> None:
    async def main() -> str:
        async with Node(generate("Hana"), interfaces=["127.0.0.1"], mdns=False) as host:
            await host.host("crisp", {"limit": 50}, "den")
            guest = NetTable(generate("Ivo"), interfaces=["127.0.0.1"], mdns=False)
            await guest.open()
            try:
                await guest.join([("127.0.0.1", host.links.port)])
                return guest.table_name
            finally:
                await guest.leave()

    assert asyncio.run(main()).startswith("Hana's table at 127.0.0.1:")


def test_a_new_table_starts_from_the_hosts_options_given_on_the_command_line() -> None:
    # `p2pcards play --limit 50 --draw-seconds 30`: the options a host gave are the new table's own.
    lobby = LobbyClient(generate("zoe"), Directory(), joinable=True,
                        host_options={"limit": 50, "draw_seconds": 30, "discard_draw": True})
    for k in ("n", "enter", "1"):
        lobby.key(k)
    text = plain(lobby.lines(80, 24))
    assert "game ends at: 50 points" in text and "time per draw: 30 s" in text
    assert "draw from the discard pile: yes" in text


def test_a_guest_sees_the_time_per_draw_as_the_host_does() -> None:
    # Options come over the network as numbers of seconds: 30.0 is shown as the host chose it, 30.
    directory = Directory()
    directory.announce(TableAd("t2", "den", "crisp", {"limit": 50, "draw_seconds": 30.0, "discard_draw": False},
                               1, 2, "ann", "12345 67890 11111 22222 33333"))
    text = plain(LobbyClient(generate("zoe"), directory).lines(80, 24))
    assert "30 s" in text and "30.0" not in text


def test_a_host_closing_its_table_is_said_in_plain_words() -> None:
    from p2pcards.ui.lobby import trouble_words
    assert trouble_words("the host said goodbye: quit") == "the host closed the table."
    assert trouble_words("the host went away: timed out") == "the host went away: timed out."


def test_a_host_given_by_address_reads_as_one_sentence_not_cut_placeholders() -> None:
    # `play --peer 10.78.0.3:41873` listed its one entry as "?  seats ?  ?  host (given by  (shown on j".
    lobby = LobbyClient(generate("dan"), PeerDirectory("10.78.0.3", 41873), joinable=True)
    row = next(line for line in plain(lobby.lines(100, 24)).splitlines() if "10.78.0.3:41873" in line)
    assert "shown on j" not in row and "(given by " not in row and "seats ?" not in row
    assert "a host given by address: its table shows when you join" in row


def test_a_tables_options_too_long_for_its_row_end_with_whole_words() -> None:
    # At 100 columns a Crisp table with every option read "limit 100, no time limit per dra host Ann".
    long = TableAd("t2", "Ann's table", "crisp", {"limit": 100, "draw_seconds": None, "discard_draw": False},
                   1, 4, "Ann", "24891 15059 71335 28491 20378")
    directory = Directory()
    directory.announce(long)
    row = next(line for line in plain(LobbyClient(generate("cat"), directory).lines(100, 24)).splitlines()
               if "Ann's table" in line)
    assert "limit 100, no time limit per …" in row and "per dra " not in row, row


def test_the_host_is_shown_the_addresses_a_guest_without_multicast_gives_with_peer() -> None:
    # Cat, hosting at 10.78.0.3, was told "Guests without multicast join with --peer ADDRESS:41873" and had to
    # find her address elsewhere; her guest Dan needed it to type `p2pcards play --peer 10.78.0.3:41873`.
    me = generate("cat")
    room = Room([("cat", me.fingerprint)])
    room.addresses = ("10.78.0.3", "192.168.1.20")
    text = plain(LobbyClient(me, Directory(), joinable=True, room=room).lines(100, 24))
    assert "join with --peer 10.78.0.3:4242 or --peer 192.168.1.20:4242" in text and "ADDRESS" not in text


def test_a_net_table_offers_its_interfaces_addresses_but_loopback() -> None:
    from p2pcards.net.discovery import interface_addresses

    outside = [a for a in interface_addresses() if not a.startswith("127.")]
    assert list(NetTable(generate("cat")).addresses) == (outside or interface_addresses())


def test_a_host_closing_its_own_table_is_told_it_closed_it() -> None:
    # Ann pressed Esc in the lobby of the table she opened; her status line said "You left Ann's table."
    from p2pcards.ui.lobby import left_words
    room = Room([])
    assert left_words(room) == "You closed den."
    room.is_host = False
    assert left_words(room) == "You left den."


def test_a_lobby_given_an_address_takes_another_typed_in_it_with_the_host_already_there() -> None:
    # Back from a game with `play --peer 10.0.0.2:41873`, the host opened its next table on a new port.
    lobby = LobbyClient(generate("dan"), PeerDirectory("10.0.0.2", 41873), joinable=True)
    assert "a join by address" in plain(lobby.lines(80, 24))
    lobby.key("a")
    assert "Join the host at 10.0.0.2:" in plain(lobby.lines(80, 24))
    for k in "4021x":
        lobby.key(k)
    lobby.key("enter")
    assert "HOST:PORT" in lobby.status[1] and lobby.reach is None  # not an address: said, and still asked
    lobby.key("backspace")
    assert [lobby.key(k) for k in ("1", "enter")] == [None, "reach"] and lobby.reach == ("10.0.0.2", 40211)
    assert LobbyClient(generate("dan"), Directory(), joinable=True, asking="addr").key("Q") is None  # typed, not quit


def test_ctrl_u_clears_the_address_being_typed_as_in_a_shell() -> None:
    # Ctrl-U in the address field did nothing: the host already there ("10.0.0.2:") went only by Backspace.
    lobby = LobbyClient(generate("dan"), PeerDirectory("10.0.0.2", 41873), joinable=True)

    async def main() -> str:
        with create_pipe_input() as inp:
            task = asyncio.create_task(run_lobby_app(lobby, inp, DummyOutput()))
            for text in ("a", "4", "\x15", "10.0.0.7:41873"):
                inp.send_text(text)
                await asyncio.sleep(0.1)
            typed = lobby.address
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)
            return typed

    assert asyncio.run(main()) == "10.0.0.7:41873"
    assert "Ctrl-U clear" in plain(lobby.lines(80, 24))


def test_ctrl_u_clears_a_name_being_typed() -> None:
    lobby = LobbyClient(None, Directory(), make_identity=generate)
    for k in ("B", "o", "c-u", "Z", "o"):
        lobby.key(k)
    assert lobby.typed == "Zo"


def test_the_lobby_joins_a_host_typed_by_address_and_lists_it_from_then_on() -> None:
    async def main() -> tuple[str, str, object]:
        async with Node(generate("Hana"), interfaces=["127.0.0.1"], mdns=False) as host:
            await host.host("crisp", {"limit": 50}, "den")
            port = host.links.port
            async with Lan(["127.0.0.1"], peer=("127.0.0.1", 9)) as lan:  # the old address: nobody there now
                lobby = LobbyClient(generate("Ivo"), lan.directory, joinable=True)
                with create_pipe_input() as inp:
                    inp.send_text(f"a{port}\r")
                    task = asyncio.create_task(run_lobby_app(lobby, inp, DummyOutput(), lan=lan))
                    while lobby.room is None and not task.done():
                        await asyncio.sleep(0.02)
                    joined = lobby.room.table_name if lobby.room is not None else lobby.status[1]
                    inp.send_text("\x1b")  # Esc: leave the table's lobby, then Q quits
                    while lobby.room is not None:
                        await asyncio.sleep(0.02)
                    inp.send_text("Q")
                    chosen = await task
                return joined, lan.directory.tables()[0].key, chosen

    joined, listed, chosen = asyncio.run(asyncio.wait_for(main(), 10))
    assert joined.startswith("Hana's table at 127.0.0.1:") and listed == joined.rpartition(" at ")[2]
    assert chosen is None


def test_in_40_columns_the_lobby_cuts_no_fingerprint_no_sentence_and_no_key() -> None:
    # At 40 columns the lobby read "You are Tess   fingerprint 14162 83422" and "1 Crisp   2 Crescend".
    me, hana = generate("Tess"), generate("Hana")
    lobby = LobbyClient(me, PeerDirectory("10.0.0.2", 41873), joinable=True)
    screens = [plain(lobby.lines(40, 20))]
    for k in ("b", "1"):
        lobby.key(k)
        screens.append(plain(lobby.lines(40, 20)))
    room = Room([("Hana", hana.fingerprint), ("Tess", me.fingerprint)])
    screens.append(plain(LobbyClient(me, Directory(), joinable=True, room=room).lines(40, 24)))
    for text in screens:
        assert all(len(line) <= 40 for line in text.splitlines()) and me.fingerprint in text, text
    words = [" ".join(text.split()) for text in screens]
    assert "Compare fingerprints aloud with the people at your table." in words[0]
    assert "its table shows when you join" in words[0] and "a join by address" in screens[0]
    assert "1 Crisp 2 Crescendo Esc back" in words[1] and "1-7 Esc back" in words[2]
    assert hana.fingerprint in screens[3] and "Esc close the table" in screens[3]


@pytest.mark.parametrize("width,height", [(30, 12), (20, 8), (1, 1), (0, 0)])
def test_a_lobby_too_small_says_the_size_it_needs_and_never_a_cut_fingerprint(width: int, height: int) -> None:
    # At 30x12 the fingerprint read "56300 15150 96339 95198 1735": one digit cut, to be compared aloud.
    lobby = LobbyClient(generate("zoe"), NoDirectory())
    lines = plain(lobby.lines(width, height)).splitlines()
    assert len(lines) <= height and all(len(line) <= width for line in lines)
    if width >= 20:
        assert " ".join(" ".join(lines).split()) == f"Terminal too small: need at least 40x10 (now {width}x{height})."


def test_a_whole_address_typed_after_the_host_already_there_is_taken_as_typed() -> None:
    # Dan typed the address his host read out, 10.0.0.7:41873, after the "10.0.0.2:" the field held: refused before.
    lobby = LobbyClient(generate("dan"), PeerDirectory("10.0.0.2", 41873), joinable=True)
    lobby.key("a")
    for k in "10.0.0.7:41873":
        lobby.key(k)
    assert lobby.key("enter") == "reach" and lobby.reach == ("10.0.0.7", 41873)


def test_the_rules_in_the_lobby_fill_a_narrow_screens_lines() -> None:
    lobby = LobbyClient(generate("zoe"), Directory(), rules_text, joinable=True)
    lobby.key("?")
    pages = []
    for _ in range(15):
        pages.append("\n".join(plain(lobby.lines(40, 24)).splitlines()[1:-1]))  # the body: no title, no keys
        lobby.key("pagedown")
    assert [line for page in pages for line in ragged(page, 40)] == []

    # Only after the host the field held: an address of six colons typed whole is its own (its last colon the port's).
    ipv6 = LobbyClient(generate("eve"), PeerDirectory("10.0.0.2", 41873), joinable=True)
    ipv6.key("a")
    for _ in "10.0.0.2:":
        ipv6.key("backspace")
    for k in "fe80::1:4000":
        ipv6.key(k)
    assert ipv6.key("enter") == "reach" and ipv6.reach == ("fe80::1", 4000)


def test_a_new_tables_name_field_says_how_to_empty_it() -> None:
    # The name field opens filled with "zoe's table" and typing adds to it: "den" made "zoe's tableden", and its keys
    # said only "Enter next  Esc back", not that Ctrl-U empties it.
    lobby = LobbyClient(generate("zoe"), Directory(), joinable=True)
    lobby.key("n")
    text = plain(lobby.lines(80, 24))
    assert "Name: zoe's table" in text and " Enter next  Ctrl-U clear  Esc back" in text
    for k in ("c-u", "d", "e", "n"):
        lobby.key(k)
    assert lobby.new is not None and lobby.new.name == "den"


def test_in_40_columns_a_listed_table_says_who_hosts_it_and_its_options() -> None:
    # At 40 columns a table's row was cut after its seats, "▶ kitchen          crisp     seats 2/8": who hosts
    # it, with the fingerprint to compare, and its options were not on screen.
    directory = Directory()
    directory.announce(replace(KITCHEN, options={"limit": 50, "draw_seconds": 30, "discard_draw": True}))
    lines = plain(LobbyClient(generate("zoe"), directory, joinable=True).lines(40, 24)).splitlines()
    assert all(len(line) <= 40 for line in lines)
    row = next(i for i, line in enumerate(lines) if "kitchen" in line)
    assert lines[row] == "▶ kitchen          2 of 8 seats taken"
    assert lines[row + 1] == "    host ann 12345 67890"
    assert lines[row + 2] == "    Crisp: limit 50, 30 s per draw," and lines[row + 3] == "    discard draws"
    wide = plain(LobbyClient(generate("zoe"), directory, joinable=True).lines(100, 24))
    assert "▶ kitchen          crisp     2 of 8 seats taken  limit 50, 30 s per draw …      host ann 12345 67890" in wide
    # A host's name of 10 letters took the row past 80 columns: its fingerprint was cut. Now the options give way.
    directory.announce(replace(KITCHEN, key="t2", name="den", host="Maximilian"))
    wide = plain(LobbyClient(generate("zoe"), directory, joinable=True).lines(100, 24))
    row = next(line for line in wide.splitlines() if "den" in line)
    assert len(row) == 100 and row.endswith("host Maximilian 12345 67890") and "limit 50 " in row, row


def test_a_listed_table_says_how_many_of_its_seats_are_taken_in_words() -> None:
    # The row said "seats 2/8": two taken or two free? A player choosing a table could not tell.
    directory = Directory()
    directory.announce(KITCHEN)
    directory.announce(TableAd("t2", "porch", "crescendo", {}, 6, 6, "Maximilian", "99999 88888 77777"))
    for width in (40, 60, 80, 100):
        text = plain(LobbyClient(generate("zoe"), directory, joinable=True).lines(width, 24))
        assert all(len(line) <= width for line in text.splitlines()), width
        assert "2 of 8 seats taken" in text and "6 of 6 seats taken" in text and "seats 2/8" not in text, width
        assert "host ann 12345 67890" in text and "host Maximilian 99999 88888" in text, width
        assert "limit 50" in text and "no options" in text, width
    # In 80 columns the options go under a row with its seats and its host.
    lines = plain(LobbyClient(generate("zoe"), directory, joinable=True).lines(80, 24)).splitlines()
    row = next(i for i, line in enumerate(lines) if "kitchen" in line)
    assert lines[row:row + 2] == ["▶ kitchen          crisp     2 of 8 seats taken  host ann 12345 67890",
                                  "    limit 50"]


def test_the_cursor_stays_on_its_table_as_another_is_listed_above_it() -> None:
    # The cursor on "porch" (the only table); "doc" was announced, listed first: the cursor, an index, was on "doc"
    # now, and Enter joined a table the player had not chosen.
    directory = Directory()
    porch = replace(KITCHEN, key="t5", name="porch")
    directory.announce(porch)
    lobby = LobbyClient(generate("zoe"), directory, joinable=True)
    lobby.tables_changed()
    assert "▶ porch" in plain(lobby.lines(80, 24))
    directory.announce(replace(KITCHEN, key="t1", name="doc"))
    lobby.tables_changed()
    assert "▶ porch" in plain(lobby.lines(80, 24)) and "  doc" in plain(lobby.lines(80, 24))
    assert lobby.key("enter") == "join" and lobby.selected_table() == porch
    lobby.key("up")  # moved by the player: on doc, and it stays there as porch goes
    directory.withdraw("t5")
    directory.announce(replace(KITCHEN, key="t0", name="attic"))
    lobby.tables_changed()
    assert "▶ doc" in plain(lobby.lines(80, 24)) and lobby.selected_table().name == "doc"  # type: ignore[union-attr]


class LeftRoom(NetTable):
    """A joined table's lobby whose link ends once we leave it, as a host's goodbye does."""

    def __init__(self) -> None:
        super().__init__(generate("zoe"))
        self.table_name = "porch"
        self.gone = asyncio.Event()
        self.seen_gone = False  # lobby_changed has returned since: the lobby's loop took the link's end

    @property
    def is_host(self) -> bool:
        return False

    def lobby_players(self) -> list[tuple[str, str]]:
        return [("ann", "12345 67890"), ("zoe", "22345 67890")]

    def seated(self) -> bool:
        return False

    def lobby_trouble(self) -> str | None:
        return "the host said goodbye: quit" if self.gone.is_set() else None

    async def lobby_changed(self, timeout: float) -> None:
        try:
            await asyncio.wait_for(self.gone.wait(), timeout)
        except TimeoutError:
            pass
        self.seen_gone = self.gone.is_set()

    async def leave(self) -> None:
        self.gone.set()
        await asyncio.sleep(0.3)  # the goodbye takes a moment


def test_leaving_a_tables_lobby_says_so_and_nothing_about_the_link_it_ended() -> None:
    # Esc in a table's lobby: "You left porch." was replaced at once by "Wait: the last request is still on its way.",
    # the lobby taking the end of the link we had just closed for trouble and leaving the table a second time.
    room = LeftRoom()
    lobby = LobbyClient(generate("zoe"), Directory(), joinable=True, room=room)

    async def main() -> tuple[str, str]:
        with create_pipe_input() as inp:
            task = asyncio.create_task(run_lobby_app(lobby, inp, DummyOutput()))
            await asyncio.sleep(0.2)
            inp.send_text("\x1b")
            while not room.seen_gone:
                await asyncio.sleep(0.01)
            await asyncio.sleep(0.05)  # what the loop does with it is done before its next wait
            said = lobby.status[1]
            inp.send_text("Q")
            await asyncio.wait_for(task, 5)
            return said, lobby.status[1]

    said, _ = asyncio.run(main())
    assert said == "You left porch."


def test_the_lobby_names_a_key_that_does_nothing_by_its_keycap() -> None:
    # Esc on the list of tables read "The key 'escape' does nothing here.": the program's name for it.
    lobby = LobbyClient(generate("zoe"), Directory(), joinable=True)
    lobby.key("escape")
    assert lobby.status[1] == "Esc does nothing here."
    lobby.key("z")
    assert lobby.status[1] == "The key 'z' does nothing here."


def test_a_long_status_in_the_lobby_wraps_whole() -> None:
    # "You are out of Ann's table at 127.0.0.1:16540: the host said goodbye: your join was refused: two differen" was
    # the last line at 80 columns: the reason was cut.
    lobby = LobbyClient(generate("zoe"), Directory(), joinable=True)
    said = ("You are out of Ann's table at 127.0.0.1:16540: the host said goodbye: your join was refused: the table "
            "is full (4 seats).")
    lobby.status = ("class:warn", said)
    lines = plain(lobby.lines(80, 24)).rstrip().splitlines()
    assert all(len(line) <= 80 for line in lines) and " ".join(" ".join(lines[-2:]).split()) == said


def test_in_40_columns_the_first_run_shows_the_name_being_typed() -> None:
    # At 40 columns the welcome read "Your name, as the other players will se": the question was cut, and the name
    # typed after it was past the edge, never seen.
    lobby = LobbyClient(None, Directory(), make_identity=generate)
    for k in "Zoe":
        lobby.key(k)
    lines = plain(lobby.lines(40, 24)).splitlines()
    assert all(len(line) <= 40 for line in lines)
    words = " ".join(" ".join(lines).split())
    assert "Your name, as the other players will see it:" in words and "  Zoe▏" in lines
    assert "Type it, then Enter. A key of your own is made for you too." in words
    assert " Your name, as the other players will see it: Zoe▏" in plain(lobby.lines(80, 24))  # one line, as before


def test_the_rules_in_the_lobby_say_how_to_scroll() -> None:
    # The lobby's rules said only "Esc back": that the arrows and PgUp/PgDn scroll them was not said (the table's are).
    lobby = LobbyClient(generate("zoe"), Directory(), rules_text, joinable=True)
    lobby.key("?")
    assert plain(lobby.lines(40, 24)).splitlines()[-1] == " ↑↓ PgUp PgDn scroll   Esc back"


def test_a_guest_is_not_told_that_a_player_who_was_there_before_it_joined() -> None:
    # Cy joined Ann's table, where Bob sat already: the host's word of Bob came in after Cy's own join, and Cy read
    # "Bob joined." over "You joined loft.". Players are listed in join order: those before us are no news.
    me = generate("Cy")
    room = Room([("Ann", "11111 11111")])
    room.is_host = False  # type: ignore[misc]
    lobby = LobbyClient(me, Directory(), joinable=True, room=room)
    lobby.room_changed()
    lobby.status = ("class:good", "You joined loft.")
    room.players[:] = [("Ann", "11111 11111"), ("Bob", "22222 22222"), ("Cy", me.fingerprint)]
    lobby.room_changed()
    assert lobby.status[1] == "You joined loft."
    room.players.append(("Di", "33333 33333"))
    lobby.room_changed()
    assert lobby.status[1] == "Di joined."
    room.players.pop(1)
    lobby.room_changed()
    assert lobby.status[1] == "Bob left."


def test_the_lobbys_rules_scroll_to_their_end_in_keys_not_in_drawing() -> None:
    # Drawing the rules moved their top back to the last page (state changed in the render path). The keys stop
    # there instead, at the size the app gives them: up after paging past the end moves one line up at once.
    lobby = LobbyClient(generate("zoe"), Directory(), rules_text, joinable=True, size=(80, 24))
    lobby.key("?")
    for _ in range(40):
        lobby.key(" ")
    last = plain(lobby.lines(80, 24)).splitlines()
    before = repr(lobby)
    plain(lobby.lines(40, 24))
    assert repr(lobby) == before  # drawing, at any size, changes nothing
    lobby.key("up")
    up = plain(lobby.lines(80, 24)).splitlines()
    assert up[2:-1] == last[1:-2] and up[1] != last[1]  # one line up from the last page


def test_who_left_the_lobby_before_the_seats_is_not_in_the_tables_log() -> None:
    # The lobby's screen says "Bob left."; the table's log began with "Bob left the lobby: said goodbye: quit; its
    # place is free again." though Bob had come back and sat down.
    async def main() -> list[str]:
        host = NetTable(generate("Hana"), interfaces=["127.0.0.1"], mdns=False)
        await host.open()
        try:
            await host.host("den")
            assert host.node is not None
            async with Node(generate("Ivo"), interfaces=["127.0.0.1"], mdns=False) as guest:
                await guest.join([("127.0.0.1", host.port)])
                await host.node.wait_players(2)
            async with asyncio.timeout(10):
                while len(host.lobby_players()) == 2:
                    await host.lobby_changed(1.0)
            return [n.detail for n in host.take_notes()]
        finally:
            await host.leave()

    assert not any("left the lobby" in note for note in asyncio.run(main()))


def test_the_lobbys_rules_are_the_tables_pager_same_keys_same_page() -> None:
    # The lobby had a pager of its own: j and k did not scroll there, Ctrl-C did nothing (it quits from the list), and
    # a page was a line longer than the table's. One pager now: the same screen for the same rules at the same size.
    from p2pcards.ui.client import TableClient
    from test_ui_client import crisp_client

    lobby = LobbyClient(generate("zoe"), Directory(), rules_text, joinable=True, size=(80, 24))
    lobby.key("?")
    client, _ = crisp_client()
    client.rules, client.size = rules_text, (80, 24)
    assert isinstance(client, TableClient) and client.session.options == {}
    client.key("?")
    first = plain(lobby.lines(80, 24)).splitlines()
    for k in ("j", "j", "pagedown", "k"):
        lobby.key(k)
        client.key(k)
    ours = plain(lobby.lines(80, 24)).splitlines()
    table = plain(client.lines(80, 24, 0.0)).splitlines()
    assert ours[:-1] == table[:-1] and ours[1:] != first[1:]  # scrolled alike
    assert ours[-1] == " ↑↓ PgUp PgDn scroll   Esc back" and "Esc back to the table" in table[-1]
    assert lobby.key("c-c") == "quit" and not lobby.pager.shown


def test_a_tables_lobby_in_40_columns_says_its_name_and_options_whole() -> None:
    # In 40 columns the options under the title read "limit 100, no time limit per draw, no d".
    me = generate("zoe")
    room = Room([("zoe", me.fingerprint)])
    room.table_name = "the kitchen table upstairs"  # type: ignore[misc]
    room.options = {"limit": 100, "draw_seconds": None, "discard_draw": False}  # type: ignore[misc]
    text = plain(LobbyClient(me, Directory(), joinable=True, room=room).lines(40, 24))
    flat = " ".join(line.strip() for line in text.splitlines())
    assert "limit 100, no time limit per draw, no discard draws" in flat, text
    assert "the kitchen table upstairs · Crisp" in flat and all(len(line) <= 40 for line in text.splitlines())


def test_a_crescendo_table_in_the_list_reads_no_options_whole() -> None:
    # Its row read "crescendo seats 1/4  default …    host Hana": Crescendo has no options, and the words were cut.
    directory = Directory()
    directory.announce(TableAd("t2", "den", "crescendo", {}, 1, 4, "Hana", "12345 67890 11111 22222 33333"))
    for width in (80, 100):  # under its row in 80 columns, on it in 100
        text = plain(LobbyClient(generate("zoe"), directory, joinable=True).lines(width, 24))
        assert "no options" in text and "…" not in text, text


def test_a_host_on_loopback_alone_says_its_loopback_address_for_guests_without_multicast() -> None:
    # With --interface lo the host's lobby said "--peer ADDRESS:PORT": its guests can only be on its machine.
    assert NetTable(generate("ann"), interfaces=["127.0.0.1"]).addresses == ("127.0.0.1",)



def room_screens(room: Room) -> list[str]:
    """A table's lobby seen by Tess, at 80 and at 40 columns (each checked to fit its width), as words."""
    lobby = LobbyClient(generate("Tess"), Directory(), joinable=True, room=room)
    lobby.room_changed()
    screens = [plain(lobby.lines(width, 40)) for width in (80, 40)]
    for width, text in zip((80, 40), screens):
        assert all(len(line) <= width for line in text.splitlines()), text
    return [" ".join(text.split()) for text in screens]


@pytest.mark.parametrize("host", [True, False])
def test_a_tables_lobby_says_its_seats_taken_and_free_as_they_fill_and_empty(host: bool) -> None:
    # The waiting screen listed who was seated, never how many seats the table offered or how many were still free.
    room = Room([("Ann", "11111 11111")])
    room.is_host = host  # type: ignore[misc]
    said = {1: "1 of 4 seats taken: waiting for 3 more.", 2: "2 of 4 seats taken: waiting for 2 more.",
            3: "3 of 4 seats taken: waiting for 1 more.", 4: "4 of 4 seats taken: the table is full."}
    for guests in (["Bob"], ["Bob", "Cy"], ["Bob", "Cy", "Di"], ["Cy", "Di"], ["Di"], []):
        room.players[1:] = [(name, f"{i + 2}" * 5) for i, name in enumerate(guests)]
        for text in room_screens(room):
            assert said[1 + len(guests)] in text, text
            assert not [other for n, other in said.items() if n != 1 + len(guests) and other in text], text
            # A full table takes no one more: how to join it without multicast is no longer said.
            assert ("Guests without multicast join with --peer ADDRESS:4242" in text) is (host and len(guests) < 3)


def test_a_tables_lobby_joined_by_address_says_the_seats_taken_without_a_number_it_does_not_know() -> None:
    room = Room([("Ann", "11111 11111"), ("Tess", "22222 22222")])
    room.is_host, room.offered = False, None  # type: ignore[misc]
    for text in room_screens(room):
        assert "2 seats taken; how many the host offers is not known here." in text and " of " not in text, text


@pytest.mark.parametrize("host", [True, False])
def test_a_tables_lobby_says_what_starts_the_game_as_seats_fill(host: bool) -> None:
    # Nothing said whether the game starts once the table is full, or whether the host may start it early.
    room = Room([("Ann", "11111 11111")])
    room.is_host = host  # type: ignore[misc]
    who = "Press s to start the game" if host else "The host starts the game"
    said = [f"{who} once 2 or more are seated: it never starts by itself, even when full.",
            ("Press s to start the game now with these 2, or wait for more: it never starts by itself." if host else
             "The host may start the game now with these 2, or wait for more: it never starts by itself."),
            ("Press s to start the game now with these 3, or wait for more: it never starts by itself." if host else
             "The host may start the game now with these 3, or wait for more: it never starts by itself."),
            ("The table is full: press s to start the game." if host else
             "The table is full: the game starts when the host starts it.")]
    for guests, words in zip((0, 1, 2, 3), said):
        room.players[1:] = [(f"P{i}", f"{i + 2}" * 5) for i in range(guests)]
        for text in room_screens(room):
            assert words in text, text
            assert ("s start the game" in text) is host and "Esc " + ("close the table" if host else "leave") in text


def test_a_net_tables_lobby_knows_the_seats_its_host_offers() -> None:
    # A guest knows how many seats the host offers from the table's ad (taken and free); by address without an ad,
    # nothing says it.
    from p2pcards.net.discovery import TableAd as NetAd, wire_options

    async def main() -> tuple[int | None, int | None, int | None]:
        host = NetTable(generate("Ann"), interfaces=["127.0.0.1"], mdns=False)
        await host.open()
        try:
            await host.host("den", 3)
            assert host.node is not None and host.node.lobby is not None
            ad = NetAd("den", host.node.lobby.table, "crisp", "Ann", host.identity.fingerprint, host.port,
                       ("127.0.0.1",), wire_options({}), taken=1, free=2)
            guests = [NetTable(generate(name), interfaces=["127.0.0.1"], mdns=False) for name in ("Bob", "Cy")]
            for guest in guests:
                await guest.open()
            try:
                await guests[0].join(ad)
                await guests[1].join([("127.0.0.1", host.port)])
                return host.offered, guests[0].offered, guests[1].offered
            finally:
                for guest in guests:
                    await guest.leave()
        finally:
            await host.leave()

    assert asyncio.run(main()) == (3, 3, None)


@pytest.mark.parametrize("host", [True, False])
@pytest.mark.parametrize("width,height", [(80, 24), (40, 24), (40, 12)])
def test_a_full_tables_lobby_keeps_its_seats_start_and_keys_on_the_screen(host: bool, width: int, height: int) -> None:
    # At 40x24 a table of 6 had its keys, how to start and the status line below the screen's last line: each player
    # took two lines there (the fingerprint under the name), and the screen was cut at its foot; at 40x12 the players
    # that do not fit are counted, below those that do.
    me = generate("Tess")
    room = Room([(name, generate(name).fingerprint) for name in ("Ann", "Bob", "Cy", "Di", "Ed", "Flo", "Gus")]
                + [("Tess", me.fingerprint)])
    room.is_host, room.offered = host, 8  # type: ignore[misc]
    room.options = {"limit": 100, "draw_seconds": None, "discard_draw": False}  # type: ignore[misc]
    lobby = LobbyClient(me, Directory(), joinable=True, room=room, status=("", "Gus joined."))
    lines = plain(lobby.lines(width, height)).splitlines()
    text = " ".join(" ".join(lines).split())
    assert len(lines) <= height and all(len(line) <= width for line in lines), lines
    assert "8 of 8 seats taken: the table is full." in text and "? rules" in text and lines[-1] == "Gus joined.", lines
    assert ("s start the game" in text) is host and ("Esc close the table" if host else "Esc leave") in text, lines
    shown = [name for name, fpr in room.players if fpr in text]
    # Every fingerprint shown is whole, in seat order from the host; those that do not fit are counted.
    assert shown == [name for name, _ in room.players[:len(shown)]], lines
    # In 24 lines every one shows (in 40 columns a short name shares its fingerprint's line); fewer lines count the rest.
    assert len(shown) == 8 if height >= 24 else f"… {8 - len(shown)} more: make the terminal taller" in text, lines


def test_the_host_takes_a_guest_off_the_table_by_the_number_x_shows() -> None:
    # A stranger's fingerprint in the lobby: the host could only close the table and open another.
    me = generate("zoe")
    room = Room([("zoe", me.fingerprint), ("ann", "12345 67890"), ("eve", "66666 66666")])
    lobby = LobbyClient(me, Directory(), joinable=True, room=room)
    lobby.room_changed()
    assert "x take a guest off" in plain(lobby.lines(80, 24))
    assert lobby.key("x") is None and "Press their number (2 to 3)" in lobby.status[1]
    rows = plain(lobby.lines(80, 24)).splitlines()
    assert any(r.startswith("2 ann") for r in rows) and any(r.startswith("3 eve") for r in rows)
    assert not any(r.startswith("1 ") for r in rows)  # the host is no guest
    assert lobby.key("3") is None and lobby.status[1] == "eve was taken off the table and cannot join it again."
    lobby.room_changed()
    assert lobby.status[1] == "eve was taken off the table and cannot join it again."  # not "eve left."
    assert [n for n, _ in room.players] == ["zoe", "ann"] and not any(r.startswith("2 ann") for r in plain(
        lobby.lines(80, 24)).splitlines())
    assert lobby.key("x") is None and "(2)" in lobby.status[1]
    assert lobby.key("s") is None and lobby.status[1] == "No one was taken off the table." and room.players[1][0] == "ann"
    assert lobby.key("x") is None and lobby.key("9") is None and len(room.players) == 2  # no such number: no one
    lobby.key("x")
    room.players.pop(1)  # ann left meanwhile: her number says so, and takes no one else off
    assert lobby.key("2") is None and lobby.status[1] == "ann is no longer in the lobby."
    assert lobby.key("x") is None and lobby.status[1] == "No guest to take off the table."
    assert "take a guest off" not in plain(lobby.lines(80, 24))


def test_a_guest_cannot_take_anyone_off_the_table() -> None:
    me = generate("zoe")
    room = Room([("ann", "12345 67890"), ("zoe", me.fingerprint)])
    room.is_host = False
    lobby = LobbyClient(me, Directory(), joinable=True, room=room)
    assert "take a guest off" not in plain(lobby.lines(80, 24))
    assert lobby.key("x") is None and "does nothing here" in lobby.status[1]
