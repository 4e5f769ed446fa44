"""One error hierarchy: whose fault an error is decides what a caller does with it."""

from __future__ import annotations


class P2PCardsError(Exception):
    """Base of every error this package raises on purpose."""


class LocalError(P2PCardsError):
    """Our own side asked for something the rules or the protocol do not allow."""


class IllegalMove(LocalError):
    """A move the rules do not allow at this moment; the state is unchanged."""


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


class CheatDetected(RemoteProtocolError):
    """Cryptographic evidence that a peer cheated: a bad proof, point, pass or opening."""
