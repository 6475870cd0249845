"""What the runtime needs from whoever executes a run: somewhere to send events and artifacts,
and the account's memory (`MemoryStore`).

The worker implements it over the database (with the run's lease guarding every write); the
runtime stays free of storage concerns.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Protocol

from atrium.kit.json_object import JsonObject


@dataclass(frozen=True, slots=True)
class StoredArtifact:
    name: str
    mime_type: str
    size_bytes: int
    run_id: str
    content: bytes | None = None


class RunSink(Protocol):
    def emit(self, kind: str, payload: JsonObject) -> None:
        """Queue an event (persisted and delivered at the next flush)."""

    def append_text(self, text: str) -> None:
        """Queue streamed model text; consecutive pieces coalesce into one message.delta."""

    async def checkpoint(self) -> bool:
        """Persist what is queued; True when the run's cancellation was requested."""

    async def persist(self) -> None:
        """Commit what is queued now, before going on (a tool call's start, before the call
        leaves); raises when it could not be written, the run's lease lost included."""

    async def write_artifact(self, *, name: str, content: bytes, mime_type: str) -> None:
        """Store (or replace) the run's artifact `name` and announce it."""

    async def list_artifacts(self) -> list[StoredArtifact]:
        """Artifacts of the run's thread (content not loaded)."""

    async def read_artifact(self, name: str) -> StoredArtifact | None:
        """The newest artifact called `name` in the run's thread, with its content."""


class MemoryRefused(Exception):
    """The store refused a tool's write or search (a bad key, a value too large): the model
    reads the message as the call's error."""


@dataclass(frozen=True, slots=True)
class FoundMemory:
    item_id: str
    namespace: list[str]
    key: str
    value: Any


@dataclass(frozen=True, slots=True)
class EditedBlock:
    """A memory block after a tool's edit: its new version and how full it is."""

    block_id: str
    label: str
    version: int
    chars: int
    limit: int


class MemoryStore(Protocol):
    """The account's memory, as a run's memory tools reach it (`runtime.memory_tools`); each
    write and delete is recorded with the run and `tool_call_id` (the worker implements it)."""

    async def search(
        self, *, query: str, prefix: list[str], limit: int, by_meaning: bool = False
    ) -> list[FoundMemory]:
        """Items under `prefix` holding every word of `query`, best first; with `by_meaning`,
        the items nearest `query` in meaning (MemoryRefused without an embeddings model)."""

    async def write(
        self,
        *,
        namespace: list[str],
        key: str,
        value: Any,
        text: str | None,
        ttl_seconds: int | None,
        tool_call_id: str,
    ) -> str:
        """Create or replace the item under (namespace, key); its id."""

    async def delete(self, *, namespace: list[str], key: str, tool_call_id: str) -> str | None:
        """Forget the item under (namespace, key); its id, or None when there was none."""

    async def append_block(self, *, label: str, text: str, tool_call_id: str) -> EditedBlock:
        """Add `text` at the end of the account's block `label` (a new version)."""

    async def replace_block(
        self, *, label: str, old_text: str, new_text: str, tool_call_id: str
    ) -> EditedBlock:
        """Replace `old_text`, found exactly once in the block, by `new_text`."""
