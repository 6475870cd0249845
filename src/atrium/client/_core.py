"""What the sync and async clients share: configuration, requests as data, response parsing,
error mapping, the 429 and dropped-connection retry policies and the bookkeeping that resumes an
event stream."""

from __future__ import annotations

import hashlib
import json
import os
import random
import re
import uuid
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from typing import IO, Any, Generic, TypeVar
from urllib.parse import unquote

import httpx
from httpx_sse import ServerSentEvent
from pydantic import BaseModel, TypeAdapter

from atrium.client.errors import (
    STATUS_ERRORS,
    APIError,
    ChecksumMismatchError,
    ConfigurationError,
    RateLimitError,
    ServerError,
    StreamError,
)
from atrium.client.records import RunEvent, parse_event
from atrium.kit.filenames import filename_problem

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)

DEFAULT_URL = "http://127.0.0.1:8000"
USER_AGENT = "atrium-python/0.1.0"
URL_ENV = "ATRIUM_URL"
API_KEY_ENV = "ATRIUM_API_KEY"

DOMAINS_PREFIX = "/api/v1"
RUNS_PREFIX = "/api/v1/public/agent/runs"
AGENTS_PREFIX = "/v1"
# Statuses after which re-opening an event stream is worth it.
RETRYABLE_STREAM_STATUSES = frozenset({429, 502, 503, 504})
# Methods whose request the server may have processed already and can take again with the same
# outcome (RFC 9110, 9.2.2); any other request is repeated only with an Idempotency-Key.
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "PUT", "DELETE", "OPTIONS"})
IDEMPOTENCY_HEADER = "Idempotency-Key"
# Transport errors that a second connection can get past: a pooled keep-alive connection the
# server closed as it was reused (uvicorn closes idle ones after 5 s), a refused or reset
# connection. A timeout is not among them: `timeout` bounds the caller's wait.
RETRYABLE_TRANSPORT_ERRORS = (httpx.NetworkError, httpx.RemoteProtocolError)


def no_api_key(argument: str) -> ConfigurationError:
    """The error of a client given no key; `argument` is how its user passes one: `api_key=` to
    the Python client, `--api-key` to the `atrium` commands."""
    return ConfigurationError(
        f"no API key: pass {argument} or set {API_KEY_ENV} "
        "(`atrium serve` prints one on first start; `atrium keys create` makes more)"
    )


@dataclass(frozen=True)
class Options:
    """Resolved client settings (see `Client` for what each one does)."""

    base_url: str
    api_key: str
    timeout: float
    rate_limit_retries: int
    max_retry_wait: float
    stream_reconnects: int
    stream_read_timeout: float
    connection_retries: int

    @classmethod
    def resolve(
        cls,
        *,
        base_url: str | None,
        api_key: str | None,
        timeout: float,
        rate_limit_retries: int,
        max_retry_wait: float,
        stream_reconnects: int,
        stream_read_timeout: float,
        connection_retries: int,
    ) -> Options:
        # The client is a separate program from the server: like most API clients it falls back
        # to its own environment variables when not given explicit values.
        url = base_url or os.environ.get(URL_ENV) or DEFAULT_URL
        key = api_key or os.environ.get(API_KEY_ENV)
        if not key:
            raise no_api_key("api_key=")
        if not key.isprintable() or " " in key:
            # Sent as it is, it would fail in the HTTP library as an illegal header, which
            # reads like an unreachable server; a pasted line or two is the usual cause.
            raise ConfigurationError(
                f"the API key holds spaces or line breaks: set {API_KEY_ENV} to the key alone "
                "(atr_…)"
            )
        if rate_limit_retries < 0 or stream_reconnects < 0 or connection_retries < 0:
            raise ConfigurationError("retry and reconnect counts must be >= 0")
        return cls(
            base_url=url.rstrip("/"),
            api_key=key,
            timeout=timeout,
            rate_limit_retries=rate_limit_retries,
            max_retry_wait=max_retry_wait,
            stream_reconnects=stream_reconnects,
            stream_read_timeout=stream_read_timeout,
            connection_retries=connection_retries,
        )

    def headers(self) -> dict[str, str]:
        return {
            "Authorization": f"Bearer {self.api_key}",
            "Accept": "application/json",
            "User-Agent": USER_AGENT,
        }

    def stream_timeout(self, remaining: float | None = None) -> httpx.Timeout:
        """Heartbeats arrive well within `stream_read_timeout`; silence longer than that is a
        dead connection, which the stream then resumes."""
        read = self.stream_read_timeout
        if remaining is not None:
            read = max(0.01, min(read, remaining))
        return httpx.Timeout(self.timeout, read=read)


