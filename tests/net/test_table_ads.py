"""Signed table ads (protocol.md §17): what is signed byte for byte, and which table ads a lobby lists: only those
the key they carry signed, each host's freshest of its table, whatever a stranger announces or plays back."""

from __future__ import annotations

import asyncio
import base64
import re
import secrets
import socket
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
from nacl.signing import VerifyKey
from zeroconf import IPVersion, ServiceStateChange
from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf

from p2pcards.crypto.identity import Identity, generate, verify
from p2pcards.errors import MalformedMessage
from p2pcards.net.discovery import MAX_HOSTED, MAX_SEEN, SERVICE, Discovery, TableAd, _table_in, ad_message, wire_options
from tests.net.test_peer_ads import ANN, AT, LOOPBACK, TABLE, msgpack_str, received

DOC = (Path(__file__).resolve().parents[2] / "protocol.md").read_text(encoding="utf-8")
KEY_TEXT = "A6EHv_POEL4dcN0Y50vAmWfk1jCbpQ1fHdyGZBJVMbg"  # the §5 envelope key, 03a107bf..., in base64url
SIG = ("416f4a8fc151505904b8cffaa9c1ead248c9c5f23f6fbb95eafec858cd270e31"
       "d30b622ad980f5d29e633952fa9e934511efd543de9064590c455522e2e29604")
SIG_TEXT = "QW9Kj8FRUFkEuM_6qcHq0kjJxfI_b7uV6v7IWM0nDjHTC2Iq2YD10p5jOVL6npNFEe_VQ96QZFkMRVUi4uKWBA"


def table_ad(who: Identity = ANN, port: int = 4001, addresses: tuple[str, ...] = ("192.168.1.7", "10.0.0.7"),
             at: int = AT, table: bytes = TABLE, free: int = 3, name: str = "Ann's table") -> TableAd:
    """`who`'s table ad, signed."""
    return TableAd(name, table, "crisp", who.name, who.fingerprint, port, addresses, wire_options({"limit": 50}),
                   taken=1, free=free).signed(who, at)


def test_a_table_ad_signs_the_label_then_its_instance_name_and_every_other_key_its_hosts_key_too() -> None:
    ad = table_ad()
    txt = ad.txt()
    assert (txt["key"], txt["addr"], txt["at"], txt["sig"]) == (KEY_TEXT, "192.168.1.7,10.0.0.7", str(AT), SIG_TEXT)
    unsigned = sorted((k, v) for k, v in txt.items() if k != "sig")
    assert len(unsigned) == 14
    by_hand = (b"p2pc/ad/v1" + b"\x92" + msgpack_str("Ann's table") + bytes([0x80 | 14])
               + b"".join(msgpack_str(k) + msgpack_str(v) for k, v in unsigned))
    assert ad.message == by_hand == ad_message(ad.name, txt) and ad.signature.hex() == SIG
    VerifyKey(ANN.public).verify(by_hand, ad.signature)  # plain RFC 8032 Ed25519 over exactly those bytes
    got = received(ad)
    assert got.genuine and got.key == ANN.public and got.addresses == ("192.168.1.7", "10.0.0.7") and got == ad


def test_the_documents_worked_examples_are_these_ads() -> None:
    # §17 shows a signed peer ad and a signed table ad: their TXT records, the start of M and the signatures.
    from tests.net.test_peer_ads import SIG_TEXT as PEER_SIG_TEXT, peer_ad
    doc = " ".join(DOC.split())
    for ad, sig in [(peer_ad(), PEER_SIG_TEXT), (table_ad(), SIG_TEXT)]:
        record = " ".join(f"{k}={v}" for k, v in ad.txt().items() if k != "sig")
        assert f"the ad named `{ad.name}` whose TXT record is `{record}` has `M` beginning" in doc, record
        start = re.search(f"`{re.escape(record)}` has `M` beginning `([0-9a-f ]+)`", doc)
        assert start is not None and ad.message.hex().startswith(start[1].replace(" ", ""))
        assert f"`sig={sig}`" in doc


def test_every_field_of_a_signed_table_ad_is_covered_by_its_signature() -> None:
    ad = table_ad()
    bob = generate("bob")
    for key, value in [("addr", "203.0.113.9"), ("addr", "192.168.1.7"), ("port", "4002"), ("at", str(AT + 1)),
                       ("id", "ff" * 16), ("taken", "2"), ("free", "0"), ("host", "bob"), ("opts", '{"limit":100}'),
                       ("key", bob.public.hex()), ("extra", "1"), ("extra", None)]:
        try:
            got = received(ad, (), **{key: value})
        except MalformedMessage:
            continue  # not even an ad (a key that is not 43 characters of base64url): refused as any
        assert not got.genuine, (key, value)
    assert not TableAd.from_txt("Ann's table-2", ad.txt(), []).genuine  # the instance name is signed too


