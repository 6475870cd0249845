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


class RateLimiter:
    """Counts requests per (group, identity) against the limit of a tier."""

    def __init__(self, settings: Settings, redis: Redis | None = None) -> None:
        self.storage = make_storage(settings, redis)
        self._strategy = FixedWindowRateLimiter(self.storage)
        self._items: dict[str, RateLimitItem] = {
            "standard": parse(settings.rate_limit_standard),
            "premium": parse(settings.rate_limit_premium),
            "anonymous": parse(settings.rate_limit_anonymous),
        }

    async def hit(self, *, group: str, identity: str, tier: str) -> Verdict:
        item = self._items.get(tier, self._items["standard"])
        allowed = await self._strategy.hit(item, group, identity)
        stats = await self._strategy.get_window_stats(item, group, identity)
        return Verdict(
            allowed=allowed,
            limit=item.amount,
            remaining=max(0, stats.remaining),
            reset=math.ceil(stats.reset_time),
            retry_after=max(1, math.ceil(stats.reset_time - time.time())),
        )

    async def reset(self) -> None:
        await self.storage.reset()