@dataclass(frozen=True)
class Call(Generic[T]):
    """One API operation as data: the request to send and how to read a success response."""

    method: str
    path: str
    parse: Callable[[httpx.Response], T]
    params: Mapping[str, str | int] | None = None
    form: Mapping[str, str] | None = None
    json: Any = None
    headers: Mapping[str, str] = field(default_factory=dict)
    # A multipart upload: field name -> (filename, open binary file, content type). The file
    # is read from its start on each attempt (a 429 retried sends it again).
    files: Mapping[str, tuple[str, IO[bytes], str]] | None = None

    def request_kwargs(self) -> dict[str, Any]:
        kwargs: dict[str, Any] = {"headers": dict(self.headers)}
        if self.params:
            kwargs["params"] = dict(self.params)
        if self.files is not None:
            for _, source, _ in self.files.values():
                source.seek(0)
            kwargs["files"] = dict(self.files)
        elif self.form is not None:
            kwargs["data"] = dict(self.form)
        elif self.json is not None:
            kwargs["json"] = self.json
        return kwargs


# --- parsing --------------------------------------------------------------------------------------
def model(cls: type[M], *, key: str | None = None) -> Callable[[httpx.Response], M]:
    """Parse the body (or its member `key`) as `cls`."""

    def parse(response: httpx.Response) -> M:
        body = response.json()
        return cls.model_validate(body[key] if key is not None else body)

    return parse


def model_list(cls: type[M], *, key: str = "data") -> Callable[[httpx.Response], list[M]]:
    adapter = TypeAdapter(list[cls])  # type: ignore[valid-type]

    def parse(response: httpx.Response) -> list[M]:
        result: list[M] = adapter.validate_python(response.json()[key])
        return result

    return parse


def compact(**values: Any) -> dict[str, Any]:
    """The keyword arguments that were given (not None), dates as ISO 8601."""
    return {
        name: value.isoformat() if isinstance(value, date) else value
        for name, value in values.items()
        if value is not None
    }


def form(**values: Any) -> dict[str, str]:
    """Form fields: None is left out, everything else becomes text."""
    return {name: str(value) for name, value in values.items() if value is not None}


# --- errors and retries ---------------------------------------------------------------------------
def _header_float(response: httpx.Response, name: str) -> float | None:
    raw = response.headers.get(name)
    if raw is None:
        return None
    try:
        return float(raw)
    except ValueError:
        return None


def retry_after_seconds(response: httpx.Response) -> float | None:
    """`Retry-After` in seconds (delta-seconds or an HTTP date)."""
    seconds = _header_float(response, "retry-after")
    if seconds is not None:
        return max(0.0, seconds)
    raw = response.headers.get("retry-after")
    if raw:
        try:
            when = parsedate_to_datetime(raw)
        except (TypeError, ValueError):
            return None
        return max(0.0, (when - datetime.now(UTC)).total_seconds())
    return None


def reset_time(response: httpx.Response) -> datetime | None:
    """`X-RateLimit-Reset` (Unix epoch seconds) as an aware datetime."""
    epoch = _header_float(response, "x-ratelimit-reset")
    return datetime.fromtimestamp(epoch, UTC) if epoch is not None else None


