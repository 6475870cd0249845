"""Group commit: the worker's many small writes, committed together in one transaction.

SQLite has one writer, and a transaction costs about the same with one statement as with fifty;
so rather than every run taking the write connection for each checkpoint, claim and finish,
one task drains a queue of write operations and runs each batch in a single transaction. Should
one operation fail, the batch is rolled back and its operations run again one transaction each,
so a failing operation never undoes the others. On PostgreSQL it also means fewer commits.

Operations are synchronous functions of a `Session` (`write_sync`, the hot paths: their whole
transaction runs in one hand-off to SQLite's writer thread, see `Database.write_sync`) or
coroutines of an `AsyncSession` (`write`). A batch keeps submission order: consecutive
operations of one kind share a transaction. Consecutive synchronous operations of one
`Together` class run in one call of it (a run's checkpoints: one statement for all of them).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Sequence
from contextlib import AbstractContextManager
from typing import Any, Self, TypeVar

from sqlalchemy.ext.asyncio import AsyncSession
from sqlalchemy.orm import Session

from atrium.db.engine import Database

log = logging.getLogger("atrium.db")
T = TypeVar("T")
WriteOperation = Callable[[AsyncSession], Awaitable[Any]]
SyncWriteOperation = Callable[[Session], Any]
_Item = tuple[Any, "asyncio.Future[Any]", bool]  # operation, its result, synchronous?
_MAX_BATCH = 256
_STOP = object()


# What wraps each transaction of synchronous operations (`runs.events.event_store.batched`: the
# batch's event rows, inserted together at its end).
AroundBatch = Callable[[Session], AbstractContextManager[None]]


def _nothing_around(session: Session) -> AbstractContextManager[None]:
    return contextlib.nullcontext()


class Together(ABC):
    """A synchronous operation that runs with the consecutive operations of its class in a
    transaction in one call of `run_together` (the same results as calling each in turn).

    Only consecutive ones: an operation between them may touch what they write (a run's
    terminal write after its last checkpoint), so submission order holds. A failed batch is
    retried one operation per transaction, each then run alone (`__call__`).
    """

    __slots__ = ()

    @abstractmethod
    def __call__(self, session: Session) -> Any: ...

    @classmethod
    @abstractmethod
    def run_together(cls, session: Session, operations: Sequence[Self]) -> list[Any]:
        """Each operation's result, in order."""


def run_in_order(session: Session, operations: Sequence[SyncWriteOperation]) -> list[Any]:
    """Each operation's result, run in order (runs of one `Together` class in one call)."""
    results: list[Any] = []
    start, count = 0, len(operations)
    while start < count:
        kind = type(operations[start])
        end = start + 1
        if issubclass(kind, Together):
            while end < count and type(operations[end]) is kind:
                end += 1
            results.extend(kind.run_together(session, operations[start:end]))  # type: ignore[arg-type]
        else:
            results.append(operations[start](session))
        start = end
    return results


class WriteBatcher:
    def __init__(self, db: Database, *, around_batch: AroundBatch | None = None) -> None:
        self.db = db
        self._around_batch: AroundBatch = around_batch or _nothing_around
        self._queue: asyncio.Queue[Any] = asyncio.Queue()
        self._task: asyncio.Task[None] | None = None
        self._stopping = False

    def start(self) -> None:
        # A stopped batcher may start again (an app's lifespan can run more than once), but a
        # second drain task beside a running one would be orphaned: nothing would stop it.
        if self._task is not None and not self._task.done():
            raise RuntimeError("this write batcher is already running")
        self._stopping = False
        self._queue = asyncio.Queue()
        self._task = asyncio.create_task(self._drain(), name="atrium-write-batcher")

    async def stop(self) -> None:
        """Commit what is queued, then stop. A batch is never cut off in the middle: a
        transaction interrupted by cancellation could leave SQLite's write lock held."""
        if self._task is None:
            return
        self._stopping = True
        self._queue.put_nowait(_STOP)
        try:
            await asyncio.wait_for(asyncio.shield(self._task), timeout=10)
        except TimeoutError:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task
        while not self._queue.empty():
            item = self._queue.get_nowait()
            if item is not _STOP and not item[1].done():
                item[1].set_exception(RuntimeError("the process is stopping"))

    def _enqueue(self, operation: Any, *, sync: bool) -> asyncio.Future[Any]:
        if self._stopping:
            raise RuntimeError("the process is stopping")
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._queue.put_nowait((operation, future, sync))
        return future

    def submit(self, operation: Callable[[AsyncSession], Awaitable[T]]) -> asyncio.Future[T]:
        """Queue `operation` now, in call order, for the next batch; its result once committed.

        Queuing happens before the caller's next await, so writes commit in the order they were
        submitted: a run's events must never commit after its terminal event.
        """
        return self._enqueue(operation, sync=False)

    def submit_sync(self, operation: Callable[[Session], T]) -> asyncio.Future[T]:
        """`submit` for a synchronous operation (see the module docstring)."""
        return self._enqueue(operation, sync=True)

    async def write(self, operation: Callable[[AsyncSession], Awaitable[T]]) -> T:
        """Run `operation` in the next batch's transaction; its result once that committed."""
        return await self.submit(operation)

    async def write_sync(self, operation: Callable[[Session], T]) -> T:
        """`write` for a synchronous operation (see the module docstring)."""
        return await self.submit_sync(operation)

    async def _drain(self) -> None:
        while True:
            first = await self._queue.get()
            if first is _STOP:
                return
            batch = [first]
            stop = False
            while not self._queue.empty() and len(batch) < _MAX_BATCH:
                item = self._queue.get_nowait()
                if item is _STOP:
                    stop = True
                    break
                batch.append(item)
            # Consecutive operations of one kind share a transaction, in submission order.
            start = 0
            for index in range(1, len(batch) + 1):
                if index == len(batch) or batch[index][2] != batch[start][2]:
                    await self._commit(batch[start:index])
                    start = index
            if stop:
                return

    async def _commit(self, batch: list[_Item]) -> None:
        pending = [(operation, future) for operation, future, _sync in batch if not future.done()]
        if not pending:
            return
        run = self._run_sync if batch[0][2] else self._run_async
        if len(pending) > 1:
            try:
                results = await run([operation for operation, _future in pending])
            except Exception:
                log.warning("a batch of %d writes failed; retrying them one by one", len(pending))
            else:
                for (_operation, future), result in zip(pending, results, strict=True):
                    if not future.done():
                        future.set_result(result)
                return
        for operation, future in pending:
            try:
                (result,) = await run([operation])
            except Exception as exc:
                if not future.done():
                    future.set_exception(exc)
            else:
                if not future.done():
                    future.set_result(result)

    async def _run_async(self, operations: list[WriteOperation]) -> list[Any]:
        async with self.db.transaction() as session:
            return [await operation(session) for operation in operations]

    async def _run_sync(self, operations: list[SyncWriteOperation]) -> list[Any]:
        around = self._around_batch

        def batch(session: Session) -> list[Any]:
            with around(session):
                return run_in_order(session, operations)

        return await self.db.write_sync(batch)
