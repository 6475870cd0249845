"""`AsyncClient`: the asyncio client."""

from __future__ import annotations

import asyncio
import builtins
import io
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Collection, Mapping, Sequence
from contextlib import asynccontextmanager
from datetime import date
from pathlib import Path
from types import TracebackType
from typing import Any, Generic, Literal, Protocol, TypeVar, Unpack

import httpx
from httpx_sse import aconnect_sse
from pydantic import BaseModel

from atrium.client import _calls as calls
from atrium.client import _evals as evals
from atrium.client._calls import ListFilters, ScheduleChanges
from atrium.client._core import (
    Call,
    Download,
    Options,
    Resume,
    RetryableStatus,
    StreamEnded,
    api_error,
    connection_retry_delay,
    rate_limit_delay,
)
from atrium.client._hooks import acall_hook, acall_user, amap_bounded
from atrium.client.errors import APIConnectionError, WaitTimeoutError
from atrium.client.records import (
    Account,
    Agent,
    AgentAlias,
    AgentDeleted,
    AgentVersion,
    AgentVersionDiff,
    AgentVersionPage,
    AliasDeleted,
    Artifact,
    Block,
    BlockDeleted,
    BlockPage,
    BlockVersion,
    Deleted,
    DeliveryPage,
    Domain,
    Eval,
    EvalDeleted,
    EvalPage,
    EvalSummary,
    File,
    FileDeleted,
    FilePage,
    IfBusy,
    MemoryHistoryEntry,
    MemoryItem,
    MemoryItemDeleted,
    MemoryItemPage,
    Page,
    PendingToolCall,
    Provider,
    ProviderDeleted,
    ProviderList,
    Run,
    RunEvent,
    RunPage,
    Schedule,
    ScheduleDeleted,
    ScheduleFiring,
    ScheduleFiringPage,
    ScheduleNextFirings,
    SchedulePage,
    ScheduleUsage,
    Space,
    Thread,
    ThreadCompaction,
    ThreadDeleted,
    ThreadMessage,
    ThreadMessagePage,
    ThreadPage,
    UsageReport,
    Webhook,
    WebhookDeleted,
    WebhookDelivery,
)

T = TypeVar("T")
R = TypeVar("R", bound=BaseModel)
ReconnectHook = Callable[[int, BaseException], None]


# The type an upload is sent with: the server sniffs the real one from its bytes.
_OCTET_STREAM = "application/octet-stream"


class AsyncClient:
    """The asyncio client of every group of an atrium server.

    `base_url` defaults to `$ATRIUM_URL` (else `http://127.0.0.1:8000`), `api_key` to
    `$ATRIUM_API_KEY`. With `rate_limit_retries=N`, a 429 is retried up to N times after the
    server's `Retry-After` (when that is at most `max_retry_wait` seconds). Event streams
    reconnect up to `stream_reconnects` times in a row, resuming with `Last-Event-ID`; a stream
    silent for `stream_read_timeout` seconds (heartbeats included) counts as dropped. A request
    whose connection failed (refused, reset, or closed by the server before it answered) is sent
    again up to `connection_retries` times, after 0.25 s, 0.5 s, ... (with jitter), when that is
    safe: a GET, HEAD, PUT, DELETE or OPTIONS, or a request with an Idempotency-Key, which
    `runs.create` and `runs.submit_actions` draw when not given one; any other POST is not
    repeated, since the server may have processed it. A timeout is not retried.
    """

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        timeout: float = 30.0,
        rate_limit_retries: int = 0,
        max_retry_wait: float = 60.0,
        stream_reconnects: int = 10,
        stream_read_timeout: float = 60.0,
        connection_retries: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.options = Options.resolve(
            base_url=base_url,
            api_key=api_key,
            timeout=timeout,
            rate_limit_retries=rate_limit_retries,
            max_retry_wait=max_retry_wait,
            stream_reconnects=stream_reconnects,
            stream_read_timeout=stream_read_timeout,
            connection_retries=connection_retries,
        )
        self._http = httpx.AsyncClient(
            base_url=self.options.base_url,
            headers=self.options.headers(),
            timeout=timeout,
            transport=transport,
        )
        self.domains = Domains(self)
        self.spaces = Spaces(self)
        self.agents = Agents(self)
        self.analytics = Analytics(self)
        self.runs = Runs(self)
        self.threads = Threads(self)
        self.files = Files(self)
        self.webhooks = Webhooks(self)
        self.providers = Providers(self)
        self.schedules = Schedules(self)
        self.memory = Memory(self)
        self.blocks = Blocks(self)
        self.evals = Evals(self)

    async def account(self) -> Account:
        """The account and key tier this client's API key acts for."""
        return await self.send(calls.get_account())

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()

    # --- plumbing ---------------------------------------------------------------------------------
    async def send(self, call: Call[T]) -> T:
        """Send one operation; raise its `APIError`; retry 429s when enabled, and a failed
        connection when the request is safe to repeat."""
        attempt = failures = 0
        while True:
            try:
                response = await self._http.request(call.method, call.path, **call.request_kwargs())
            except httpx.TransportError as exc:
                delay = connection_retry_delay(
                    exc,
                    method=call.method,
                    headers=call.headers,
                    failures=failures,
                    options=self.options,
                )
                if delay is None:
                    raise _connection_error(call.method, call.path, exc, failures) from exc
                failures += 1
            else:
                if response.is_success:
                    return call.parse(response)
                delay = rate_limit_delay(response, attempt, self.options)
                if delay is None:
                    raise api_error(response)
                attempt += 1
            await asyncio.sleep(delay)

    @asynccontextmanager
    async def _open(self, path: str, headers: dict[str, str]) -> AsyncIterator[httpx.Response]:
        """A streamed GET with the same error, 429 and connection retry handling as `send`; once
        the response is handed over, a connection lost while it is read raises at once."""
        attempt = failures = 0
        opened = False
        while True:
            try:
                async with self._http.stream("GET", path, headers=headers) as response:
                    if response.is_success:
                        opened = True
                        yield response
                        return
                    await response.aread()
            except httpx.TransportError as exc:
                delay = None
                if not opened:
                    delay = connection_retry_delay(
                        exc, method="GET", headers=headers, failures=failures, options=self.options
                    )
                if delay is None:
                    raise _connection_error("GET", path, exc, failures) from exc
                failures += 1
            else:
                delay = rate_limit_delay(response, attempt, self.options)
                if delay is None:
                    raise api_error(response)
                attempt += 1
            await asyncio.sleep(delay)

    async def _events(
        self,
        run_id: str,
        *,
        last_event_id: int | None,
        on_reconnect: ReconnectHook | None,
        deadline: float | None,
    ) -> AsyncIterator[RunEvent]:
        state = Resume(run_id=run_id, last_event_id=last_event_id, options=self.options)
        started = time.monotonic()
        while True:
            remaining = None if deadline is None else deadline - time.monotonic()
            error: BaseException
            try:
                async with aconnect_sse(
                    self._http,
                    "GET",
                    state.path,
                    headers=state.headers(),
                    timeout=self.options.stream_timeout(remaining),
                ) as source:
                    if source.response.status_code >= 400:
                        await source.response.aread()
                        state.check(source.response)
                    async for sse in source.aiter_sse():
                        if deadline is not None and time.monotonic() >= deadline:
                            raise WaitTimeoutError(
                                f"run {run_id} is not finished",
                                run_id=run_id,
                                waited=time.monotonic() - started,
                            )
                        event = state.accept(sse)
                        if event is not None:
                            yield event
                            if state.finished:
                                return
                error = StreamEnded("the server closed the stream before the run finished")
            except (httpx.TransportError, RetryableStatus) as exc:
                error = exc
            if deadline is not None and time.monotonic() >= deadline:
                raise WaitTimeoutError(
                    f"run {run_id} is not finished",
                    run_id=run_id,
                    waited=time.monotonic() - started,
                ) from error
            delay = state.backoff(error)
            if on_reconnect is not None:
                on_reconnect(state.last_id, error)
            await asyncio.sleep(delay)


