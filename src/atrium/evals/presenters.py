"""Stored evals as response bodies."""

from __future__ import annotations

from atrium.db.models import Evaluation
from atrium.evals import service
from atrium.evals.schemas import (
    EvalAgent,
    EvalAgentTotals,
    EvalCase,
    EvalCheck,
    EvalDataset,
    EvalOut,
    EvalResult,
    EvalSummary,
)
from atrium.kit.time import as_utc


def _common(row: Evaluation) -> dict[str, object]:
    return {
        "eval_id": row.id,
        "dataset": EvalDataset(name=row.dataset_name, sha256=row.dataset_sha256),
        "agents": [EvalAgent(**agent) for agent in row.agents],
        "totals": [EvalAgentTotals(**total) for total in service.totals(row)],
        "created_at": as_utc(row.created_at).isoformat(),
    }


def eval_summary(row: Evaluation) -> EvalSummary:
    return EvalSummary(cases=len(row.cases), **_common(row))


def eval_out(row: Evaluation) -> EvalOut:
    cases = [
        EvalCase(
            case_id=case["case_id"],
            results=[
                EvalResult(
                    agent=r["agent"],
                    run_id=r["run_id"],
                    agent_version=r["agent_version"],
                    status=r["status"],
                    passed=r["passed"],
                    checks=[EvalCheck(**check) for check in r["checks"]],
                    credits=r["credits_micro"] / service.MICRO,
                    latency_ms=r["latency_ms"],
                )
                for r in case["results"]
            ],
        )
        for case in row.cases
    ]
    return EvalOut(cases=cases, **_common(row))
