"""Secrets at rest: short values (MCP server headers, providers' keys and headers) are stored
encrypted with Fernet.

The key is `ATRIUM_SECRETS_KEY`: one Fernet key, or several comma-separated to rotate them (the
first encrypts, every one decrypts). Without it, an embedded deployment (SQLite) keeps a key in
a file beside the database file (`atrium.db.secrets-key`, mode 0600), made the first time a
secret is stored, the way SQLite keeps its `-wal` file there. PostgreSQL deployments run several
processes on several machines, which a file on one of them cannot serve: they must set the key,
and storing a secret without one is refused (`SecretsUnavailable`).
"""

from __future__ import annotations

import contextlib
import os
import secrets
from collections.abc import Mapping
from pathlib import Path
from typing import Final

from cryptography.fernet import Fernet, InvalidToken, MultiFernet
from sqlalchemy.engine import make_url

from atrium.settings import Settings

KEY_FILE_SUFFIX = ".secrets-key"
# What responses show for a stored secret; sent back, it keeps the stored value.
MASK: Final = "***"
# An in-memory SQLite database lives as long as its process, and so may its key.
_PROCESS_KEY = Fernet.generate_key()
# Key files read once per process (they never change while it runs).
_FILE_KEYS: dict[Path, bytes] = {}


class SecretsUnavailable(Exception):
    """There is no key to encrypt with, or the stored value does not open with the key."""


def key_file_of(database_url: str) -> Path | None:
    """Where an embedded deployment keeps its key; None for PostgreSQL."""
    url = make_url(database_url)
    if url.get_backend_name() != "sqlite":
        return None
    database = url.database or ""
    if database in ("", ":memory:") or database.startswith("file:"):
        return None
    return Path(database).with_name(Path(database).name + KEY_FILE_SUFFIX)


class SecretBox:
    """Encrypts and decrypts the secrets of one deployment."""

    def __init__(self, *, keys: list[bytes], key_file: Path | None, embedded: bool) -> None:
        self._keys = keys
        self._key_file = key_file
        self._embedded = embedded

    @classmethod
    def of(cls, settings: Settings) -> SecretBox:
        configured = settings.secrets_key
        keys = (
            [key.strip().encode() for key in configured.get_secret_value().split(",")]
            if configured is not None
            else []
        )
        embedded = make_url(settings.database_url).get_backend_name() == "sqlite"
        return cls(keys=keys, key_file=key_file_of(settings.database_url), embedded=embedded)

    def encrypt(self, value: str) -> str:
        return self._fernet(create=True).encrypt(value.encode()).decode()

    def decrypt(self, token: str) -> str:
        try:
            return self._fernet(create=False).decrypt(token.encode()).decode()
        except InvalidToken:
            raise SecretsUnavailable(
                "a stored secret does not open with this deployment's key "
                "(was ATRIUM_SECRETS_KEY changed, or the key file replaced?)"
            ) from None

    def _fernet(self, *, create: bool) -> MultiFernet:
        if self._keys:
            return MultiFernet([Fernet(key) for key in self._keys])
        if not self._embedded:
            raise SecretsUnavailable(
                "this deployment has no ATRIUM_SECRETS_KEY, which PostgreSQL deployments need "
                "to store secrets"
            )
        if self._key_file is None:
            return MultiFernet([Fernet(_PROCESS_KEY)])
        return MultiFernet([Fernet(_file_key(self._key_file, create=create))])


class SecretRefused(ValueError):
    """A secret cannot be stored as given; the message names it."""


def seal(
    given: Mapping[str, str],
    *,
    stored: Mapping[str, str] | None,
    same_target: bool,
    box: SecretBox,
    where: str,
    target: str,
) -> dict[str, str]:
    """`given` (name -> value) as stored: each value encrypted, or, where `MASK` was sent back,
    the value stored under that name (any case) kept. Kept only while the secrets still go to
    the same place (`same_target`): otherwise a caller who may not read a secret could send it
    to a server of their choosing, so its value must be sent again when `target` changes.
    `where` prefixes each name in the messages (`tools[0].headers`, or "" for a bare name)."""
    kept = {name.lower(): token for name, token in (stored or {}).items()}
    sealed: dict[str, str] = {}
    for name, value in given.items():
        at = f"{where}.{name}" if where else name
        if value != MASK:
            try:
                sealed[name] = box.encrypt(value)
            except SecretsUnavailable as exc:
                raise SecretRefused(f"{where or name} cannot be stored: {exc}") from None
        elif name.lower() not in kept:
            raise SecretRefused(f'{at} is "***" but no value is stored')
        elif not same_target:
            raise SecretRefused(f"{at}: send the value again when {target} changes")
        else:
            sealed[name] = kept[name.lower()]
    return sealed


def _file_key(path: Path, *, create: bool) -> bytes:
    key = _FILE_KEYS.get(path)
    if key is None:
        if create and not path.exists():
            _write_new_key(path)
        try:
            key = path.read_bytes().strip()
        except FileNotFoundError:
            raise SecretsUnavailable(
                f"the key file {path.name} is missing: set ATRIUM_SECRETS_KEY or restore it"
            ) from None
        _FILE_KEYS[path] = key
    return key


def _write_new_key(path: Path) -> None:
    """Create the key file, readable by its owner only. Written aside, then linked into place:
    a process racing to create it (an `atrium worker` beside `atrium serve`) either wins or
    reads the winner's complete file, never a half-written one."""
    draft = path.with_name(f"{path.name}.{os.getpid()}.{secrets.token_hex(4)}")
    descriptor = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(Fernet.generate_key() + b"\n")
            file.flush()
            os.fsync(file.fileno())
        with contextlib.suppress(FileExistsError):  # another process made it first
            os.link(draft, path)
    finally:
        draft.unlink(missing_ok=True)
