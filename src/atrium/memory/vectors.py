"""Search by meaning: each process keeps the vectors of an (account, embeddings model) in
one numpy matrix, for the API's searches and the worker's memory tools alike, and catches up
with every process's writes before each search, reading the `memory_changes` rows numbered
after the last one it applied. What does not fit the memory budget
(`ATRIUM_MEMORY_VECTOR_CACHE_MB`) is scanned from the database instead, in chunks
(docs/decisions/0065-memory-vector-cache.md).

Exact, not approximate: the product over 100,000 vectors of 384 dimensions takes ~10 ms;
reading them from the database took ~600 ms, which is what keeping them saves.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from datetime import datetime
from typing import Final
from weakref import WeakKeyDictionary

import numpy as np
import numpy.typing as npt
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.engine import Database
from atrium.kit.time import as_utc
from atrium.memory import repository
from atrium.memory.embedders import Vectors
from atrium.settings import Settings

# Rows read from the database at a time: a scan holds one chunk (~50 MB at 384 dimensions).
CHUNK: Final = 32_768
# Beside each vector: its item's seq (int64), namespace code (int32) and expiry (float64).
_ROW_EXTRA: Final = 8 + 4 + 8
_NEVER: Final = float("inf")

Key = tuple[int, str, int]  # account, embeddings model, dimensions


def _stamp(when: datetime | None) -> float:
    return _NEVER if when is None else as_utc(when).timestamp()


def _product(matrix: npt.NDArray[np.float32], query: Vectors) -> npt.NDArray[np.float32]:
    """Each row's dot product with `query`. numpy's own loop (einsum), not BLAS: OpenBLAS's
    threads spin against whatever else runs on a busy machine; at 100,000 x 384 on this
    2-core machine under load 7 the BLAS product took p50 / p99 41 / 292 ms, einsum 10 / 83."""
    scores: npt.NDArray[np.float32] = np.einsum("ij,j->i", matrix, query)
    return scores


def _best(scores: npt.NDArray[np.float32], count: int) -> npt.NDArray[np.intp]:
    """Indices of the `count` largest scores, largest first."""
    if count < len(scores):
        picked = np.argpartition(-scores, count)[:count]
    else:
        picked = np.arange(len(scores))
    return picked[np.argsort(-scores[picked], kind="stable")]


class _Entry:
    """One (account, model)'s vectors: rows `[0, size)` of preallocated arrays, a row per item
    (a delete moves the last row into the hole)."""

    def __init__(self, dims: int, marker: int) -> None:
        self.dims = dims
        # The number of the last `memory_changes` row applied.
        self.marker = marker
        self.size = 0
        self.matrix = np.empty((0, dims), np.float32)
        self.seqs = np.empty(0, np.int64)
        self.paths = np.empty(0, np.int32)
        self.expires = np.empty(0, np.float64)
        # Namespaces are few beside items: a prefix filter tests each namespace once and the
        # rows by their namespace's code.
        self.codes: dict[str, int] = {}

    @property
    def nbytes(self) -> int:
        return len(self.seqs) * (self.dims * 4 + _ROW_EXTRA)

    def bytes_for(self, rows: int) -> int:
        """What the entry takes once it holds `rows` (its arrays grown as `_reserve` does)."""
        return self._capacity_for(rows) * (self.dims * 4 + _ROW_EXTRA)

    def _capacity_for(self, rows: int) -> int:
        return rows if rows <= len(self.seqs) else max(rows, len(self.seqs) * 3 // 2)

    def _code(self, path: str) -> int:
        return self.codes.setdefault(path, len(self.codes))

    def _reserve(self, rows: int) -> None:
        if rows <= len(self.seqs):
            return
        capacity = self._capacity_for(rows)
        matrix = np.empty((capacity, self.dims), np.float32)
        matrix[: self.size] = self.matrix[: self.size]
        self.matrix = matrix
        for name in ("seqs", "paths", "expires"):
            old = getattr(self, name)
            grown = np.empty(capacity, old.dtype)
            grown[: self.size] = old[: self.size]
            setattr(self, name, grown)

    def append(self, chunk: repository.VectorRows) -> None:
        count = len(chunk.seqs)
        if not count:
            return
        self._reserve(self.size + count)
        end = self.size + count
        self.matrix[self.size : end] = np.frombuffer(chunk.vectors, np.float32).reshape(
            count, self.dims
        )
        self.seqs[self.size : end] = chunk.seqs
        self.paths[self.size : end] = [self._code(path) for path in chunk.paths]
        self.expires[self.size : end] = [_stamp(when) for when in chunk.expires]
        self.size = end

    def remove(self, rows: npt.NDArray[np.intp] | list[int]) -> None:
        """Drop rows, the last row moving into each hole (highest first, so the row moved is
        never one still to drop)."""
        for row in sorted((int(row) for row in rows), reverse=True):
            last = self.size - 1
            if row != last:
                self.matrix[row] = self.matrix[last]
                self.seqs[row] = self.seqs[last]
                self.paths[row] = self.paths[last]
                self.expires[row] = self.expires[last]
            self.size = last

    def apply(self, changes: list[repository.Change], model: str, now: float) -> None:
        """Each changed item as it is now: replaced in place, dropped or added."""
        latest: dict[int, repository.Change | None] = {}
        for change in changes:
            keep = (
                change.embedding is not None
                and change.model == model
                and len(change.embedding) == self.dims * 4
                and _stamp(change.expires_at) > now
            )
            latest[change.item_seq] = change if keep else None
        found = np.flatnonzero(np.isin(self.seqs[: self.size], list(latest)))
        at = {int(self.seqs[row]): int(row) for row in found}
        gone: list[int] = []
        added: list[repository.Change] = []
        for item_seq, now_is in latest.items():
            row = at.get(item_seq)
            if now_is is None:
                if row is not None:
                    gone.append(row)
            elif row is None:
                added.append(now_is)
            else:
                assert now_is.embedding is not None
                self.matrix[row] = np.frombuffer(now_is.embedding, np.float32)
                self.paths[row] = self._code(now_is.path)
                self.expires[row] = _stamp(now_is.expires_at)
        self.remove(gone)
        self.append(
            repository.VectorRows(
                [change.item_seq for change in added],
                b"".join(change.embedding or b"" for change in added),
                [change.path for change in added],
                [change.expires_at for change in added],
            )
        )
        self.marker = max(self.marker, changes[-1].seq)

    def prune(self, now: float) -> None:
        """Expired items go (the database keeps them until a write purges them)."""
        expired = np.flatnonzero(self.expires[: self.size] <= now)
        if len(expired):
            self.remove(expired)

    def scored(
        self, query: Vectors, prefix_path: str, now: float
    ) -> tuple[npt.NDArray[np.float32], npt.NDArray[np.int64], int]:
        """Every row's score (-inf for the expired and those outside the prefix), its seq, and
        how many rows are eligible."""
        scores = _product(self.matrix[: self.size], query)
        allowed = self.expires[: self.size] > now
        if prefix_path:
            codes = [code for path, code in self.codes.items() if path.startswith(prefix_path)]
            allowed &= np.isin(self.paths[: self.size], codes)
        eligible = int(allowed.sum())
        if eligible < self.size:
            scores[~allowed] = -np.inf
        return scores, self.seqs[: self.size], eligible

    def nearest(self, query: Vectors, prefix_path: str, count: int, now: float) -> list[int]:
        """The seqs of the `count` items nearest `query` under the prefix, nearest first."""
        scores, seqs, eligible = self.scored(query, prefix_path, now)
        return [int(seq) for seq in seqs[_best(scores, min(count, eligible))]]


class _Candidates:
    """The best `count` rows seen so far of a scan read in chunks."""

    def __init__(self, count: int) -> None:
        self.count = count
        self.scores = np.empty(0, np.float32)
        self.seqs = np.empty(0, np.int64)

    def add(self, scores: npt.NDArray[np.float32], seqs: npt.NDArray[np.int64], count: int) -> None:
        picked = _best(scores, min(count, len(scores)))
        self.scores = np.concatenate([self.scores, scores[picked]])
        self.seqs = np.concatenate([self.seqs, seqs[picked]])
        if len(self.scores) > self.count:
            kept = _best(self.scores, self.count)
            self.scores, self.seqs = self.scores[kept], self.seqs[kept]

    def add_chunk(
        self, chunk: repository.VectorRows, query: Vectors, prefix_path: str, now: float
    ) -> None:
        if not chunk.seqs:
            return
        matrix = np.frombuffer(chunk.vectors, np.float32).reshape(len(chunk.seqs), -1)
        allowed = np.fromiter(
            (
                path.startswith(prefix_path) and _stamp(when) > now
                for path, when in zip(chunk.paths, chunk.expires, strict=True)
            ),
            bool,
            len(chunk.seqs),
        )
        scores = _product(matrix, query)
        scores[~allowed] = -np.inf
        self.add(scores, np.asarray(chunk.seqs, np.int64), int(allowed.sum()))

    def result(self) -> list[int]:
        return [int(seq) for seq in self.seqs[_best(self.scores, len(self.scores))]]


class VectorIndex:
    """The process's vectors of search by meaning, within `budget` bytes in all (0: none kept,
    every search scans)."""

    def __init__(self, budget: int) -> None:
        self.budget = budget
        # Least recently searched first: what goes when a larger one needs the room.
        self._entries: OrderedDict[Key, _Entry] = OrderedDict()
        self._locks: dict[Key, asyncio.Lock] = {}

    @property
    def nbytes(self) -> int:
        return sum(entry.nbytes for entry in self._entries.values())

    def cached(self, key: Key) -> bool:
        return key in self._entries

    async def nearest(
        self,
        session: AsyncSession,
        *,
        account_id: int,
        model: str,
        query: Vectors,
        prefix_path: str,
        now: datetime,
        count: int,
    ) -> list[int]:
        """The seqs of the account's live items nearest `query` (embedded by `model`) under the
        prefix, nearest first (some may be gone by now: see `forget`)."""
        key = (account_id, model, len(query))
        if not self.budget:
            return await self._load(session, key, query, prefix_path, now, count)
        # One search of a key at a time in this process: the first one loads, the next ones
        # find it loaded.
        lock = self._locks.setdefault(key, asyncio.Lock())
        async with lock:
            stamp = now.timestamp()
            entry = self._entries.get(key)
            if entry is not None:
                changes = await repository.changes_since(
                    session, account_id=account_id, after=entry.marker
                )
                if changes:
                    entry.apply(changes, model, stamp)
                entry.prune(stamp)
                if self._fits(key, entry.nbytes):
                    self._entries.move_to_end(key)
                    # numpy lets go of the GIL in the product: it runs beside the event loop.
                    return await asyncio.to_thread(entry.nearest, query, prefix_path, count, stamp)
                del self._entries[key]
            return await self._load(session, key, query, prefix_path, now, count)

    def forget(self, key: Key, seqs: list[int]) -> None:
        """Items found in memory but not in the database (removed without a change row: an
        account's delete, or rows deleted by hand): dropped."""
        entry = self._entries.get(key)
        if entry is not None and seqs:
            entry.remove(np.flatnonzero(np.isin(entry.seqs[: entry.size], seqs)))

    def _fits(self, key: Key, nbytes: int) -> bool:
        """Whether `nbytes` for `key` fit the budget, the least recently used other entries
        dropped as needed (none dropped when it cannot fit even alone)."""
        if nbytes > self.budget:
            return False
        others = [other for other in self._entries if other != key]
        used = sum(self._entries[other].nbytes for other in others)
        for other in others:
            if used + nbytes <= self.budget:
                break
            used -= self._entries.pop(other).nbytes
        return used + nbytes <= self.budget

    async def _load(
        self,
        session: AsyncSession,
        key: Key,
        query: Vectors,
        prefix_path: str,
        now: datetime,
        count: int,
    ) -> list[int]:
        """Read every vector of the key in chunks: kept while they fit the budget, else
        scanned chunk by chunk (nothing kept)."""
        account_id, model, dims = key
        stamp = now.timestamp()
        # The mark first: a change committed while the rows are read is applied again by the
        # next search, which is harmless.
        entry: _Entry | None = (
            _Entry(dims, await repository.last_change(session, account_id=account_id))
            if self.budget
            else None
        )
        candidates = _Candidates(count)
        for expiring in (False, True):
            after = 0
            while True:
                chunk = await repository.vector_rows(
                    session,
                    account_id=account_id,
                    model=model,
                    size=dims * 4,
                    now=now,
                    expiring=expiring,
                    after=after,
                    limit=CHUNK,
                )
                if entry is not None and self._fits(
                    key, entry.bytes_for(entry.size + len(chunk.seqs))
                ):
                    entry.append(chunk)
                else:
                    if entry is not None:
                        # Over the budget: what was kept is scanned, and nothing more kept.
                        candidates.add(*entry.scored(query, prefix_path, stamp))
                        entry = None
                    candidates.add_chunk(chunk, query, prefix_path, stamp)
                if len(chunk.seqs) < CHUNK:
                    break
                after = chunk.seqs[-1]
        if entry is None:
            return candidates.result()
        self._entries[key] = entry
        return await asyncio.to_thread(entry.nearest, query, prefix_path, count, stamp)


# One index per database a process uses (an app and its in-process worker share theirs).
_OF_DATABASE: WeakKeyDictionary[Database, VectorIndex] = WeakKeyDictionary()


def vectors_of(db: Database, settings: Settings) -> VectorIndex:
    """This process's vectors of search by meaning on `db`, within
    ATRIUM_MEMORY_VECTOR_CACHE_MB: the API's searches and the worker's memory tools use the
    same one, so an agent's `memory_search` by meaning does not scan the account each call."""
    index = _OF_DATABASE.get(db)
    if index is None:
        index = _OF_DATABASE[db] = VectorIndex(int(settings.memory_vector_cache_mb * 2**20))
    return index
