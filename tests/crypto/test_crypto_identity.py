"""Identity keys: created on first use, mode 0600, never replaced silently, readable fingerprints."""

from __future__ import annotations

import argparse
import os
import re
import stat
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from p2pcards.crypto import id_cli, identity
from p2pcards.errors import IdentityError


def test_data_dir_conventions(tmp_path: Path) -> None:
    """P2PCARDS_HOME wins, then an absolute XDG_DATA_HOME, else ~/.local/share."""
    assert identity.data_dir({"P2PCARDS_HOME": str(tmp_path)}) == tmp_path
    if os.name == "posix" and not identity.sys.platform == "darwin":
        assert identity.data_dir({"XDG_DATA_HOME": "/x/y"}) == Path("/x/y/p2pcards")
        assert identity.data_dir({"XDG_DATA_HOME": "rel"}) == Path.home() / ".local/share/p2pcards"
        assert identity.data_dir({}) == Path.home() / ".local/share/p2pcards"


def test_created_on_first_use_with_mode_0600(tmp_path: Path) -> None:
    """The key file is made once, private, and loads back as the same key."""
    d = tmp_path / "home"
    a = identity.load_or_create(d)
    assert stat.S_IMODE((d / identity.KEY_FILE).stat().st_mode) == 0o600
    assert stat.S_IMODE(d.stat().st_mode) == 0o700
    b = identity.load_or_create(d)
    assert a.public == b.public and a.fingerprint == b.fingerprint


def test_corrupt_key_is_an_error_and_kept(tmp_path: Path) -> None:
    """A corrupt key raises IdentityError and the file is left exactly as it was."""
    identity.create(tmp_path)
    path = tmp_path / identity.KEY_FILE
    path.write_bytes(b"-----BEGIN PRIVATE KEY-----\ngarbage\n-----END PRIVATE KEY-----\n")
    before = path.read_bytes()
    for f in (identity.load, identity.load_or_create):
        with pytest.raises(IdentityError, match="corrupt"):
            f(tmp_path)
    assert path.read_bytes() == before
    with pytest.raises(IdentityError):
        identity.create(tmp_path)  # no replace without being asked
    assert path.read_bytes() == before


