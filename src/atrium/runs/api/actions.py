"""Rules of runs that wait for their caller (docs/design.md#requires-action): answering and
cancelling them.

A run in `requires_action` holds no lease and no worker slot; the caller's answer re-queues it
(`POST /agent/runs/{run_id}/actions`), and any worker resumes it from the database. The ways
out of a wait (an answer, a cancel, the expiry sweep of the workers) are transitions of
`runs.lifecycle`, each one conditional update, so exactly one of them wins.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import datetime
from typing import cast

from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import Run, RunStatus
from atrium.errors import InvalidParameter
from atrium.kit.json_depth import TOO_DEEP, too_deep
from atrium.kit.time import as_utc, isoformat, utcnow
from atrium.runs import lifecycle
from atrium.runs.api.errors import IdempotencyKeyReused, RunNotWaiting
from atrium.runs.api.schemas import RunActions
from atrium.runs.events.broker import Broker
from atrium.runs.lifecycle import waiting_runs
from atrium.runtime.waited_calls import Answers, PendingCall
from atrium.settings import Settings

MAX_IDEMPOTENCY_KEY = 200


@dataclass(frozen=True, slots=True)
class Answered:
    run: Run
    replayed: bool


def _request_hash(data: RunActions) -> str:
    canonical = json.dumps(data.model_dump(mode="json"), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def _checked_key(key: str | None) -> str | None:
    if key is not None and (not 1 <= len(key) <= MAX_IDEMPOTENCY_KEY or not key.isprintable()):
        raise InvalidParameter(
            "Idempotency-Key",
            f"Idempotency-Key must be 1-{MAX_IDEMPOTENCY_KEY} printable characters",
        )
    return key


def _checked_depth(data: RunActions) -> RunActions:
    """Outputs nested too deep for the answer to be hashed, stored and shown are a 400."""
    for index, item in enumerate(data.tool_outputs):
        if too_deep(item.output):
            raise InvalidParameter("tool_outputs", f"tool_outputs[{index}].output {TOO_DEEP}")
    return data


def _checked_answers(settings: Settings, data: RunActions, pending: list[PendingCall]) -> Answers:
    """Every pending call answered exactly once, each in the list of its kind; a 400 naming
    `tool_outputs` or `approvals` otherwise."""
    kinds = {call["id"]: call["kind"] for call in pending}
    lists = (
        ("tool_outputs", "function", [item.tool_call_id for item in data.tool_outputs]),
        ("approvals", "approval", [item.tool_call_id for item in data.approvals]),
    )
    # What is wrong with an answer given comes first, then what is missing.
    for parameter, kind, ids in lists:
        seen: set[str] = set()
        for call_id in ids:
            if call_id in seen:
                raise InvalidParameter(parameter, f"{parameter} answers {call_id!r} twice")
            seen.add(call_id)
            if call_id not in kinds:
                raise InvalidParameter(
                    parameter, f"{parameter}: {call_id!r} is not a call this run waits for"
                )
            if kinds[call_id] != kind:
                other = "approvals" if kind == "function" else "tool_outputs"
                raise InvalidParameter(
                    parameter, f"{parameter}: {call_id!r} is answered in {other}, not here"
                )
    for parameter, kind, ids in lists:
        missing = [call_id for call_id, of in kinds.items() if of == kind and call_id not in ids]
        if missing:
            raise InvalidParameter(
                parameter, f"{parameter} must answer every pending call; missing {missing[0]!r}"
            )
    for index, item in enumerate(data.tool_outputs):
        try:
            size = len(json.dumps(item.output, ensure_ascii=False, allow_nan=False))
        except ValueError:
            raise InvalidParameter(
                "tool_outputs", f"tool_outputs[{index}].output must be JSON with finite numbers"
            ) from None
        if size > settings.run_max_prompt_chars or "\x00" in json.dumps(item.output):
            raise InvalidParameter(
                "tool_outputs",
                f"tool_outputs[{index}].output must be at most {settings.run_max_prompt_chars} "
                "characters (as JSON) without NUL characters",
            )
    # `RunActions`' fields are the keys of `Answers` (`is_error` left out when false).
    return cast(Answers, data.model_dump(mode="json"))


def _replay(run: Run, stored_hash: str, request_hash: str) -> Answered:
    if stored_hash != request_hash:
        raise IdempotencyKeyReused(run.id)
    return Answered(run, replayed=True)


def _not_waiting(run: Run, now: datetime) -> RunNotWaiting:
    if run.status == waiting_runs.REQUIRES_ACTION:  # another answer won, or the wait expired
        expires = run.action_expires_at
        if expires is not None and as_utc(expires) <= now:  # naive from SQLite
            message = f"the run's required action expired at {isoformat(expires)}"
        else:
            message = "the run's required action was already answered"
    else:
        message = f"the run is {run.status}, not waiting for actions"
    return RunNotWaiting(message, run_id=run.id, status=run.status)


async def submit_actions(
    session: AsyncSession,
    *,
    settings: Settings,
    broker: Broker,
    run: Run,
    data: RunActions,
    idempotency_key: str | None,
) -> Answered:
    """Answer the run's pending calls and put it back in the queue. The same Idempotency-Key
    and body answer again with the run as it is now; the same key with another body is a 409."""
    key = _checked_key(idempotency_key)
    request_hash = _request_hash(_checked_depth(data))
    if key is not None:
        earlier = await waiting_runs.answer_by_key(session, run_id=run.id, key=key)
        if earlier is not None:
            return _replay(run, earlier.request_hash, request_hash)
    now = utcnow()
    pending = list((run.required_action or {}).get("tool_calls") or [])
    if run.status != RunStatus.REQUIRES_ACTION:
        raise _not_waiting(run, now)
    answer: waiting_runs.AnswerRow = {
        "run_id": run.id,
        "wait": run.waits,
        "tool_calls": pending,
        "answers": _checked_answers(settings, data, pending),
        "idempotency_key": key,
        "request_hash": request_hash,
        "created_at": now,
    }
    answered = await lifecycle.answer_in_request(
        session, broker=broker, run_id=run.id, wait=run.waits, answer_row=answer
    )
    if not answered:
        if key is not None:  # a request with this key committed while this one waited
            earlier = await waiting_runs.answer_by_key(session, run_id=run.id, key=key)
            if earlier is not None:
                return _replay(run, earlier.request_hash, request_hash)
        await session.refresh(run)
        raise _not_waiting(run, now)
    await session.flush()
    await session.refresh(run)
    return Answered(run, replayed=False)
