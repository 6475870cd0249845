"""Open event streams re-check their key; one answer per key serves every stream of the process
for a fifth of the re-check interval.

A client that follows each of its runs holds one stream per run, all on one key: 2,000 such
streams re-checking every 5 s are 400 primary-key reads a second (decision 0032). Shared
answers make that one read a key a second, whatever the number of streams, and a revoked key
still ends its streams within the interval and a fifth.
"""

from __future__ import annotations

from cachetools import TTLCache

from atrium.auth.service import key_still_valid
from atrium.db.engine import Database

# Keys with a stream open in one process at once: past this, the oldest answers are dropped
# early, which costs a read, never a wrong answer.
_KEYS = 10_000


class KeyRechecks:
    def __init__(self, db: Database, *, recheck_seconds: float) -> None:
        self._db = db
        self._answers: TTLCache[int, bool] = TTLCache(maxsize=_KEYS, ttl=recheck_seconds / 5)

    async def still_valid(self, key_id: int) -> bool:
        answer = self._answers.get(key_id)
        if answer is None:
            answer = await key_still_valid(self._db, key_id=key_id)
            self._answers[key_id] = answer
        return answer
