"""`/api/v1/public/threads`: create, list, read, fork and delete threads; read a thread's
conversation."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

from fastapi import APIRouter, Query, Request, status

from atrium.http.deps import CurrentPrincipal, DatabaseDep, SessionDep, SettingsDep
from atrium.http.openapi import error_responses
from atrium.kit.cursor import CursorQuery
from atrium.runs.api.endpoints import BrokerDep
from atrium.runs.api.errors import ThreadBusy, ThreadNotFound
from atrium.threads import presenters, service
from atrium.threads.conversation import CURSOR_PATTERN
from atrium.threads.errors import (
    CompactionModelFailed,
    ForkPointNotInHistory,
    MetadataFilterInvalid,
)
from atrium.threads.schemas import (
    SummaryBilling,
    ThreadCompaction,
    ThreadCreate,
    ThreadDeleted,
    ThreadFork,
    ThreadList,
    ThreadMessageList,
    ThreadOut,
)

if TYPE_CHECKING:
    from atrium.runtime.executor import Runtime

# A body sent without Content-Type is read as JSON (what this group takes).
router = APIRouter(prefix="/threads", tags=["threads"], strict_content_type=False)
_THREAD_NOT_FOUND = error_responses(ThreadNotFound)
# `metadata[key]=value`, any number of keys: OpenAPI's deepObject query parameter.
_METADATA_FILTER: dict[str, Any] = {
    "parameters": [
        {
            "name": "metadata",
            "in": "query",
            "required": False,
            "style": "deepObject",
            "explode": True,
            "description": "`metadata[key]=value`: only threads whose metadata has `key` with "
            f"that string value; up to {service.MAX_METADATA_FILTERS} keys, all must match.",
            "schema": {
                "type": "object",
                "propertyNames": {"pattern": service.METADATA_KEY_PATTERN},
                "additionalProperties": {
                    "type": "string",
                    "maxLength": service.MAX_METADATA_VALUE,
                    "pattern": "^[^\\u0000]*$",
                },
                "maxProperties": service.MAX_METADATA_FILTERS,
            },
        }
    ]
}


@router.post("", status_code=status.HTTP_201_CREATED, response_model=ThreadOut)
async def create_thread(
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    body: ThreadCreate | None = None,
) -> ThreadOut:
    """A new, empty thread with `metadata`. Its runs are created with `POST /agent/runs` and
    its `thread_id`; a run without `thread_id` also starts a thread."""
    view = await service.create_thread(
        session,
        settings=settings,
        account_id=principal.account_id,
        data=body or ThreadCreate(),
    )
    return presenters.thread_out(view)


@router.get(
    "",
    response_model=ThreadList,
    responses=error_responses(MetadataFilterInvalid),
    openapi_extra=_METADATA_FILTER,
)
async def list_threads(
    request: Request,
    session: SessionDep,
    principal: CurrentPrincipal,
    agent_id: Annotated[
        str | None,
        Query(
            max_length=40,
            description="Only threads with a run of this agent (`agt_…`), or of one of its "
            "versions (`agt_…@3`; an alias matches no thread: runs record the version they "
            "executed).",
        ),
    ] = None,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: CursorQuery = None,
) -> ThreadList:
    """The account's threads, newest first, filtered by agent and by metadata
    (`metadata[key]=value`); follow `next_cursor` (pass it as `cursor`) while `has_more`.
    `counts` is null here (`GET /threads/{thread_id}` has it)."""
    page = await service.list_threads(
        session,
        account_id=principal.account_id,
        agent_id=agent_id,
        metadata=service.metadata_filters(request.query_params.multi_items()),
        limit=limit,
        cursor=cursor,
    )
    return ThreadList(
        data=[presenters.thread_out(view) for view in page.views],
        has_more=page.next_cursor is not None,
        next_cursor=page.next_cursor,
    )


@router.get("/{thread_id}", response_model=ThreadOut, responses=_THREAD_NOT_FOUND)
async def get_thread(thread_id: str, session: SessionDep, principal: CurrentPrincipal) -> ThreadOut:
    """The thread: `status` (`requires_action` while a run waits for its caller, `busy` while
    one is queued or running, else `idle`), its newest run, its counts, and where it was forked
    from."""
    view = await service.thread_view(session, account_id=principal.account_id, thread_id=thread_id)
    return presenters.thread_out(view)


@router.get(
    "/{thread_id}/messages",
    response_model=ThreadMessageList,
    response_model_exclude_unset=True,
    responses=_THREAD_NOT_FOUND,
)
async def list_messages(
    thread_id: str,
    session: SessionDep,
    principal: CurrentPrincipal,
    limit: Annotated[int, Query(ge=1, le=100)] = 20,
    cursor: Annotated[
        str | None,
        Query(
            max_length=200,
            description="`next_cursor` of a page, passed back as it came.",
            json_schema_extra={"pattern": CURSOR_PATTERN},
        ),
    ] = None,
) -> ThreadMessageList:
    """The conversation as the model is given it, oldest first: the user prompts, the model's
    answers and tool calls, the tools' results; a fork's copied base first. A compaction
    summary (`role: "summary"`) follows the last run it covers; the items it stands in for stay
    listed with `compacted: true`."""
    page = await service.messages_page(
        session, account_id=principal.account_id, thread_id=thread_id, limit=limit, cursor=cursor
    )
    return ThreadMessageList(
        data=page.items, has_more=page.next_cursor is not None, next_cursor=page.next_cursor
    )


@router.post(
    "/{thread_id}/fork",
    status_code=status.HTTP_201_CREATED,
    response_model=ThreadOut,
    responses=error_responses(ThreadNotFound, ForkPointNotInHistory),
)
async def fork_thread(
    thread_id: str,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
    body: ThreadFork | None = None,
) -> ThreadOut:
    """A new thread that starts from this thread's history up to and including `at_run_id`
    (default: its last completed run): its runs see those messages, this thread is not
    changed. `metadata` defaults to a copy of this thread's."""
    view = await service.fork_thread(
        session,
        settings=settings,
        account_id=principal.account_id,
        thread_id=thread_id,
        data=body or ThreadFork(),
    )
    return presenters.thread_out(view)