def api_error(response: httpx.Response) -> APIError:
    """The exception for an error response (its body must have been read)."""
    code, message = f"HTTP_{response.status_code}", response.reason_phrase
    details: dict[str, Any] = {}
    try:
        body = response.json()
    except (json.JSONDecodeError, UnicodeDecodeError):
        body = None
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        error = body["error"]
        code = str(error.get("code") or code)
        message = str(error.get("message") or message)
        details = error.get("details") if isinstance(error.get("details"), dict) else {}
    elif response.text:
        message = response.text[:500]
    common: dict[str, Any] = {
        "status_code": response.status_code,
        "code": code,
        "details": details,
        "request_id": response.headers.get("x-request-id"),
        "headers": dict(response.headers),
    }
    if response.status_code == 429:
        limit = details.get("limit")
        return RateLimitError(
            message,
            reset_at=reset_time(response),
            retry_after=retry_after_seconds(response),
            limit=limit if isinstance(limit, int) else None,
            **common,
        )
    if response.status_code >= 500:
        return ServerError(message, **common)
    return STATUS_ERRORS.get(response.status_code, APIError)(message, **common)


def rate_limit_delay(response: httpx.Response, attempt: int, options: Options) -> float | None:
    """How long to sleep before retrying a 429, or None to give up and raise it."""
    if response.status_code != 429 or attempt >= options.rate_limit_retries:
        return None
    delay = retry_after_seconds(response)
    if delay is None:
        reset = reset_time(response)
        delay = max(0.0, (reset - datetime.now(UTC)).total_seconds()) if reset else 1.0
    return delay if delay <= options.max_retry_wait else None


def repeatable(method: str, headers: Mapping[str, str]) -> bool:
    """Whether sending the request again cannot do twice what it asks, even if the server
    processed the first one."""
    return method.upper() in IDEMPOTENT_METHODS or any(
        name.lower() == IDEMPOTENCY_HEADER.lower() for name in headers
    )


def connection_retry_delay(
    error: httpx.TransportError,
    *,
    method: str,
    headers: Mapping[str, str],
    failures: int,
    options: Options,
) -> float | None:
    """Seconds to sleep before sending a request again after it failed with `error` (the
    `failures`-th time in a row, from 0), or None to give up and raise: the budget is spent, the
    error is one a new connection does not cure, or the request is not safe to repeat."""
    if failures >= options.connection_retries:
        return None
    if not isinstance(error, RETRYABLE_TRANSPORT_ERRORS) or not repeatable(method, headers):
        return None
    # 0.25 s, 0.5 s, 1 s, ... capped at 4 s; the jitter spreads clients that lost their
    # connections at once (a server restart) over the interval instead of returning together.
    return min(0.25 * 2.0**failures, 4.0) * random.uniform(0.5, 1.0)


def generated_idempotency_key() -> str:
    """An Idempotency-Key for a call whose caller gave none: drawn once per call and sent with
    each of its attempts, so a retry after a dropped connection returns what the first attempt
    made instead of making it again."""
    return f"atrium-client-{uuid.uuid4().hex}"


# --- artifacts ------------------------------------------------------------------------------------
_FILENAME_STAR = re.compile(r"filename\*=UTF-8''([^;]+)", re.IGNORECASE)
_FILENAME = re.compile(r'filename="?([^";]+)"?', re.IGNORECASE)


def artifact_filename(response: httpx.Response, fallback: str) -> str:
    """The file name from `Content-Disposition`, reduced to a bare name (no directories); the
    fallback for a name the server must not send (a dot-file like `.bashrc`, `-rf`, ...: see
    `kit.filenames`)."""
    disposition = response.headers.get("content-disposition", "")
    match = _FILENAME_STAR.search(disposition)
    name = unquote(match.group(1)) if match else None
    if name is None:
        plain = _FILENAME.search(disposition)
        name = plain.group(1) if plain else None
    bare = Path((name or "").replace("\\", "/")).name
    return bare if filename_problem(bare) is None else fallback


