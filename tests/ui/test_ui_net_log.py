"""The log of a table on the network tells what a referee's log tells: who deals each round."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from p2pcards.crypto.identity import generate
from p2pcards.games.crisp import CrispGame, CrispOptions
from p2pcards.table.outputs import Cut
from p2pcards.table.peer import Note
from p2pcards.ui.client import TableClient, plain, stall_words
from p2pcards.ui.session import NetTable
from p2pcards.ui.words import note_words
from ui_harness import RefereeSession  # tests/ui is on sys.path (prepend mode)
from test_ui_client import DECK

NAMES = ("ann", "bo", "cy")


def test_a_table_on_the_network_says_who_deals_each_round() -> None:
    # Against bots the log read "Round 1 begins: shuffling and dealing" and then the first moves: no dealer.
    game = CrispGame(NAMES, CrispOptions(), 1)
    game.deal({}, 0.0)  # dealt blind, as a table's rules.deal does: the engine's deal event goes nowhere
    peer = SimpleNamespace(game=game, me=0, stopped=None, carry=(None, 0), view=lambda: game.view("ann"),
                           cfg=SimpleNamespace(names=NAMES))
    session = NetTable(generate("ann"), node=SimpleNamespace(seat=SimpleNamespace(peer=peer)))  # type: ignore[arg-type]
    session._following = peer  # type: ignore[assignment]
    said = [note_words(n, NAMES, "crisp", "ann") for n in session.take_notes()]
    assert ("", "— Round 1: bo deals —") in said
    assert not any(words and "deal" in words[1] for words in [note_words(n, NAMES, "crisp", "ann")
                                                              for n in session.take_notes()])  # said once
    game.dealer_of = lambda n: 0  # type: ignore[method-assign]  # as if round 2 came, dealt by ann
    game.round_no += 1
    assert ("", "— Round 2: you deal —") in [note_words(n, NAMES, "crisp", "ann") for n in session.take_notes()]


def test_the_rounds_banner_gives_way_to_who_deals_once_the_deal_is_done() -> None:
    session = RefereeSession("crisp", ("you", "Bo"), DECK, dealer=1)
    client = TableClient(session)
    client.absorb(0.0)
    session.pending.append(Note("round", "round 2 begins"))
    client.absorb(0.0)
    assert "Round 2 begins: shuffling and dealing" in plain(client.lines(80, 24, 0.0))
    session.pending.append(Note("event", "you deal 2"))
    client.absorb(0.0)
    text = plain(client.lines(80, 24, 0.0))
    assert "— Round 2: you deal —" in text and "Round 2 begins" not in text


def test_a_seat_whose_cut_healed_no_longer_reads_that_every_other_seat_went_missing() -> None:
    # Cut off, then Bo back in time: the peer stays no witness of its own (its `cut_off` stands), but a later stall
    # (Cy still missing) read "Every other seat went missing at once: your own network seems lost" all the same.
    async def main() -> None:
        loop = asyncio.get_running_loop()
        handles = {name: loop.call_later(60.0, lambda: None) for name in ("Bo", "Cy")}
        peer = SimpleNamespace(finished=False, stopped=None, names=("ann", "Bo", "Cy"), timeout=15.0,
                               watchdog=SimpleNamespace(since=None, owed=set()),
                               cut_off="every other seat went missing at once (Bo, Cy): it looks like our own network",
                               cut=Cut.NETWORK_LOST)
        seat = SimpleNamespace(peer=peer, names={b"a": "ann", b"b": "Bo", b"c": "Cy"},
                               missing={b"b": handles["Bo"], b"c": handles["Cy"]})
        session = NetTable(generate("ann"), node=SimpleNamespace(seat=seat))  # type: ignore[arg-type]
        stall = session.stall()
        assert stall is not None and stall.alone and stall.cut_off == peer.cut_off and stall.cut is Cut.NETWORK_LOST
        del seat.missing[b"b"]  # Bo is back
        stall = session.stall()
        assert stall is not None and not stall.alone and stall.cut_off is None and stall.cut is None
        assert not any("went missing at once" in line for line in stall_words(stall))
        for handle in handles.values():
            handle.cancel()

    asyncio.run(main())


def test_back_from_the_journal_a_seat_found_missing_is_said_after_the_rounds_header() -> None:
    # A client started again with --state replays its round, then finds the seats' links gone: the log read
    # "Bo is missing" above "— Round 1: bo deals —", as if the seat went missing before the round began.
    game = CrispGame(NAMES, CrispOptions(), 1)
    game.deal({}, 0.0)
    peer = SimpleNamespace(game=game, me=0, stopped=None, carry=(None, 0), view=lambda: game.view("ann"),
                           cfg=SimpleNamespace(names=NAMES), faces_owed=lambda *a: False)
    session = NetTable(generate("ann"), node=SimpleNamespace(seat=SimpleNamespace(peer=peer)))  # type: ignore[arg-type]
    session._following = peer  # type: ignore[assignment]
    session._note(Note("missing", "bo is missing: end of stream", "bo"))
    said = [words[1] for n in session.take_notes() if (words := note_words(n, NAMES, "crisp", "ann"))]
    assert said[0] == "— Round 1: bo deals —" and said[-1].startswith("bo is missing"), said
