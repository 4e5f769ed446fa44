"""Whole games between simulated peers over the in-memory network."""

from __future__ import annotations

import functools
import random
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from ..bots.base import Bot, RandomBot
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey

from ..crypto.identity import Identity, generate
from ..table.config import TableConfig
from ..table.peer import TablePeer
from .memnet import LinkModel, MemNet


def make_table(game: str, players: int, options: Mapping[str, Any] | None = None,
               rng: random.Random | None = None, **peer_args: Any) -> list[TablePeer]:
    """One TablePeer per seat at a new table.

    With `rng`, the table id, the keys and every round secret come from it, so a simulation can
    be replayed exactly; such keys are test fixtures, never a real player's. Without it they come
    from `secrets`, as at a real table.
    """
    names = [f"p{i}" for i in range(players)]
    if rng is None:
        ids = [generate(n) for n in names]
        table = secrets.token_bytes(16)
    else:
        ids = [Identity(Ed25519PrivateKey.from_private_bytes(rng.randbytes(32)), n) for n in names]
        table = rng.randbytes(16)
    cfg = TableConfig(table, game, dict(options or {}), tuple(i.public for i in ids), tuple(names))
    peers = []
    for ident in ids:
        if rng is not None:
            peer_args["draw_seed"] = functools.partial(random.Random(rng.random()).randbytes, 32)
        peers.append(TablePeer(cfg, ident, **peer_args))
    return peers


def play_table(game: str, players: int, options: Mapping[str, Any] | None = None, seed: int = 1,
               bots: Sequence[Bot | None] | None = None, link: LinkModel | None = None,
               until: float = 36000.0, seat_links: Mapping[int, LinkModel] | None = None,
               **peer_args: Any) -> MemNet:
    """Play a whole game with random bots (or the given ones) and return the network after it.

    `link` is every link's model, `seat_links` the model of the links to and from some seats."""
    rng = random.Random(seed)
    peers = make_table(game, players, options, random.Random(rng.random()), **peer_args)
    if bots is None:
        bots = [RandomBot(random.Random(rng.random()), 0.05) for _ in range(players)]
    net = MemNet(peers, bots, rng, link, seat_links=seat_links)
    net.start()
    net.run(until=until)
    return net
