"""What an upload really is: its content type from its bytes, never from what the client says.

`filetype` reads the magic numbers of binary formats (images, PDF, archives, executables).
Bytes it does not recognise are text when all of them, not only the head, decode as UTF-8
without NUL (a page of text in front of a ZIP is no text); a text file's extension then says
which text type it is (`.md`, `.csv`, `.json`). A file whose bytes are of one type and whose
name or declared type say another (a PDF named `cat.png`, a polyglot that an image viewer and
a PDF reader would both open) is refused: what a run's model is given and what a browser
downloads must be what the user thinks it is.
"""

from __future__ import annotations

import mimetypes

import filetype

# Enough for every magic number filetype knows (it reads at most 8 KiB).
HEAD_BYTES = 8_192
OCTET_STREAM = "application/octet-stream"
_TEXT_TYPES = {
    ".txt": "text/plain",
    ".text": "text/plain",
    ".log": "text/plain",
    ".md": "text/markdown",
    ".markdown": "text/markdown",
    ".csv": "text/csv",
    ".json": "application/json",
    ".html": "text/html",
    ".htm": "text/html",
    ".xml": "application/xml",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
}
# Spellings of one type that clients and `mimetypes` use.
_SAME = {"image/jpg": "image/jpeg", "image/pjpeg": "image/jpeg", "image/x-png": "image/png"}


class Mismatch(ValueError):
    """The bytes are of another type than the file's name or declared type say."""


def _extension(filename: str) -> str:
    dot = filename.rfind(".")
    return filename[dot:].lower() if dot > 0 else ""


def is_text(head: bytes) -> bool:
    """UTF-8 text without NUL (a cut multi-byte character at the end of `head` is allowed)."""
    if b"\x00" in head:
        return False
    try:
        head.decode("utf-8")
    except UnicodeDecodeError as exc:
        return exc.start >= len(head) - 3 and exc.reason == "unexpected end of data"
    return True


def is_text_type(content_type: str) -> bool:
    """A type whose bytes a model can be given as text."""
    return content_type.startswith("text/") or content_type in (
        "application/json",
        "application/xml",
        "application/yaml",
    )


def _named_type(filename: str) -> str | None:
    extension = _extension(filename)
    if not extension:
        return None
    if extension in _TEXT_TYPES:
        return _TEXT_TYPES[extension]
    guessed, _ = mimetypes.guess_type("file" + extension, strict=False)
    if guessed is None or guessed == OCTET_STREAM:  # a name that says nothing of the type
        return None
    return _SAME.get(guessed, guessed)


def sniffed_type(
    head: bytes, *, filename: str, declared: str | None, text: bool | None = None
) -> str:
    """The content type of a file that starts with `head`; `Mismatch` when its name or its
    declared type say it is something else. `text`: whether the whole file is UTF-8 without
    NUL (None: judged by `head` alone)."""
    kind = filetype.guess(head)
    named = _named_type(filename)
    claimed = None if declared in (None, "", OCTET_STREAM) else _SAME.get(declared, declared)
    if kind is not None:
        mime = str(kind.mime)
        found = _SAME.get(mime, mime)
        for said, source in ((named, "its name"), (claimed, "its declared type")):
            if said is not None and said != found:
                raise Mismatch(f"its bytes are {found} but {source} says {said}")
        return found
    if not (is_text(head) if text is None else text):
        return OCTET_STREAM
    found = named if named is not None and is_text_type(named) else "text/plain"
    for said, source in ((named, "its name"), (claimed, "its declared type")):
        if said is not None and not is_text_type(said):
            raise Mismatch(f"its bytes are text but {source} says {said}")
    return found


def allowed(content_type: str, allow_list: list[str]) -> bool:
    """`content_type` is on the list, itself or by its `type/*`."""
    major = content_type.split("/", 1)[0]
    return content_type in allow_list or f"{major}/*" in allow_list
