"""Request and response bodies of agent versions and aliases."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from atrium.agents.schemas import AgentConfigOut
from atrium.db.models import AgentAlias, AgentVersion
from atrium.kit.time import isoformat
from atrium.kit.wire_schemas import ALWAYS_SENT, integral

VersionNumber = Annotated[int, Field(ge=1, le=2**31 - 1), BeforeValidator(integral)]
Weight = Annotated[float, Field(ge=0.0, le=1.0, allow_inf_nan=False)]


class AgentVersionOut(BaseModel):
    """One config an agent has had. Versions are never changed; `live` marks the agent's
    current one."""

    model_config = ALWAYS_SENT

    agent_id: str
    version: int = Field(description="Numbered per agent from 1.")
    content_hash: str = Field(description="SHA-256 of the config's canonical JSON.")
    live: bool = Field(description="The agent's config is this version.")
    restored_from: int | None = Field(
        description="The version a restore copied; null for an edit or the agent's creation."
    )
    config: AgentConfigOut
    created_at: str

    @classmethod
    def of(cls, version: AgentVersion, *, live_number: int) -> AgentVersionOut:
        return cls(
            agent_id=version.agent_id,
            version=version.number,
            content_hash=version.content_hash,
            live=version.number == live_number,
            restored_from=version.restored_from,
            config=AgentConfigOut.of(version.config),
            created_at=isoformat(version.created_at),
        )


class AgentVersionList(BaseModel):
    """A page of an agent's versions, newest first; pass `next_cursor` as `cursor` for the
    next page."""

    data: list[AgentVersionOut]
    has_more: bool
    next_cursor: str | None


class PatchOperation(BaseModel):
    """One RFC 6902 operation. `before` (not part of RFC 6902, which says to ignore it) is the
    value `replace` or `remove` drops, so a reader sees both sides."""

    op: Literal["add", "remove", "replace"]
    path: str = Field(description="A JSON Pointer (RFC 6901) into the config.")
    value: Any = Field(None, description="The new value (add, replace).")
    before: Any = Field(None, description="The value dropped (remove, replace).")


class AgentVersionDiff(BaseModel):
    """What turns version `against`'s config into version `version`'s: a JSON Patch (RFC
    6902), empty when they are equal. Computed on the configs as the API shows them (MCP header
    values `"***"`)."""

    model_config = ALWAYS_SENT

    agent_id: str
    version: int
    against: int
    patch: list[PatchOperation]


class Split(BaseModel):
    """Send a share of the alias's runs to a second version."""

    model_config = ConfigDict(extra="forbid", strict=True)

    version: VersionNumber
    weight: Weight = Field(description="The share of runs (0 to 1) that use `split.version`.")


class AliasIn(BaseModel):
    """Where an alias points: `version`, and optionally a weighted share for a second one."""

    model_config = ConfigDict(extra="forbid", strict=True)

    version: VersionNumber
    split: Split | None = None


class SplitOut(BaseModel):
    version: int
    weight: float


class AliasOut(BaseModel):
    """An alias: `agent_id@name` runs `version`, or `split.version` for a `split.weight`
    share of runs."""

    model_config = ALWAYS_SENT

    agent_id: str
    name: str
    version: int
    split: SplitOut | None
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, alias: AgentAlias) -> AliasOut:
        split = (
            None
            if alias.split_version is None or alias.split_weight is None
            else SplitOut(version=alias.split_version, weight=alias.split_weight)
        )
        return cls(
            agent_id=alias.agent_id,
            name=alias.name,
            version=alias.version,
            split=split,
            created_at=isoformat(alias.created_at),
            updated_at=isoformat(alias.updated_at),
        )


class AliasList(BaseModel):
    data: list[AliasOut]


class AliasDeleted(BaseModel):
    model_config = ALWAYS_SENT

    agent_id: str
    name: str
    deleted: bool = True
