"""Which names are safe as file names: artifact names, where a run stores them and where the
`atrium` command saves them.

An artifact's name is chosen by a model, which reads prompts and tool output a third party may
write, and ends up as a file on a user's disk (`atrium artifacts download`). So a name must be
one plain file in one directory on every common system: no path (`/`, `\\`, `..`), no dot-file
(`.bashrc`, `.ssh`), nothing a shell takes for an option (`-rf`), no control or invisible
formatting character (a right-to-left override, U+202E, shows `evil<U+202E>dm.exe` as
`evilexe.md`), and nothing Windows refuses or reserves (`CON`, `a:b`, a trailing dot).
pathvalidate's `universal` platform knows the portable part.
"""

from __future__ import annotations

from pathvalidate import ValidationError, validate_filename
from pathvalidate.error import ErrorReason

MAX_FILENAME_BYTES = 255  # UTF-8 bytes: the limit of ext4, APFS, NTFS (in UTF-16 units) alike

_PORTABILITY_PROBLEMS = {
    ErrorReason.INVALID_LENGTH: f"must be 1-{MAX_FILENAME_BYTES} bytes long (UTF-8)",
    ErrorReason.RESERVED_NAME: "is a name Windows reserves for a device (CON, NUL, COM1, ...)",
    ErrorReason.INVALID_CHARACTER: (
        'must not contain / \\ : * ? " < > | or control characters, nor begin with a space or '
        "end with a space or a dot"
    ),
    ErrorReason.FOUND_ABS_PATH: "must be a file name, not a path",
}


def filename_problem(name: str) -> str | None:
    """Why `name` is not a safe file name, as the end of a sentence that begins with the name;
    None when it is safe."""
    if not name:
        return "must not be empty"
    if name.startswith("."):
        return "must not begin with a dot (no hidden files, no '.' or '..')"
    if name.startswith("-"):
        return "must not begin with '-' (shell tools would read it as an option)"
    if not name.isprintable():
        return "must not contain control, separator or invisible formatting characters"
    try:
        validate_filename(name, platform="universal", max_len=MAX_FILENAME_BYTES)
    except ValidationError as exc:
        return _PORTABILITY_PROBLEMS.get(exc.reason, "is not a portable file name")
    return None
