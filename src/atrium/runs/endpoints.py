"""`/api/v1/public/agent/runs`: create, check, list, cancel runs; their events and artifacts."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Annotated, Any
from urllib.parse import quote

from fastapi import APIRouter, Depends, Header, Query, Request, Response, status
from fastapi.responses import JSONResponse
from sse_starlette import EventSourceResponse

from atrium.db.models import Artifact
from atrium.errors import InvalidParameter
from atrium.http.deps import CurrentPrincipal, DatabaseDep, SessionDep, SettingsDep
from atrium.runs import presenters, repository, service
from atrium.runs.broker import Broker
from atrium.runs.events import stored_event_message
from atrium.runs.limits import StreamSlotsDep
from atrium.runs.schemas import ArtifactList, EventList, EventOut, RunCreate, RunList, RunOut
from atrium.runs.stream import RunEventStream, sse_frame
from atrium.worker.batcher import WriteBatcher

# A body sent without Content-Type is read as JSON (what this group takes); the gateway already
# answers 415 for any other declared type.
router = APIRouter(prefix="/agent/runs", tags=["agent runs"], strict_content_type=False)


async def get_broker(request: Request) -> Broker:  # async: no thread hop (see http.deps)
    broker: Broker = request.app.state.broker
    return broker


BrokerDep = Annotated[Broker, Depends(get_broker)]


async def get_writer(request: Request) -> WriteBatcher:
    writer: WriteBatcher = request.app.state.writer
    return writer


WriterDep = Annotated[WriteBatcher, Depends(get_writer)]
_RUN_RESPONSE = {"response_model": RunOut, "response_model_exclude_unset": True}
_Responses = dict[int | str, dict[str, Any]]
_IDEMPOTENCY_CONFLICT: _Responses = {409: {"description": "`Idempotency-Key` reused, other body."}}
_ALREADY_FINISHED: _Responses = {409: {"description": "The run is already finished."}}


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses=_IDEMPOTENCY_CONFLICT,
    **_RUN_RESPONSE,  # type: ignore[arg-type]
)
async def create_run(
    body: RunCreate,
    response: Response,
    db: DatabaseDep,
    writer: WriterDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    broker: BrokerDep,
    idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None,
) -> RunOut:
    """Queue a run of `prompt` by an agent (default: the account's default agent), in a new
    thread or in `thread_id`. The response carries the URLs to poll and stream. With an
    `Idempotency-Key` header, repeating the same request returns the same run
    (`Idempotent-Replayed: true`); the same key with another body is a 409. With
    `webhook_url`, the finished run is also POSTed there, signed with the `webhook_secret` this
    response carries (docs/webhooks.md)."""
    created = await service.create_run(
        db=db,
        writer=writer,
        settings=settings,
        broker=broker,
        account_id=principal.account_id,
        data=body,
        idempotency_key=idempotency_key,
    )
    artifacts: dict[str, list[Artifact]] = {}
    if created.replayed:
        response.headers["Idempotent-Replayed"] = "true"
        async with db.session(write=False) as session:
            artifacts = await service.artifacts_of(session, [created.run])
    out = presenters.run_out(settings, created.run, artifacts.get(created.run.id, []))
    if created.run.webhook_secret is not None:
        out.webhook_secret = created.run.webhook_secret  # shown here only (docs/webhooks.md)
    return out


@router.get("", response_model=RunList, response_model_exclude_unset=True)
async def list_runs(
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    status: Annotated[str | None, Query(description="queued, running, completed, ...")] = None,
    agent_id: Annotated[str | None, Query(max_length=40)] = None,
    thread_id: Annotated[str | None, Query(max_length=40)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[str | None, Query(max_length=200)] = None,
) -> RunList:
    """The account's runs, newest first, filtered by status, agent or thread; follow
    `next_cursor` (pass it as `cursor`) while `has_more`."""
    runs, next_cursor = await service.list_runs(
        session,
        account_id=principal.account_id,
        status=status,
        agent_id=agent_id,
        thread_id=thread_id,
        limit=limit,
        cursor=cursor,
    )
    artifacts = await service.artifacts_of(session, runs)
    return RunList(
        data=[presenters.run_out(settings, run, artifacts.get(run.id, [])) for run in runs],
        has_more=next_cursor is not None,
        next_cursor=next_cursor,
    )


@router.get("/{run_id}", **_RUN_RESPONSE)  # type: ignore[arg-type]
async def get_run(
    run_id: str, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> RunOut:
    """The run; once finished also `result` (completed), `artifacts`, `billing` in credits, and
    `error` (failed)."""
    run = await service.get_run(session, account_id=principal.account_id, run_id=run_id)
    artifacts = await service.artifacts_of(session, [run])
    return presenters.run_out(settings, run, artifacts.get(run.id, []))


@router.post(
    "/{run_id}/cancel",
    responses=_ALREADY_FINISHED,
    **_RUN_RESPONSE,  # type: ignore[arg-type]
)
async def cancel_run(
    run_id: str,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    broker: BrokerDep,
) -> RunOut:
    """Cancel a run. A queued run is cancelled at once; a running one stops at its next step
    (its status turns `cancelled` then). A finished run is a 409."""
    run = await service.cancel_run(
        session, broker=broker, account_id=principal.account_id, run_id=run_id
    )
    artifacts = await service.artifacts_of(session, [run])
    return presenters.run_out(settings, run, artifacts.get(run.id, []))


def _after_seq(last_event_id: str | None) -> int:
    if last_event_id is None or not last_event_id.strip():
        return 0
    value = last_event_id.strip()
    if not value.isdigit() or len(value) > 12:
        raise InvalidParameter("Last-Event-ID", "Last-Event-ID must be an event id (an integer)")
    return int(value)


@router.get(
    "/{run_id}/events",
    response_model=EventList,
    responses={200: {"content": {"text/event-stream": {}, "application/json": {}}}},
)
async def run_events(
    run_id: str,
    request: Request,
    db: DatabaseDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    broker: BrokerDep,
    slots: StreamSlotsDep,
    last_event_id: Annotated[str | None, Header(alias="Last-Event-ID")] = None,
) -> Response:
    """Server-Sent Events of the run: `id:` (sequence in the run), `event:` (run.queued,
    run.started, run.step, message.delta, artifact.created, run.completed, run.failed,
    run.cancelled) and JSON `data:`. Replays from the start, or after `Last-Event-ID`, then
    follows live and ends after the terminal event; comment heartbeats keep it open.
    With `Accept: application/json`, the events so far as `{"data": [...]}`. A key may hold
    `ATRIUM_SSE_MAX_STREAMS_PER_KEY` streams open at once; one more is a 429."""
    after_seq = _after_seq(last_event_id)
    # Point lookups (no session is held: a stream may stay open for minutes).
    found = await service.visible_run_id(db, account_id=principal.account_id, run_id=run_id)
    if _wants_json(request):
        # Every event of the run (unbounded): off the event loop, unlike the stream's batches.
        async with db.read_engine.connect() as conn:
            rows = await conn.run_sync(
                functools.partial(repository.events_after, run_id=found, after_seq=after_seq)
            )
        return JSONResponse(
            EventList(data=[EventOut(**stored_event_message(row)) for row in rows]).model_dump(
                mode="json"
            )
        )
    stream = RunEventStream(
        db=db,
        broker=broker,
        run_id=found,
        after_seq=after_seq,
        poll_seconds=settings.sse_poll_seconds,
    )
    slots.acquire(principal.key_id)  # 429 past ATRIUM_SSE_MAX_STREAMS_PER_KEY

    async def frames() -> AsyncIterator[dict[str, str]]:
        try:
            async for message in stream:
                yield sse_frame(message)
        finally:
            slots.release(principal.key_id)

    return EventSourceResponse(
        frames(),
        ping=settings.sse_heartbeat_seconds,
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/event-stream" not in accept


@router.get("/{run_id}/artifacts", response_model=ArtifactList)
async def list_artifacts(
    run_id: str, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> ArtifactList:
    """Metadata of the files the run has written so far, oldest first."""
    run = await service.get_run(session, account_id=principal.account_id, run_id=run_id)
    found = await repository.artifacts_of_runs(session, [run.id])
    return ArtifactList(
        data=[presenters.artifact_out(settings, artifact) for artifact in found[run.id]]
    )


@router.get(
    "/{run_id}/artifacts/{artifact_id}/content",
    response_class=Response,
    # The artifact's own MIME type (text/markdown, application/pdf, ...).
    responses={200: {"content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}}},
)
async def download_artifact(
    run_id: str, artifact_id: str, session: SessionDep, principal: CurrentPrincipal
) -> Response:
    """The artifact's content, with its MIME type, as an attachment."""
    artifact = await service.get_artifact(
        session, account_id=principal.account_id, run_id=run_id, artifact_id=artifact_id
    )
    return Response(
        artifact.content,
        media_type=artifact.mime_type,
        headers={
            "Content-Disposition": f"attachment; filename*=UTF-8''{quote(artifact.name)}",
            "X-Content-Type-Options": "nosniff",
            "ETag": f'"{artifact.sha256}"',
        },
    )
