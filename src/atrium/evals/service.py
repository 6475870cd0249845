"""Rules of stored evals: the client runs and scores the cases; the server checks every run
is the account's and finished, and copies credits, latency and version from the stored runs,
so a stored eval says what the runs cost, whatever the client claims."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any, Final

from sqlalchemy.ext.asyncio import AsyncSession

from atrium.agents.versions.resolve import split_reference
from atrium.db.models import TERMINAL_STATUSES, Evaluation, Run, RunStatus
from atrium.evals import repository
from atrium.evals.errors import EvalNotFound, EvalRefused
from atrium.evals.schemas import EvalIn
from atrium.kit.cursor import decode_cursor, split_page
from atrium.kit.ids import known_id, new_id
from atrium.kit.time import as_utc, utcnow

MICRO: Final = 1_000_000


@dataclass(frozen=True, slots=True)
class EvalPage:
    rows: list[Evaluation]
    next_cursor: str | None


def _latency_ms(run: Run) -> int | None:
    if run.finished_at is None:
        return None
    return max(0, round((as_utc(run.finished_at) - as_utc(run.created_at)).total_seconds() * 1000))


def _checked(body: EvalIn, runs: dict[str, Run]) -> list[dict[str, Any]]:
    """The cases as stored, each result completed from its run; a 400 naming the first field
    that is wrong, before anything is written."""
    listed = set(body.agents)
    if len(listed) != len(body.agents):
        raise EvalRefused("agents", "agents must not repeat")
    agent_of: dict[str, str] = {}
    case_ids: set[str] = set()
    cases: list[dict[str, Any]] = []
    for i, case in enumerate(body.cases):
        if case.case_id in case_ids:
            raise EvalRefused(f"cases.{i}.case_id", f"case {case.case_id!r} appears twice")
        case_ids.add(case.case_id)
        results: list[dict[str, Any]] = []
        seen: set[str] = set()
        for j, result in enumerate(case.results):
            where = f"cases.{i}.results.{j}"
            if result.agent not in listed:
                raise EvalRefused(f"{where}.agent", f"{result.agent!r} is not one of agents")
            if result.agent in seen:
                raise EvalRefused(f"{where}.agent", f"{result.agent!r} has two results")
            seen.add(result.agent)
            run = runs.get(result.run_id)
            if run is None:
                raise EvalRefused(f"{where}.run_id", f"no run with id {result.run_id!r}")
            if run.status not in TERMINAL_STATUSES:
                raise EvalRefused(f"{where}.run_id", f"run {run.id!r} is still {run.status}")
            base = split_reference(result.agent)[0]
            if agent_of.setdefault(result.agent, run.agent_id) != run.agent_id or (
                base.startswith("agt_") and base != run.agent_id
            ):
                raise EvalRefused(
                    f"{where}.run_id", f"run {run.id!r} is not a run of {result.agent!r}"
                )
            for k, check in enumerate(result.checks):
                if check.judge_run_id is not None and check.judge_run_id not in runs:
                    raise EvalRefused(
                        f"{where}.checks.{k}.judge_run_id",
                        f"no run with id {check.judge_run_id!r}",
                    )
            checks = [check.model_dump() for check in result.checks]
            results.append(
                {
                    "agent": result.agent,
                    "run_id": run.id,
                    "agent_version": run.agent_version,
                    "status": run.status,
                    "passed": run.status == RunStatus.COMPLETED
                    and all(check["passed"] for check in checks),
                    "checks": checks,
                    "credits_micro": int(run.credits_micro),
                    "latency_ms": _latency_ms(run),
                }
            )
        cases.append({"case_id": case.case_id, "results": results})
    return cases


def _agents(
    body: EvalIn, cases: list[dict[str, Any]], runs: dict[str, Run]
) -> list[dict[str, Any]]:
    """Each agent as the eval named it, with the agent id and versions its runs used."""
    agents: list[dict[str, Any]] = []
    for ref in body.agents:
        used = [r for case in cases for r in case["results"] if r["agent"] == ref]
        versions = sorted({r["agent_version"] for r in used if r["agent_version"] is not None})
        agent_id = runs[used[0]["run_id"]].agent_id if used else split_reference(ref)[0]
        agents.append({"ref": ref, "agent_id": agent_id, "versions": versions})
    return agents


async def store(session: AsyncSession, *, account_id: int, body: EvalIn) -> Evaluation:
    run_ids = [r.run_id for case in body.cases for r in case.results]
    run_ids += [
        check.judge_run_id
        for case in body.cases
        for r in case.results
        for check in r.checks
        if check.judge_run_id is not None
    ]
    runs = await repository.runs_of(session, account_id=account_id, run_ids=run_ids)
    cases = _checked(body, runs)
    agents = _agents(body, cases, runs)
    row = Evaluation(
        id=new_id("eval"),
        account_id=account_id,
        dataset_name=body.dataset.name,
        dataset_sha256=body.dataset.sha256,
        agents=agents,
        cases=cases,
        created_at=utcnow(),
    )
    session.add(row)
    await session.flush()
    return row


async def get(session: AsyncSession, *, account_id: int, eval_id: str) -> Evaluation:
    found = await repository.get(
        session, account_id=account_id, eval_id=known_id(eval_id, EvalNotFound)
    )
    if found is None:
        raise EvalNotFound(eval_id)
    return found


async def list_evals(
    session: AsyncSession, *, account_id: int, limit: int, cursor: str | None
) -> EvalPage:
    after = decode_cursor(cursor) if cursor else None
    rows = await repository.list_page(session, account_id=account_id, limit=limit, after=after)
    page, next_cursor = split_page(rows, limit)
    return EvalPage(list(page), next_cursor)


async def delete(session: AsyncSession, *, account_id: int, eval_id: str) -> str:
    if not await repository.remove(
        session, account_id=account_id, eval_id=known_id(eval_id, EvalNotFound)
    ):
        raise EvalNotFound(eval_id)
    return eval_id


def totals(row: Evaluation) -> list[dict[str, Any]]:
    """Per agent: cases passed, pass rate, credits, median latency."""
    out: list[dict[str, Any]] = []
    for agent in row.agents:
        results = [r for case in row.cases for r in case["results"] if r["agent"] == agent["ref"]]
        latencies = [r["latency_ms"] for r in results if r["latency_ms"] is not None]
        passed = sum(1 for r in results if r["passed"])
        out.append(
            {
                "agent": agent["ref"],
                "passed": passed,
                "cases": len(results),
                "pass_rate": passed / len(results) if results else 0.0,
                "credits": sum(r["credits_micro"] for r in results) / MICRO,
                "p50_latency_ms": round(statistics.median(latencies)) if latencies else None,
            }
        )
    return out