class Download:
    """Writes an artifact to a temporary file and checks it against the announced SHA-256."""

    def __init__(self, response: httpx.Response, *, to: Path, artifact_id: str) -> None:
        to.mkdir(parents=True, exist_ok=True)
        self.path = to / artifact_filename(response, artifact_id)
        self.partial = self.path.with_name(self.path.name + ".part")
        etag = response.headers.get("etag", "").strip('"')
        self.expected = etag if re.fullmatch(r"[0-9a-f]{64}", etag) else None
        self.digest = hashlib.sha256()
        self.file = self.partial.open("wb")

    def write(self, chunk: bytes) -> None:
        self.digest.update(chunk)
        self.file.write(chunk)

    def finish(self) -> Path:
        self.file.close()
        if self.expected is not None and self.digest.hexdigest() != self.expected:
            self.partial.unlink(missing_ok=True)
            raise ChecksumMismatchError(f"{self.path.name}: SHA-256 differs from the server's")
        self.partial.replace(self.path)
        return self.path

    def abort(self) -> None:
        self.file.close()
        self.partial.unlink(missing_ok=True)


# --- event streams --------------------------------------------------------------------------------
class StreamEnded(Exception):
    """The server closed the stream before the run's terminal event."""


class RetryableStatus(Exception):
    def __init__(self, error: APIError, delay: float | None) -> None:
        super().__init__(str(error))
        self.error = error
        self.delay = delay


class Resume:
    """Where a run's event stream stands: the last event seen, so a reconnect sends it as
    `Last-Event-ID` and every event reaches the caller exactly once, and the reconnect budget
    (consecutive failures without a new event)."""

    def __init__(self, *, run_id: str, last_event_id: int | None, options: Options) -> None:
        self.run_id = run_id
        self.last_id = last_event_id or 0
        self.options = options
        self.finished = False
        self.failures = 0
        self.reconnects = 0
        self.retry_ms: int | None = None

    @property
    def path(self) -> str:
        return f"{RUNS_PREFIX}/{self.run_id}/events"

    def headers(self) -> dict[str, str]:
        headers = {"Authorization": f"Bearer {self.options.api_key}", "User-Agent": USER_AGENT}
        if self.last_id:
            headers["Last-Event-ID"] = str(self.last_id)
        return headers

    def check(self, response: httpx.Response) -> None:
        """Raise for an error response (read first); retryable statuses become a reconnect."""
        if response.status_code < 400:
            return
        error = api_error(response)
        if response.status_code in RETRYABLE_STREAM_STATUSES:
            raise RetryableStatus(error, retry_after_seconds(response))
        raise error

    def accept(self, sse: ServerSentEvent) -> RunEvent | None:
        """The typed event for a frame, or None for heartbeats and already-seen events."""
        if sse.retry is not None:
            self.retry_ms = sse.retry
        # isascii: str.isdigit also accepts "²", which int() refuses.
        if not sse.data or not sse.event or not (sse.id.isascii() and sse.id.isdigit()):
            return None
        event_id = int(sse.id)
        if event_id <= self.last_id:
            return None
        event = parse_event(event_id, sse.event, json.loads(sse.data))
        self.last_id = event_id
        self.failures = 0
        self.finished = event.terminal
        return event

    def backoff(self, error: BaseException) -> float:
        """Seconds to wait before reconnecting after `error`; raise when the budget is spent."""
        self.failures += 1
        if self.failures > self.options.stream_reconnects:
            if isinstance(error, RetryableStatus):
                raise error.error
            raise StreamError(
                f"event stream of {self.run_id} dropped and could not be resumed "
                f"({self.failures - 1} reconnects): {error!r}",
                run_id=self.run_id,
                last_event_id=self.last_id or None,
            ) from error
        self.reconnects += 1
        if isinstance(error, RetryableStatus) and error.delay is not None:
            return min(error.delay, self.options.max_retry_wait)
        base = self.retry_ms / 1000 if self.retry_ms is not None else 0.25
        # The first reconnect is immediate-ish; later ones back off, capped.
        return float(min(base * 2 ** (self.failures - 1), 5.0))
