"""protocol.md states the protocol's constants by name (`NAME` = value) and its personalisations in a table:
every one of them must be the code's own value, so that a constant changed in the code cannot leave the
specification behind (an implementer in another language reads only protocol.md)."""

from __future__ import annotations

import re
from pathlib import Path

from p2pcards.crypto import deck, encoding, envelope, identity, proofs, shuffle
from p2pcards.net import discovery, handshake, link, node, resolving
from p2pcards.sim import transcript
from p2pcards.table import chains, config, coordinator, log, recovery, reveals, seating

DOC = (Path(__file__).resolve().parent.parent / "protocol.md").read_text(encoding="utf-8")

# Every constant protocol.md names as `NAME` = value, and the code's value (in the unit the document uses).
CONSTANTS: dict[str, float] = {
    "MAX_FRAME": encoding.MAX_FRAME,
    "MAX_HELD": chains.MAX_HELD,
    "MAX_HELD_BYTES": chains.MAX_HELD_BYTES,
    "MAX_ROUND_BYTES": chains.MAX_ROUND_BYTES,
    "MAX_LATER": chains.MAX_LATER,
    "MAX_MOVES": log.MAX_MOVES,
    "MAX_EARLY": reveals.MAX_EARLY,
    "TOLERANCE_S": coordinator.TOLERANCE_S,
    "SLACK_S": coordinator.SLACK_S,
    "TIMEOUT_S": coordinator.TIMEOUT_S,
    "RESEND_S": log.RESEND_S,
    "RESEND_MAX_S": log.RESEND_MAX_S,
    "RESEND_CAP_S": log.RESEND_CAP_S,
    "GAP_S": link.GAP_S,
    "AT_ONCE_S": seating.AT_ONCE_S,
    "UNHEARD_S": node.UNHEARD_S,
    "MAX_TRANSCRIPT": transcript.MAX_TRANSCRIPT,
}
UNITS = {"": 1, "s": 1, "bytes": 1, "KiB": 1 << 10, "MiB": 1 << 20}
# `NAME` = 1.5 s, `NAME` = 4 MiB, `NAME` = 1024 ...; not a sum such as `A` + `B` = 2.5 s.
STATED = re.compile(r"(?<!\+ )`([A-Z][A-Z0-9_]+)` = ([0-9]+(?: [0-9]{3})*(?:\.[0-9]+)?)(?: (s|bytes|KiB|MiB)\b)?")


def test_every_constant_stated_in_protocol_md_is_the_codes() -> None:
    stated = [(m.group(1), float(m.group(2).replace(" ", "")) * UNITS[m.group(3) or ""])
              for m in STATED.finditer(DOC)]
    names = {name for name, _ in stated}
    assert names <= set(CONSTANTS), f"protocol.md states constants this test does not know: {names - set(CONSTANTS)}"
    for name, value in stated:
        assert value == CONSTANTS[name], f"protocol.md says {name} = {value}, the code {CONSTANTS[name]}"
    # `MAX_TRANSCRIPT` is stated as "64 MiB (`MAX_TRANSCRIPT`)"
    assert "at most 64 MiB\n(`MAX_TRANSCRIPT`)" in DOC and transcript.MAX_TRANSCRIPT == 64 << 20
    assert names >= set(CONSTANTS) - {"MAX_TRANSCRIPT"}, "a constant is no longer stated in protocol.md"


def test_the_personalisation_table_is_the_codes() -> None:
    rows = dict(re.findall(r"^\| `(p2pc/[a-z0-9/-]+)` \| ([0-9]+) \|", DOC, re.M))
    code = {
        envelope.MSG_PERSON: envelope.HASH_BYTES, identity.FPR_PERSON: 25, deck.CARD_PERSON: 32,
        deck.RKEY_PERSON: 64, deck.COMMIT_PERSON: 32, proofs.POK_PERSON: 64, proofs.DLEQ_PERSON: 64,
        proofs.NONCE_PERSON: 64, deck.SHUFFLE_PERSON: 64, deck.DECK_PERSON: 32, shuffle.GEN_PERSON: 32,
        shuffle.TAG_PERSON: 64, shuffle.E_PERSON: 64, shuffle.EJ_PERSON: 64, shuffle.V_PERSON: 64,
        shuffle.NONCE_PERSON: 64, config.CONFIG_PERSON: 32, log.LOG_PERSON: 32, transcript.PERSON: 32,
        config.SUCCESSOR_PERSON: 16, handshake.LINK_PERSON: 64,
    }
    assert {p.encode(): int(n) for p, n in rows.items()} == code


def test_the_encoding_and_envelope_limits_are_the_codes() -> None:
    assert ("a str longer than 4096 bytes, a bin longer than 524 288 bytes, an array of more than 4096\n"
            "  items, or a map of more than 64 entries") in DOC
    assert (encoding.MAX_STR, encoding.MAX_BIN, encoding.MAX_ARRAY, encoding.MAX_MAP) == (4096, 524_288, 4096, 64)
    assert "more than 16 levels below the top value" in DOC and encoding.MAX_DEPTH == 16
    assert "| `table` | bin, 1–64 bytes |" in DOC and envelope.MAX_TABLE_ID == 64
    assert "| `type` | str, 1–64 bytes |" in DOC and envelope.MAX_TYPE == 64
    assert "with 1 ≤ n ≤ 1024 cards" in DOC and deck.MAX_CARDS == 1024
    assert "(a str of at most 64 bytes in UTF-8)" in DOC and deck.MAX_TAG == 64
    assert "2 ≤ S ≤ 16" in DOC and (deck.MIN_SEATS, deck.MAX_SEATS) == (2, 16)
    assert '`"crisp"` (2–8 seats) or `"crescendo"` (2–6 seats)' in DOC
    assert config.SEATS == {"crisp": (2, 8), "crescendo": (2, 6)}


