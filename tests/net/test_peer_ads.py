"""Signed peer ads (protocol.md §17): what is signed byte for byte, what a reader refuses, and which ad of a seat a
peer keeps: the freshest one the seat's key signed, whatever a stranger announces or plays back."""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Callable
from types import SimpleNamespace
from typing import Any

import pytest
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.signing import VerifyKey
from zeroconf import ServiceStateChange

from p2pcards.crypto.identity import Identity, generate
from p2pcards.errors import MalformedMessage
from p2pcards.net.discovery import AD_LABEL, MAX_SEEN, SERVICE, Discovery, TableAd, ad_message, wire_options

LOOPBACK = ["127.0.0.1"]
# The key of §5's envelope vector (seed 00 01 .. 1f): fingerprint 09192 51733 14376 41248 05405.
ANN = Identity(Ed25519PrivateKey.from_private_bytes(bytes(range(32))), "ann")
TABLE = bytes.fromhex("00112233445566778899aabbccddeeff")
AT = 1767225600000  # 2026-01-01 00:00 UTC, in ms
SIG = ("23fd7b041d8644bf635920dcb8bf676df690441525babf8e254f9a5408772d34"
       "bc9adfc8056bece1852a0280624472753b503d62c156778163d042588cc7ef0a")
SIG_TEXT = "I_17BB2GRL9jWSDcuL9nbfaQRBUlur-OJU-aVAh3LTS8mt_IBWvs4YUqAoBiRHJ1O1A9YsFWd4Fj0EJYjMfvCg"


def peer_ad(who: Identity = ANN, port: int = 4001, addresses: tuple[str, ...] = ("192.168.1.7", "10.0.0.7"),
            at: int = AT, table: bytes = TABLE) -> TableAd:
    """`who`'s peer ad, signed."""
    return TableAd(f"{who.name} {who.fingerprint[:5]}", table, "crisp", who.name, who.fingerprint, port, addresses,
                   wire_options({"limit": 50}), taken=3, free=0, role="peer").signed(who, at)


def received(ad: TableAd, without: tuple[str, ...] = (), **changes: str | None) -> TableAd:
    """`ad` as a peer reads it off the network, its TXT record changed by `changes` (None: a key without "="), less
    the keys `without`."""
    txt: dict[str, str | None] = {**ad.txt(), **changes}
    return TableAd.from_txt(ad.name, {k: v for k, v in txt.items() if k not in without}, ["203.0.113.9"])


def msgpack_str(text: str) -> bytes:
    """A str as §1 encodes it (fixstr, or str8 up to 255 bytes): written from the document, not by the encoder."""
    raw = text.encode()
    return (bytes([0xa0 | len(raw)]) if len(raw) < 32 else bytes([0xd9, len(raw)])) + raw


def test_a_peer_ad_signs_the_label_then_its_instance_name_and_every_other_key_known_answer() -> None:
    ad = peer_ad()
    txt = ad.txt()
    assert txt["addr"] == "192.168.1.7,10.0.0.7" and txt["at"] == str(AT) and txt["sig"] == SIG_TEXT
    unsigned = sorted((k, v) for k, v in txt.items() if k != "sig")
    assert len(unsigned) == 13
    by_hand = (b"p2pc/ad/v1" + b"\x92" + msgpack_str("ann 09192") + bytes([0x80 | 13])
               + b"".join(msgpack_str(k) + msgpack_str(v) for k, v in unsigned))
    assert ad.message == by_hand == ad_message(ad.name, txt) and AD_LABEL == b"p2pc/ad/v1"
    assert ad.signature.hex() == SIG
    VerifyKey(ANN.public).verify(by_hand, ad.signature)  # plain RFC 8032 Ed25519 over exactly those bytes
    got = received(ad)
    assert got.signed_by(ANN.public) and got.addresses == ("192.168.1.7", "10.0.0.7") and got.at == AT
    assert got == ad  # what is read is what was signed


