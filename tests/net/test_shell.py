"""The shell ticks its peer when the peer asks, however busy the links are."""

from __future__ import annotations

import pytest

import asyncio
from typing import Any

from p2pcards.crypto.envelope import Outbox
from p2pcards.crypto.identity import generate
from p2pcards.net.shell import LATER_CHUNK, LATER_S, MAX_LATER, TableShell
from p2pcards.table.chains import Precedence, frame_head, private_to
from p2pcards.table.config import TableConfig


class Peer:
    """What the shell sees of a peer that wants a tick half a second after the last thing it heard."""

    finished = False
    stopped = None
    pending = False

    def __init__(self) -> None:
        self.now = 0.0
        self.ticks: list[float] = []
        self.taken: list[tuple[bytes, float]] = []
        self.live: list[bool] = []

    def precedence(self, frame: bytes) -> Precedence:
        return Precedence.NOW

    def receive(self, frame: bytes, now: float, live: bool = True) -> list[Any]:
        self.now = now
        self.taken.append((frame, now))
        self.live.append(live)
        return []

    def tick(self, now: float) -> list[Any]:
        self.now = now
        self.ticks.append(now)
        return []

    def wake_time(self) -> float:
        return self.now + 0.5

    def busy(self) -> bool:
        return False


def test_frames_coming_faster_than_the_wake_moves_on_do_not_put_the_tick_off() -> None:
    async def main() -> Peer:
        peer = Peer()
        loop = asyncio.get_running_loop()
        shell = TableShell(peer, lambda frame: None, clock=loop.time)  # type: ignore[arg-type]
        shell.receive(b"")
        for _ in range(15):  # a frame every 0.1 s for 1.5 s
            await asyncio.sleep(0.1)
            shell.receive(b"")
        shell.close()
        return peer

    peer = asyncio.run(main())
    assert len(peer.ticks) >= 2, peer.ticks


def test_a_frame_that_can_wait_is_taken_soon_and_never_after_a_frame_that_came_later() -> None:
    outs = [Outbox(i, CONTEXT) for i in IDS]
    box1, box2 = (outs[1].seal(k, "private", {"to": 2, "box": b"x"}).frame for k in (1, 2))
    order, box3 = outs[1].seal(3, "order", {"e": []}).frame, outs[2].seal(1, "private", {"to": 3, "box": b"x"}).frame

    async def main() -> tuple[FramePeer, list[bytes]]:
        peer = FramePeer()
        shell = TableShell(peer, lambda frame: None)  # type: ignore[arg-type]
        shell.receive(box1)
        shell.receive(box2)
        before = [f for f, _ in peer.taken]
        shell.receive(order)  # waited on: its sender's boxes go first, in the order they came
        shell.receive(box3)
        await asyncio.sleep(LATER_S * 3)
        shell.close()
        return peer, before

    peer, before = asyncio.run(main())
    assert before == []
    assert [f for f, _ in peer.taken] == [box1, box2, order, box3]
    assert peer.taken[0][1] <= peer.taken[2][1]  # each is taken at the time it came


IDS = [generate(f"p{i}") for i in range(4)]
CONTEXT = TableConfig(bytes(16), "crisp", {}, tuple(i.public for i in IDS), tuple(i.name for i in IDS)).context


class FramePeer(Peer):
    """A peer at seat 0 that lets private boxes to other seats, and moves, wait (as seat 0 when it does not order)."""

    def precedence(self, frame: bytes) -> Precedence:
        head = frame_head(frame)
        if head is not None and (head[1] == "move" or private_to(frame) not in (None, 0)):
            return Precedence.LATER
        return Precedence.SOON if private_to(frame) == 0 else Precedence.NOW


def test_a_waited_on_frame_takes_first_only_what_its_chain_and_the_moves_chains_need() -> None:
    outs = [Outbox(i, CONTEXT) for i in IDS]

    def box(seat: int, to: int) -> bytes:
        return outs[seat].seal(1, "private", {"to": to, "box": b"x"}).frame

    async def main() -> tuple[FramePeer, list[bytes], list[bytes]]:
        peer = FramePeer()
        shell = TableShell(peer, lambda frame: None)  # type: ignore[arg-type]
        for frame in frames:
            shell.receive(frame)
        first = [f for f, _ in peer.taken]
        await asyncio.sleep(LATER_S * 3)
        shell.close()
        return peer, first, [f for f, _ in peer.taken]

    a2, b3, c2 = box(1, 2), box(2, 3), box(3, 2)  # boxes seat 0 cannot open, from seats 1, 2 and 3
    move = outs[2].seal(1, "move", {"m": {"a": "draw"}}).frame  # seat 2's move, after its box
    order = outs[1].seal(1, "order", {"e": []}).frame  # seat 1's order: waited on
    frames = [a2, b3, c2, move, order]
    peer, first, every = asyncio.run(main())
    # Seat 1's box goes before its order (its chain), seat 2's box before its move (its chain, and an
    # order may name the move); seat 3's box does not hold the order up: it is taken LATER_S after.
    assert first == [a2, b3, move, order]
    assert every == [a2, b3, move, order, c2]


