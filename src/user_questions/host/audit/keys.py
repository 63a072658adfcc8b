"""The host's audit key: an Ed25519 key pair in two files beside the store.

The private key is `<key file>` (PKCS #8, PEM, permissions 0600, made by the host the first time it
needs it); the public key `<key file>.pub` (SubjectPublicKeyInfo, PEM), which an auditor is given.
For a SQLite store the key file is `<store file>.audit-key`. PostgreSQL's nodes share no folder,
and every node of one database must sign with the same key: it has no default there, each node is
given the same file (`uq serve --audit-key`); never the database, whose writers the log is kept
against (docs/audit.md).

Signing needs the `cryptography` package (the `audit` extra); a missing one is a
`UserQuestionError` naming the line that installs it.
"""

from __future__ import annotations

import base64
import binascii
import os
import stat
import types
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from user_questions.errors import ErrorCode, UserQuestionError

if TYPE_CHECKING:
    from cryptography.hazmat.primitives.asymmetric.ed25519 import (
        Ed25519PrivateKey,
        Ed25519PublicKey,
    )

__all__ = [
    "INSTALL_LINE",
    "AuditKey",
    "PublicKey",
    "default_key_path",
    "load_key",
    "load_public_key",
    "open_key",
    "signing_available",
]

INSTALL_LINE = "pip install 'user-questions[audit]'"


def default_key_path(store: str) -> Path | None:
    """Where the audit key of the store `store` (a path or a URL) is kept by default: beside a
    SQLite file; `None` for a database server (PostgreSQL), whose nodes must be given one."""
    scheme, sep, rest = store.partition("://")
    if sep and len(scheme) >= 2 and scheme.lower() != "sqlite":
        return None
    path = Path(rest if sep else store).expanduser()
    if path.is_dir():
        path = path / "host.db"
    return path.with_name(path.name + ".audit-key")


@dataclass(frozen=True, slots=True)
class PublicKey:
    """An Ed25519 public key, which checks the checkpoints' signatures."""

    raw: bytes

    @property
    def text(self) -> str:
        """The key as a checkpoint names it: base64 of its 32 bytes."""
        return base64.b64encode(self.raw).decode("ascii")

    def holds(self, message: str, signature: str) -> bool:
        """Whether `signature` (base64) is this key's Ed25519 signature of `message` (UTF-8)."""
        _, ed25519 = _crypto()
        try:
            key = ed25519.Ed25519PublicKey.from_public_bytes(self.raw)
            key.verify(base64.b64decode(signature, validate=True), message.encode())
        except (ValueError, binascii.Error, _invalid_signature()):
            return False
        return True


class AuditKey:
    """The host's private key: signs checkpoints (`sign`) and says its public key."""

    def __init__(self, private: Ed25519PrivateKey, path: Path) -> None:
        self._private = private
        self.path = path
        serialization, _ = _crypto()
        self.public = PublicKey(
            private.public_key().public_bytes(
                serialization.Encoding.Raw, serialization.PublicFormat.Raw
            )
        )

    def __repr__(self) -> str:
        return f"<AuditKey {self.path}>"

    def sign(self, message: str) -> str:
        """Ed25519's signature of `message` (UTF-8), base64."""
        return base64.b64encode(self._private.sign(message.encode())).decode("ascii")


def open_key(path: Path) -> AuditKey:
    """The key kept at `path`, made there (0600, with its `.pub` beside it) when there is none.

    Raises:
        UserQuestionError: `BAD_REQUEST` without `cryptography`, for a key file others may read,
            or one that is not an Ed25519 private key; `BAD_STORE` when it cannot be written.
    """
    serialization, ed25519 = _crypto()
    if path.exists():
        return load_key(path)
    private = ed25519.Ed25519PrivateKey.generate()
    pem = private.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.NoEncryption(),
    )
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process made it meanwhile: use theirs
        return load_key(path)
    except OSError as error:
        raise UserQuestionError(
            f"cannot write the audit key {path}: {error}", ErrorCode.BAD_STORE
        ) from None
    with os.fdopen(descriptor, "wb") as file:
        file.write(pem)
        file.flush()
        os.fsync(file.fileno())
    key = AuditKey(private, path)
    public = private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )
    Path(f"{path}.pub").write_bytes(public)
    return key


def load_key(path: Path) -> AuditKey:
    """The private key kept at `path` (which must exist and be the owner's alone).

    Raises:
        UserQuestionError: `BAD_REQUEST` as `open_key` does, and for a missing file.
    """
    serialization, ed25519 = _crypto()
    try:
        mode = path.stat().st_mode
        data = path.read_bytes()
    except OSError as error:
        raise UserQuestionError(
            f"cannot read the audit key {path}: {error.strerror}", ErrorCode.BAD_REQUEST
        ) from None
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        raise UserQuestionError(
            f"the audit key {path} may be read by others (mode {stat.filemode(mode)}); "
            f"chmod 600 {path}",
            ErrorCode.BAD_REQUEST,
        )
    try:
        private = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as error:
        raise UserQuestionError(
            f"{path} is not an audit key: {error}", ErrorCode.BAD_REQUEST
        ) from None
    if not isinstance(private, ed25519.Ed25519PrivateKey):
        raise UserQuestionError(f"{path} is not an Ed25519 key", ErrorCode.BAD_REQUEST)
    return AuditKey(private, path)


def load_public_key(path: Path) -> PublicKey:
    """The public key in `path`: a PEM public key (`<key>.pub`), or a private key file.

    Raises:
        UserQuestionError: `BAD_REQUEST` without `cryptography`, for a file that cannot be
            read or holds no Ed25519 key.
    """
    serialization, ed25519 = _crypto()
    try:
        data = path.read_bytes()
    except OSError as error:
        raise UserQuestionError(
            f"cannot read the key {path}: {error.strerror}", ErrorCode.BAD_REQUEST
        ) from None
    if b"PRIVATE KEY" in data:
        return load_key(path).public
    try:
        public: Ed25519PublicKey | object = serialization.load_pem_public_key(data)
    except (ValueError, TypeError) as error:
        raise UserQuestionError(
            f"{path} is not a public key: {error}", ErrorCode.BAD_REQUEST
        ) from None
    if not isinstance(public, ed25519.Ed25519PublicKey):
        raise UserQuestionError(f"{path} is not an Ed25519 public key", ErrorCode.BAD_REQUEST)
    raw = public.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)
    return PublicKey(raw)


def signing_available() -> bool:
    """Whether `cryptography` (the `audit` extra) is installed."""
    try:
        _crypto()
    except UserQuestionError:
        return False
    return True


def _crypto() -> tuple[types.ModuleType, types.ModuleType]:
    """`cryptography`'s serialization and Ed25519 modules, imported when a key is first used."""
    try:
        from cryptography.hazmat.primitives import serialization
        from cryptography.hazmat.primitives.asymmetric import ed25519
    except ImportError as error:
        raise UserQuestionError(
            f"the audit log's signatures need the cryptography package ({error}): {INSTALL_LINE}",
            ErrorCode.BAD_REQUEST,
        ) from None
    return serialization, ed25519


def _invalid_signature() -> type[Exception]:
    from cryptography.exceptions import InvalidSignature

    return InvalidSignature
