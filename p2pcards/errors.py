"""One error hierarchy: whose fault an error is decides what a caller does with it."""

from __future__ import annotations

import signal
from typing import ClassVar


class P2PCardsError(Exception):
    """Base of every error this package raises on purpose."""


class Terminated(KeyboardInterrupt):
    """SIGTERM or SIGHUP, raised like Ctrl-C so that every `finally` runs: child processes, temporary files, goodbyes."""

    signalled: ClassVar[list[int]] = []  # every signal that raised one in this command (cli.main clears it)

    def __init__(self, signum: int = signal.SIGTERM) -> None:
        super().__init__(signum)
        self.signum = signum


class LocalError(P2PCardsError):
    """Our own side asked for something the rules or the protocol do not allow."""


class IllegalMove(LocalError):
    """A move the rules do not allow at this moment; the state is unchanged."""


class RunFailed(P2PCardsError):
    """A process or run we started (a benchmark's peer, say) failed: neither the user's input nor a peer's fault."""


class InputError(P2PCardsError):
    """Bad input from a file, the command line or the user's data directory."""


class IdentityError(InputError):
    """The identity key file is missing, unreadable or corrupt (never replaced silently)."""


class RemoteProtocolError(P2PCardsError):
    """Another peer broke the protocol; `blame` names the peer at fault when known."""

    def __init__(self, message: str, blame: str | None = None) -> None:
        super().__init__(message)
        self.blame = blame


class MalformedMessage(RemoteProtocolError):
    """Bytes that do not decode to a well-formed message of a known type."""


class BadSignature(RemoteProtocolError):
    """A signature that does not verify for the claimed sender."""


class UnknownSender(RemoteProtocolError):
    """A message from a key that is not seated at this table."""


class WrongContext(RemoteProtocolError):
    """A message for another table or another round."""


class Replay(RemoteProtocolError):
    """A message already seen (same sender, same place in its chain, same bytes)."""


class Gap(RemoteProtocolError):
    """A message whose sequence number or previous hash skips part of the sender's chain."""


class Equivocation(RemoteProtocolError):
    """Two different signed messages for one place in a sender's chain."""


class InvalidKey(MalformedMessage):
    """An identity key that is not a canonical point of the prime-order subgroup (small order, identity, torsion)."""


class CheatDetected(RemoteProtocolError):
    """Cryptographic evidence that a peer cheated: a bad proof, point, pass or opening."""


# ---------------------------------------------------------------- crypto (issue 3)


class BrokenChain(Gap):
    """A signed message whose previous hash is not the hash of the sender's own message before it; `frames`, when
    the one before it is still held: both signed frames, which prove it to anyone (its signer signed another
    message for the place before)."""

    def __init__(self, message: str, blame: str | None = None, frames: tuple[bytes, bytes] | None = None) -> None:
        super().__init__(message, blame)
        self.frames = frames


class EquivocationEvidence(Equivocation):
    """Equivocation with the two signed frames, for one place in the chain, that prove it."""

    def __init__(self, message: str, blame: str | None, frames: tuple[bytes, bytes]) -> None:
        super().__init__(message, blame)
        self.frames = frames


class DeckFault(CheatDetected):
    """A fault in the mental-poker deck; `seat` is the seat index at fault when known."""

    def __init__(self, message: str, blame: str | None = None, seat: int | None = None) -> None:
        super().__init__(message, blame)
        self.seat = seat


class InvalidPoint(DeckFault):
    """A received group element that is not a canonical point of the prime-order subgroup."""


class BadProof(DeckFault):
    """A proof of knowledge or a DLEQ proof that does not verify for its statement and context."""


class BadPass(DeckFault):
    """A shuffle pass with the wrong count, a repeated point, changed tags, or not a re-masked permutation."""


class BadOpening(DeckFault):
    """An audit opening that does not match the seat's commitment or its round key."""


class BadCard(DeckFault):
    """A reveal that decrypts to no card of the deck, or to a card already dealt elsewhere."""


# ---------------------------------------------------------------- network (issue 10)


class LinkBroken(RemoteProtocolError):
    """A TCP link that ended, went silent, broke the framing or the handshake: it is closed at once."""


class Refused(LinkBroken):
    """No link: every address dialled refused the connection (its machine answered that nothing listens there)."""
