"""A private box goes at once to the one seat that can open it, and to the others a moment later, never out of order."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

from p2pcards.crypto.envelope import Outbox, parse
from p2pcards.net.link import FRAME
from p2pcards.net.seat import Seat
from p2pcards.net.shell import LATER_S
from p2pcards.sim.table_game import make_table
from p2pcards.table.outputs import Send


class Links:
    """What a seat sends, per key, in order (every seat linked)."""

    def __init__(self, keys: list[bytes]) -> None:
        self.links = dict.fromkeys(keys)
        self.sent: dict[bytes, list[bytes]] = {k: [] for k in keys}

    def send(self, key: bytes, kind: int, payload: bytes = b"") -> None:
        self.send_all(key, kind, [payload])

    def send_all(self, key: bytes, kind: int, payloads: list[bytes]) -> None:
        assert kind == FRAME
        self.sent[key].extend(payloads)

    def broadcast(self, kind: int, payload: bytes, keys: list[bytes]) -> None:
        for key in keys:
            self.send(key, kind, payload)


def test_a_box_goes_to_its_seat_at_once_and_to_the_others_later_or_before_our_next_frame() -> None:
    peer = make_table("crisp", 3, {})[0]
    one, two = peer.cfg.keys[1:]
    out = Outbox(peer.identity, peer.cfg.context)
    box1, box2, box3 = (out.seal(1, "private", {"to": to, "box": b"x"}).frame for to in (1, 2, 1))
    aid = out.seal(1, "aid", {"on": True}).frame

    async def main() -> tuple[Links, dict[bytes, list[bytes]], dict[bytes, list[bytes]], dict[bytes, list[bytes]]]:
        links = Links([one, two])
        seat = Seat(peer, links)  # type: ignore[arg-type]
        seat._broadcast(Send(box1, 1))
        seat._broadcast(Send(box2, 2))
        at_once = {k: list(v) for k, v in links.sent.items()}
        seat._broadcast(Send(aid))  # our next frame to everyone: what was held for a seat goes first, in order
        before_aid = {k: list(v) for k, v in links.sent.items()}
        seat._broadcast(Send(box3, 1))
        held = {k: list(v) for k, v in links.sent.items()}
        await asyncio.sleep(LATER_S * 3)  # nothing more to send: the held box goes LATER_S after
        seat.close()
        return links, at_once, before_aid, held

    links, at_once, before_aid, held = asyncio.run(main())
    # Each box at once to its own seat, and before it what was held for that seat (each link keeps our order).
    assert at_once == {one: [box1], two: [box1, box2]}
    assert before_aid == {one: [box1, box2, aid], two: [box1, box2, aid]}
    assert held == {one: [box1, box2, aid, box3], two: [box1, box2, aid]}
    assert links.sent == {one: [box1, box2, aid, box3], two: [box1, box2, aid, box3]}


def test_what_a_seat_sends_again_goes_as_R_and_an_R_frame_is_taken_as_sent_again() -> None:
    # protocol.md §18.5: an answer to a request and a move sent again travel as `R`, so that the receiver
    # does not judge a stamp by when a frame lost on its way finally came.
    from p2pcards.net.link import AGAIN, REQUEST
    from p2pcards.table.recovery import pack_request

    peers = make_table("crisp", 3, {})
    peer = peers[0]
    one = peer.cfg.keys[1]
    ready = peers[1].start(0.0)[0].frame  # type: ignore[union-attr]

    class Kinds(Links):
        def __init__(self, keys: list[bytes]) -> None:
            super().__init__(keys)
            self.links = {k: SimpleNamespace(gaps=[]) for k in keys}  # type: ignore[misc]  # silent never
            self.kinds: list[tuple[bytes, int]] = []

        def send_all(self, key: bytes, kind: int, payloads: list[bytes]) -> None:
            self.kinds += [(key, kind)] * len(payloads)
            self.sent[key].extend(payloads)

    class Link:
        key = one

        def __init__(self, links: Kinds) -> None:
            self.links = links

        def send(self, kind: int, payload: bytes = b"") -> None:
            self.links.send(one, kind, payload)

    taken: list[tuple[bytes, bool]] = []

    async def main() -> Kinds:
        links = Kinds(peer.cfg.keys[1:])
        seat = Seat(peer, links)  # type: ignore[arg-type]
        seat.shell.receive = lambda frame, live=True: taken.append((frame, live))  # type: ignore[method-assign]
        seat._broadcast(Send(b"first", None))
        seat._broadcast(Send(b"again", None, again=True))
        seat.take(Link(links), AGAIN, ready)  # type: ignore[arg-type]
        seat.take(Link(links), FRAME, ready)  # type: ignore[arg-type]
        peer.emit.send(0, "aid", {"on": True})  # a frame of ours that seat 1 may ask for
        seat.take(Link(links), REQUEST, pack_request(peer.cfg.table, 0, 0, 1))  # type: ignore[arg-type]
        seat.close()
        return links

    links = asyncio.run(main())
    assert [kind for key, kind in links.kinds if key == one] == [FRAME, AGAIN, AGAIN]
    assert links.sent[one][:2] == [b"first", b"again"] and parse(links.sent[one][2]).envelope.type == "aid"
    assert taken == [(ready, False), (ready, True)]