@pytest.mark.parametrize("spoil, says", [
    # the library's words ("Unable to load PEM file. See https://cryptography.io/... MalformedFraming") were quoted
    (lambda d: (d / identity.KEY_FILE).write_bytes(b"junk"), "key {d}/identity.key is corrupt (not a PEM private key)"),
    (lambda d: (d / identity.KEY_FILE).unlink() or (d / identity.KEY_FILE).mkdir(),
     "cannot read the identity key {d}/identity.key: Is a directory"),
    # a bad name file read as if the name had been typed, without naming the file
    (lambda d: (d / identity.NAME_FILE).write_bytes(b"a\tb"), "the name file {d}/name: a name must be"),
    (lambda d: (d / identity.NAME_FILE).write_bytes(b"\xff"), "the name file {d}/name is not UTF-8 text"),
])
def test_a_spoilt_key_or_name_file_is_one_line_naming_the_file(
        tmp_path: Path, capsys: pytest.CaptureFixture[str], spoil: Any, says: str) -> None:
    from p2pcards.cli import main
    identity.create(tmp_path)
    spoil(tmp_path)
    assert main(["id", "--dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert says.format(d=tmp_path) in err and len(err.splitlines()) == 1 and "http" not in err, err


# A throwaway key on sect163k1, a curve OpenSSL builds may not support at all (made with `openssl ecparam`).
FOREIGN_CURVE_KEY = b"""-----BEGIN PRIVATE KEY-----
MGMCAQAwEAYHKoZIzj0CAQYFK4EEAAEETDBKAgEBBBUBuB1ORVHn7CmXjKt1hziA
hTtDSUahLgMsAAQDzJFU+DK0f1c3CjzfAWDY2lHMmDsHv4KRAJFnCrrYFu5a9oGt
cPvXOhw=
-----END PRIVATE KEY-----
"""


def test_a_key_of_another_kind_is_an_error_and_kept(tmp_path: Path) -> None:
    from cryptography.hazmat.primitives import serialization
    from cryptography.hazmat.primitives.asymmetric import ec

    other = ec.generate_private_key(ec.SECP256R1()).private_bytes(
        serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    path = tmp_path / identity.KEY_FILE
    for pem in (other, FOREIGN_CURVE_KEY):
        path.write_bytes(pem)
        path.chmod(0o600)
        with pytest.raises(IdentityError, match="not an Ed25519 key"):
            identity.load(tmp_path)
        assert path.read_bytes() == pem

def test_key_readable_by_others_is_refused(tmp_path: Path) -> None:
    """Like ssh, a key file others can read is not used."""
    identity.create(tmp_path)
    os.chmod(tmp_path / identity.KEY_FILE, 0o644)
    with pytest.raises(IdentityError, match="chmod 600"):
        identity.load(tmp_path)


def test_missing_key(tmp_path: Path) -> None:
    """load() does not create; it says how to."""
    with pytest.raises(IdentityError, match="--new"):
        identity.load(tmp_path)


def test_new_keeps_a_backup(tmp_path: Path) -> None:
    """--new replaces the key only when asked, keeping the old one."""
    a = identity.create(tmp_path)
    old = (tmp_path / identity.KEY_FILE).read_bytes()
    b = identity.create(tmp_path, replace=True)
    assert a.public != b.public
    assert (tmp_path / f"{identity.KEY_FILE}.old-1").read_bytes() == old
    assert identity.load(tmp_path).public == b.public


def test_fingerprint_format() -> None:
    """Five groups of five digits, deterministic, different for different keys."""
    a, b = identity.generate("a"), identity.generate("b")
    assert re.fullmatch(r"\d{5}( \d{5}){4}", a.fingerprint)
    assert a.fingerprint == identity.fingerprint(a.public) != b.fingerprint
    assert "fingerprint" in repr(a) and "key" not in repr(a).replace("fingerprint", "")


def test_sign_and_verify() -> None:
    """Signatures verify for their key and message only."""
    a, b = identity.generate("a"), identity.generate("b")
    sig = a.sign(b"hello")
    assert identity.verify(a.public, b"hello", sig)
    assert not identity.verify(a.public, b"hellO", sig)
    assert not identity.verify(b.public, b"hello", sig)
    assert not identity.verify(b"short", b"hello", sig)


def _args(*argv: str) -> argparse.Namespace:
    p = argparse.ArgumentParser()
    id_cli.add_arguments(p)
    return p.parse_args(list(argv))


def test_cli(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`p2pcards id` prints name and fingerprint; --new makes a new key; --name sets the name."""
    assert id_cli.run(_args("--dir", str(tmp_path), "--name", "Ada")) == 0
    out1 = capsys.readouterr().out
    assert "name:        Ada" in out1
    fpr1 = re.search(r"fingerprint: (.*)", out1).group(1)  # type: ignore[union-attr]
    assert id_cli.run(_args("--dir", str(tmp_path))) == 0
    assert fpr1 in capsys.readouterr().out
    assert id_cli.run(_args("--dir", str(tmp_path), "--new")) == 0
    out3 = capsys.readouterr().out
    assert "new identity" in out3 and fpr1 not in out3


def test_cli_dir_is_made_only_under_a_directory_that_exists_and_said_once(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """`p2pcards id --dir` made a whole missing tree, a key in it, and said nothing: a typo's key went unnoticed."""
    from p2pcards.cli import main
    assert main(["id", "--dir", str(tmp_path / "typo" / "keys")]) == 2
    err = capsys.readouterr().err
    assert "argument --dir: no directory" in err and len(err.splitlines()) == 1
    assert not (tmp_path / "typo").exists()
    assert main(["id", "--dir", str(tmp_path / "keys")]) == main(["id", "--dir", str(tmp_path / "keys")]) == 0
    err = capsys.readouterr().err
    assert f"--dir {tmp_path / 'keys'} is a new directory" in err and len(err.splitlines()) == 1
    assert (tmp_path / "keys" / identity.KEY_FILE).exists()


def test_cli_env_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """The CLI honours $P2PCARDS_HOME, and a corrupt key makes it fail without replacing it."""
    monkeypatch.setenv("P2PCARDS_HOME", str(tmp_path))
    assert id_cli.run(_args()) == 0
    assert (tmp_path / identity.KEY_FILE).exists()
    (tmp_path / identity.KEY_FILE).write_bytes(b"nonsense")
    with pytest.raises(IdentityError):
        id_cli.run(_args())
    assert (tmp_path / identity.KEY_FILE).read_bytes() == b"nonsense"


def test_bad_names(tmp_path: Path) -> None:
    """Empty, too long or unprintable names are refused."""
    for bad in ("", " ", "x" * 40, "a\nb"):
        with pytest.raises(IdentityError):
            identity.set_name(bad, tmp_path)


@pytest.mark.parametrize("name, ok", [
    ("x" * 32, True), ("é" * 16, True), ("Zoë and 🂡", True), ("a b", True),
    ("é" * 17, False),  # 17 code points, 34 bytes of UTF-8: lengths are in bytes
    ("€" * 11, False), ("x" * 33, False), ("", False), (" ann", False), ("ann ", False),
    ("a\nb", False), ("a\u200bb", False), ("a\u00a0b", False), ("a\ud800", False), (7, False), (b"ann", False),
])
def test_a_name_is_1_to_32_bytes_of_printable_utf8(name: object, ok: bool) -> None:
    assert identity.valid_name(name) is ok


def test_the_identity_core_imports_no_command_line() -> None:
    """The key and name store is used by every layer; the `id` command's options live in id_cli, not in it."""
    code = "import sys, p2pcards.crypto.identity; print('p2pcards.cli' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
