"""The errors of files and of a run's input parts, named; each keeps its parent's status and
code."""

from __future__ import annotations

from atrium.errors import InvalidParameter, NotFound


class FileNotFound(NotFound):
    """The account has no file with the id (another account's is as unknown as none)."""

    def __init__(self, file_id: str) -> None:
        super().__init__(f"no file with id {file_id!r}", details={"parameter": "file_id"})


class FileRefused(InvalidParameter):
    """The upload is not stored: empty, too large, of a type not allowed, or its bytes are of
    another type than its name or declared type say. Nothing of it is kept."""

    def __init__(self, message: str, **details: object) -> None:
        super().__init__("file", message, **details)


class InputPartInvalid(InvalidParameter):
    """A part of a run's `input` is refused; `details.parameter` names it (`input[2].file_id`)."""