def misnamed(who: Identity, fpr: str, name: str = "t", table: bytes = TABLE) -> TableAd:
    """A table ad that `who` signed, carrying its key, but naming the fingerprint `fpr`."""
    txt = {**table_ad(who, 4998, ("127.0.0.1",), AT, table, name=name).txt(), "fpr": fpr}
    txt["sig"] = base64.urlsafe_b64encode(who.sign(ad_message(name, txt))).rstrip(b"=").decode()
    return TableAd.from_txt(name, txt, [])


def test_a_table_ad_whose_fingerprint_is_not_its_keys_or_signed_by_another_key_is_not_genuine() -> None:
    bob = generate("bob")
    theirs = table_ad(bob)
    # Bob's own signature, relabelled with Ann's key (and her fingerprint): the signature is not hers.
    assert not received(theirs, key=KEY_TEXT).genuine
    assert not received(theirs, key=KEY_TEXT, fpr=ANN.fingerprint).genuine
    # Bob's key and a signature he made, naming Ann's fingerprint: not his key's.
    forged = misnamed(bob, ANN.fingerprint)
    assert forged.signed_by(bob.public) is False and verify(bob.public, forged.message, forged.signature)
    assert not forged.genuine
    assert received(table_ad()).genuine and received(theirs).genuine  # each host's own is


def test_an_unsigned_table_ad_is_read_but_never_genuine() -> None:
    old = received(table_ad(), ("addr", "at", "sig", "key"))
    assert not old.signature and not old.key and not old.genuine and old.addresses == ("203.0.113.9",)


@pytest.mark.parametrize("key, value", [
    ("key", None), ("key", KEY_TEXT[:-1]), ("key", KEY_TEXT + "A"), ("key", KEY_TEXT[:-1] + "h"),
    ("key", KEY_TEXT + "="), ("key", ANN.public.hex()), ("addr", None), ("at", None), ("sig", SIG_TEXT[:-1])])
def test_a_signed_table_ad_that_breaks_the_rules_is_no_ad(key: str, value: str | None) -> None:
    with pytest.raises(MalformedMessage):
        received(table_ad(), ("key",) if key == "key" and value is None else (), **(
            {} if key == "key" and value is None else {key: value}))


def test_every_txt_string_of_the_largest_signed_table_ad_stays_within_dns_sd_limits() -> None:
    big = TableAd("y" * 63, bytes(64), "crescendo", "h" * 32, ANN.fingerprint, 65535,
                  tuple(f"255.255.255.{200 + i}" for i in range(8)),
                  wire_options({"limit": 500, "discard_draw": True, "draw_seconds": 60}), taken=16, free=16)
    strings = [f"{k}={v}".encode() for k, v in big.signed(ANN, 10 ** 16 - 1).txt().items()]
    assert all(len(s) <= 255 for s in strings) and sum(len(s) + 1 for s in strings) < 700


# ------------------------------------------------------------ which table ads a lobby lists


def lobby() -> Discovery:
    """A Discovery never entered (no socket): what its browser has taken is what `listed` shows."""
    disco = Discovery(LOOPBACK)
    disco._bump = lambda: None  # type: ignore[method-assign]  # no loop: nobody waits on the lobby's feed here
    return disco


def goodbye(disco: Discovery, ad: TableAd) -> None:
    """A goodbye for `ad`'s name as the browser reports it (anyone's, or its host's: the two look the same)."""
    async def report() -> None:
        disco._on_change(None, SERVICE, f"{ad.name}.{SERVICE}", ServiceStateChange.Removed)  # type: ignore[arg-type]

    asyncio.run(report())


def take(disco: Discovery, ad: TableAd, name: str | None = None, **changes: str | None) -> None:
    """`ad` resolved off the network under its own instance name, or `name`, its TXT record changed by `changes`."""
    try:
        got = TableAd.from_txt(name or ad.name, {**ad.txt(), **changes}, ["203.0.113.9"])
    except MalformedMessage:
        return  # the browser drops what does not parse
    disco._take(f"{name or ad.name}.{SERVICE}", got)


