"""Usage is built through the service layer, as the runs worker records it."""

from __future__ import annotations

import datetime
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

import pytest

from atrium.analytics.service import record_run_usage
from atrium.db.engine import Database


@dataclass(frozen=True, slots=True)
class FinishedRun:
    """What a finished run contributes to usage: the raw record a recount starts from."""

    account_id: int
    agent_id: str
    day: datetime.date
    status: str
    input_tokens: int = 0
    output_tokens: int = 0
    credits_micro: int = 0
    requests: int = 0


Recorder = Callable[..., Awaitable[FinishedRun]]


@pytest.fixture
def record(db: Database) -> Recorder:
    """`await record(account_id=…, agent_id=…, day=…, status=…, input_tokens=…)`."""

    async def recorder(**fields: object) -> FinishedRun:
        run = FinishedRun(**fields)  # type: ignore[arg-type]
        async with db.transaction() as session:
            await session.run_sync(
                record_run_usage,
                account_id=run.account_id,
                agent_id=run.agent_id,
                day=run.day,
                status=run.status,
                input_tokens=run.input_tokens,
                output_tokens=run.output_tokens,
                credits_micro=run.credits_micro,
                requests=run.requests,
            )
        return run

    return recorder
