"""Before the first round, sans-IO: a host opens a table, guests join, the host seats them.

The host's `table` message names the game and the options the rules let a host set; each guest
answers with `join`; the host's `seats` message fixes the seat order and the whole config. Each
of them carries its sender's fresh nonce, which the config lists, so the table's context (the
config's digest, in every frame and proof from `ready` on) is new as long as one seat is honest:
a host that reuses a table id cannot replay a seat's frames of an earlier table. Every seated
peer then starts a `TablePeer`, whose `ready` message signs the config.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, TypeGuard

from ..crypto import group
from ..crypto.encoding import Value
from ..crypto.envelope import ChainTracker, Outbox, Signed, parse
from ..crypto.identity import MAX_NAME, Identity, valid_name, verify
from ..errors import BadSignature, Equivocation, InputError, MalformedMessage, RemoteProtocolError, UnknownSender
from ..games.crisp import DRAW_SECONDS_CHOICES
from .config import NONCE_BYTES, TableConfig, options_from_wire, options_to_wire
from .messages import BODIES, check_body
from .peer import TablePeer

MAX_GUESTS = 16
# The options the rulebooks let a host choose (Crisp's "Playing online"); the rest are the rules' own.
HOST_OPTIONS = {"crisp": {"limit", "discard_draw", "draw_seconds"}, "crescendo": set()}


@dataclass
class Lobby:
    """One peer's side of a table's lobby: the host's, or a guest's who knows the host's key."""

    identity: Identity
    table: bytes
    host: bytes
    game: str | None = None
    options: dict[str, Any] = field(default_factory=dict)
    names: dict[bytes, str] = field(default_factory=dict)  # in join order, the host first
    config: TableConfig | None = None
    errors: list[str] = field(default_factory=list)
    nonce: bytes = field(default_factory=lambda: secrets.token_bytes(NONCE_BYTES))  # our contribution to the context
    nonces: dict[bytes, bytes] = field(default_factory=dict)  # every key's nonce, as it sent it

    def __post_init__(self) -> None:
        self.outbox = Outbox(self.identity, self.table)
        self.tracker = ChainTracker(self.table, [self.host], BODIES, check_body=check_body)
        self.nonces[self.identity.public] = self.nonce

    @classmethod
    def open(cls, identity: Identity, table: bytes, game: str, options: Mapping[str, Any]) -> tuple[Lobby, bytes]:
        """A host's lobby and its `table` frame; InputError when the game or an option is not the host's to set."""
        check_host_options(game, options)
        lobby = cls(identity, table, identity.public, game, dict(options), {identity.public: identity.name})
        body: dict[str, Value] = {"game": game, "options": options_to_wire(options), "name": identity.name,
                                  "nonce": lobby.nonce}
        return lobby, lobby.outbox.seal(0, "table", body).frame

    def join(self) -> bytes:
        """A guest's `join` frame."""
        return self.outbox.seal(0, "join", {"name": self.identity.name, "nonce": self.nonce}).frame

    def seat(self) -> bytes:
        """The host closes the lobby: its `seats` frame fixes every seat and the config."""
        if self.identity.public != self.host or self.game is None:
            raise InputError("only the host seats the table")
        self.config = TableConfig(self.table, self.game, dict(self.options), tuple(self.names),
                                  tuple(self.names.values()), nonces=tuple(self.nonces[k] for k in self.names))
        return self.outbox.seal(0, "seats", {"config": self.config.to_wire()}).frame

    def drop(self, key: bytes) -> None:
        """A guest left the lobby before the seats (its link ended): its place and its name are free again, and
        its chain is forgotten, so that the player may join again with a fresh `join` (protocol.md §6.1)."""
        if key != self.host and key != self.identity.public:
            self.names.pop(key, None)
            self.nonces.pop(key, None)
            self.tracker.forget(key)

    def leave(self, key: bytes) -> bytes:
        """(The host) a guest left the lobby before the seats: `drop` it, and the `left` frame that tells the guests."""
        self.drop(key)
        return self.outbox.seal(0, "left", {"key": key}).frame

    def receive(self, frame: bytes) -> None:
        """Take one lobby frame; a bad one is recorded in `errors` and changes nothing."""
        try:
            self._receive(frame)
        except RemoteProtocolError as exc:
            self.errors.append(str(exc))

    def _receive(self, frame: bytes) -> None:
        signed = parse(frame)
        env = signed.envelope
        if env.sender not in self.names and env.sender != self.host:
            # A stranger may only ask to join; everyone follows its chain, only the host seats it.
            if env.type != "join" or self.config is not None:
                raise UnknownSender("a message from a key that has not joined")
            if not verify(env.sender, signed.message, signed.signature):
                raise BadSignature("bad signature on a join")
            if len(self.names) >= MAX_GUESTS:
                raise MalformedMessage("the table is full")
            self.tracker.add_sender(env.sender)
        try:
            signed = self.tracker.accept(frame)
        except Equivocation:
            if not self._rejoined(frame):
                raise
            signed = self.tracker.accept(frame)
        self._take(signed)

    def _rejoined(self, frame: bytes) -> bool:
        """(A guest's view) another `join` that begins a guest's chain anew, relayed by the host before the seats:
        that guest left the lobby and joined again, so its earlier chain is dropped (the host dropped it too)."""
        env = parse(frame).envelope
        if (env.type != "join" or env.seq != 0 or self.config is not None or self.identity.public == self.host
                or env.sender in (self.host, self.identity.public)):
            return False
        self.drop(env.sender)
        self.tracker.add_sender(env.sender)
        return True

    def _take(self, signed: Signed) -> None:
        env = signed.envelope
        body = env.body
        if env.type == "table" and env.sender == self.host:
            game, opts, name, nonce = body["game"], body["options"], body["name"], body["nonce"]
            if not isinstance(game, str) or not isinstance(opts, dict) or not valid_name(name) or not _is_nonce(nonce):
                raise MalformedMessage("bad table announcement", env.sender.hex())
            options = options_from_wire(opts)
            try:
                check_host_options(game, options)
            except InputError as exc:
                raise MalformedMessage(f"the host announced a table the rules do not allow: {exc}",
                                       env.sender.hex()) from None
            self.game = game
            self.options = options
            self.names.setdefault(self.host, str(name))
            self.nonces.setdefault(self.host, nonce)
        elif env.type == "join":
            name, nonce = body["name"], body["nonce"]
            had = next((k for k, n in self.names.items() if n == name), None)
            # A name in use: the host refuses it; a guest refuses the host's or its own, and takes the host's
            # word for another guest's (the host freed it: that guest left before the seating).
            we_host = self.identity.public == self.host
            if not valid_name(name) or (had is not None and (we_host or had in (self.host, self.identity.public))):
                raise MalformedMessage(f"a name must be new and 1 to {MAX_NAME} bytes of printable UTF-8",
                                       env.sender.hex())
            if not _is_nonce(nonce):
                raise MalformedMessage(f"a join's nonce is {NONCE_BYTES} bytes", env.sender.hex())
            if had is not None:  # (a guest's view) the host took the name again: the guest who had it left
                self.drop(had)  # the lobby before the seats (§6.1), and the host's `seats` decides who is seated
            self.names[env.sender] = str(name)
            self.nonces.setdefault(env.sender, nonce)
        elif env.type == "left" and env.sender == self.host and self.config is None:
            key = body["key"]
            if not isinstance(key, bytes) or len(key) != len(self.host) or key == self.host:
                raise MalformedMessage("a left names a guest's key", env.sender.hex())
            self.drop(key)  # our own key: the host's history of an earlier visit of ours, nothing to drop
        elif env.type == "seats" and env.sender == self.host:
            config = TableConfig.from_wire(body["config"])
            if config.table != self.table or config.game != self.game or dict(config.options) != self.options:
                raise MalformedMessage("seats for another table than the one announced", env.sender.hex())
            if not config.nonces or any(n != self.nonces.get(k, n) for k, n in zip(config.keys, config.nonces)):
                raise MalformedMessage("seats with another nonce than a seat sent", env.sender.hex())
            if config.keys[0] != self.host or config.first_dealer != 0:  # what every seat's rules text says (§6.1)
                raise MalformedMessage("seats where the host is not seat 0 and round 1's dealer", env.sender.hex())
            self.config = config
        else:
            raise MalformedMessage(f"{env.type} has no place in the lobby", env.sender.hex())

    def table_peer(self, **kwargs: Any) -> TablePeer:
        """The seated peer (its chains start afresh in the table's context); InputError before the host has seated us."""
        if self.config is None or self.identity.public not in self.config.keys:
            raise InputError("not seated at this table")
        return TablePeer(self.config, self.identity, **kwargs)


def _is_nonce(v: Value) -> TypeGuard[bytes]:
    return isinstance(v, bytes) and len(v) == NONCE_BYTES


def check_host_options(game: str, options: Mapping[str, Any]) -> None:
    """InputError unless `game` is known and `options` are only those the rules let a host set, with allowed values."""
    if game not in HOST_OPTIONS:
        raise InputError(f"unknown game {game!r}")
    extra = set(options) - HOST_OPTIONS[game]
    if extra:
        raise InputError(f"a host cannot set {', '.join(sorted(extra))} for {game}")
    if options.get("draw_seconds") not in DRAW_SECONDS_CHOICES:
        raise InputError("time per draw is 30, 45 or 60 seconds, or no limit")
    two_keys = (group.BASE, group.add(group.BASE, group.BASE))  # valid placeholder keys: only the options matter
    TableConfig(bytes(16), game, dict(options), two_keys, ("a", "b"))  # the engine's own checks
