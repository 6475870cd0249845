"""`/v1/analytics/usage`: usage of the account's agents over a range of days."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Query

from atrium.agents.errors import AgentNotFound
from atrium.analytics import service
from atrium.analytics.errors import UsageRangeInvalid
from atrium.analytics.schemas import UsageReport
from atrium.http.deps import CurrentPrincipal, SessionDep
from atrium.http.openapi import error_responses
from atrium.kit.time import utcnow

router = APIRouter(prefix="/analytics", tags=["analytics"])


@router.get("/usage", responses=error_responses(UsageRangeInvalid, AgentNotFound))
async def get_usage(
    session: SessionDep,
    principal: CurrentPrincipal,
    start_date: Annotated[
        str | None,
        Query(
            description="First UTC day, YYYY-MM-DD. Default: end_date - 29 days. On or before "
            "end_date, at most 366 days before it.",
            json_schema_extra={"format": "date"},
        ),
    ] = None,
    end_date: Annotated[
        str | None,
        Query(
            description="Last UTC day, YYYY-MM-DD. Default: today.",
            json_schema_extra={"format": "date"},
        ),
    ] = None,
    agent_id: Annotated[str | None, Query(description="Only this agent's usage.")] = None,
) -> UsageReport:
    """Usage metrics: totals, every day of the range (zeros included) and every agent.

    Counters: runs (finished), completed, failed, cancelled, input_tokens, output_tokens,
    credits and requests (model requests). At most 366 days per request.
    """
    return await service.usage_report(
        session,
        account_id=principal.account_id,
        start=service.parse_day("start_date", start_date),
        end=service.parse_day("end_date", end_date),
        agent_id=agent_id,
        today=utcnow().date(),
    )