def test_every_field_of_a_signed_peer_ad_is_covered_by_its_signature() -> None:
    ad = peer_ad()
    for key, value in [("addr", "192.168.1.8,10.0.0.7"), ("addr", "10.0.0.7"), ("port", "4002"), ("at", str(AT + 1)),
                       ("id", "ff" * 16), ("taken", "4"), ("host", "bob"), ("opts", '{"limit":100}'),
                       ("free", "1"), ("game", "crescendo"), ("extra", "1"), ("extra", None)]:
        try:
            got = received(ad, (), **{key: value})
        except MalformedMessage:
            continue  # not even an ad (a game whose options are not its own): refused as any
        assert not got.signed_by(ANN.public), (key, value)
    renamed = TableAd.from_txt("ann 09192-2", ad.txt(), [])
    assert not renamed.signed_by(ANN.public)  # the instance name is signed too
    assert not received(ad).signed_by(generate("bob").public)  # another key: its fingerprint is not the ad's


def test_a_peer_ad_without_a_signature_is_read_but_signed_by_no_one() -> None:
    # An earlier version's peer ad (no addr, at, sig): a browser lists it, a seat never dials it.
    ad = peer_ad()
    old = received(ad, ("addr", "at", "sig"))
    assert old.addresses == ("203.0.113.9",) and not old.signature and not old.signed_by(ANN.public)


@pytest.mark.parametrize("key, value", [
    ("sig", SIG_TEXT[:-1]), ("sig", SIG_TEXT + "A"), ("sig", SIG_TEXT[:-1] + "h"), ("sig", SIG_TEXT[:-2] + "+A"),
    ("sig", SIG_TEXT + "=="), ("addr", ""), ("addr", "192.168.1.7,"), ("addr", "192.168.001.7"), ("addr", "::1"),
    ("addr", "host.local"), ("addr", "192.168.1.7 10.0.0.7"), ("at", "-1"), ("at", "01"), ("at", "1e3"),
    ("at", "1" * 17), ("addr", None), ("at", None), ("caf\u00e9", "1"), ("", "1"), ("addr", "x"), ("at", "x")])
def test_a_signed_peer_ad_that_breaks_the_rules_is_no_ad(key: str, value: str | None) -> None:
    with pytest.raises(MalformedMessage):
        received(peer_ad(), ("addr", "at") if value == "x" else (), **({} if value == "x" else {key: value}))


def test_an_ad_is_signed_only_by_the_key_it_names() -> None:
    table_ad = TableAd("t", TABLE, "crisp", "ann", ANN.fingerprint, 4001, ("10.0.0.7",))
    with pytest.raises(ValueError):
        table_ad.signed(generate("bob"), AT)
    with pytest.raises(ValueError):
        peer_ad().signed(generate("bob"), AT)
    with pytest.raises(ValueError):
        peer_ad(addresses=tuple(f"10.0.0.{i}" for i in range(9)))  # 8 at most
    assert "sig" not in table_ad.txt() and "addr" not in table_ad.txt()
    assert "key" not in peer_ad().txt() and table_ad.signed(ANN, AT).txt()["sig"]


def test_every_txt_string_of_the_largest_signed_peer_ad_stays_within_dns_sd_limits() -> None:
    big = TableAd("y" * 63, bytes(64), "crescendo", "h" * 32, ANN.fingerprint, 65535,
                  tuple(f"255.255.255.{200 + i}" for i in range(8)),
                  wire_options({"limit": 500, "number_window_s": 3}), taken=16, free=16, role="peer")
    strings = [f"{k}={v}".encode() for k, v in big.signed(ANN, 10 ** 16 - 1).txt().items()]
    assert all(len(s) <= 255 for s in strings) and sum(len(s) + 1 for s in strings) < 600


# ------------------------------------------------------------ which ad a peer keeps


def keeper(*keys: bytes) -> Discovery:
    """A Discovery never entered (no socket) that watches `keys`."""
    disco = Discovery(LOOPBACK)
    disco._bump = lambda: None  # type: ignore[method-assign]  # no loop: nobody waits on the lobby's feed here
    disco.watch(list(keys))
    return disco


def take(disco: Discovery, ad: TableAd, name: str | None = None) -> None:
    """`ad` resolved off the network under its own instance name, or `name`."""
    disco._take(f"{name or ad.name}.{SERVICE}", received(ad))


