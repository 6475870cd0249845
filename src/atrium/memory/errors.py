"""The errors of the memory group, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import AppError, NotFound


class MemoryItemNotFound(NotFound):
    """The account has no live item with the id or key (another account's, or an expired one,
    is as unknown as none)."""

    def __init__(self, parameter: str, shown: str) -> None:
        super().__init__(f"no memory item {shown[:80]!r}", details={"parameter": parameter})


class EmbeddingsUnavailable(AppError):
    """The embeddings model (ATRIUM_EMBEDDINGS_MODEL) failed: its server answered an error, could
    not be reached, or answered something that is not one vector per text. Nothing was
    written; the same request may succeed once the server is back."""

    status_code = 502
    code = "EMBEDDINGS_UNAVAILABLE"

    def __init__(self, model: str, reason: str) -> None:
        super().__init__(
            f"the embeddings model {model!r} failed: {reason}", details={"model": model}
        )