def _connection_error(
    method: str, path: str, error: httpx.TransportError, retries: int
) -> APIConnectionError:
    tried = f" (sent {retries + 1} times)" if retries else ""
    return APIConnectionError(f"{method} {path}: {error!r}{tried}")


class _CursorPage(Protocol):
    @property
    def has_more(self) -> bool: ...
    @property
    def next_cursor(self) -> str | None: ...


P = TypeVar("P", bound=_CursorPage)


class _Resource:
    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def _pages(self, page_at: Callable[[str | None], Call[P]]) -> AsyncIterator[P]:
        """Every page of a cursor-paged list, in its order: `page_at(cursor)` is the call of
        the page at `cursor` (None: the first)."""
        cursor: str | None = None
        while True:
            page = await self._client.send(page_at(cursor))
            yield page
            if not page.has_more or page.next_cursor is None:
                return
            cursor = page.next_cursor


class _Records(_Resource, Generic[R]):
    """List, page through and iterate phpShort records (domains, spaces)."""

    _calls: calls.RecordCalls[R]

    async def list(self, *, page: int | None = None, **filters: Unpack[ListFilters]) -> Page[R]:
        """One page: search by name, sort by id (date created) or name, 10/25/50/100 a page
        (`search`, `search_by`, `sort_by`, `sort`, `per_page`)."""
        return await self._client.send(self._calls.list(page, **filters))

    async def iter_pages(self, **filters: Unpack[ListFilters]) -> AsyncIterator[Page[R]]:
        """Every page, from the first to the last."""
        number = 1
        while True:
            current = await self.list(page=number, **filters)
            yield current
            if not current.has_next:
                return
            number = current.meta.current_page + 1

    async def iter_all(self, **filters: Unpack[ListFilters]) -> AsyncIterator[R]:
        """Every record matching the filters, across all pages."""
        async for current in self.iter_pages(**filters):
            for record in current.data:
                yield record


class Domains(_Records[Domain]):
    """`/api/v1/domains` (phpShort's API): form bodies, Laravel pages."""

    _calls = calls.domains

    async def get(self, domain_id: int) -> Domain:
        return await self._client.send(self._calls.get(domain_id))

    async def create(
        self, name: str, *, index_page: str | None = None, not_found_page: str | None = None
    ) -> Domain:
        fields = {"name": name, "index_page": index_page, "not_found_page": not_found_page}
        return await self._client.send(self._calls.create(**fields))

    async def update(
        self, domain_id: int, *, index_page: str | None = None, not_found_page: str | None = None
    ) -> Domain:
        """Change the redirect targets; None leaves one as it is, "" clears it."""
        fields = {"index_page": index_page, "not_found_page": not_found_page}
        return await self._client.send(self._calls.update(domain_id, **fields))

    async def delete(self, domain_id: int) -> Deleted:
        return await self._client.send(self._calls.delete(domain_id))

    async def verify(self, domain_id: int) -> Domain:
        """Ask DNS for the proof of control: `verified` says whether the domain is now served,
        `verification.last_error` why not, and `verification` what to publish."""
        return await self._client.send(self._calls.verify(domain_id))


