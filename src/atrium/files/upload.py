"""Reading an upload (`multipart/form-data`, one field `file`) as it arrives: its bytes go to a
spooled temporary file (memory up to 1 MiB, then disk) while their size and SHA-256 are
counted, and the read stops at the first byte over the cap. A request body is never held
whole in memory, so a 100 MB upload costs what a 1 MB one does.
"""

from __future__ import annotations

import codecs
import hashlib
import tempfile
from dataclasses import dataclass, field
from typing import IO, Any

from python_multipart.exceptions import MultipartParseError
from python_multipart.multipart import MultipartParser, parse_options_header
from starlette.requests import Request

from atrium.errors import InvalidParameter
from atrium.files.errors import FileRefused
from atrium.files.sniffing import HEAD_BYTES
from atrium.kit.filenames import filename_problem

FIELD = "file"
SPOOL_BYTES = 1_048_576
# The multipart framing around the file: boundaries and part headers.
FRAMING_BYTES = 65_536


class _TooLarge(Exception):
    pass


@dataclass(slots=True)
class Upload:
    """An upload read to its end: its name, what the client said it is, and its bytes."""

    filename: str
    declared: str | None
    spool: IO[bytes]
    size: int = 0
    head: bytes = b""
    digest: Any = field(default_factory=hashlib.sha256)
    # Whether every byte so far is UTF-8 without NUL: a text type is judged on the whole
    # file, not its head, so binary after a page of text (a ZIP whose front is text) is no text.
    text: bool = True
    _utf8: codecs.IncrementalDecoder = field(
        default_factory=lambda: codecs.getincrementaldecoder("utf-8")()
    )

    @property
    def sha256(self) -> str:
        return str(self.digest.hexdigest())

    def read_text(self, chunk: bytes, *, final: bool = False) -> None:
        """Follow whether the file is still text after `chunk` (`final`: its last one)."""
        if not self.text:
            return
        if b"\x00" in chunk:
            self.text = False
            return
        try:
            self._utf8.decode(chunk, final)
        except UnicodeDecodeError:
            self.text = False

    def close(self) -> None:
        self.spool.close()


class _Parts:
    """The parser's callbacks: the `file` part's bytes into an `Upload`, every other part
    refused."""

    def __init__(self, max_bytes: int) -> None:
        self.max_bytes = max_bytes
        self.upload: Upload | None = None
        self._headers: dict[str, bytes] = {}
        self._field = b""
        self._value = b""
        self._current: Upload | None = None

    def on_part_begin(self) -> None:
        self._headers = {}

    def on_header_field(self, data: bytes, start: int, end: int) -> None:
        self._field += data[start:end]

    def on_header_value(self, data: bytes, start: int, end: int) -> None:
        self._value += data[start:end]

    def on_header_end(self) -> None:
        name = self._field.decode("latin-1").lower()
        self._headers[name] = self._value
        self._field = self._value = b""

    def on_headers_finished(self) -> None:
        _, options = parse_options_header(self._headers.get("content-disposition", b""))
        name = options.get(b"name", b"").decode("utf-8", "replace")
        if name != FIELD:
            raise InvalidParameter(name or "body", f"unknown field {name[:64]!r}; send `file`")
        if self.upload is not None:
            raise InvalidParameter(FIELD, "send one `file` per upload")
        raw = options.get(b"filename")
        if raw is None:
            raise InvalidParameter(FIELD, "`file` must be a file part (with a filename)")
        filename = _plain_name(raw.decode("utf-8", "replace"))
        raw_type = self._headers.get("content-type")
        declared = None
        if raw_type is not None:
            declared = raw_type.decode("latin-1").split(";", 1)[0].strip().lower()
        spool = tempfile.SpooledTemporaryFile(max_size=SPOOL_BYTES)  # noqa: SIM115 (Upload closes it)
        self.upload = self._current = Upload(filename, declared, spool)

    def on_part_data(self, data: bytes, start: int, end: int) -> None:
        upload = self._current
        if upload is None:
            return
        chunk = data[start:end]
        upload.size += len(chunk)
        if upload.size > self.max_bytes:
            raise _TooLarge
        if len(upload.head) < HEAD_BYTES:
            upload.head += chunk[: HEAD_BYTES - len(upload.head)]
        upload.digest.update(chunk)
        upload.read_text(chunk)
        upload.spool.write(chunk)

    def on_part_end(self) -> None:
        self._current = None


def _plain_name(raw: str) -> str:
    """The file's own name: a browser on Windows may send a whole path."""
    name = raw.replace("\\", "/").rsplit("/", 1)[-1].strip()
    problem = filename_problem(name)
    if problem is not None:
        raise FileRefused(f"the file's name {name[:100]!r} {problem}")
    return name


def _boundary(request: Request) -> bytes:
    value = request.headers.get("content-type", "")
    media_type, options = parse_options_header(value)
    if media_type != b"multipart/form-data" or not options.get(b"boundary"):
        raise InvalidParameter(
            FIELD, "send the file as multipart/form-data with a boundary, in a field `file`"
        )
    return options[b"boundary"]


def too_large(max_bytes: int) -> FileRefused:
    return FileRefused(f"file is larger than {max_bytes} bytes", limit=max_bytes)


async def read_upload(request: Request, *, max_bytes: int) -> Upload:
    """The request's `file`, read to its end; a 400 naming `file` (nothing kept) when it is
    missing, empty or over `max_bytes`."""
    length = request.headers.get("content-length")
    declared = int(length) if length and length.isascii() and length.isdigit() else 0
    if declared > max_bytes + FRAMING_BYTES:
        raise too_large(max_bytes)  # refused before a byte of it is read
    parts = _Parts(max_bytes)
    callbacks: Any = {
        name: getattr(parts, name)
        for name in (
            "on_part_begin",
            "on_part_data",
            "on_part_end",
            "on_header_field",
            "on_header_value",
            "on_header_end",
            "on_headers_finished",
        )
    }
    parser = MultipartParser(_boundary(request), callbacks)
    # The whole body, framing and anything after the closing boundary included, is bounded
    # as a declared length is: a chunked body is never read on past it.
    body_limit = max_bytes + FRAMING_BYTES
    received = 0
    try:
        async for chunk in request.stream():
            received += len(chunk)
            if received > body_limit:
                raise _TooLarge
            parser.write(chunk)
        parser.finalize()
    except _TooLarge:
        _discard(parts)
        raise too_large(max_bytes) from None
    except MultipartParseError:
        _discard(parts)
        raise InvalidParameter(FIELD, "the multipart body is malformed") from None
    except BaseException:
        _discard(parts)
        raise
    upload = parts.upload
    if upload is None:
        raise InvalidParameter(FIELD, "the multipart field `file` is required")
    if upload.size == 0:
        upload.close()
        raise FileRefused("file is empty (0 bytes)")
    upload.read_text(b"", final=True)
    return upload


def _discard(parts: _Parts) -> None:
    if parts.upload is not None:
        parts.upload.close()
