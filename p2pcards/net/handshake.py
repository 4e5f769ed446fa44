"""The link handshake, sans-IO: each side proves it holds its identity key, bound to the table and both nonces.

The listener speaks first with a `hello` (version, table id, key, a fresh 32-byte nonce from
`secrets`, the port it listens on); the dialer answers with its own hello and a proof; the
listener checks it and sends its own proof. A proof is an Ed25519 signature, by the key in the
signer's hello, of LINK_PERSON followed by the 64-byte BLAKE2b transcript hash of
[role, listener's hello bytes, dialer's hello bytes]. Each side's fresh nonce is in the
transcript, so a recorded handshake replayed later fails at once, and the role keeps one
side's proof from being reflected back as the other's.
"""

from __future__ import annotations

import secrets
from dataclasses import dataclass
from typing import Final, Literal

from ..crypto.encoding import decode, encode, transcript_hash
from ..crypto.envelope import MAX_TABLE_ID
from ..crypto.identity import PUBLIC_BYTES, SIGNATURE_BYTES, Identity, verify
from ..errors import BadSignature, MalformedMessage

LINK_VERSION: Final = 4  # 2: frames sent again travel as R (§18.1); 3: reveals name their final deck (§4.7); 4: `left` (§6.1)
LINK_PERSON: Final = b"p2pc/link/v1"
NONCE_BYTES: Final = 32
MAX_HELLO: Final = 256  # bytes of an encoded hello; a longer one is refused before it is read
HELLO_FIELDS: Final = frozenset({"v", "table", "key", "nonce", "port"})

Role = Literal["listener", "dialer"]


@dataclass(frozen=True, slots=True)
class Hello:
    """The first frame each side sends: who it claims to be, at which table, with a fresh nonce."""

    table: bytes
    key: bytes
    nonce: bytes
    port: int

    def to_bytes(self) -> bytes:
        """The canonical msgpack map {v, table, key, nonce, port}."""
        return encode({"v": LINK_VERSION, "table": self.table, "key": self.key, "nonce": self.nonce,
                       "port": self.port})

    @classmethod
    def parse(cls, data: bytes) -> Hello:
        """A hello from its bytes; MalformedMessage on anything but exactly the fields of this version."""
        v = decode(data, MAX_HELLO)
        if not isinstance(v, dict) or set(v) != HELLO_FIELDS:
            raise MalformedMessage("a hello is a map of exactly: " + ", ".join(sorted(HELLO_FIELDS)))
        if v["v"] != LINK_VERSION:
            raise MalformedMessage(f"link version {v['v']!r}; this peer speaks {LINK_VERSION}")
        table, key, nonce, port = v["table"], v["key"], v["nonce"], v["port"]
        if not (isinstance(table, bytes) and 1 <= len(table) <= MAX_TABLE_ID):
            raise MalformedMessage("bad table id in hello")
        if not (isinstance(key, bytes) and len(key) == PUBLIC_BYTES):
            raise MalformedMessage("bad key in hello")
        if not (isinstance(nonce, bytes) and len(nonce) == NONCE_BYTES):
            raise MalformedMessage("bad nonce in hello")
        if not (type(port) is int and 0 <= port <= 65535):
            raise MalformedMessage("bad port in hello")
        return cls(table, key, nonce, port)


def new_hello(table: bytes, key: bytes, port: int) -> Hello:
    """A hello for `key` with a fresh nonce from `secrets`."""
    return Hello(table, key, secrets.token_bytes(NONCE_BYTES), port)


def _signed_bytes(role: Role, listener_hello: bytes, dialer_hello: bytes) -> bytes:
    return LINK_PERSON + transcript_hash(LINK_PERSON, [role, listener_hello, dialer_hello])


def prove(identity: Identity, role: Role, listener_hello: bytes, dialer_hello: bytes) -> bytes:
    """Our proof for this handshake: 64 signature bytes."""
    return identity.sign(_signed_bytes(role, listener_hello, dialer_hello))


def check_proof(key: bytes, role: Role, listener_hello: bytes, dialer_hello: bytes, proof: bytes) -> None:
    """BadSignature unless `proof` is `key`'s signature of this very handshake in `role`."""
    if len(proof) != SIGNATURE_BYTES or not verify(key, _signed_bytes(role, listener_hello, dialer_hello), proof):
        raise BadSignature("the handshake proof does not verify: a stranger or a replay", key.hex())
