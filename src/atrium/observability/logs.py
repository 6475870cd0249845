"""Log lines that input from outside can neither forge nor garble.

Logged values often come from outside: a webhook receiver's reply, an error message quoting
what a client or a remote server sent. A CR or LF in one forges a log line of its own;
an ESC sequence recolours or rewrites the terminal that shows it. `install_log_escaping` puts a
log record factory in front of Python's: it renders each record's message and, when it holds a
control character (C0, DEL, C1, the Unicode line and paragraph separators, bidirectional
controls), escapes them (`\\x1b`, `\\r\\n`, `\\u2028`). Every logger of the process goes
through it, whichever handler or formatter prints the record. The arguments are escaped one by
one where that suffices, so the record keeps its shape (uvicorn's access-log formatter, for
one, unpacks `record.args`). Tracebacks (`exc_info`) are formatted later, by the handler, and
keep their lines.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from atrium.settings import Settings

_UNSAFE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def _is_clean(text: str) -> bool:
    return text.isprintable() or _UNSAFE.search(text) is None  # isprintable: the fast common case


def escape_control(text: str) -> str:
    """`text` with every control character written as its Python escape (`\\n`, `\\x1b`)."""
    if _is_clean(text):
        return text
    return _UNSAFE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


class _EscapingFactory:
    def __init__(self, previous: Any) -> None:
        self.previous = previous

    def __call__(self, *args: Any, **kwargs: Any) -> logging.LogRecord:
        record: logging.LogRecord = self.previous(*args, **kwargs)
        try:
            message = record.getMessage()
            if _is_clean(message):  # the common case: the record stays as it is
                return record
            if isinstance(record.msg, str):
                record.msg = escape_control(record.msg)
                record.args = _escaped_args(record.args)
                message = record.getMessage()
        except Exception:  # a bad format string: logging reports it when the record is emitted
            return record
        if not _is_clean(message):  # an argument that is not a string carries it
            record.msg, record.args = escape_control(message), None
        return record


def _escaped_args(args: Any) -> Any:
    if isinstance(args, tuple):
        return tuple(escape_control(arg) if isinstance(arg, str) else arg for arg in args)
    if isinstance(args, Mapping):
        return {key: escape_control(v) if isinstance(v, str) else v for key, v in args.items()}
    return args


def install_log_escaping() -> None:
    """Escape control characters in every log record of this process (idempotent)."""
    current = logging.getLogRecordFactory()
    if not isinstance(current, _EscapingFactory):
        logging.setLogRecordFactory(_EscapingFactory(current))


def configure_logging(settings: Settings) -> None:
    """atrium's own log lines on stderr: uvicorn configures only its loggers, and without a
    handler Python prints only warnings (the webhook sender's attempts are INFO)."""
    logger = logging.getLogger("atrium")
    if not logger.handlers:
        handler = logging.StreamHandler()
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        logger.addHandler(handler)
    logger.setLevel(settings.log_level.upper())
    install_log_escaping()
