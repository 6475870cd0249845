"""The process's one Redis client (rate-limit counters, event fan-out, wake-ups)."""

from __future__ import annotations

from redis.asyncio import BlockingConnectionPool, Redis

# How long a command waits for a free connection before failing. Far above any burst's queueing.
_POOL_WAIT_SECONDS = 20.0


def connect_redis(url: str, max_connections: int) -> Redis:
    """A client on a blocking pool of at most `max_connections`.

    redis-py's default pool raises `MaxConnectionsError` as soon as a burst wants connection
    101, which became a 500 under 1,000 concurrent requests; a blocking pool makes the burst
    queue for a connection instead (each command holds one for well under a millisecond).
    """
    pool = BlockingConnectionPool.from_url(
        url, max_connections=max_connections, timeout=_POOL_WAIT_SECONDS
    )
    return Redis.from_pool(pool)  # the client owns the pool: closing it closes the connections
