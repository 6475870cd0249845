"""Request and response bodies of `/v1/evals` (docs/guide/evals.md)."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, ConfigDict, Field

# What `kit.ids.new_id` makes for runs; anything else names no run.
RUN_ID_PATTERN = r"^run_[A-Za-z0-9]{1,40}$"
AgentRef = Annotated[
    str,
    Field(
        min_length=1,
        max_length=120,
        pattern=r"^[A-Za-z0-9_-]{1,40}(@[A-Za-z0-9_.-]{1,64})?$",
        description="The agent as the eval named it: `agt_…`, `agt_…@prod`, `agt_…@v2`.",
    ),
]
CheckType = Literal["exact", "contains", "json_schema", "judge"]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid")


class EvalDataset(_Strict):
    name: str = Field(min_length=1, max_length=255, description="The dataset's file name.")
    sha256: str = Field(pattern=r"^[0-9a-f]{64}$", description="sha256 of the dataset's bytes.")


class EvalCheck(_Strict):
    """One check of a case, as the client scored it."""

    type: CheckType
    passed: bool
    reason: str | None = Field(default=None, max_length=2000)
    judge_run_id: str | None = Field(
        default=None, pattern=RUN_ID_PATTERN, description="The judge's run, for a judge check."
    )


class EvalResultIn(_Strict):
    agent: AgentRef = Field(description="One of the eval's `agents`.")
    run_id: str = Field(pattern=RUN_ID_PATTERN, description="The case's run on that agent.")
    checks: list[EvalCheck] = Field(max_length=50)


class EvalCaseIn(_Strict):
    case_id: str = Field(min_length=1, max_length=200)
    results: list[EvalResultIn] = Field(min_length=1, max_length=10)


class EvalIn(_Strict):
    """An eval to store: the client ran the cases and scored them; the server checks the runs
    are the account's and finished, and takes credits, latency and version from them."""

    dataset: EvalDataset
    agents: list[AgentRef] = Field(min_length=1, max_length=10)
    cases: list[EvalCaseIn] = Field(min_length=1, max_length=1000)


class EvalAgent(BaseModel):
    ref: str = Field(description="The agent as the eval named it.")
    agent_id: str
    versions: list[int] = Field(description="The versions its runs used (one unless a split).")


class EvalResult(BaseModel):
    agent: str
    run_id: str
    agent_version: int | None
    status: str = Field(description="The run's status.")
    passed: bool = Field(description="The run completed and every check passed.")
    checks: list[EvalCheck]
    credits: float = Field(description="The run's credits, from the stored run.")
    latency_ms: int | None = Field(description="From the run's creation to its end.")


class EvalCase(BaseModel):
    case_id: str
    results: list[EvalResult]


class EvalAgentTotals(BaseModel):
    agent: str
    passed: int
    cases: int
    pass_rate: float
    credits: float
    p50_latency_ms: int | None


class EvalOut(BaseModel):
    """A stored eval: its cases side by side, one result per agent."""

    eval_id: str
    dataset: EvalDataset
    agents: list[EvalAgent]
    cases: list[EvalCase]
    totals: list[EvalAgentTotals]
    created_at: str


class EvalSummary(BaseModel):
    eval_id: str
    dataset: EvalDataset
    agents: list[EvalAgent]
    cases: int
    totals: list[EvalAgentTotals]
    created_at: str


class EvalList(BaseModel):
    """A page of evals, newest first; pass `next_cursor` as `cursor` for the next page."""

    data: list[EvalSummary]
    has_more: bool
    next_cursor: str | None


class EvalDeleted(BaseModel):
    eval_id: str
    deleted: Literal[True] = True