def test_many_frames_that_waited_are_taken_a_few_at_a_time_in_the_order_they_came() -> None:
    out = Outbox(IDS[1], CONTEXT)
    boxes = [out.seal(1, "private", {"to": 2, "box": bytes([k])}).frame for k in range(3 * LATER_CHUNK + 1)]

    async def main() -> list[int]:
        peer = FramePeer()
        shell = TableShell(peer, lambda frame: None)  # type: ignore[arg-type]
        for frame in boxes:
            shell.receive(frame)
        while not peer.taken:
            await asyncio.sleep(0.001)
        seen = []
        while len(peer.taken) < len(boxes):
            seen.append(len(peer.taken))
            await asyncio.sleep(0)  # one turn of the loop: the links could be read here
        shell.close()
        assert [f for f, _ in peer.taken] == boxes
        return seen

    seen = asyncio.run(main())
    assert len(seen) >= 2 and all(n % LATER_CHUNK == 0 for n in seen)  # a chunk per turn of the loop


@pytest.mark.slow  # a whole game over real links: seconds
def test_in_a_whole_game_the_shares_of_drawn_cards_are_made_ahead_while_idle(monkeypatch: Any) -> None:
    from p2pcards.crypto import deck as dk
    from p2pcards.net.bench import play_memory

    made = dk.make_reveal
    served: list[bool] = []

    def counting(ctx: Any, keys: Any, secret: Any, deck: Any, positions: Any, recipient: Any, ahead: Any = None) -> Any:
        served.extend(ahead is not None and p in ahead for p in positions)
        return made(ctx, keys, secret, deck, positions, recipient, ahead)

    monkeypatch.setattr(dk, "make_reveal", counting)
    summary = play_memory("crisp", 3, 10, limit_s=120)
    assert summary["finished"] == 3
    assert any(served) and not all(served)  # draws and discards from shares made ahead; the deal's looks not


def test_a_frame_only_we_wait_on_is_taken_on_the_next_turn_after_what_others_wait_on() -> None:
    outs = [Outbox(i, CONTEXT) for i in IDS]
    mine1, mine2 = (outs[k].seal(1, "private", {"to": 0, "box": b"x"}).frame for k in (1, 2))
    order = outs[3].seal(1, "order", {"e": []}).frame

    async def main() -> tuple[list[bytes], list[bytes]]:
        peer = FramePeer()
        shell = TableShell(peer, lambda frame: None)  # type: ignore[arg-type]
        for frame in (mine1, mine2, order):  # read in one turn: others wait on us for the order, so it goes first
            shell.receive(frame)
        first = [f for f, _ in peer.taken]
        await asyncio.sleep(0)
        second = [f for f, _ in peer.taken]
        await asyncio.sleep(0)
        shell.close()
        assert second == [order, mine1]  # one a turn, in the order they came
        return first, [f for f, _ in peer.taken]

    first, every = asyncio.run(main())
    assert first == [order]
    assert every == [order, mine1, mine2]


def test_a_box_to_us_is_taken_after_every_earlier_frame_of_its_sender_and_no_other() -> None:
    outs = [Outbox(i, CONTEXT) for i in IDS]
    c2, b3 = outs[3].seal(1, "private", {"to": 2, "box": b"x"}).frame, outs[2].seal(1, "private", {"to": 3, "box": b"x"}).frame
    mine = outs[3].seal(2, "private", {"to": 0, "box": b"x"}).frame  # seat 3's next frame: a box to us

    async def main() -> tuple[list[bytes], list[bytes]]:
        peer = FramePeer()
        shell = TableShell(peer, lambda frame: None)  # type: ignore[arg-type]
        for frame in (b3, c2, mine):
            shell.receive(frame)
        await asyncio.sleep(0)
        first = [f for f, _ in peer.taken]
        await asyncio.sleep(LATER_S * 3)
        shell.close()
        return first, [f for f, _ in peer.taken]

    first, every = asyncio.run(main())
    assert first == [c2, mine]
    assert every == [c2, mine, b3]