class Spaces(_Records[Space]):
    """`/api/v1/spaces` (phpShort's API): form bodies, Laravel pages."""

    _calls = calls.spaces

    async def get(self, space_id: int) -> Space:
        return await self._client.send(self._calls.get(space_id))

    async def create(self, name: str, *, color: int | None = None) -> Space:
        return await self._client.send(self._calls.create(name=name, color=color))

    async def update(
        self, space_id: int, *, name: str | None = None, color: int | None = None
    ) -> Space:
        return await self._client.send(self._calls.update(space_id, name=name, color=color))

    async def delete(self, space_id: int) -> Deleted:
        return await self._client.send(self._calls.delete(space_id))


class Agents(_Resource):
    """`/v1/agents`."""

    async def list(self) -> list[Agent]:
        return await self._client.send(calls.list_agents())

    async def create(
        self,
        name: str,
        *,
        description: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> Agent:
        """`config` keys: model, temperature, instructions, max_output_tokens, tools."""
        return await self._client.send(calls.create_agent(name, description, config))

    async def get(self, agent_id: str) -> Agent:
        return await self._client.send(calls.get_agent(agent_id))

    async def update(
        self,
        agent_id: str,
        *,
        name: str | None = None,
        description: str | None = None,
        config: Mapping[str, Any] | None = None,
    ) -> Agent:
        """Fields given replace the agent's; `config` keys given replace only those keys."""
        return await self._client.send(calls.update_agent(agent_id, name, description, config))

    async def delete(self, agent_id: str) -> AgentDeleted:
        return await self._client.send(calls.delete_agent(agent_id))

    async def versions(
        self, agent_id: str, *, limit: int | None = None, cursor: str | None = None
    ) -> AgentVersionPage:
        """A page of the agent's versions, newest first."""
        return await self._client.send(calls.list_versions(agent_id, limit, cursor))

    async def iter_versions(
        self, agent_id: str, *, limit: int | None = None
    ) -> AsyncIterator[AgentVersion]:
        """Every version of the agent, newest first, page after page."""
        pages = self._pages(lambda cursor: calls.list_versions(agent_id, limit, cursor))
        async for page in pages:
            for version in page.data:
                yield version

    async def version(self, agent_id: str, version: int) -> AgentVersion:
        return await self._client.send(calls.get_version(agent_id, version))

    async def diff(self, agent_id: str, version: int, *, against: int) -> AgentVersionDiff:
        """The JSON Patch that turns version `against`'s config into version `version`'s."""
        return await self._client.send(calls.diff_versions(agent_id, version, against))

    async def restore(self, agent_id: str, version: int) -> AgentVersion:
        """Make version `version`'s config the agent's again: a new version, the live one (the
        live one itself when nothing changes)."""
        return await self._client.send(calls.restore_version(agent_id, version))

    async def aliases(self, agent_id: str) -> builtins.list[AgentAlias]:
        return await self._client.send(calls.list_aliases(agent_id))

    async def alias(self, agent_id: str, name: str) -> AgentAlias:
        return await self._client.send(calls.get_alias(agent_id, name))

    async def set_alias(
        self,
        agent_id: str,
        name: str,
        version: int,
        *,
        split_version: int | None = None,
        split_weight: float | None = None,
    ) -> AgentAlias:
        """Create or move the alias: runs of `agent_id@name` use `version`, or `split_version`
        for a `split_weight` share of them (0 to 1)."""
        call = calls.put_alias(agent_id, name, version, split_version, split_weight)
        return await self._client.send(call)

    async def delete_alias(self, agent_id: str, name: str) -> AliasDeleted:
        return await self._client.send(calls.delete_alias(agent_id, name))


class Analytics(_Resource):
    """`/v1/analytics`."""

    async def usage(
        self,
        *,
        start_date: date | str | None = None,
        end_date: date | str | None = None,
        agent_id: str | None = None,
    ) -> UsageReport:
        """Totals, every day of the range and every agent (default: the last 30 days)."""
        return await self._client.send(calls.usage(start_date, end_date, agent_id))


class Runs(_Resource):
    """`/api/v1/public/agent/runs`."""

    async def create(
        self,
        prompt: str,
        *,
        agent_id: str | None = None,
        thread_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        idempotency_key: str | None = None,
        webhook_url: str | None = None,
        config: Mapping[str, Any] | None = None,
        if_busy: IfBusy | None = None,
        input: Sequence[Mapping[str, Any]] | None = None,
    ) -> Run:
        """Queue a run. `input`: parts the model is given after the prompt, in order:
        `{"type": "text", "text": …}`, `{"type": "file", "file_id": …}` (or `"artifact_id"`),
        `{"type": "image", "file_id" | "artifact_id" | "url": …}` (`files.upload` makes a
        file). With `webhook_url`, the finished run is POSTed there, signed with the
        returned run's `webhook_secret` (shown only now). `config` (`model`, `temperature`,
        `instructions`, `max_output_tokens`, `output_schema`) applies to this run only.
        `if_busy` (with `thread_id`): when the thread has an unfinished run, `"enqueue"` this
        one behind it (the server's default), `"reject"` it (`ConflictError`, code
        `THREAD_BUSY`), or cancel that run first, keeping (`"interrupt"`) or dropping
        (`"rollback"`) what it produced in the thread's history."""
        return await self._client.send(
            calls.create_run(
                prompt,
                agent_id,
                thread_id,
                metadata,
                idempotency_key,
                webhook_url,
                config,
                if_busy,
                input,
            )
        )

    async def get(self, run_id: str) -> Run:
        return await self._client.send(calls.get_run(run_id))

    async def list(
        self,
        *,
        status: str | None = None,
        agent_id: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
        schedule_id: str | None = None,
        agent_version: int | None = None,
    ) -> RunPage:
        return await self._client.send(
            calls.list_runs(status, agent_id, thread_id, limit, cursor, schedule_id, agent_version)
        )

    async def iter_all(
        self,
        *,
        status: str | None = None,
        agent_id: str | None = None,
        thread_id: str | None = None,
        limit: int | None = None,
        schedule_id: str | None = None,
        agent_version: int | None = None,
    ) -> AsyncIterator[Run]:
        """Every run matching the filters, newest first, following the cursor."""
        async for page in self._pages(
            lambda cursor: calls.list_runs(
                status, agent_id, thread_id, limit, cursor, schedule_id, agent_version
            )
        ):
            for run in page.data:
                yield run

    async def cancel(self, run_id: str) -> Run:
        """Cancel a queued or running run (a finished one raises `ConflictError`)."""
        return await self._client.send(calls.cancel_run(run_id))

    async def events(self, run_id: str, *, after: int | None = None) -> builtins.list[RunEvent]:
        """The events so far, without following the stream."""
        return await self._client.send(calls.run_events(run_id, after))

    async def stream(
        self,
        run_id: str,
        *,
        last_event_id: int | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> AsyncIterator[RunEvent]:
        """Typed events from the start (or after `last_event_id`) until the terminal one.

        A dropped connection is resumed with `Last-Event-ID`, so each event is yielded exactly
        once; `on_reconnect(last_event_id, error)` is called before each reconnect.
        """
        async for event in self._client._events(
            run_id, last_event_id=last_event_id, on_reconnect=on_reconnect, deadline=None
        ):
            yield event

    async def wait(
        self,
        run_id: str,
        *,
        timeout: float | None = None,  # noqa: ASYNC109 - same API as the sync client
        on_event: Callable[[RunEvent], Awaitable[None] | None] | None = None,
        on_reconnect: ReconnectHook | None = None,
    ) -> Run:
        """Follow the event stream until the run finishes, or waits for its caller
        (`requires_action`: answer with `submit_actions`, or let `run_tools` do it); return the
        run as it is then."""
        deadline = None if timeout is None else time.monotonic() + timeout
        async for event in self._client._events(
            run_id, last_event_id=None, on_reconnect=on_reconnect, deadline=deadline
        ):
            if on_event is not None:
                await acall_hook(on_event, event)
            if event.event == "run.requires_action":
                # The stream replays earlier waits too: only a run still waiting is returned.
                run = await self.get(run_id)
                if run.waiting:
                    return run
        return await self.get(run_id)

    async def submit_actions(
        self,
        run_id: str,
        *,
        tool_outputs: Mapping[str, Any] | None = None,
        approvals: Mapping[str, bool] | None = None,
        reasons: Mapping[str, str] | None = None,
        idempotency_key: str | None = None,
        failed: Collection[str] = (),
    ) -> Run:
        """Answer every pending call of a `requires_action` run at once: `tool_outputs` maps a
        function call's id to its output, `approvals` an approval call's id to True (approve)
        or False (deny, with `reasons[id]` for the model). `failed`: the ids among
        `tool_outputs` whose output is the error the function raised (`is_error`; the
        function's `on_error` says whether the model reads it or the run fails). The run is
        queued again."""
        return await self._client.send(
            calls.submit_actions(
                run_id, tool_outputs, approvals, reasons, idempotency_key, failed=failed
            )
        )

    async def run_tools(
        self,
        run_id: str,
        tools: Mapping[str, Callable[..., Any]],
        *,
        approve: bool | Callable[[PendingToolCall], Any] = False,
        timeout: float | None = None,  # noqa: ASYNC109 - same API as the sync client
        on_event: Callable[[RunEvent], Awaitable[None] | None] | None = None,
    ) -> Run:
        """Be the run's function tools until it finishes: each time it waits, call
        `tools[name](**arguments)` for each function call (its return value is the output; an
        error it raises is sent as a failed output, `TypeName: message`, which the function's
        `on_error` hands to the model or ends the run with) and answer each approval with
        `approve` (a bool, or a function of the pending call returning one). Returns the
        finished run."""
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            remaining = None if deadline is None else max(0.0, deadline - time.monotonic())
            run = await self.wait(run_id, timeout=remaining, on_event=on_event)
            if not run.waiting or run.required_action is None:
                return run
            outputs: dict[str, Any] = {}
            failed: set[str] = set()
            approvals: dict[str, bool] = {}
            for call in run.required_action.tool_calls:
                if call.kind == "approval":
                    verdict = approve
                    if not isinstance(approve, bool):
                        verdict = await acall_user(approve, call)
                    approvals[call.id] = bool(verdict)
                    continue
                function = tools.get(call.name)
                try:
                    if function is None:
                        raise LookupError(f"the caller has no function {call.name!r}")
                    value = await acall_user(function, **calls.tool_arguments(call))
                except Exception as exc:  # the agent's on_error decides what it does
                    value = f"{type(exc).__name__}: {exc}"
                    failed.add(call.id)
                outputs[call.id] = calls.tool_output(value)
            await self.submit_actions(
                run_id,
                tool_outputs=outputs,
                approvals=approvals,
                reasons=calls.denial_reasons(approvals),
                # Retried after a dropped connection, the same answer is not sent twice.
                idempotency_key=calls.actions_key(run.required_action),
                failed=failed,
            )

    async def artifacts(self, run_id: str) -> builtins.list[Artifact]:
        return await self._client.send(calls.list_artifacts(run_id))

    async def artifact_content(self, run_id: str, artifact_id: str) -> bytes:
        return await self._client.send(calls.artifact_content(run_id, artifact_id))

    async def download_artifact(
        self, run_id: str, artifact_id: str, *, to: str | Path = "."
    ) -> Path:
        """Save one artifact into directory `to` under its own name; check its SHA-256."""
        path = calls.artifact_path(run_id, artifact_id)
        async with self._client._open(path, {"Accept": "*/*"}) as response:
            download = Download(response, to=Path(to), artifact_id=artifact_id)
            try:
                async for chunk in response.aiter_bytes():
                    download.write(chunk)
            except BaseException:
                download.abort()
                raise
            return download.finish()

    async def download_artifacts(self, run_id: str, *, to: str | Path = ".") -> builtins.list[Path]:
        """Save every artifact of the run into directory `to`."""
        return [
            await self.download_artifact(run_id, artifact.artifact_id, to=to)
            for artifact in await self.artifacts(run_id)
        ]


class Files(_Resource):
    """`/api/v1/public/files`: uploads to give runs (`runs.create(input=[…])`)."""

    async def upload(self, source: str | Path | bytes, *, filename: str | None = None) -> File:
        """Upload a file (a path, read as it is sent; or bytes with `filename`). The server
        sniffs its type from its bytes; a type not allowed, an empty file or one over its cap
        raises `InvalidParameterError`."""
        if isinstance(source, bytes):
            with io.BytesIO(source) as data:
                return await self._client.send(
                    calls.upload_file(filename or "upload", data, _OCTET_STREAM)
                )
        path = Path(source)
        # httpx reads a multipart file with blocking reads as it sends, whichever client.
        with path.open("rb") as opened:  # noqa: ASYNC230
            return await self._client.send(
                calls.upload_file(filename or path.name, opened, _OCTET_STREAM)
            )

    async def list(self, *, limit: int | None = None, cursor: str | None = None) -> FilePage:
        """A page of the account's files, newest first."""
        return await self._client.send(calls.list_files(limit, cursor))

    async def iter_all(self, *, limit: int | None = None) -> AsyncIterator[File]:
        """Every file, newest first, following the cursor."""
        async for page in self._pages(lambda cursor: calls.list_files(limit, cursor)):
            for file in page.data:
                yield file

    async def get(self, file_id: str) -> File:
        return await self._client.send(calls.get_file(file_id))

    async def content(self, file_id: str) -> bytes:
        return await self._client.send(calls.file_content(file_id))

    async def download(self, file_id: str, *, to: str | Path = ".") -> Path:
        """Save the file into directory `to` under its own name; check its SHA-256."""
        async with self._client._open(calls.file_path(file_id), {"Accept": "*/*"}) as response:
            download = Download(response, to=Path(to), artifact_id=file_id)
            try:
                async for chunk in response.aiter_bytes():
                    download.write(chunk)
            except BaseException:
                download.abort()
                raise
            return download.finish()

    async def delete(self, file_id: str) -> FileDeleted:
        """Delete the file and its bytes; runs given it keep their reference."""
        return await self._client.send(calls.delete_file(file_id))


class Threads(_Resource):
    """`/api/v1/public/threads`: conversations, their messages, forks."""

    async def create(self, *, metadata: Mapping[str, Any] | None = None) -> Thread:
        """A new, empty thread; give its `id` as the `thread_id` of its runs."""
        return await self._client.send(calls.create_thread(metadata))

    async def list(
        self,
        *,
        agent_id: str | None = None,
        metadata: Mapping[str, str] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> ThreadPage:
        """A page of threads, newest first: those with a run of `agent_id`, whose metadata has
        every key of `metadata` with that string value. `counts` is None in lists."""
        return await self._client.send(calls.list_threads(agent_id, metadata, limit, cursor))

    async def iter_all(
        self,
        *,
        agent_id: str | None = None,
        metadata: Mapping[str, str] | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[Thread]:
        """Every thread matching the filters, newest first, following the cursor."""
        async for page in self._pages(
            lambda cursor: calls.list_threads(agent_id, metadata, limit, cursor)
        ):
            for thread in page.data:
                yield thread

    async def get(self, thread_id: str) -> Thread:
        """The thread with its `status`, `last_run`, `counts` and `forked_from`."""
        return await self._client.send(calls.get_thread(thread_id))

    async def messages(
        self, thread_id: str, *, limit: int | None = None, cursor: str | None = None
    ) -> ThreadMessagePage:
        """A page of the conversation as the model is given it, oldest first."""
        return await self._client.send(calls.thread_messages(thread_id, limit, cursor))

    async def iter_messages(
        self, thread_id: str, *, limit: int | None = None
    ) -> AsyncIterator[ThreadMessage]:
        """Every item of the conversation, oldest first, following the cursor (`limit`: the
        page size)."""
        async for page in self._pages(
            lambda cursor: calls.thread_messages(thread_id, limit, cursor)
        ):
            for message in page.data:
                yield message

    async def fork(
        self,
        thread_id: str,
        *,
        at_run_id: str | None = None,
        metadata: Mapping[str, Any] | None = None,
    ) -> Thread:
        """A new thread whose history is this one's up to and including `at_run_id` (default:
        its last completed run); `metadata` defaults to a copy of the original's. The original
        is not changed."""
        return await self._client.send(calls.fork_thread(thread_id, at_run_id, metadata))

    async def compact(self, thread_id: str) -> ThreadCompaction:
        """Summarise the thread's history now, but for its newest runs, with the model of its
        newest run: its next runs are given the summary in place of what it covers. A thread
        with an unfinished run raises `ConflictError` (code `THREAD_BUSY`)."""
        return await self._client.send(calls.compact_thread(thread_id))

    async def delete(self, thread_id: str) -> ThreadDeleted:
        """Delete the thread with its runs, events, artifacts and summaries (usage stays); its
        unfinished runs are cancelled first."""
        return await self._client.send(calls.delete_thread(thread_id))


class Webhooks(_Resource):
    """`/v1/webhooks`: endpoints that receive the account's finished runs, signed."""

    async def create(self, url: str, *, events: list[str] | None = None) -> Webhook:
        """Register an endpoint; the returned `secret` is shown only this once."""
        return await self._client.send(calls.create_webhook(url, events))

    async def list(self) -> builtins.list[Webhook]:
        return await self._client.send(calls.list_webhooks())

    async def get(self, webhook_id: str) -> Webhook:
        return await self._client.send(calls.get_webhook(webhook_id))

    async def delete(self, webhook_id: str) -> WebhookDeleted:
        """Delete the endpoint and its deliveries (pending ones are never sent)."""
        return await self._client.send(calls.delete_webhook(webhook_id))

    async def deliveries(
        self,
        webhook_id: str | None = None,
        *,
        run_id: str | None = None,
        limit: int | None = None,
    ) -> builtins.list[WebhookDelivery]:
        """Deliveries newest first: of one endpoint, or all of the account's (`run_id` narrows
        them to one run, its own `webhook_url` included)."""
        return await self._client.send(calls.webhook_deliveries(webhook_id, run_id, limit))

    async def delivery_page(
        self,
        webhook_id: str | None = None,
        *,
        run_id: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> DeliveryPage:
        """One page of `deliveries`, with `has_more` and the `next_cursor` to pass as `cursor`
        for the next page."""
        return await self._client.send(
            calls.webhook_delivery_page(webhook_id, run_id, limit, cursor)
        )

    async def iter_deliveries(
        self,
        webhook_id: str | None = None,
        *,
        run_id: str | None = None,
        limit: int | None = None,
    ) -> AsyncIterator[WebhookDelivery]:
        """Every delivery (of one endpoint, or the account's), newest first, following the
        cursor page by page; `limit` is the page size."""
        async for page in self._pages(
            lambda cursor: calls.webhook_delivery_page(webhook_id, run_id, limit, cursor)
        ):
            for delivery in page.data:
                yield delivery


class Providers(_Resource):
    """`/v1/providers`: named OpenAI-compatible servers, which models address as
    `openai-compatible:<name>/<model>`. A provider is given by its id or its name."""

    async def create(
        self,
        name: str,
        base_url: str,
        *,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> Provider:
        """Add a server; `api_key` is sent as `Authorization: Bearer …`, `headers` with every
        request. Both are write-only: the server shows them as `"***"`."""
        return await self._client.send(calls.create_provider(name, base_url, api_key, headers))

    async def list(self) -> ProviderList:
        """The account's providers (`data`) and the names of the server's (`server_providers`)."""
        return await self._client.send(calls.list_providers())

    async def get(self, provider: str) -> Provider:
        return await self._client.send(calls.get_provider(provider))

    async def update(
        self,
        provider: str,
        *,
        name: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        headers: Mapping[str, str] | None = None,
        remove_api_key: bool = False,
    ) -> Provider:
        """Fields given replace the provider's (`headers` as a whole; `"***"` keeps a stored
        value). With a new `base_url`, give `api_key` and `headers` again (or remove them)."""
        return await self._client.send(
            calls.update_provider(provider, name, base_url, api_key, headers, remove_api_key)
        )

    async def delete(self, provider: str) -> ProviderDeleted:
        """Delete the provider; runs of agents that still name it fail."""
        return await self._client.send(calls.delete_provider(provider))


class Schedules(_Resource):
    """`/v1/schedules`: a prompt run at each fire time of a cron expression in a time zone,
    exactly once per fire time; every firing, fired or skipped, is listed."""

    async def create(
        self,
        prompt: str,
        cron: str,
        *,
        timezone: str | None = None,
        agent_id: str | None = None,
        thread: str | None = None,
        metadata: Mapping[str, Any] | None = None,
        config: Mapping[str, Any] | None = None,
        starts_at: str | None = None,
        ends_at: str | None = None,
        paused: bool | None = None,
        on_overlap: str | None = None,
        on_missed: str | None = None,
        max_credits_per_day: float | None = None,
    ) -> Schedule:
        """A schedule (`timezone` default UTC, `thread` default "new", `on_overlap` default
        skip, `on_missed` default run_once)."""
        body = calls.schedule_body(
            prompt=prompt,
            cron=cron,
            timezone=timezone,
            agent_id=agent_id,
            thread=thread,
            metadata=metadata,
            config=config,
            starts_at=starts_at,
            ends_at=ends_at,
            paused=paused,
            on_overlap=on_overlap,
            on_missed=on_missed,
            max_credits_per_day=max_credits_per_day,
        )
        return await self._client.send(calls.create_schedule(body))

    async def list(self, *, limit: int | None = None, cursor: str | None = None) -> SchedulePage:
        """A page of schedules, newest first."""
        return await self._client.send(calls.list_schedules(limit, cursor))

    async def iter_all(self, *, limit: int | None = None) -> AsyncIterator[Schedule]:
        """Every schedule, newest first, following the cursor."""
        async for page in self._pages(lambda cursor: calls.list_schedules(limit, cursor)):
            for schedule in page.data:
                yield schedule

    async def get(self, schedule_id: str) -> Schedule:
        return await self._client.send(calls.get_schedule(schedule_id))

    async def update(self, schedule_id: str, **changes: Unpack[ScheduleChanges]) -> Schedule:
        """The fields given replace the schedule's (the names of `create`'s parameters; None
        clears `metadata`, `config`, `starts_at`, `ends_at`, `max_credits_per_day`)."""
        return await self._client.send(calls.update_schedule(schedule_id, changes))

    async def delete(self, schedule_id: str) -> ScheduleDeleted:
        """Delete the schedule and its firings; its runs stay."""
        return await self._client.send(calls.delete_schedule(schedule_id))

    async def pause(self, schedule_id: str) -> Schedule:
        return await self._client.send(calls.pause_schedule(schedule_id))

    async def resume(self, schedule_id: str) -> Schedule:
        """Fire again from the next fire time on."""
        return await self._client.send(calls.resume_schedule(schedule_id))

    async def next(self, schedule_id: str, *, n: int | None = None) -> ScheduleNextFirings:
        """The next `n` (default 5) fire times by the schedule's rule."""
        return await self._client.send(calls.next_firings(schedule_id, n))

    async def trigger(self, schedule_id: str) -> ScheduleFiring:
        """Fire now, by the schedule's overlap and credit rules."""
        return await self._client.send(calls.trigger_schedule(schedule_id))

    async def firings(
        self,
        schedule_id: str,
        *,
        status: str | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> ScheduleFiringPage:
        """A page of the schedule's firings, latest fire time first."""
        return await self._client.send(calls.schedule_firings(schedule_id, status, limit, cursor))

    async def iter_firings(
        self, schedule_id: str, *, status: str | None = None, limit: int | None = None
    ) -> AsyncIterator[ScheduleFiring]:
        """Every firing, latest fire time first, following the cursor."""
        async for page in self._pages(
            lambda cursor: calls.schedule_firings(schedule_id, status, limit, cursor)
        ):
            for firing in page.data:
                yield firing

    async def usage(
        self,
        schedule_id: str,
        *,
        start_date: date | None = None,
        end_date: date | None = None,
    ) -> ScheduleUsage:
        """What the schedule's finished runs used, per UTC day (default: the last 30 days)."""
        return await self._client.send(calls.schedule_usage(schedule_id, start_date, end_date))


class Memory(_Resource):
    """`/v1/memory`: items agents and people remember across threads, with their history.

    A namespace is a list of segments or a text joining them with '/' (`"users/alice"`)."""

    async def put(
        self,
        namespace: str | Sequence[str],
        key: str,
        value: Any,
        *,
        text: str | None = None,
        ttl_seconds: int | None = None,
    ) -> MemoryItem:
        """Create the item under (`namespace`, `key`) or replace its value (same `item_id`);
        `text` is what search reads (default: the value's text), `ttl_seconds` its lifetime."""
        return await self._client.send(calls.put_memory(namespace, key, value, text, ttl_seconds))

    async def get(self, item_id: str) -> MemoryItem:
        """A live item (`NotFoundError` once deleted or expired)."""
        return await self._client.send(calls.get_memory(item_id))

    async def get_by_key(self, namespace: str | Sequence[str], key: str) -> MemoryItem:
        """The live item under (`namespace`, `key`)."""
        return await self._client.send(calls.get_memory_by_key(namespace, key))

    async def list(
        self,
        *,
        namespace_prefix: str | Sequence[str] | None = None,
        limit: int | None = None,
        cursor: str | None = None,
    ) -> MemoryItemPage:
        """A page of live items under `namespace_prefix` (default: all), newest first."""
        return await self._client.send(calls.list_memory(namespace_prefix, limit, cursor))

    async def iter_all(
        self, *, namespace_prefix: str | Sequence[str] | None = None, limit: int | None = None
    ) -> AsyncIterator[MemoryItem]:
        """Every live item under `namespace_prefix`, newest first, following the cursor."""
        async for page in self._pages(
            lambda cursor: calls.list_memory(namespace_prefix, limit, cursor)
        ):
            for item in page.data:
                yield item

    async def search(
        self,
        query: str,
        *,
        namespace_prefix: str | Sequence[str] | None = None,
        limit: int | None = None,
        filter: Mapping[str, Any] | None = None,
        mode: Literal["text", "semantic"] | None = None,
    ) -> builtins.list[MemoryItem]:
        """Live items whose text holds every word of `query` (`mode="semantic"`: nearest in
        meaning, when the server has an embeddings model), best first; `filter` keeps values
        holding each of its top-level fields with an equal value."""
        result = await self._client.send(
            calls.search_memory(query, namespace_prefix, limit, filter, mode)
        )
        return result.data

    async def delete(self, item_id: str) -> MemoryItemDeleted:
        """Forget the item; its history keeps the delete and who made it."""
        return await self._client.send(calls.delete_memory(item_id))

    async def history(self, item_id: str) -> builtins.list[MemoryHistoryEntry]:
        """Every write and delete of the item, newest first, each with its API key or its run
        and tool call (also after the item is deleted)."""
        return (await self._client.send(calls.memory_history(item_id))).data


class Blocks(_Resource):
    """`/v1/memory/blocks`: named, size-limited texts rendered into the runs of the agents whose
    `config.blocks` list them; every change is a version with who made it."""

    async def create(self, label: str, *, value: str = "", limit: int | None = None) -> Block:
        """A new block (`ConflictError` when the label is taken); `limit`: its most characters."""
        return await self._client.send(calls.create_block(label, value, limit))

    async def list(self, *, limit: int | None = None, cursor: str | None = None) -> BlockPage:
        """A page of the account's blocks, newest first."""
        return await self._client.send(calls.list_blocks(limit, cursor))

    async def iter_all(self, *, limit: int | None = None) -> AsyncIterator[Block]:
        """Every block, newest first, following the cursor."""
        async for page in self._pages(lambda cursor: calls.list_blocks(limit, cursor)):
            for block in page.data:
                yield block

    async def get(self, label: str) -> Block:
        return await self._client.send(calls.get_block(label))

    async def update(
        self,
        label: str,
        *,
        value: str | None = None,
        limit: int | None = None,
        if_version: int | None = None,
    ) -> Block:
        """Replace the text and/or the limit: a new version. With `if_version`, a block changed
        since that version raises `ConflictError` and nothing is written."""
        return await self._client.send(calls.update_block(label, value, limit, if_version))

    async def delete(self, label: str) -> BlockDeleted:
        return await self._client.send(calls.delete_block(label))

    async def history(self, label: str, *, limit: int | None = None) -> builtins.list[BlockVersion]:
        """Every version of the blocks that had the label, newest first (also after a delete),
        each with its API key or its run and tool call."""
        return [
            version
            async for page in self._pages(lambda cursor: calls.block_history(label, limit, cursor))
            for version in page.data
        ]


class Evals(_Resource):
    """`/v1/evals`, and `run`: a dataset's cases run on agents through the API, scored by
    their checks, stored side by side (docs/guide/evals.md)."""

    async def run(
        self,
        dataset: str | Path | evals.Dataset,
        *,
        agents: Sequence[str],
        concurrency: int = 4,
        timeout: float | None = 600.0,  # noqa: ASYNC109 - same API as the sync client
    ) -> Eval:
        """Run every case of `dataset` (a JSONL file, read and checked whole first: a bad line
        raises `DatasetError` naming it, and nothing runs) on every agent (`agt_…`,
        `agt_…@prod`, `agt_…@2` or `agt_…@v2`), at most `concurrency` runs at a time; score
        each with its checks (a `judge` check runs the judge agent); store the result and return
        it as the server has it (credits, latency and versions from the runs)."""
        loaded = dataset if isinstance(dataset, evals.Dataset) else evals.load_dataset(dataset)
        names = list(dict.fromkeys(agents))
        if not names:
            raise ValueError("evals.run needs at least one agent")
        jobs = [
            evals.Job(case_id, case, agent, timeout)
            for case_id, case in loaded.cases
            for agent in names
        ]
        outcomes = await amap_bounded(self._one, jobs, concurrency)
        return await self.store(evals.store_body(loaded, names, outcomes))

    async def _one(self, job: evals.Job) -> evals.Outcome:
        case = job.case
        made = await self._client.runs.create(
            case.prompt or "",
            agent_id=job.agent,
            input=case.input,
            metadata={"eval_case": job.case_id},
        )
        done = await self._client.runs.wait(made.run_id, timeout=job.timeout)
        outcome = evals.Outcome(job.case_id, job.agent, made.run_id)
        for check in case.checks:
            if isinstance(check, evals.JudgeCheck):
                outcome.checks.append(await self._judge(job, done.result, check))
            else:
                passed, reason = evals.score(check, done.result)
                outcome.checks.append({"type": check.type, "passed": passed, "reason": reason})
        return outcome

    async def _judge(
        self, job: evals.Job, result: str | dict[str, Any] | None, check: evals.JudgeCheck
    ) -> dict[str, Any]:
        made = await self._client.runs.create(
            evals.judge_prompt(job.case, result, check.criteria),
            agent_id=check.agent,
            config={"output_schema": evals.VERDICT_SCHEMA},
            metadata={"eval_case": job.case_id, "eval_judge_of": job.agent},
        )
        done = await self._client.runs.wait(made.run_id, timeout=job.timeout)
        passed, reason = evals.verdict(done.result)
        return {"type": "judge", "passed": passed, "reason": reason, "judge_run_id": made.run_id}

    async def store(self, body: Mapping[str, Any]) -> Eval:
        """Store an eval's results (what `run` sends)."""
        return await self._client.send(calls.store_eval(body))

    async def list(self, *, limit: int | None = None, cursor: str | None = None) -> EvalPage:
        """A page of the account's evals, newest first."""
        return await self._client.send(calls.list_evals(limit, cursor))

    async def iter_all(self, *, limit: int | None = None) -> AsyncIterator[EvalSummary]:
        """Every eval, newest first, following the cursor."""
        async for page in self._pages(lambda cursor: calls.list_evals(limit, cursor)):
            for summary in page.data:
                yield summary

    async def get(self, eval_id: str) -> Eval:
        return await self._client.send(calls.get_eval(eval_id))

    async def delete(self, eval_id: str) -> EvalDeleted:
        """Delete the eval; its runs stay."""
        return await self._client.send(calls.delete_eval(eval_id))
