"""The worker's `MemoryStore`: a run's memory tools on its account's store, each write and
delete in a transaction of its own, recorded with the run and the tool call
(`memory_item_history.run_id`, `.tool_call_id`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from pydantic import ValidationError

from atrium.db.engine import Database
from atrium.db.models import MemoryBlock
from atrium.errors import InvalidParameter
from atrium.memory import service
from atrium.memory.blocks import service as blocks
from atrium.memory.blocks.errors import BlockNotFound
from atrium.memory.embedders import Embedder
from atrium.memory.errors import EmbeddingsUnavailable, MemoryItemNotFound
from atrium.memory.schemas import MemoryPut, MemorySearch
from atrium.memory.vectors import VectorIndex
from atrium.runtime.sink import EditedBlock, FoundMemory, MemoryRefused


def _refused(exc: ValidationError) -> MemoryRefused:
    error = exc.errors()[0]
    where = ".".join(str(part) for part in error["loc"]) or "arguments"
    return MemoryRefused(f"{where}: {error['msg']}")


@dataclass(frozen=True, slots=True)
class RunMemoryStore:
    db: Database
    account_id: int
    run_id: str
    # Writes store the search text's vector when an embedder is configured, as the API's do.
    embedder: Embedder | None = None
    # The process's vectors for search by meaning (`memory.vectors.vectors_of`); None scans.
    vectors: VectorIndex | None = None

    async def search(
        self, *, query: str, prefix: list[str], limit: int, by_meaning: bool = False
    ) -> list[FoundMemory]:
        try:
            data = MemorySearch(
                query=query,
                namespace_prefix=prefix or None,
                limit=limit,
                mode="semantic" if by_meaning else "text",
            )
        except ValidationError as exc:
            raise _refused(exc) from None
        try:
            async with self.db.session(write=False) as session:
                items = await service.search(
                    session,
                    account_id=self.account_id,
                    data=data,
                    embedder=self.embedder,
                    vectors=self.vectors,
                )
        except (InvalidParameter, EmbeddingsUnavailable) as exc:
            raise MemoryRefused(exc.message) from None
        return [FoundMemory(item.id, list(item.namespace), item.key, item.value) for item in items]

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
        try:
            data = MemoryPut(
                namespace=namespace, key=key, value=value, text=text, ttl_seconds=ttl_seconds
            )
        except ValidationError as exc:
            raise _refused(exc) from None
        try:
            item = await service.put_item(
                self.db,
                account_id=self.account_id,
                data=data,
                writer=self._writer(tool_call_id),
                embedder=self.embedder,
            )
            return item.id
        except (InvalidParameter, EmbeddingsUnavailable) as exc:
            raise MemoryRefused(exc.message) from None

    async def delete(self, *, namespace: list[str], key: str, tool_call_id: str) -> str | None:
        try:
            async with self.db.transaction() as session:
                item = await service.get_by_key(
                    session, account_id=self.account_id, namespace="/".join(namespace), key=key
                )
                return await service.delete_item(
                    session,
                    account_id=self.account_id,
                    item_id=item.id,
                    writer=self._writer(tool_call_id),
                )
        except MemoryItemNotFound:
            return None
        except InvalidParameter as exc:
            raise MemoryRefused(exc.message) from None

    async def append_block(self, *, label: str, text: str, tool_call_id: str) -> EditedBlock:
        try:
            async with self.db.transaction() as session:
                block = await blocks.append_text(
                    session,
                    account_id=self.account_id,
                    label=label,
                    text=text,
                    writer=self._writer(tool_call_id),
                )
                return _edited(block)
        except (BlockNotFound, InvalidParameter) as exc:
            raise MemoryRefused(exc.message) from None

    async def replace_block(
        self, *, label: str, old_text: str, new_text: str, tool_call_id: str
    ) -> EditedBlock:
        try:
            async with self.db.transaction() as session:
                block = await blocks.replace_text(
                    session,
                    account_id=self.account_id,
                    label=label,
                    old_text=old_text,
                    new_text=new_text,
                    writer=self._writer(tool_call_id),
                )
                return _edited(block)
        except (BlockNotFound, InvalidParameter) as exc:
            raise MemoryRefused(exc.message) from None

    def _writer(self, tool_call_id: str) -> service.Writer:
        return service.Writer(run_id=self.run_id, tool_call_id=tool_call_id)


def _edited(block: MemoryBlock) -> EditedBlock:
    return EditedBlock(block.id, block.label, block.version, len(block.value), block.char_limit)