def test_a_fault_report_takes_every_frame_that_waited_first() -> None:
    # Seat 1 relays seat 2's report as its evidence: seat 2's chain must be taken up to it (its box to seat 3
    # waited), or that report would wait unchecked, ahead of its chain, as the table stops.
    outs = [Outbox(i, CONTEXT) for i in IDS]
    b3, c2 = outs[2].seal(1, "private", {"to": 3, "box": b"x"}).frame, outs[3].seal(1, "private", {"to": 2, "box": b"x"}).frame
    fault = outs[1].seal(1, "fault", {"blame": None, "why": "x", "stall": False, "evidence": []}).frame

    async def main() -> list[bytes]:
        peer = FramePeer()
        shell = TableShell(peer, lambda frame: None)  # type: ignore[arg-type]
        for frame in (b3, c2, fault):
            shell.receive(frame)
        taken = [f for f, _ in peer.taken]
        shell.close()
        return taken

    assert asyncio.run(main()) == [b3, c2, fault]


def test_when_too_many_frames_wait_the_next_one_takes_them_all_first_in_the_order_they_came() -> None:
    outs = [Outbox(i, CONTEXT) for i in IDS]
    boxes = [outs[1 + k % 3].seal(1 + k // 3, "private", {"to": 2 if k % 3 != 1 else 3, "box": b"x"}).frame
             for k in range(MAX_LATER + 1)]

    async def main() -> list[bytes]:
        peer = FramePeer()
        shell = TableShell(peer, lambda frame: None)  # type: ignore[arg-type]
        for frame in boxes:
            shell.receive(frame)
        taken = [f for f, _ in peer.taken]
        shell.close()
        return taken

    assert asyncio.run(main()) == boxes


def test_a_frame_sent_again_is_handed_on_as_such_at_once_or_after_it_waited() -> None:
    out = Outbox(IDS[1], CONTEXT)
    box, order, box2 = (out.seal(1, "private", {"to": 2, "box": b"x"}).frame, out.seal(1, "order", {"e": []}).frame,
                        out.seal(1, "private", {"to": 3, "box": b"y"}).frame)

    async def main() -> FramePeer:
        peer = FramePeer()
        shell = TableShell(peer, lambda frame: None)  # type: ignore[arg-type]
        shell.receive(box, live=False)  # waits (a box for another seat), then goes before the order
        shell.receive(order)
        shell.receive(box2, live=False)  # waits LATER_S
        await asyncio.sleep(LATER_S * 3)
        shell.close()
        return peer

    peer = asyncio.run(main())
    assert [f for f, _ in peer.taken] == [box, order, box2] and peer.live == [False, True, False]


class SetUpPeer(Peer):
    """A peer busy with its set-up until a frame says it is done: from then on a bot may move."""

    def __init__(self) -> None:
        super().__init__()
        self.set_up = False

    def receive(self, frame: bytes, now: float, live: bool = True) -> list[Any]:
        self.set_up = self.set_up or frame == b"done"
        return super().receive(frame, now, live)

    def busy(self) -> bool:
        return not self.set_up

    def view(self) -> None:
        return None

    def prepare(self) -> bool:
        return False


def test_a_bot_thinks_from_when_it_may_move_not_from_a_timer_set_while_its_table_was_busy(monkeypatch: Any) -> None:
    """A bot drew the instant its hand was shown (its timer set during the set-up), while the other seats were
    still checking theirs: such a draw waits on them, and no player draws before seeing the cards."""
    from p2pcards.net import shell as shell_module

    monkeypatch.setattr(shell_module.random, "random", lambda: 0.5)  # think exactly `think`
    think = 0.2

    async def main() -> tuple[float, list[float]]:
        loop = asyncio.get_running_loop()
        chose: list[float] = []

        class Bot:
            def choose(self, view: Any) -> None:
                chose.append(loop.time())

        shell = TableShell(SetUpPeer(), lambda frame: None, bot=Bot(), think=think,  # type: ignore[arg-type]
                           clock=loop.time)
        shell.receive(b"set-up")  # busy: a bot timer is set for `think` from now
        await asyncio.sleep(think * 0.75)
        ready = loop.time()
        shell.receive(b"done")  # ready for a move, a quarter of the think time before that timer
        await asyncio.sleep(think * 1.5)
        shell.close()
        return ready, chose

    ready, chose = asyncio.run(main())
    assert chose and chose[0] >= ready + think * 0.9, (chose[0] - ready, think)
