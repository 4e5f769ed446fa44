"""An orderer that orders `order_first` hands its order back before it applies the order itself."""

from __future__ import annotations

from collections import deque

import pytest

from p2pcards.crypto.envelope import parse
from p2pcards.sim.table_game import make_table
from p2pcards.table.outputs import Output, Send
from p2pcards.table.peer import TablePeer

NOW = 1000.0


def sent(outputs: list[Output]) -> list[tuple[str, int | None]]:
    """The type of each frame sent, and the seat a private box is for (which the Send says without a parse)."""
    out = []
    for o in outputs:
        if isinstance(o, Send):
            env = parse(o.frame).envelope
            assert o.to == (env.body["to"] if env.type == "private" else None)
            out.append((env.type, o.to))
    return out


class Table:
    """Seats that hand each frame to every other seat at once, in the order frames were sent."""

    def __init__(self, order_first: bool) -> None:
        self.peers = make_table("crisp", 3, {"limit": 30})
        for p in self.peers:
            p.order_first = order_first
        self.queue: deque[tuple[int, bytes]] = deque()

    def push(self, seat: int, outputs: list[Output]) -> None:
        sent(outputs)
        self.queue.extend((seat, o.frame) for o in outputs if isinstance(o, Send))
        peer = self.peers[seat]
        if peer.pending:
            self.push(seat, peer.go_on(NOW))

    def run(self) -> None:
        while self.queue:
            sender, frame = self.queue.popleft()
            for seat, peer in enumerate(self.peers):
                if seat != sender:
                    self.push(seat, peer.receive(frame, NOW))

    def drawer(self) -> tuple[int, TablePeer]:
        """The seat whose turn it is, with a draw open to it."""
        for seat, peer in enumerate(self.peers):
            if any(m.action == "draw" for m in peer.view().legal):
                return seat, peer
        raise AssertionError("nobody may draw")


@pytest.mark.parametrize("order_first", [True, False])
def test_the_order_of_a_draw_leaves_before_the_orderer_makes_its_share_and_the_card_is_shown(order_first: bool) -> None:
    table = Table(order_first)
    for seat, peer in enumerate(table.peers):
        table.push(seat, peer.start(NOW))
    table.run()
    seat, drawer = table.drawer()
    orderer = table.peers[drawer.rs.orderer]  # type: ignore[union-attr]
    assert orderer is not drawer
    [move] = [o for o in drawer.play(next(m for m in drawer.view().legal if m.action == "draw"), NOW)
              if isinstance(o, Send)]
    step = orderer.receive(move.frame, NOW)
    if order_first:
        assert sent(step) == [("order", None)] and orderer.pending  # its share of the card: not made yet
        rest = orderer.go_on(NOW)
        assert sent(rest) == [("private", seat)] and not orderer.pending
    else:
        rest = []
        assert sent(step) == [("order", None), ("private", seat)] and not orderer.pending
    table.queue.append((seat, move.frame))
    table.push(table.peers.index(orderer), step + rest)
    table.run()
    assert drawer.view().drawn is not None  # every share came, and the drawer sees its card
    assert len({p.log_hash for p in table.peers}) == 1
