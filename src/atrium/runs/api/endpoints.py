"""`/api/v1/public/agent/runs`: create, check, list, cancel runs; their events and artifacts."""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator
from typing import Annotated
from urllib.parse import quote

from fastapi import APIRouter, Depends, Header, Query, Request, Response, status
from fastapi.responses import JSONResponse

from atrium.agents.errors import AgentNotFound, ModelUnusable
from atrium.agents.model_check import ModelCheckDep
from atrium.agents.versions.errors import AgentReferenceUnknown
from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.db.models import RunStatus
from atrium.errors import InvalidParameter
from atrium.files.errors import InputPartInvalid
from atrium.http.deps import CurrentPrincipal, DatabaseDep, SessionDep, SettingsDep
from atrium.http.openapi import error_responses
from atrium.kit.cursor import CursorQuery
from atrium.kit.wire_schemas import IDEMPOTENCY_KEY, integer
from atrium.runs.api import actions, presenters, service
from atrium.runs.api.errors import (
    ArtifactNotFound,
    IdempotencyKeyReused,
    RunAlreadyFinished,
    RunNotFound,
    RunNotWaiting,
    StreamsPerKeyExceeded,
    ThreadBusy,
    ThreadNotFound,
)
from atrium.runs.api.schemas import (
    ArtifactList,
    EventList,
    EventOut,
    RunActions,
    RunCreate,
    RunList,
    RunOut,
)
from atrium.runs.api.stream_slots import KeyRechecksDep, StreamSlots, StreamSlotsDep
from atrium.runs.events import stored_event_message
from atrium.runs.events.broker import Broker
from atrium.runs.events.stream import EventStreamResponse, RunEventStream, sse_frame
from atrium.settings import Settings
from atrium.webhooks.errors import WebhookUrlRefused

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
# A create and an answer both replay their first response when the key comes again.
IdempotencyKeyHeader = Annotated[
    str | None, Header(alias="Idempotency-Key", json_schema_extra=IDEMPOTENCY_KEY)
]
# A W3C trace context: the run's span continues the caller's trace (an invalid one is ignored).
TraceparentHeader = Annotated[str | None, Header(alias="traceparent")]
_RUN_RESPONSE = {"response_model": RunOut, "response_model_exclude_unset": True}
_RUN_NOT_FOUND = error_responses(RunNotFound)


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(
        IdempotencyKeyReused,
        ThreadBusy,
        AgentNotFound,
        AgentReferenceUnknown,
        ThreadNotFound,
        ModelUnusable,
        WebhookUrlRefused,
        InputPartInvalid,
    ),
    **_RUN_RESPONSE,  # type: ignore[arg-type]
)
async def create_run(
    body: RunCreate,
    response: Response,
    db: DatabaseDep,
    writer: WriterDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    models: ModelCheckDep,
    broker: BrokerDep,
    idempotency_key: IdempotencyKeyHeader = None,
    traceparent: TraceparentHeader = None,
) -> RunOut:
    """Queue a run of `prompt` by an agent (default: the account's default agent), in a new
    thread or in `thread_id`. The response carries the URLs to poll and stream. With an
    `Idempotency-Key` header, repeating the same request returns the same run
    (`Idempotent-Replayed: true`); the same key with another body is a 409. With
    `webhook_url`, the finished run is also POSTed there, signed with the `webhook_secret` this
    response carries (docs/guide/webhooks.md). `if_busy` says what happens when the thread
    still has an unfinished run: queue behind it (`enqueue`, the default), a 409 `THREAD_BUSY`
    (`reject`), or cancel it first, keeping (`interrupt`) or dropping (`rollback`) what it
    produced in the thread's history (docs/guide/threads.md)."""
    created = await service.create_run(
        db=db,
        writer=writer,
        settings=settings,
        models=models,
        broker=broker,
        account_id=principal.account_id,
        data=body,
        idempotency_key=idempotency_key,
        traceparent=traceparent,
    )
    if created.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    out = presenters.view_out(settings, created.view)
    if created.webhook_secret is not None:
        out.webhook_secret = created.webhook_secret  # shown here only (docs/design.md#webhooks)
    return out


