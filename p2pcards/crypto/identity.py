"""Long-term Ed25519 identity: kept in the user's data directory (mode 0600), never replaced silently."""

from __future__ import annotations

import getpass
import os
import stat
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from cryptography.exceptions import UnsupportedAlgorithm
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from nacl.bindings import crypto_sign_open
from nacl.exceptions import BadSignatureError

from ..errors import IdentityError, InputError, InvalidKey
from ..files import write_file
from . import group
from .encoding import digest

APP: Final = "p2pcards"
HOME_ENV: Final = "P2PCARDS_HOME"  # overrides the data directory (tests, several identities on one machine)
KEY_FILE: Final = "identity.key"
NAME_FILE: Final = "name"
MAX_NAME: Final = 32  # bytes of UTF-8
FPR_PERSON: Final = b"p2pc/fpr/v1"
PUBLIC_BYTES: Final = 32
SIGNATURE_BYTES: Final = 64


def data_dir(env: Mapping[str, str] | None = None) -> Path:
    """The directory holding the identity: $P2PCARDS_HOME, else the platform's per-user data directory."""
    env = os.environ if env is None else env
    if env.get(HOME_ENV):
        return Path(env[HOME_ENV])
    if sys.platform == "win32":
        base = env.get("APPDATA") or str(Path.home() / "AppData" / "Roaming")
        return Path(base) / APP
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Application Support" / APP
    xdg = env.get("XDG_DATA_HOME")
    # The XDG spec says a relative $XDG_DATA_HOME is invalid and must be ignored.
    base_path = Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".local" / "share"
    return base_path / APP


def private_dir(directory: Path) -> None:
    """Make `directory` if need be, and every missing directory above it, with mode 0700 (as the XDG base
    directory spec asks): the umask's default would leave a directory we make for keys open to listing."""
    missing = []
    while not directory.exists() and directory != directory.parent:
        missing.append(directory)
        directory = directory.parent
    for made in reversed(missing):
        made.mkdir(mode=0o700, exist_ok=True)


def fingerprint(public: bytes) -> str:
    """Five groups of five digits derived from the public key, to read aloud and compare."""
    h = digest(FPR_PERSON, public, 25)
    # 40 bits per group reduced mod 10^5: bias below 2^-23, negligible for comparison by ear.
    groups = (int.from_bytes(h[5 * i : 5 * i + 5], "big") % 100_000 for i in range(5))
    return " ".join(f"{g:05d}" for g in groups)


IDENTITY_POINT: Final = (1).to_bytes(32, "little")


def is_valid_public(public: object) -> bool:
    """True for an identity key that is what it claims: 32 bytes, canonical, in the prime-order subgroup, not small order.

    This is libsodium's crypto_core_ed25519_is_valid_point, which refuses the identity and every
    other small-order point, every point with a torsion component, and every non-canonical encoding.
    """
    return group.is_valid(public)


@dataclass(frozen=True, slots=True)
class PublicKey:
    """A validated Ed25519 identity key, checked once where it enters and then used for every frame."""

    raw: bytes

    @classmethod
    def from_bytes(cls, raw: object) -> PublicKey:
        """The key; InvalidKey unless `raw` is a valid identity key (see `is_valid_public`)."""
        if not (isinstance(raw, bytes) and is_valid_public(raw)):
            shown = raw.hex() if isinstance(raw, bytes) else type(raw).__name__
            raise InvalidKey(f"not a valid Ed25519 identity key: {shown}")
        return cls(raw)

    def verify(self, message: bytes, signature: bytes) -> bool:
        """The one strict verification rule: S < L, R not the identity, and [S]B = R + [k]A compared as encodings.

        With A in the prime-order subgroup (checked by `from_bytes`), an R that passes is the canonical
        encoding of a point of that subgroup other than the identity: non-canonical and small-order R,
        and non-canonical S, are all refused. k = SHA-512(R || A || message) mod L (RFC 8032, cofactorless).
        """
        if not (isinstance(signature, bytes) and len(signature) == SIGNATURE_BYTES and isinstance(message, bytes)):
            return False
        if int.from_bytes(signature[32:], "little") >= group.ORDER or signature[:32] == IDENTITY_POINT:
            return False
        try:
            # libsodium: refuses what steps 1 and 2 refuse (and every small-order R), recomputes
            # [S]B - [k]A and compares its encoding with R; about 1.6x as fast as OpenSSL's here.
            crypto_sign_open(signature + message, self.raw)
        except BadSignatureError:
            return False
        return True


def verify(public: bytes, message: bytes, signature: bytes) -> bool:
    """True when `public` is a valid identity key and `signature` is its strictly valid signature of exactly `message`."""
    try:
        key = PublicKey.from_bytes(public)
    except InvalidKey:
        return False
    return key.verify(message, signature)


@dataclass(frozen=True, slots=True, repr=False)
class Identity:
    """A player's long-term signing key and display name."""

    key: Ed25519PrivateKey
    name: str

    @property
    def public(self) -> bytes:
        """The 32-byte raw Ed25519 public key: the player's id on the wire."""
        return self.key.public_key().public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    @property
    def fingerprint(self) -> str:
        """The readable fingerprint of the public key."""
        return fingerprint(self.public)

    def sign(self, message: bytes) -> bytes:
        """The 64-byte Ed25519 signature of exactly `message`."""
        return self.key.sign(message)

    def __repr__(self) -> str:
        return f"Identity(name={self.name!r}, fingerprint={self.fingerprint!r})"


def generate(name: str) -> Identity:
    """A fresh identity held only in memory (simulations, tests)."""
    return Identity(Ed25519PrivateKey.generate(), _check_name(name))


