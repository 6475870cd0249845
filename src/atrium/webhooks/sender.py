"""The delivery loop: claim due deliveries with a lease, POST them signed, record the outcome.

Run by every worker pool (`atrium serve` with its worker, `atrium worker`). No transaction is
open during an HTTP call: claim (one short write), send, record (one short write). A sender that
dies mid-attempt leaves the lease to expire, and the delivery is sent again with the same
`webhook-id` (at least once).
"""

from __future__ import annotations

import asyncio
import logging
import random
import time
from datetime import datetime, timedelta
from functools import partial
from typing import Protocol
from urllib.parse import urlsplit

import httpx
from sqlalchemy import func
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.batcher import WriteBatcher
from atrium.db.engine import Database
from atrium.kit.time import as_utc, utcnow
from atrium.kit.wait_event import wait_event
from atrium.observability.logs import escape_control
from atrium.outbound.pinned_client import outbound_client
from atrium.outbound.public_targets import TargetRefused
from atrium.secrets_at_rest import SecretBox, SecretsUnavailable
from atrium.settings import Settings
from atrium.webhooks import outbox, repository, signing
from atrium.webhooks.repository import DueDelivery

log = logging.getLogger("atrium.webhooks")
STORED_BODY_CHARS = 1024
LOGGED_BODY_CHARS = 256
# A lease outlives the longest attempt, so only a dead sender's deliveries are taken over.
_LEASE_MARGIN_SECONDS = 30.0
# Jitter from a generator of our own: the process-wide `random` state belongs to the host
# program (drawing from it in the background broke Hypothesis's determinism in the fuzz tests).
_jitter = random.Random()
# Retention: finished deliveries past `webhook_retention_days` are deleted at start-up and then
# hourly, in batches, each its own short write transaction so run writes keep flowing.
_PURGE_EVERY_SECONDS = 3600.0
_PURGE_BATCH = 1000


def backoff_seconds(settings: Settings, attempts: int) -> float:
    """The wait after the `attempts`-th failed attempt: exponential, capped, ±10% jitter."""
    delay = settings.webhook_backoff_seconds * settings.webhook_backoff_factor ** (attempts - 1)
    return float(min(settings.webhook_backoff_max_seconds, delay * _jitter.uniform(0.9, 1.1)))


class RenderPayload(Protocol):
    """The body of a run's delivery (the runs package passes its own in, see `WorkerPool`:
    webhooks sit below runs and never import them)."""

    async def __call__(self, *, account_id: int, run_id: str) -> str: ...


