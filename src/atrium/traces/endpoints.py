"""`GET /api/v1/public/agent/runs/{run_id}/trace`: the spans the collector receives, as JSON
(the dashboard's waterfall)."""

from __future__ import annotations

from fastapi import APIRouter

from atrium.http.deps import CurrentPrincipal, DatabaseDep, SettingsDep
from atrium.http.openapi import error_responses
from atrium.traces import service
from atrium.traces.errors import TracedRunNotFound
from atrium.traces.schemas import TraceOut

router = APIRouter(prefix="/agent/runs", tags=["agent runs"])


@router.get("/{run_id}/trace", responses=error_responses(TracedRunNotFound))
async def get_run_trace(
    run_id: str, db: DatabaseDep, principal: CurrentPrincipal, settings: SettingsDep
) -> TraceOut:
    """The run's OpenTelemetry spans, built from its stored events the way the OTLP export
    builds them (docs/guide/traces.md): the run, each stretch of execution (`execute`, or
    `retry` after a lost worker, linked to the attempt it replaces), model requests, tool calls
    and waits, with their GenAI attributes. Prompts and outputs only with
    `ATRIUM_TRACE_CONTENT=true`. Open spans have `end` null."""
    return await service.run_trace(db, settings, account_id=principal.account_id, run_id=run_id)