def valid_name(name: object) -> bool:
    """True for a display name as the wire carries it: a str of 1 to MAX_NAME bytes of UTF-8, printable, unpadded.

    Printable is Python's `str.isprintable`: no code point of the Unicode categories Cc, Cf, Cs, Co,
    Cn, Zl, Zp or Zs, except U+0020 SPACE, which may not begin or end the name.
    """
    if not isinstance(name, str) or not name.isprintable() or name != name.strip(" "):
        return False
    try:
        size = len(name.encode("utf-8"))
    except UnicodeEncodeError:  # a lone surrogate: isprintable refuses it already, kept for clarity
        return False
    return 1 <= size <= MAX_NAME


def _check_name(name: str) -> str:
    """A display name stripped of surrounding space; IdentityError unless it is then `valid_name`."""
    name = name.strip()
    if not valid_name(name):
        raise IdentityError(f"a name must be 1 to {MAX_NAME} bytes of printable UTF-8: {name!r}")
    return name


def _default_name() -> str:
    """The login name, or 'player' when there is none."""
    try:
        return _check_name(getpass.getuser())
    except Exception:
        return "player"


def _read_name(directory: Path) -> str:
    """The stored display name, or the login name when none is stored."""
    path = directory / NAME_FILE
    try:
        return _check_name(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return _default_name()
    except OSError as exc:
        raise IdentityError(f"cannot read the name file {path}: {exc.strerror or exc}") from None
    except UnicodeDecodeError:
        raise IdentityError(f"the name file {path} is not UTF-8 text: set a name with `p2pcards id --name NAME`") \
            from None
    except IdentityError as exc:
        raise IdentityError(f"the name file {path}: {exc}; set another with `p2pcards id --name NAME`") from None


def read_key(path: Path, missing: str = "") -> Ed25519PrivateKey:
    """The Ed25519 key stored at `path`; IdentityError when it is missing (`missing` says what to do), unreadable,
    readable by others or corrupt."""
    try:
        st = path.stat()
        data = path.read_bytes()
    except FileNotFoundError:
        raise IdentityError(f"no identity key at {path}{missing}") from None
    except OSError as exc:
        raise IdentityError(f"cannot read the identity key {path}: {exc.strerror or exc}") from None
    if os.name == "posix" and stat.S_IMODE(st.st_mode) & 0o077:
        raise IdentityError(f"the identity key {path} is readable by others; run `chmod 600 {path}`")
    try:
        key = serialization.load_pem_private_key(data, password=None)
    except UnsupportedAlgorithm:  # a key on a curve this build of OpenSSL lacks: not ours either way
        raise IdentityError(f"the identity key {path} is not an Ed25519 key; it was left untouched") from None
    except (ValueError, TypeError):  # the library's words point at its own FAQ, not at what the user can do
        raise IdentityError(
            f"the identity key {path} is corrupt (not a PEM private key); it was left untouched. "
            "Restore it from a backup, or move it away and run `p2pcards id --new`."
        ) from None
    if not isinstance(key, Ed25519PrivateKey):
        raise IdentityError(f"the identity key {path} is not an Ed25519 key; it was left untouched")
    return key


def key_file(key: Ed25519PrivateKey) -> bytes:
    """What an identity key file holds: the key in PKCS#8 PEM."""
    return key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                             serialization.NoEncryption())


def load(directory: Path | None = None) -> Identity:
    """The stored identity; IdentityError when it is missing, unreadable, too open or corrupt."""
    directory = data_dir() if directory is None else directory
    key = read_key(directory / KEY_FILE, "; run `p2pcards id --new` to make one")
    return Identity(key, _read_name(directory))


def create(directory: Path | None = None, name: str | None = None, replace: bool = False) -> Identity:
    """Make and store a new identity; an existing key is kept as identity.key.old-N, and only if `replace`."""
    directory = data_dir() if directory is None else directory
    path = directory / KEY_FILE
    try:
        private_dir(directory)
        if path.exists():
            if not replace:
                raise IdentityError(f"an identity key already exists at {path}")
            n = 1
            while (backup := path.with_name(f"{KEY_FILE}.old-{n}")).exists():
                n += 1
            os.link(path, backup)
        key = Ed25519PrivateKey.generate()
        write_file(path, key_file(key), overwrite=True, private=True)
        if name is not None:
            write_file(directory / NAME_FILE, _check_name(name).encode("utf-8"), overwrite=True, private=True)
    except OSError as exc:
        raise IdentityError(f"cannot write the identity key {path}: {exc}") from None
    except IdentityError:
        raise
    except InputError as exc:  # from write_file, which names the file
        raise IdentityError(f"cannot write the identity key: {exc}") from None
    return Identity(key, _read_name(directory))


def load_or_create(directory: Path | None = None) -> Identity:
    """The stored identity, made on first use; a key that exists but cannot be loaded is an error."""
    directory = data_dir() if directory is None else directory
    if not (directory / KEY_FILE).exists():
        return create(directory)
    return load(directory)


def set_name(name: str, directory: Path | None = None) -> None:
    """Store a new display name (the key is untouched)."""
    directory = data_dir() if directory is None else directory
    try:
        private_dir(directory)
        write_file(directory / NAME_FILE, _check_name(name).encode("utf-8"), overwrite=True, private=True)
    except OSError as exc:
        raise IdentityError(f"cannot write the name file: {exc}") from None
    except IdentityError:
        raise
    except InputError as exc:  # from write_file, which names the file
        raise IdentityError(f"cannot write the name file: {exc}") from None