class WebhookSender:
    """Sends up to `webhook_concurrency` deliveries at once from this process."""

    def __init__(
        self,
        *,
        settings: Settings,
        db: Database,
        batcher: WriteBatcher,
        lock_rows: bool,
        render: RenderPayload,
    ) -> None:
        self.settings = settings
        self.render = render
        self.db = db
        self.batcher = batcher
        self.lock_rows = lock_rows
        self._box = SecretBox.of(settings)
        self._wake = asyncio.Event()
        self._loop_task: asyncio.Task[None] | None = None
        self._purge_task: asyncio.Task[None] | None = None
        self._sends: set[asyncio.Task[None]] = set()
        self._http: httpx.AsyncClient | None = None
        # When the earliest pending retry is due, as last read: the loop sleeps until then
        # (or the poll interval, or a wake-up), so retries keep their schedule.
        self._next_due: datetime | None = None

    def start(self) -> None:
        # Each connection is checked and pinned to a public address (docs/design.md#outbound);
        # redirects are not followed, no proxy from the environment sees signed payloads.
        self._http = outbound_client(
            self.settings,
            timeout=self.settings.webhook_timeout_seconds,
            max_connections=self.settings.webhook_concurrency,
        )
        outbox.register_waker(self)
        self._loop_task = asyncio.create_task(self._loop(), name="atrium-webhooks")
        if self.settings.webhook_retention_days > 0:
            self._purge_task = asyncio.create_task(
                self._purge_loop(), name="atrium-webhook-retention"
            )

    async def stop(self) -> None:
        """Stop sending; an attempt cut off here is sent again once its lease expires."""
        outbox.unregister_waker(self)
        loops = [task for task in (self._loop_task, self._purge_task) if task is not None]
        tasks = [*self._sends, *loops]
        for task in tasks:
            task.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)
        if self._http is not None:
            await self._http.aclose()

    def wake(self) -> None:
        self._wake.set()

    async def _loop(self) -> None:
        while True:
            self._wake.clear()
            free = self.settings.webhook_concurrency - len(self._sends)
            if free > 0:
                try:
                    claimed = await self._claim(free)
                except Exception:
                    log.exception("claiming webhook deliveries failed; retrying")
                    await asyncio.sleep(1.0)
                    continue
                for delivery in claimed:
                    task = asyncio.create_task(self._deliver(delivery), name="atrium-webhook")
                    self._sends.add(task)
                    task.add_done_callback(self._done)
            wait = self.settings.webhook_poll_seconds
            if self._next_due is not None:
                until = (as_utc(self._next_due) - utcnow()).total_seconds()
                wait = min(wait, max(until, 0.01))
            await wait_event(self._wake, wait)

    async def _purge_loop(self) -> None:
        while True:
            try:
                await self.purge_expired()
            except Exception:  # the next purge catches up
                log.exception("deleting old webhook deliveries failed; trying again later")
            await asyncio.sleep(_PURGE_EVERY_SECONDS)

    async def purge_expired(self) -> int:
        """Delete the delivered and failed deliveries older than the retention; how many."""
        days = self.settings.webhook_retention_days
        if days <= 0:
            return 0
        cutoff = utcnow() - timedelta(days=days)
        total = 0
        while True:
            deleted = await self.batcher.write(
                partial(repository.purge_finished, created_before=cutoff, limit=_PURGE_BATCH)
            )
            total += deleted
            if deleted < _PURGE_BATCH:
                break
        if total:
            log.info("deleted %d webhook deliveries older than %g days", total, days)
        return total

    def _done(self, task: asyncio.Task[None]) -> None:
        self._sends.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("a webhook delivery task failed", exc_info=task.exception())
        self._wake.set()  # a slot is free

    async def _claim(self, limit: int) -> list[DueDelivery]:
        now = utcnow()
        async with self.db.session(write=False) as session:
            self._next_due = await repository.next_attempt_at(session, now=now)
        if self._next_due is None or as_utc(self._next_due) > now:
            return []
        self._next_due = None
        lease = self.settings.webhook_timeout_seconds + _LEASE_MARGIN_SECONDS
        lock_rows = self.lock_rows

        async def write(session: AsyncSession) -> list[DueDelivery]:
            now = utcnow()
            return await repository.claim_due(
                session,
                now=now,
                lease_until=now + timedelta(seconds=lease),
                limit=limit,
                lock_rows=lock_rows,
            )

        return await self.batcher.write(write)

    async def _deliver(self, delivery: DueDelivery) -> None:
        attempt = delivery.attempts + 1
        status: int | None = None
        body = ""
        error: str | None = None
        payload = delivery.payload
        try:
            if payload is None and delivery.run_id is not None:
                payload = await self.render(account_id=delivery.account_id, run_id=delivery.run_id)
            if payload is None:  # pragma: no cover - a delivery without a run has its payload
                raise TargetRefused("nothing to send")
            if delivery.secret is None:  # pragma: no cover - every delivery has a signer
                raise TargetRefused("no signing secret")
            secret = signing.opened(delivery.secret, self._box)
            # The whole attempt is bounded, lookup included: a trickling server cannot hold it.
            async with asyncio.timeout(self.settings.webhook_timeout_seconds):
                status, body = await self._post(delivery, payload, secret)
        except SecretsUnavailable as exc:
            error = f"signing secret unavailable: {exc}"
        except TargetRefused as exc:
            error = f"target refused: {exc}"
        except TimeoutError:
            error = f"timed out after {self.settings.webhook_timeout_seconds:g} s"
        except httpx.HTTPError as exc:
            error = f"{type(exc).__name__}: {exc}"[:STORED_BODY_CHARS]
        except Exception:  # a failed attempt like any other, retried on the same schedule
            log.exception("webhook %s attempt %d failed", delivery.delivery_id, attempt)
            error = "internal error"
        delivered = status is not None and 200 <= status < 300
        if status is not None and not delivered:
            error = f"HTTP {status}"
        # The receiver's reply is outside input: escaped here as well as by the log factory,
        # so the line stays one clean line whatever logging set-up prints it.
        log.info(
            "webhook %s attempt %d to %s: %s %s",
            delivery.delivery_id,
            attempt,
            urlsplit(delivery.url).hostname,
            status if status is not None else "-",
            escape_control((body if status is not None else error or "")[:LOGGED_BODY_CHARS]),
        )
        await self._record(delivery, attempt, payload, status, body, error, delivered)

    async def _post(self, delivery: DueDelivery, payload: str, secret: str) -> tuple[int, str]:
        assert self._http is not None
        content = payload.encode()
        headers = signing.headers(
            secret, msg_id=delivery.delivery_id, timestamp=int(time.time()), body=content
        )
        async with self._http.stream(
            "POST", delivery.url, content=content, headers=headers
        ) as response:
            received = bytearray()
            async for chunk in response.aiter_bytes():
                received.extend(chunk)
                if len(received) >= STORED_BODY_CHARS * 4:
                    break  # enough for the log; the rest is never read
        text = received.decode("utf-8", "replace")[:STORED_BODY_CHARS]
        return response.status_code, text.replace("\x00", "")

    async def _record(
        self,
        delivery: DueDelivery,
        attempt: int,
        payload: str | None,
        status: int | None,
        body: str,
        error: str | None,
        delivered: bool,
    ) -> None:
        now = utcnow()
        values: repository.AttemptOutcome = {
            "payload": func.coalesce(repository.DELIVERY_PAYLOAD, payload),
            "last_response_status": status,
            "last_response_body": body if status is not None else None,
            "last_error": error,
        }
        if delivered:
            values |= {"status": "delivered", "delivered_at": now, "next_attempt_at": None}
        elif attempt >= self.settings.webhook_max_attempts:
            values |= {"status": "failed", "next_attempt_at": None}
        else:
            values["next_attempt_at"] = now + timedelta(
                seconds=backoff_seconds(self.settings, attempt)
            )

        async def write(session: AsyncSession) -> None:
            await repository.record_attempt(
                session, delivery_id=delivery.delivery_id, values=values
            )

        await self.batcher.write(write)
