"""Fixed-window counters per (group, key) with the tier's limit, and the headers they produce.

The fixed window counts exactly: the 1001st request of a 1000/hour key in one window is refused,
in one process or across many sharing Redis. The reset is the window's end as Unix seconds.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

from limits import RateLimitItem, parse
from limits.aio.storage import MemoryStorage, RedisStorage, Storage
from limits.aio.strategies import FixedWindowRateLimiter
from redis.asyncio import Redis

from atrium.settings import Settings


@dataclass(frozen=True, slots=True)
class Verdict:
    allowed: bool
    limit: int
    remaining: int
    reset: int  # the window's end, Unix seconds (rounded up)
    retry_after: int  # whole seconds until then, at least 1

    def headers(self) -> dict[str, str]:
        headers = {
            "X-RateLimit-Limit": str(self.limit),
            "X-RateLimit-Remaining": str(self.remaining),
            "X-RateLimit-Reset": str(self.reset),
        }
        if not self.allowed:
            headers["Retry-After"] = str(self.retry_after)
        return headers


def make_storage(settings: Settings, redis: Redis | None) -> Storage:
    """Redis counters when the deployment has Redis (shared by every process), else memory."""
    if redis is None:
        return MemoryStorage()
    # limits accepts an existing pool, so the app owns (and closes) one Redis connection pool.
    return RedisStorage(
        "async+redis://",
        implementation="redispy",
        key_prefix=f"{settings.redis_prefix}:rl",
        connection_pool=redis.connection_pool,  # type: ignore[arg-type]
    )


class _MemoryWindows:
    """The fixed windows of one process (no Redis): what `limits`' `FixedWindowRateLimiter`
    over its `MemoryStorage` counts, without its per-request costs. That storage starts a task
    after nearly every hit to sweep every key it holds (O(keys) per request, and a task each)
    and takes an asyncio lock per key; it was about 1.3% of the server's CPU in the offline
    burst (docs/runs.md). Same rules: a window opens at a key's first hit and lasts the item's
    expiry; hits past the amount are counted and refused; the reset is the window's end.
    Expired windows are dropped on use and in a sweep at most once per `_SWEEP_SECONDS`."""

    _SWEEP_SECONDS = 60.0

    def __init__(self) -> None:
        self._windows: dict[str, list[float]] = {}  # key -> [hits, window end]
        self._next_sweep = 0.0

    def hit(self, item: RateLimitItem, group: str, identity: str) -> tuple[bool, int, float]:
        """Count one hit: (allowed, remaining, the window's end in Unix seconds)."""
        now = time.time()
        if now >= self._next_sweep:
            self._sweep(now)
        key = item.key_for(group, identity)
        window = self._windows.get(key)
        if window is None or window[1] <= now:
            window = self._windows[key] = [0, now + item.get_expiry()]
        window[0] += 1
        return window[0] <= item.amount, max(0, item.amount - int(window[0])), window[1]

    def _sweep(self, now: float) -> None:
        self._windows = {key: w for key, w in self._windows.items() if w[1] > now}
        self._next_sweep = now + self._SWEEP_SECONDS

    def clear(self) -> None:
        self._windows.clear()


class RateLimiter:
    """Counts requests per (group, identity) against the limit of a tier."""

    def __init__(self, settings: Settings, redis: Redis | None = None) -> None:
        self.storage = make_storage(settings, redis)
        self._strategy = FixedWindowRateLimiter(self.storage)
        # One process's counters (no Redis) are kept here; `limits` counts in Redis.
        self._memory = _MemoryWindows() if redis is None else None
        self._items: dict[str, RateLimitItem] = {
            "standard": parse(settings.rate_limit_standard),
            "premium": parse(settings.rate_limit_premium),
            "anonymous": parse(settings.rate_limit_anonymous),
        }

    async def hit(self, *, group: str, identity: str, tier: str) -> Verdict:
        item = self._items.get(tier, self._items["standard"])
        if self._memory is not None:
            allowed, remaining, reset_time = self._memory.hit(item, group, identity)
        else:
            allowed = await self._strategy.hit(item, group, identity)
            stats = await self._strategy.get_window_stats(item, group, identity)
            remaining, reset_time = max(0, stats.remaining), stats.reset_time
        return Verdict(
            allowed=allowed,
            limit=item.amount,
            remaining=remaining,
            reset=math.ceil(reset_time),
            retry_after=max(1, math.ceil(reset_time - time.time())),
        )

    async def reset(self) -> None:
        if self._memory is not None:
            self._memory.clear()
        await self.storage.reset()