@router.get("", response_model=RunList, response_model_exclude_unset=True)
async def list_runs(
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    status: Annotated[
        str | None,
        Query(description="Only runs in this status.", json_schema_extra={"enum": list(RunStatus)}),
    ] = None,
    agent_id: Annotated[
        str | None,
        Query(
            max_length=40,
            description="Only the runs of this agent (`agt_…`), or of one of its versions "
            "(`agt_…@3` or `agt_…@v3`; an alias matches no run: runs record the version they "
            "executed).",
        ),
    ] = None,
    thread_id: Annotated[str | None, Query(max_length=40)] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: CursorQuery = None,
    schedule_id: Annotated[
        str | None, Query(max_length=40, description="Only the runs this schedule queued.")
    ] = None,
    agent_version: Annotated[
        int | None,
        Query(
            ge=1,
            le=2**31 - 1,
            description="Only the runs that executed this version of their agent; with "
            "`agent_id`, of that agent.",
        ),
    ] = None,
) -> RunList:
    """The account's runs, newest first, filtered by status, agent (and its version), thread
    or schedule; follow `next_cursor` (pass it as `cursor`) while `has_more`."""
    page = await service.list_runs(
        session,
        account_id=principal.account_id,
        status=status,
        agent_id=agent_id,
        thread_id=thread_id,
        schedule_id=schedule_id,
        agent_version=agent_version,
        limit=limit,
        cursor=cursor,
    )
    return RunList(
        data=[presenters.view_out(settings, view) for view in page.views],
        has_more=page.next_cursor is not None,
        next_cursor=page.next_cursor,
    )


@router.get("/{run_id}", responses=_RUN_NOT_FOUND, **_RUN_RESPONSE)  # type: ignore[arg-type]
async def get_run(
    run_id: str, db: DatabaseDep, principal: CurrentPrincipal, settings: SettingsDep
) -> RunOut:
    """The run; once finished also `result` (completed), `artifacts`, `billing` in credits, and
    `error` (failed)."""
    # Point reads, no session: polling clients ask for this again and again
    # (docs/decisions/0007-three-ways-to-the-database.md).
    view = await service.shown_run(db, account_id=principal.account_id, run_id=run_id)
    return presenters.view_out(settings, view)


@router.post(
    "/{run_id}/cancel",
    responses=error_responses(RunNotFound, RunAlreadyFinished),
    **_RUN_RESPONSE,  # type: ignore[arg-type]
)
async def cancel_run(
    run_id: str,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    broker: BrokerDep,
) -> RunOut:
    """Cancel a run. A queued or `requires_action` run is cancelled at once; a running one
    stops at its next step (its status turns `cancelled` then). A finished run is a 409."""
    view = await service.cancel_run(
        session, broker=broker, account_id=principal.account_id, run_id=run_id
    )
    return presenters.view_out(settings, view)


@router.post(
    "/{run_id}/actions",
    responses=error_responses(RunNotFound, RunNotWaiting, IdempotencyKeyReused),
    **_RUN_RESPONSE,  # type: ignore[arg-type]
)
async def submit_actions(
    run_id: str,
    body: RunActions,
    response: Response,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    broker: BrokerDep,
    idempotency_key: IdempotencyKeyHeader = None,
) -> RunOut:
    """Answer a `requires_action` run: an output for each pending function call in
    `tool_outputs`, an approval or denial for each approval call in `approvals`, all at once.
    The run is queued again and continues where it stopped; a denied call reaches the model as
    "denied: <reason>". A call missing, unknown or answered twice is a 400 naming the list; a
    run that is not waiting (or whose wait expired) is a 409. With an `Idempotency-Key`, the
    same request again returns the run (`Idempotent-Replayed: true`)."""
    run = await service.get_run(session, account_id=principal.account_id, run_id=run_id)
    answered = await actions.submit_actions(
        session,
        settings=settings,
        broker=broker,
        run=run,
        data=body,
        idempotency_key=idempotency_key,
    )
    if answered.replayed:
        response.headers["Idempotent-Replayed"] = "true"
    view = await service.run_view(session, account_id=principal.account_id, run_id=run_id)
    return presenters.view_out(settings, view)


MAX_EVENT_ID = 999_999_999_999


def _after_seq(last_event_id: str | None) -> int:
    if last_event_id is None or not last_event_id.strip():
        return 0
    value = last_event_id.strip()
    # isascii: str.isdigit also accepts "²" and "¹", which int() refuses (a 500 otherwise).
    if not (value.isascii() and value.isdigit()) or len(value) > len(str(MAX_EVENT_ID)):
        raise InvalidParameter("Last-Event-ID", "Last-Event-ID must be an event id (an integer)")
    return int(value)


