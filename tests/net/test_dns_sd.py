"""A standard DNS-SD browser sees and resolves our ads: BIND's `dig`, a DNS implementation not ours, asks our
mDNS responder on loopback (a one-shot query, RFC 6762 §5.1: answered to the asker) for every record a browser
needs: the PTR of the service type, then the instance's SRV, TXT and A."""

from __future__ import annotations

import asyncio
import secrets
import shutil
import subprocess
from collections.abc import Callable

import pytest

from p2pcards.crypto.identity import generate
from p2pcards.net.discovery import SERVICE, Discovery, TableAd, wire_options

pytestmark = pytest.mark.skipif(shutil.which("dig") is None,
                                reason="needs dig, BIND's DNS client (Debian: bind9-dnsutils; .ci/run installs it)")


def dig(name: str, rtype: str, want: Callable[[list[list[str]]], bool] = bool) -> list[list[str]]:
    """The answers `dig` gets for `name` from the mDNS responder on 127.0.0.1, as dig prints them, once `want` holds.

    Every responder on this machine (other tests', other programs') shares 127.0.0.1:5353, and the kernel hands
    a unicast query to one of them, chosen by the query's source port: each try is a fresh `dig`, from a fresh
    port, until ours answers (RFC 6762 §15: a one-shot query reaches one responder of a machine)."""
    answers: list[list[str]] = []
    for _ in range(40):
        out = subprocess.run(["dig", "+time=1", "+tries=1", "-p", "5353", "@127.0.0.1", name, rtype, "+noall",
                              "+answer"], capture_output=True, text=True, timeout=20).stdout
        answers = [line.split(None, 4) for line in out.splitlines() if line and not line.startswith(";")]
        if want(answers):
            break
    return answers


def test_a_standard_dns_sd_browser_finds_and_resolves_a_table() -> None:
    tag = secrets.token_hex(3)
    ann = generate("ann")
    table = TableAd(name=f"Dig {tag}", table=secrets.token_bytes(16), game="crescendo", host="ann",
                    fingerprint=ann.fingerprint, port=4321,
                    options=wire_options({"number_window_s": 3}), taken=1, free=3)

    def browse() -> dict[str, list[list[str]]]:
        ours = f"Dig\\032{tag}."
        ptr = [a for a in dig(SERVICE, "PTR", lambda got: any(a[4].startswith(ours) for a in got))
               if a[4].startswith(ours)]
        assert ptr, f"no PTR for our table among {dig(SERVICE, 'PTR')}"
        instance = ptr[0][4]
        srv = dig(instance, "SRV")
        return {"ptr": ptr, "srv": srv, "txt": dig(instance, "TXT"), "a": dig(srv[0][4].split()[3], "A")}

    async def main() -> tuple[dict[str, str], dict[str, list[list[str]]]]:
        async with Discovery(["127.0.0.1"]) as host:
            signed = await host.announce(table, ann)
            return signed.ad.txt(), await asyncio.to_thread(browse)

    signed, got = asyncio.run(main())
    priority, weight, port, target = got["srv"][0][4].split()
    assert (priority, weight, port) == ("0", "0", "4321") and target.endswith(".local.")
    txt = got["txt"][0][4]
    for pair in ("txtvers=1", "role=table", f"id={table.table.hex()}", "game=crescendo", "taken=1", "free=3",
                 "host=ann", f"fpr={ann.fingerprint}", "port=4321", "addr=127.0.0.1", f"at={signed['at']}",
                 f"key={signed['key']}", f"sig={signed['sig']}"):
        assert f'"{pair}"' in txt, (pair, txt)
    assert [a[4] for a in got["a"]] == ["127.0.0.1"]
