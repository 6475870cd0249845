"""Response body of `GET /analytics/usage`."""

from __future__ import annotations

from pydantic import BaseModel, Field


class UsageCounters(BaseModel):
    """What a set of finished runs used. `credits` is a decimal number of credits."""

    runs: int = Field(description="Finished runs: completed + failed + cancelled.")
    completed: int
    failed: int
    cancelled: int
    input_tokens: int
    output_tokens: int
    credits: float
    requests: int = Field(description="Model requests made by the runs.")
    requires_action: int = Field(
        description="How many times the runs waited for their caller (requires_action)."
    )


class _Day(BaseModel):
    date: str = Field(description="The UTC day, YYYY-MM-DD.")


class _Agent(BaseModel):
    agent_id: str
    name: str


# Fields of the last base come first: `{"date", "runs", …}` and `{"agent_id", "name", "runs", …}`.
class DailyUsage(UsageCounters, _Day):
    """One UTC day of the range."""


class AgentUsageOut(UsageCounters, _Agent):
    """One agent (deleted ones included while they have usage in the range)."""


class _Version(BaseModel):
    version: int | None = Field(
        description="The agent version the runs executed; null: runs from before versions."
    )


class VersionUsageOut(UsageCounters, _Version):
    """One version of the agent that has finished runs in the range (by their end)."""


class UsageReport(BaseModel):
    """Usage of an account's agents over a range of UTC days (both ends included)."""

    start_date: str
    end_date: str
    agent_id: str | None
    totals: UsageCounters
    daily: list[DailyUsage] = Field(description="Every day of the range, zeros included.")
    agents: list[AgentUsageOut] = Field(
        description="Every agent, plus deleted agents with usage in the range."
    )
    versions: list[VersionUsageOut] | None = Field(
        None,
        description="With `agent_id`: that agent's usage per version, newest version first "
        "(versions with finished runs in the range only); null otherwise.",
    )
