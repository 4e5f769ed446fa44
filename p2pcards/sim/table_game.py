"""Whole games between simulated peers over the in-memory network."""

from __future__ import annotations

import random
import secrets
from collections.abc import Mapping, Sequence
from typing import Any

from ..bots.base import Bot, RandomBot
from ..crypto.identity import generate
from ..table.config import TableConfig
from ..table.peer import TablePeer
from .memnet import LinkModel, MemNet


def make_table(game: str, players: int, options: Mapping[str, Any] | None = None,
               rng: random.Random | None = None, **peer_args: Any) -> list[TablePeer]:
    """Fresh identities and one TablePeer per seat at a new table."""
    names = [f"p{i}" for i in range(players)]
    ids = [generate(n) for n in names]
    cfg = TableConfig(secrets.token_bytes(16), game, dict(options or {}), tuple(i.public for i in ids), tuple(names))
    return [TablePeer(cfg, ident, **peer_args) for ident in ids]


def play_table(game: str, players: int, options: Mapping[str, Any] | None = None, seed: int = 1,
               bots: Sequence[Bot | None] | None = None, link: LinkModel | None = None,
               until: float = 36000.0, **peer_args: Any) -> MemNet:
    """Play a whole game with random bots (or the given ones) and return the network after it."""
    rng = random.Random(seed)
    peers = make_table(game, players, options, rng, **peer_args)
    if bots is None:
        bots = [RandomBot(random.Random(rng.random()), 0.05) for _ in range(players)]
    net = MemNet(peers, bots, rng, link)
    net.start()
    net.run(until=until)
    return net