def listed(disco: Discovery) -> list[TableAd]:
    """The tables the lobby's feed yields now."""
    async def first() -> list[TableAd]:
        disco._version = 1
        async for tables in disco.tables():
            return list(tables)
        raise AssertionError("unreachable")

    return asyncio.run(first())


def test_forged_table_ads_are_not_listed_and_are_counted() -> None:
    disco = lobby()
    real = table_ad()
    bob = generate("bob")
    own = received(table_ad(bob)).txt()
    take(disco, real, port="5555")  # the host's signature, copied over another port
    take(disco, real, addr="198.51.100.7")  # ... or another address
    take(disco, real, "Ann's table-2")  # ... or another name
    take(disco, real, sig=own["sig"])  # a wrong signature
    disco._take(f"x.{SERVICE}", misnamed(bob, ANN.fingerprint, "x"))  # signed, but not its key's fingerprint
    disco._take(f"y.{SERVICE}", TableAd.from_txt("y", {**real.txt(), "key": own["key"]}, []))  # not its key's sig
    disco._take(f"z.{SERVICE}", received(real, ("addr", "at", "sig", "key")))  # unsigned: anyone's word
    assert listed(disco) == [] and disco.refused == 7 and not disco.seen
    take(disco, real)
    assert listed(disco) == [received(real)] and listed(disco)[0].addresses == ("192.168.1.7", "10.0.0.7")


def test_a_forged_ad_under_a_real_tables_name_does_not_hide_it() -> None:
    disco = lobby()
    real = table_ad()
    take(disco, real)
    take(disco, real, port="5555")  # resolved under the same name, from a stranger's responder
    disco._take(f"{real.name}.{SERVICE}", received(real, ("addr", "at", "sig", "key")))  # and unsigned
    assert listed(disco) == [received(real)]


def test_a_replayed_older_table_ad_changes_nothing() -> None:
    disco = lobby()
    old, new = table_ad(free=3, at=AT), table_ad(free=0, at=AT + 5000)
    take(disco, old)
    take(disco, new)
    assert listed(disco) == [received(new)]
    take(disco, old)  # played back by anyone, under its own name ...
    take(disco, table_ad(free=2, at=AT + 1000, name="Ann's old name"))  # ... or under a name the host once had
    take(disco, table_ad(free=1, at=AT + 5000))  # stamped the same: not fresher
    assert listed(disco) == [received(new)] and disco.refused == 0
    goodbye(disco, new)
    assert listed(disco) == []  # a goodbye takes the table off the list ...
    take(disco, old)
    assert listed(disco) == []  # ... and its older ad played back after it puts nothing there
    take(disco, new)
    assert listed(disco) == [received(new)]  # its freshest ad, read again (a goodbye is anyone's word), is listed
    newer = table_ad(free=1, at=AT + 9000, name="Ann's new name")
    take(disco, newer)
    assert listed(disco) == [received(newer)]  # renamed: the older ad, still under the old name, is not listed


def test_a_strangers_own_table_under_a_real_tables_id_is_its_own_entry() -> None:
    disco = lobby()
    bob = generate("bob")
    take(disco, table_ad())
    take(disco, table_ad(bob, name="Ann's table too"))
    assert [(t.key, t.fingerprint) for t in listed(disco)] == [(ANN.public, ANN.fingerprint),
                                                               (bob.public, bob.fingerprint)]


def test_what_a_flood_of_signed_table_ads_makes_a_lobby_remember_is_bounded() -> None:
    disco = lobby()
    real = table_ad()
    take(disco, real)
    for i in range(3 * MAX_SEEN):  # each a fresh key's table, seen and gone
        ad = table_ad(generate(f"x{i}"), table=i.to_bytes(4, "big"), name=f"x{i}")
        take(disco, ad)
        disco.seen.pop(f"x{i}.{SERVICE}")
    assert len(disco.hosted) == MAX_HOSTED and listed(disco) == [received(real)]


