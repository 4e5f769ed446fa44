"""Private payloads open only for the seat they were sealed to."""

from __future__ import annotations

import pytest

from p2pcards.crypto.identity import generate
from p2pcards.crypto.sealing import Opener, seal_to
from p2pcards.errors import MalformedMessage


def test_a_box_opens_for_its_recipient_only() -> None:
    ann, bob = generate("ann"), generate("bob")
    box = seal_to(ann.public, b"shares for ann")
    assert box != seal_to(ann.public, b"shares for ann")  # a fresh ephemeral key each time
    assert Opener(ann).open(box) == b"shares for ann"
    with pytest.raises(MalformedMessage):
        Opener(bob).open(box)


def test_an_altered_box_does_not_open() -> None:
    ann = generate("ann")
    box = bytearray(seal_to(ann.public, b"x" * 40))
    box[-1] ^= 1
    with pytest.raises(MalformedMessage):
        Opener(ann).open(bytes(box))
