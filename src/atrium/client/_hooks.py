"""Calling a user's `on_event` hook (or function tool, or approver): the one step of the clients
that a word-level rewrite cannot turn from asyncio into blocking code, so it is written twice,
here (httpcore keeps its locks the same way). `AsyncClient` also takes a coroutine function and
awaits what it returns; `Client`'s hook returns nothing. `_unasync` turns
`await acall_hook(...)` into `call_hook(...)`, and `await acall_user(...)` into `call_user(...)`.
`amap_bounded` / `map_bounded` run a function on many items, at most `limit` at a time: tasks
under a semaphore in asyncio, threads in blocking code (an eval's runs, `evals.run`).
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

from atrium.client.records import RunEvent

T = TypeVar("T")
U = TypeVar("U")


async def acall_hook(hook: Callable[[RunEvent], Awaitable[None] | None], event: RunEvent) -> None:
    handled = hook(event)
    if handled is not None:
        await handled


def call_hook(hook: Callable[[RunEvent], None], event: RunEvent) -> None:
    hook(event)


async def acall_user(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """A caller's function (a function tool, an approver): plain or a coroutine function."""
    value = function(*args, **kwargs)
    return await value if inspect.isawaitable(value) else value


def call_user(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    return function(*args, **kwargs)


async def amap_bounded(
    function: Callable[[T], Awaitable[U]], items: Sequence[T], limit: int
) -> list[U]:
    """`function` on every item, at most `limit` at once; the results in the items' order."""
    gate = asyncio.Semaphore(max(1, limit))

    async def one(item: T) -> U:
        async with gate:
            return await function(item)

    return list(await asyncio.gather(*(one(item) for item in items)))


def map_bounded(function: Callable[[T], U], items: Sequence[T], limit: int) -> list[U]:
    with ThreadPoolExecutor(max_workers=max(1, limit)) as pool:
        return list(pool.map(function, items))