def forged(i: int, fpr: str = ANN.fingerprint, at: int = AT + 10 ** 6) -> TableAd:
    """A stranger's peer ad naming `fpr` at an address of its own: signed by its own key, relabelled."""
    ad = peer_ad(generate(f"x{i}"), 20000 + i, ("198.51.100.7",), at)
    return TableAd.from_txt(f"forged {i}", {**ad.txt(), "fpr": fpr}, [])


def test_a_peer_keeps_the_freshest_ad_a_watched_key_signed_and_a_replay_of_an_older_one_replaces_nothing() -> None:
    disco = keeper(ANN.public)
    old, new = peer_ad(port=4001, at=AT), peer_ad(port=4002, at=AT + 5000)
    take(disco, old)
    assert disco.signed[ANN.public].port == 4001
    take(disco, new)
    assert disco.signed[ANN.public].port == 4002
    take(disco, old)  # played back by anyone, under its own name or another
    take(disco, old, "ann 09192-2")
    take(disco, peer_ad(port=4003, at=AT + 5000))  # stamped the same: not fresher
    assert disco.signed[ANN.public] == received(new)
    disco._on_change(None, SERVICE, f"{new.name}.{SERVICE}", ServiceStateChange.Removed)  # type: ignore[arg-type]
    assert disco.signed[ANN.public] == received(new)  # a goodbye is anyone's word: the signed ad stays


def test_forged_unsigned_and_tampered_ads_naming_a_seat_are_never_its_ad() -> None:
    disco = keeper(ANN.public)
    take(disco, forged(0))
    take(disco, TableAd("t", TABLE, "crisp", "ann", ANN.fingerprint, 4009, ("10.0.0.9",)).signed(ANN, AT + 10 ** 6))
    disco._take(f"ann 09192.{SERVICE}", received(peer_ad(port=4009), ("addr", "at", "sig")))
    disco._take(f"ann 09192.{SERVICE}", received(peer_ad(), port="4009"))  # tampered: the signature fails
    assert ANN.public not in disco.signed and len(disco.seen) == 3  # the seat's own table ad is no peer ad either
    take(disco, peer_ad())
    assert disco.signed[ANN.public].port == 4001


def test_a_key_watched_after_its_ad_was_seen_finds_it_and_an_unwatched_one_is_dropped() -> None:
    disco = keeper()
    take(disco, peer_ad())
    assert not disco.signed
    disco.watch([ANN.public])
    disco.watch([ANN.public])  # two nodes of one process at one table
    assert disco.signed[ANN.public].port == 4001
    disco.unwatch([ANN.public])
    assert ANN.public in disco.signed
    disco.unwatch([ANN.public])
    assert not disco.signed and not disco._watched


def resolving(disco: Discovery, ads: dict[str, TableAd]) -> None:
    """Resolve names as the network would, from `ads` by full service name."""
    disco.zc = SimpleNamespace(zeroconf=None)  # type: ignore[assignment]

    async def resolve(name: str) -> bool:
        disco._take(name, ads[name])
        return True

    disco._resolve = resolve  # type: ignore[method-assign]


@pytest.mark.parametrize("real_first", [True, False])
def test_a_flood_of_300_forged_ads_neither_evicts_a_seats_signed_ad_nor_keeps_it_from_being_read(
        real_first: bool) -> None:
    # Each forged ad names the seat's fingerprint at a stranger's address, stamped later than the seat's own. Kept
    # ads stay bounded; the seat's own ad is read even after the flood filled them (a name not seen before takes the
    # place of the oldest peer ad), and is kept once read however many come after.
    async def main() -> tuple[TableAd | None, int]:
        disco = keeper(ANN.public)
        real = peer_ad(port=5001)
        ads = {f"forged {i}.{SERVICE}": forged(i) for i in range(300)}
        ads[f"{real.name}.{SERVICE}"] = received(real)
        resolving(disco, ads)
        names = list(ads)
        order = names[-1:] + names[:-1] if real_first else names
        for name in order:
            disco._on_change(None, SERVICE, name, ServiceStateChange.Added)  # type: ignore[arg-type]
            await asyncio.sleep(0)
        for _ in range(3):
            await asyncio.sleep(0)
        return disco.signed.get(ANN.public), len(disco.seen)

    kept, held = asyncio.run(main())
    assert kept is not None and kept.port == 5001 and kept.addresses == ("192.168.1.7", "10.0.0.7")
    assert held <= MAX_SEEN