def test_the_network_numbers_are_the_codes() -> None:
    assert f"`pv` | protocol version, `{handshake.LINK_VERSION}`" in DOC
    assert discovery.PROTOCOL_VERSION == handshake.LINK_VERSION
    assert f'"v": {handshake.LINK_VERSION}}}' in DOC
    assert f"The cap is {handshake.MAX_HELLO + 1} bytes for a hello, {identity.SIGNATURE_BYTES + 1} for a proof" in DOC
    assert f"The whole handshake must finish within {link.HANDSHAKE_S:.0f} s." in DOC
    assert (f"at most {link.MAX_LINKS} links at once" in DOC
            and f"at most {link.MAX_PENDING} handshakes run at once" in DOC)
    assert (f"sends a heartbeat every {link.HEARTBEAT_S:.0f} s" in DOC
            and f"waits up to {link.WRITE_S:.0f} s" in DOC
            and f"nothing at all\narrives for {link.SILENT_S:.0f} s is **quiet**" in DOC)
    assert f"A link silent for\n{link.DEAD_S:.0f} s, or whose unsent bytes pass 8 × `MAX_FRAME`" in DOC
    assert link.MAX_BACKLOG == 8 * encoding.MAX_FRAME
    assert f"`1 ≤ count ≤ {recovery.MAX_ASK}`; the whole payload at most {recovery.MAX_REQUEST} bytes" in DOC
    assert f"at most {recovery.BURST:.0f} requests at once from one link" in DOC
    assert (f"first asked for {recovery.GRACE_S} s after it is seen" in DOC
            and f"then again every {recovery.RETRY_S} s" in DOC)
    assert discovery.SERVICE in DOC and f"keeps at most {discovery.MAX_SEEN} ads" in DOC
    assert (f'`"{discovery.AD_LABEL.decode()}"` is these {len(discovery.AD_LABEL)} ASCII bytes' in DOC
            and f"names the first {discovery.MAX_AD_ADDRESSES} of the addresses" in DOC
            and f"the {discovery.MAX_SEEN} ads it keeps for browsing" in DOC
            and f"keeps these for the last {discovery.MAX_HOSTED} such pairs" in DOC)
    assert (f"in one of {resolving.MAX_RESOLVING} slots" in DOC and f"or for at most {resolving.RESOLVE_S:.0f} s" in DOC
            and f"at most {resolving.MAX_WAITING} names in all" in DOC
            and f"no sooner than {resolving.RETRY_S:.0f} × 2^(k−1) s later" in DOC
            and f"after {resolving.MAX_TRIES} unanswered queries" in DOC
            and (f"{resolving.RESOLVE_S:.0f} × ⌈{resolving.MAX_WAITING} / {resolving.MAX_RESOLVING}⌉ = "
                f"{resolving.WAIT_BOUND_S:.0f} s") in DOC
            and f"never holds more than {resolving.MAX_RESOLVING} queries and {resolving.MAX_WAITING} waiting" in DOC)
    assert discovery.RESOLVE_MS == resolving.RESOLVE_S * 1000


def test_the_spot_values_of_section_5_are_the_vectors() -> None:
    import json

    v = json.loads((Path(__file__).resolve().parent / "crypto" / "vectors.json").read_text(encoding="utf-8"))
    doc = " ".join(DOC.split())  # the spot values' sentences wrap anywhere
    card = next(c for c in v["cards"] if c["card"] == "AS")
    assert f"`P(\"AS\")` at the vector context is `{card['point_hex']}` (with `h0 = {card['h0_hex']}`)" in doc
    assert f"from seed `11…11` is `{v['round_keys']['publics_hex'][0]}`" in doc
    assert f"the joint key of the two seats is `{v['round_keys']['joint_hex']}`" in doc
    assert f"the permutation of 10 cards is `{v['pass_randomness']['perm']}`" in doc
    enc = next(e["hex"] for e in v["encoding"] if isinstance(e["value"], dict) and "aa" in e["value"])
    assert f'`{{"b": 1, "a": 2, "": 3, "aa": 4, "é": 5}}` is `{enc}`' in doc
    assert f"e.g. `{v['envelope']['fingerprint']}`" in doc
    assert v["base_point_hex"] in doc


def test_the_table_and_lobby_numbers_are_the_codes() -> None:
    from p2pcards.net import seat, shell
    from p2pcards.table import lobby, messages

    doc = " ".join(DOC.split())
    assert f"At most {lobby.MAX_GUESTS} names" in doc
    assert (f"sent cut to at most {messages.MAX_REASON} bytes" in doc
            and f"`evidence` at most {messages.MAX_EVIDENCE} signed frames" in doc)
    assert f"the reason, UTF-8, at most {link.MAX_BYE} bytes" in doc
    assert f"1 to {node.MAX_ADDRESSES} addresses" in doc
    assert f"dials it again, every {node.REDIAL_S} s" in doc
    assert f"no `join` came within {node.JOIN_S:.0f} s" in doc
    assert f"`gone_after` ({seat.GONE_AFTER_S:.0f} s by default)" in doc
    assert f"no link to every seat within {seat.LINK_UP_S:.0f} s gives up" in doc
    assert (f"up to {node.MAX_EARLY} frames and {node.MAX_EARLY_BYTES >> 20} MiB" in doc
            and node.MAX_EARLY_BYTES % (1 << 20) == 0)
    assert f"to the others {shell.LATER_S * 1000:.0f} ms later" in doc