@router.get(
    "/{run_id}/events",
    response_model=EventList,
    responses={
        200: {"content": {"text/event-stream": {}, "application/json": {}}},
        **error_responses(RunNotFound, StreamsPerKeyExceeded),
    },
)
async def run_events(
    run_id: str,
    request: Request,
    db: DatabaseDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    broker: BrokerDep,
    slots: StreamSlotsDep,
    rechecks: KeyRechecksDep,
    last_event_id: Annotated[
        str | None,
        Header(
            alias="Last-Event-ID",
            description="Replay after this event id (empty: from the start).",
            json_schema_extra=integer(0, MAX_EVENT_ID),
        ),
    ] = None,
) -> Response:
    """Server-Sent Events of the run: `id:` (sequence in the run), `event:` (run.queued,
    run.started, run.restarted, run.step, message.delta, artifact.created, tool.called,
    tool.returned, memory.written, memory.deleted, run.requires_action, run.completed,
    run.failed, run.cancelled) and JSON
    `data:`. On `run.restarted` (a later attempt after the worker was lost) drop the text
    streamed so far. Replays from the start, or after `Last-Event-ID`, then follows live and
    ends after the terminal event (a `requires_action` run's stream stays open); comment
    heartbeats keep it open. A stream
    whose key is revoked ends with an `error` event (the error body, `UNAUTHORIZED`) within
    `ATRIUM_SSE_AUTH_RECHECK_SECONDS` and a fifth (one check answers every stream of the key in
    the process for a fifth of the interval).
    With `Accept: application/json`, the events so far as `{"data": [...]}`. A key may hold
    `ATRIUM_SSE_MAX_STREAMS_PER_KEY` streams open at once; one more is a 429."""
    after_seq = _after_seq(last_event_id)
    if _wants_json(request):
        return await _events_so_far(
            db, account_id=principal.account_id, run_id=run_id, after_seq=after_seq
        )
    stream = await service.event_stream(
        db,
        broker=broker,
        settings=settings,
        account_id=principal.account_id,
        still_authorized=functools.partial(rechecks.still_valid, principal.key_id),
        run_id=run_id,
        after_seq=after_seq,
    )
    return _streamed(stream, slots=slots, key_id=principal.key_id, settings=settings)


async def _events_so_far(
    db: Database, *, account_id: int, run_id: str, after_seq: int
) -> JSONResponse:
    """The run's events after `after_seq`, as `{"data": [...]}` (`Accept: application/json`)."""
    rows = await service.events_so_far(
        db, account_id=account_id, run_id=run_id, after_seq=after_seq
    )
    return JSONResponse(
        EventList(data=[EventOut(**stored_event_message(row)) for row in rows]).model_dump(
            mode="json"
        )
    )


def _streamed(
    stream: RunEventStream, *, slots: StreamSlots, key_id: int, settings: Settings
) -> EventStreamResponse:
    """`stream` as Server-Sent Events, holding one of the key's stream slots while it is open
    (a 429 when the key holds them all)."""
    slots.acquire(key_id)  # 429 past ATRIUM_SSE_MAX_STREAMS_PER_KEY

    async def frames() -> AsyncIterator[bytes]:
        try:
            async for message in stream:
                yield sse_frame(message)
        finally:
            slots.release(key_id)

    return EventStreamResponse(
        frames(),
        ping=settings.sse_heartbeat_seconds,
        headers={"Cache-Control": "no-cache", "X-Accel-Buffering": "no"},
    )


def _wants_json(request: Request) -> bool:
    accept = request.headers.get("accept", "")
    return "application/json" in accept and "text/event-stream" not in accept


@router.get("/{run_id}/artifacts", response_model=ArtifactList, responses=_RUN_NOT_FOUND)
async def list_artifacts(
    run_id: str, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> ArtifactList:
    """Metadata of the files the run has written so far, oldest first."""
    artifacts = await service.list_artifacts(
        session, account_id=principal.account_id, run_id=run_id
    )
    return ArtifactList(
        data=[presenters.artifact_out(settings, artifact) for artifact in artifacts]
    )


@router.get(
    "/{run_id}/artifacts/{artifact_id}/content",
    response_class=Response,
    # The artifact's own MIME type (text/markdown, application/pdf, ...).
    responses={
        200: {"content": {"*/*": {"schema": {"type": "string", "format": "binary"}}}},
        **error_responses(RunNotFound, ArtifactNotFound),
    },
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
