"""Rows → response bodies: absolute URLs, credits from micro-credits, fields only when due."""

from __future__ import annotations

from collections.abc import Sequence

from atrium.db.engine import Database
from atrium.db.models import TERMINAL_STATUSES, Artifact, CancelReason, Run, RunStatus
from atrium.http.groups import RUNS
from atrium.kit.json_depth import too_deep
from atrium.kit.json_object import JsonObject
from atrium.kit.time import isoformat
from atrium.runs.api import service
from atrium.runs.api.schemas import (
    ArtifactOut,
    Billing,
    BlockSeen,
    RequiredAction,
    RunError,
    RunOut,
)
from atrium.runs.lifecycle import Usage
from atrium.settings import Settings


def view_out(settings: Settings, view: service.RunView) -> RunOut:
    return run_out(settings, view.run, view.artifacts)


def run_url(settings: Settings, run_id: str) -> str:
    return f"{settings.public_url.rstrip('/')}{RUNS.prefix}/agent/runs/{run_id}"


def billing_of(run: Run) -> Billing:
    """The same `billing` as the run's terminal event carries."""
    return Billing(**Usage.of(run).billing())


def artifact_out(settings: Settings, artifact: Artifact) -> ArtifactOut:
    return ArtifactOut(
        artifact_id=artifact.id,
        run_id=artifact.run_id,
        name=artifact.name,
        mime_type=artifact.mime_type,
        size_bytes=artifact.size_bytes,
        sha256=artifact.sha256,
        created_at=isoformat(artifact.created_at),
        download_url=f"{run_url(settings, artifact.run_id)}/artifacts/{artifact.id}/content",
    )


def _shown_metadata(run: Run) -> JsonObject:
    """The run's metadata, or `{}` for one nested deeper than a create takes: rows written
    without that bound may hold one, and pydantic writes no value past 255 levels, so one such
    row made every page of the account's runs a 500
    (docs/decisions/0042-json-depth-and-input-edges.md)."""
    return {} if too_deep(run.run_metadata) else run.run_metadata


def run_out(settings: Settings, run: Run, artifacts: Sequence[Artifact] = ()) -> RunOut:
    """The run as the API shows it; `artifacts` matter only once the run is finished."""
    url = run_url(settings, run.id)
    out = RunOut(
        run_id=run.id,
        thread_id=run.thread_id,
        agent_id=run.agent_id,
        status=run.status,
        prompt=run.prompt,
        model=run.model,
        created_at=isoformat(run.created_at),
        started_at=isoformat(run.started_at) if run.started_at else None,
        finished_at=isoformat(run.finished_at) if run.finished_at else None,
        status_url=url,
        events_url=f"{url}/events",
        artifacts_url=f"{url}/artifacts",
        metadata=_shown_metadata(run),
    )
    if run.input is not None:
        out.input = run.input
    if run.schedule_id is not None:
        out.schedule_id = run.schedule_id
    if run.agent_version is not None:
        out.agent_version = run.agent_version
    if run.memory_blocks is not None:
        out.memory_blocks = [BlockSeen.model_validate(seen) for seen in run.memory_blocks]
    if run.status == "requires_action" and run.required_action is not None:
        out.required_action = RequiredAction.model_validate(run.required_action)
    if run.status in TERMINAL_STATUSES:
        if run.status == RunStatus.COMPLETED:
            out.result = run.result_json if run.result_json is not None else run.result or ""
        out.artifacts = [artifact_out(settings, artifact) for artifact in artifacts]
        out.billing = billing_of(run)
        if run.status == RunStatus.FAILED:
            out.error = RunError(
                code=run.error_code or "INTERNAL_ERROR", message=run.error_message or ""
            )
        if run.status == RunStatus.CANCELLED and run.cancel_reason is not None:
            out.cancel_reason = CancelReason(run.cancel_reason)
    return out


async def run_json(db: Database, settings: Settings, *, account_id: int, run_id: str) -> str:
    """The run exactly as `GET /agent/runs/{run_id}` shows it: a webhook delivery's body."""
    async with db.session(write=False) as session:
        view = await service.run_view(session, account_id=account_id, run_id=run_id)
    return view_out(settings, view).model_dump_json(exclude_unset=True)