def test_a_new_name_takes_the_place_of_a_peer_ad_never_of_a_table() -> None:
    async def main() -> list[str]:
        disco = keeper()
        tables = {f"t{i}.{SERVICE}": TableAd(f"t{i}", TABLE, "crisp", "ann", ANN.fingerprint, 4001)
                  for i in range(MAX_SEEN)}
        resolving(disco, {"late.x": forged(1)})
        disco.seen = dict(tables)
        disco._on_change(None, SERVICE, "late.x", ServiceStateChange.Added)  # type: ignore[arg-type]
        await asyncio.sleep(0)
        return list(disco.seen)

    assert asyncio.run(main()) == [f"t{i}.{SERVICE}" for i in range(MAX_SEEN)]


def test_a_signed_peer_ad_is_announced_and_found_on_real_multicast_dns_and_signed_again_on_each_update() -> None:
    # The real path: the seat announces its ad, another peer watching its key keeps it; the seat moves to another
    # port (an update, as a seat back on another port announces under the same name) and is found there.
    me = generate(f"p{secrets.token_hex(2)}")

    async def wait(test: Callable[[], bool]) -> None:
        async with asyncio.timeout(10):
            while not test():
                await asyncio.sleep(0.05)

    async def main() -> tuple[TableAd, TableAd, TableAd]:
        async with Discovery(LOOPBACK) as seat, Discovery(LOOPBACK) as peer:
            peer.watch([me.public])
            ad = TableAd(f"{me.name} {me.fingerprint[:5]}", secrets.token_bytes(16), "crisp", me.name,
                         me.fingerprint, 4001, role="peer", options=wire_options({"limit": 50}))
            ann = await seat.announce(ad, me)
            await wait(lambda: me.public in peer.signed)
            first = peer.signed[me.public]
            await ann.update(port=4002)
            await wait(lambda: peer.signed[me.public].port == 4002)
            return ann.ad, first, peer.signed[me.public]

    mine, first, now = asyncio.run(main())
    assert first.addresses == now.addresses == ("127.0.0.1",) and first.port == 4001 and now.at > first.at
    assert now == mine and now.signed_by(me.public)


def test_a_peer_ad_renamed_on_a_clash_is_signed_again_under_its_new_name() -> None:
    # The signature covers the instance name, which probing may change ("name-2": someone holds ours, maybe a
    # stranger to push us off it): the record announced under the new name must verify under it.
    class Renaming:
        def __init__(self) -> None:
            self.zeroconf = SimpleNamespace(registry=SimpleNamespace(async_get_info_name=lambda key: None))
            self.announced: list[object] = []

        async def async_register_service(self, info: object, allow_name_change: bool) -> asyncio.Future[None]:
            assert allow_name_change
            info.name = info.name.replace(f".{SERVICE}", f"-2.{SERVICE}")  # type: ignore[attr-defined]
            self.announced.append(info)
            return self._done()

        async def async_update_service(self, info: object) -> asyncio.Future[None]:
            self.announced.append(info)
            return self._done()

        @staticmethod
        def _done() -> asyncio.Future[None]:
            done = asyncio.get_running_loop().create_future()
            done.set_result(None)
            return done

    async def main() -> tuple[TableAd, list[TableAd]]:
        disco = Discovery(LOOPBACK)
        disco.zc = fake = Renaming()  # type: ignore[assignment]
        ann = await disco.announce(TableAd("ann 09192", TABLE, "crisp", "ann", ANN.fingerprint, 4001, role="peer",
                                           options=wire_options({"limit": 50})), ANN)
        infos: list[Any] = fake.announced
        return ann.ad, [TableAd.from_txt(i.name[: -len(SERVICE) - 1], i.decoded_properties, []) for i in infos]

    mine, records = asyncio.run(main())
    assert mine.name == "ann 09192-2" and len(records) == 2
    assert not records[0].signed_by(ANN.public)  # signed for the name it asked for: announced, then replaced
    assert records[1] == mine and mine.signed_by(ANN.public) and mine.at > records[0].at
