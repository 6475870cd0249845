"""The files of an embedded deployment: the SQLite database and the folder it lives in.

They hold every account's data and the signing secrets, so atrium makes them readable by their
owner alone, whatever the umask: the folder it creates 0700, the database file 0600. SQLite
gives the `-wal`, `-shm` and `-journal` files it makes the database file's mode, so they follow.
The file is made before SQLite opens it (an empty file is an empty database) rather than by
setting the process's umask, which would also change every other file the process and its
libraries write. A folder or file that already exists is the operator's: its mode is left as it
is, with a warning when other users may read the database
(docs/decisions/0044-webhook-secrets-sealed-and-private-files.md).
"""

from __future__ import annotations

import contextlib
import logging
import os
import stat
from pathlib import Path

from sqlalchemy.engine import make_url

log = logging.getLogger("atrium.db")
PRIVATE_FOLDER = 0o700
PRIVATE_FILE = 0o600


def sqlite_file(database_url: str) -> Path | None:
    """The database file, when the database is a SQLite file (not in memory)."""
    url = make_url(database_url)
    database = url.database or ""
    if url.get_backend_name() != "sqlite" or database in ("", ":memory:"):
        return None
    if database.startswith("file:"):  # a URI (`?uri=true`): SQLite's own business
        return None
    return Path(database).expanduser().resolve()


def database_location(database_url: str) -> str:
    """Where a command's data lives, for the line every server-side command prints: the SQLite
    file's absolute path, or the URL without its password."""
    path = sqlite_file(database_url)
    if path is not None:
        return str(path)
    return make_url(database_url).render_as_string(hide_password=True)


def make_private_database_file(database_url: str) -> None:
    """Create a SQLite database's folder (0700) and file (0600) if missing; warn when an existing
    file may be read by other users."""
    path = sqlite_file(database_url)
    if path is None:
        return
    if not path.parent.exists():
        path.parent.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileExistsError):  # another process made it first
            path.parent.mkdir(mode=PRIVATE_FOLDER)
    try:
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE))
    except FileExistsError:
        _warn_if_shared(path)


def _warn_if_shared(path: Path) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & (stat.S_IRWXG | stat.S_IRWXO):
        log.warning(
            "the database %s is open to other users (mode %04o), and so are the -wal and -shm "
            "files SQLite makes beside it: chmod 600 '%s'*",
            path,
            mode,
            path,
        )
