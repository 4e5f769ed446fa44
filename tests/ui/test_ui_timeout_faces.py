"""A card a time-out turns face up is named on the player's screen once they know it: from their view, never a peek."""

from __future__ import annotations

from types import SimpleNamespace

from p2pcards.crypto.identity import generate
from p2pcards.games.base import Event
from p2pcards.games.crisp import CrispGame, CrispOptions
from p2pcards.ui.session import NetTable
from p2pcards.ui.words import event_words

NAMES = ("ann", "bo")


def timed_out() -> CrispGame:
    """A LAN table's engine (dealt blind, as rules.deal does) whose first turn, Bo's, ran out of time at 30 s."""
    game = CrispGame(NAMES, CrispOptions.from_dict({"draw_seconds": 30}), 0)
    game.deal({}, 0.0)
    game.tick(30.5)
    return game


def test_a_forfeited_card_is_named_from_the_viewers_knowledge_once_its_face_is_in() -> None:
    game = timed_out()
    i = next(k for k, e in enumerate(game.events) if e.kind == "forfeit_draw")
    top = game.events[i].cards[0]
    assert top is not None and str(game.event_for(0, i)) == "bo forfeit_draw ?" and game.faces_owed(0, i) == [top]
    game.learn(top, "7H")  # the table's public reveal of the card that went face up
    assert str(game.event_for(0, i)) == "bo forfeit_draw 7H" and game.faces_owed(0, i) == []
    # A card the viewer never saw stays `?` for them even on an engine that knows every face (a referee's).
    hidden = game.r.draw_pile[-1] if game.r is not None else 0
    game.learn(hidden, "2C")
    game.events.append(Event("forfeit_draw", "bo", ("2C",), (hidden,)))
    assert str(game.event_for(0, len(game.events) - 1)) == "bo forfeit_draw ?"
    assert game.faces_owed(0, len(game.events) - 1) == []  # not owed to ann: nothing to wait for


def test_the_client_log_waits_for_the_face_and_then_names_the_card() -> None:
    game = timed_out()
    peer = SimpleNamespace(game=game, me=0, stopped=None, carry=(None, 0), view=lambda: game.view("ann"),
                           cfg=SimpleNamespace(names=NAMES))
    session = NetTable(generate("ann"), node=SimpleNamespace(seat=SimpleNamespace(peer=peer)))  # type: ignore[arg-type]
    session._following = peer  # type: ignore[assignment]
    first = [n.detail for n in session.take_notes()]
    assert "bo timeout" in first and not any("forfeit" in d for d in first)  # its face is on its way: the line waits
    top = next(e for e in game.events if e.kind == "forfeit_draw").cards[0]
    assert top is not None
    game.learn(top, "7H")
    line = [n.detail for n in session.take_notes() if "forfeit" in n.detail]
    assert line == ["bo forfeit_draw 7H"]
    assert event_words(line[0], NAMES, "crisp", "ann") == "The top card of the draw pile (7♥) was drawn and discarded for bo."
