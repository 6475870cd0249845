"""Calling a user's `on_event` hook (or function tool, or approver): the one step of the clients
that a word-level rewrite cannot turn from asyncio into blocking code, so it is written twice,
here (httpcore keeps its locks the same way). `AsyncClient` also takes a coroutine function and
awaits what it returns; `Client`'s hook returns nothing. `_unasync` turns
`await acall_hook(...)` into `call_hook(...)`, and `await acall_user(...)` into `call_user(...)`.
"""

from __future__ import annotations

import inspect
from collections.abc import Awaitable, Callable
from typing import Any

from atrium.client.records import RunEvent


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
