"""What every peer at a table agrees on before the first round: the game, its options and the seats."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..cards import CRESCENDO_DECK, CRISP_DECK, Back, crescendo_back
from ..crypto.encoding import Value, digest, encode, transcript_hash
from ..crypto.identity import MAX_NAME, is_valid_public, valid_name
from ..errors import InputError, MalformedMessage
from ..games.crescendo import CrescendoGame, CrescendoOptions
from ..games.crisp import CrispGame, CrispOptions

Game = CrispGame | CrescendoGame
CONFIG_PERSON = b"p2pc/config/v1"
SUCCESSOR_PERSON = b"p2pc/next/v1"  # names the table that goes on without the seats voted out
NONCE_BYTES = 32
SEATS = {"crisp": (2, 8), "crescendo": (2, 6)}


@dataclass(frozen=True, slots=True)
class TableConfig:
    """A table: its id, game, options (seconds as integer milliseconds on the wire), seat keys and names,
    and each seat's fresh lobby nonce (none for a table configured in advance)."""

    table: bytes
    game: str
    options: Mapping[str, Any]
    keys: tuple[bytes, ...]
    names: tuple[str, ...]
    first_dealer: int = 0
    nonces: tuple[bytes, ...] = ()

    def __post_init__(self) -> None:
        if self.game not in SEATS:
            raise InputError(f"unknown game {self.game!r}")
        low, high = SEATS[self.game]
        if not low <= len(self.keys) <= high or len(self.names) != len(self.keys):
            raise InputError(f"{self.game} needs {low} to {high} seats, each with a name")
        if len(set(self.keys)) != len(self.keys) or len(set(self.names)) != len(self.names):
            raise InputError("seat keys and names must be distinct")
        if not all(valid_name(n) for n in self.names):
            raise InputError(f"a seat name must be 1 to {MAX_NAME} bytes of printable UTF-8")
        if not all(is_valid_public(k) for k in self.keys):
            raise InputError("a seat key is not a valid Ed25519 identity key")
        if not 0 <= self.first_dealer < len(self.keys):
            raise InputError("no such dealer")
        if self.nonces and (len(self.nonces) != len(self.keys)
                            or not all(isinstance(n, bytes) and len(n) == NONCE_BYTES for n in self.nonces)):
            raise InputError(f"the nonces are none, or one of {NONCE_BYTES} bytes per seat")
        self.new_game()  # validates the options

    @property
    def seats(self) -> int:
        """The number of seats."""
        return len(self.keys)

    def without(self, out: tuple[int, ...], void: int, dealer: int) -> TableConfig:
        """The table that goes on without the seats `out` from round `void`, which seat `dealer` was to deal
        (protocol.md §14.9): the others in their order, the same game and options, and round `void`
        dealt by the same seat, or by the first one after it that remains when it is out."""
        keep = [s for s in range(self.seats) if s not in out]
        first = keep.index(next(s % self.seats for s in range(dealer, dealer + self.seats) if s % self.seats in keep))
        return TableConfig(transcript_hash(SUCCESSOR_PERSON, [self.context, list(out), void], 16), self.game,
                           self.options, tuple(self.keys[s] for s in keep), tuple(self.names[s] for s in keep),
                           (first - void + 1) % len(keep))

    def new_game(self) -> Game:
        """A fresh engine for this table, as a peer runs it (faces revealed by the protocol)."""
        if self.game == "crisp":
            return CrispGame(self.names, CrispOptions.from_dict(self.options), self.first_dealer)
        return CrescendoGame(self.names, CrescendoOptions.from_dict(self.options), self.first_dealer,
                             auto_reshuffle=False)

    def cards(self) -> tuple[str | int, ...]:
        """The deck in its public starting order."""
        return CRISP_DECK if self.game == "crisp" else CRESCENDO_DECK

    def tags(self) -> tuple[str, ...] | None:
        """The public tag of each card of `cards()`: Crescendo's backs; Crisp has none."""
        if self.game == "crisp":
            return None
        return tuple(str(crescendo_back(c)) for c in CRESCENDO_DECK)

    def to_wire(self) -> dict[str, Value]:
        """The config as a msgpack map (times in integer milliseconds: the wire has no floats)."""
        return {
            "table": self.table,
            "game": self.game,
            "options": options_to_wire(self.options),
            "keys": list(self.keys),
            "names": list(self.names),
            "dealer": self.first_dealer,
            "nonces": list(self.nonces),
        }

    @classmethod
    def from_wire(cls, v: Value) -> TableConfig:
        """Parse a config map; MalformedMessage on a bad shape or value."""
        if not isinstance(v, dict) or set(v) != {"table", "game", "options", "keys", "names", "dealer", "nonces"}:
            raise MalformedMessage("bad table config")
        opts = v["options"]
        if not isinstance(opts, dict):
            raise MalformedMessage("bad options")
        try:
            return cls(
                _bytes(v["table"]), _str(v["game"]),
                options_from_wire(opts),
                tuple(_bytes(k) for k in _list(v["keys"])),
                tuple(_str(n) for n in _list(v["names"])),
                _int(v["dealer"]),
                tuple(_bytes(n) for n in _list(v["nonces"])),
            )
        except (InputError, TypeError, ValueError) as exc:
            raise MalformedMessage(f"bad table config: {exc}") from None

    def digest(self) -> bytes:
        """The hash every seat signs in `ready`: agreement on exactly this config."""
        return digest(CONFIG_PERSON, encode(self.to_wire()))

    @property
    def context(self) -> bytes:
        """The table's context: every frame's `table` and every round's deck context from `ready` on (the digest)."""
        return self.digest()


def parse_back(tag: str) -> Back:
    """A Crescendo back from its public tag (`"11-20 peek"`)."""
    span, action = tag.split(" ")
    low, high = span.split("-")
    return Back(int(low), int(high), action)


_SECONDS = {"draw_seconds", "crisp_window_s", "next_start_s", "number_window_s"}


def options_to_wire(options: Mapping[str, Any]) -> dict[str, Value]:
    """Options as a msgpack map: seconds become integer milliseconds (the wire has no floats)."""
    return {k: _to_ms(k, v) for k, v in sorted(options.items())}


def options_from_wire(options: Mapping[str, Value]) -> dict[str, Any]:
    """Options from their msgpack map; MalformedMessage on a time that is not whole milliseconds."""
    return {k: _from_ms(k, v) for k, v in options.items()}


def _to_ms(key: str, value: Any) -> Value:
    if key in _SECONDS and value is not None:
        return int(round(value * 1000))
    if key == "number_tie_ms":
        return int(round(value))
    return value  # type: ignore[no-any-return]


def _from_ms(key: str, value: Value) -> Any:
    if key in _SECONDS and value is not None:
        if type(value) is not int:
            raise MalformedMessage(f"{key} must be integer milliseconds")
        return value / 1000
    return value


def _bytes(v: Value) -> bytes:
    if not isinstance(v, bytes):
        raise MalformedMessage("expected bytes")
    return v


def _str(v: Value) -> str:
    if not isinstance(v, str):
        raise MalformedMessage("expected a str")
    return v


def _int(v: Value) -> int:
    if type(v) is not int:  # not a bool, nor a str or bin that int() would read
        raise MalformedMessage("expected an int")
    return v


def _list(v: Value) -> list[Value]:
    if not isinstance(v, list):
        raise MalformedMessage("expected a list")
    return v