def _runtime(request: Request) -> Runtime:
    """The worker's runtime in a process that runs one (its registered models included), else
    one built on first use for compaction requests (an API-only process never imports
    pydantic-ai before it needs it)."""
    state = request.app.state
    if state.workers is not None:
        runtime: Runtime = state.workers.runtime
        return runtime
    if getattr(state, "compaction_runtime", None) is None:
        from atrium.runtime.executor import Runtime

        state.compaction_runtime = Runtime(state.settings)
    made: Runtime = state.compaction_runtime
    return made


@router.post(
    "/{thread_id}/compact",
    response_model=ThreadCompaction,
    responses=error_responses(ThreadNotFound, ThreadBusy, CompactionModelFailed),
)
async def compact_thread(
    thread_id: str,
    request: Request,
    db: DatabaseDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
) -> ThreadCompaction:
    """Summarise the thread's history now, but for its newest runs (those that fit in half
    the budget), with the model of its newest run: the model is given the summary in place of
    what it covers from the next run on; the originals stay listed with `compacted: true`. A
    thread with a queued, running or waiting run is a 409 `THREAD_BUSY`."""
    summary = await service.compact_thread(
        db,
        runtime=_runtime(request),
        settings=settings,
        account_id=principal.account_id,
        thread_id=thread_id,
    )
    if summary is None:
        return ThreadCompaction(thread_id=thread_id, compacted=False)
    return ThreadCompaction(
        thread_id=thread_id,
        compacted=True,
        summary_id=summary.id,
        text=summary.text,
        through_run_id=summary.through_run_id,
        billing=SummaryBilling(
            credits=summary.credits_micro / 1_000_000,
            input_tokens=summary.input_tokens,
            output_tokens=summary.output_tokens,
        ),
    )


@router.delete("/{thread_id}", response_model=ThreadDeleted, responses=_THREAD_NOT_FOUND)
async def delete_thread(
    thread_id: str, db: DatabaseDep, principal: CurrentPrincipal, broker: BrokerDep
) -> ThreadDeleted:
    """Delete the thread with its runs, their events, artifacts and webhook deliveries, and its
    summaries; usage stays (billing). Its unfinished runs are cancelled first: a running one
    is given a few seconds to stop and record its usage."""
    deleted = await service.delete_thread(
        db, broker=broker, account_id=principal.account_id, thread_id=thread_id
    )
    return ThreadDeleted(id=deleted)