def test_a_one_shot_answer_names_a_table_only_with_an_ad_its_host_signed() -> None:
    from zeroconf import DNSOutgoing  # type: ignore[attr-defined]
    from zeroconf.asyncio import AsyncServiceInfo
    from zeroconf.const import _FLAGS_AA, _FLAGS_QR_RESPONSE

    def answer(*ads: tuple[TableAd, dict[str, str]]) -> bytes:
        out = DNSOutgoing(_FLAGS_QR_RESPONSE | _FLAGS_AA)
        for ad, txt in ads:
            info = AsyncServiceInfo(SERVICE, f"{ad.name}.{SERVICE}", port=ad.port, properties=txt,
                                    server="p2pc-test.local.")
            out.add_answer_at_time(info.dns_pointer(), 0)
            out.add_answer_at_time(info.dns_text(), 0)
        return out.packets()[0]

    real, bob = table_ad(), table_ad(generate("bob"), name="fake")
    unsigned = {k: v for k, v in real.txt().items() if k not in ("addr", "at", "sig", "key")}
    forged = [(real, {**real.txt(), "port": "5555"}), (bob, bob.txt()), (real, unsigned)]
    assert _table_in(answer(*forged), "127.0.0.1", TABLE, ANN.public) is None
    assert _table_in(answer(*forged, (real, real.txt())), "127.0.0.1", TABLE, ANN.public) == received(real)


def test_a_signed_table_ad_is_listed_over_real_multicast_dns_and_forged_ones_are_not() -> None:
    # The real path: a stranger announces the host's own signed record with another port under the host's table's
    # name, and a table it signed naming the host's fingerprint; a lobby lists neither. Then the host announces its
    # table: listed, and listed again when it changes, signed afresh.
    me, stranger = generate(f"h{secrets.token_hex(2)}"), generate("stranger")
    tag = secrets.token_hex(3)
    table = secrets.token_bytes(16)

    async def wait(test: Callable[[], bool]) -> None:
        async with asyncio.timeout(10):
            while not test():
                await asyncio.sleep(0.05)

    def info(name: str, txt: dict[str, str], port: int) -> AsyncServiceInfo:
        return AsyncServiceInfo(SERVICE, f"{name}.{SERVICE}", port=port, properties=txt,
                                server=f"forger-{tag}.local.", addresses=[socket.inet_aton("127.0.0.1")])

    async def main() -> tuple[TableAd, list[TableAd], list[TableAd], int]:
        async with Discovery(LOOPBACK) as host, Discovery(LOOPBACK) as guest:
            ad = TableAd(f"real {tag}", table, "crisp", me.name, me.fingerprint, 4001, ("127.0.0.1",),
                         wire_options({"limit": 50}), taken=1, free=2)
            copy = info(ad.name, {**ad.signed(me, AT).txt(), "port": "4999"}, 4999)
            lying = misnamed(stranger, me.fingerprint, f"lying {tag}", table)
            forger = AsyncZeroconf(interfaces=LOOPBACK, ip_version=IPVersion.V4Only)
            try:
                await asyncio.gather(await forger.async_register_service(copy),
                                     await forger.async_register_service(info(lying.name, lying.txt(), 4998)))
                await wait(lambda: guest.refused >= 2)
                before = [t for t in await anext(guest.tables()) if tag in t.name]
                await (await forger.async_unregister_service(copy))
                ann = await host.announce(ad, me)
                await wait(lambda: any(t.name == ad.name for t in guest.seen.values()))
                await ann.update(taken=2, free=1)
                await wait(lambda: any(t.name == ad.name and t.free == 1 for t in guest.seen.values()))
                after = [t for t in await anext(guest.tables()) if tag in t.name]
                return ann.ad, before, after, guest.refused
            finally:
                await forger.async_close()

    mine, before, after, refused = asyncio.run(main())
    assert before == [] and refused >= 2
    assert after == [mine] and mine.genuine and mine.key == me.public and mine.addresses == ("127.0.0.1",)


def test_a_lobby_joins_the_table_picked_not_a_strangers_own_under_its_id() -> None:
    # The lobby's directory told tables apart by id alone: a stranger's own (genuine) table copying a real table's id,
    # named to sort after it, took its place among the tables to join, so picking the real host's line joined the
    # stranger's table (its fingerprint the stranger's, which the handshake then found right).
    from p2pcards.ui.lobby import LanDirectory

    real, copy = received(table_ad()), received(table_ad(generate("bob"), name="Ann's table, too"))

    class Feed:
        async def tables(self) -> AsyncIterator[tuple[TableAd, ...]]:
            yield (real, copy)

    async def main() -> LanDirectory:
        directory = LanDirectory(Feed())  # type: ignore[arg-type]
        await directory.follow()  # one snapshot, then the feed ends
        return directory

    directory = asyncio.run(main())
    picked = {line.fingerprint: directory.ads[line.key] for line in directory.tables()}
    assert picked == {ANN.fingerprint: real, copy.fingerprint: copy}
