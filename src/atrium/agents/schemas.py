"""Request and response bodies of the agents endpoints."""

from __future__ import annotations

import unicodedata
from typing import Annotated, Any, Final

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    StringConstraints,
    field_validator,
)

from atrium.agents.block_config import BlocksField
from atrium.agents.config import (
    DEFAULT_MODEL,
    MAX_CONTEXT_BUDGET,
    MAX_INSTRUCTIONS_LENGTH,
    MAX_MODEL_LENGTH,
    MAX_OUTPUT_TOKENS,
    MIN_CONTEXT_BUDGET,
    MODEL_PATTERN,
    TEMPERATURE_MAX,
    TEMPERATURE_MIN,
    TOOLS,
)
from atrium.agents.json_schemas import OutputSchema
from atrium.agents.memory_config import MemoryConfigDocument, MemoryConfigField
from atrium.agents.tool_config import Tool, ToolList, masked
from atrium.db.models import Agent
from atrium.kit.time import isoformat
from atrium.kit.wire_schemas import (
    ALWAYS_SENT,
    UNICODE_CONTROL,
    UNICODE_SPACE,
    WITHOUT_NUL,
    integral,
    never_null,
    refuse_null,
    trimmed_text_schema,
)

MAX_NAME_LENGTH = 100
MAX_DESCRIPTION_LENGTH = 2_000


def _no_nul(value: str) -> str:
    # PostgreSQL text cannot hold NUL; refuse it here rather than fail in the database.
    if "\x00" in value:
        raise ValueError("must not contain NUL characters")
    return value


def _printable_name(value: str) -> str:
    if any(unicodedata.category(char) == "Cc" for char in value):
        raise ValueError("must not contain control characters")
    return value


def _check_model(value: str) -> str:
    if not MODEL_PATTERN.match(value):
        raise ValueError("model must look like provider:name, e.g. openai:gpt-4o-mini")
    return value


# The `json_schema_extra` patterns state the validators' rules in the OpenAPI document.
AgentName = Annotated[
    str,
    StringConstraints(strip_whitespace=True, min_length=1, max_length=MAX_NAME_LENGTH),
    AfterValidator(_printable_name),
    Field(
        json_schema_extra=trimmed_text_schema(
            MAX_NAME_LENGTH, required=True, control=UNICODE_CONTROL, space=UNICODE_SPACE
        )
    ),
]
AgentDescription = Annotated[
    str,
    StringConstraints(max_length=MAX_DESCRIPTION_LENGTH),
    AfterValidator(_no_nul),
    Field(json_schema_extra={"pattern": WITHOUT_NUL}),
]
Instructions = Annotated[
    str,
    StringConstraints(max_length=MAX_INSTRUCTIONS_LENGTH),
    AfterValidator(_no_nul),
    Field(json_schema_extra={"pattern": WITHOUT_NUL}),
]
# The validator after the Field: before it, pydantic writes `gt`/`le` into the JSON Schema
# instead of `exclusiveMinimum`/`maximum`.
MaxOutputTokens = Annotated[int, Field(gt=0, le=MAX_OUTPUT_TOKENS), BeforeValidator(integral)]
ModelName = Annotated[
    str, StringConstraints(max_length=MAX_MODEL_LENGTH), AfterValidator(_check_model)
]
ContextBudget = Annotated[
    int, Field(ge=MIN_CONTEXT_BUDGET, le=MAX_CONTEXT_BUDGET), BeforeValidator(integral)
]
Temperature = Annotated[float, Field(ge=TEMPERATURE_MIN, le=TEMPERATURE_MAX, allow_inf_nan=False)]


class _Strict(BaseModel):
    # Unknown keys are errors (a typo must not be silently ignored) and values are not coerced
    # ("0.5" is not a temperature).
    model_config = ConfigDict(extra="forbid", strict=True)


class AgentConfigIn(_Strict):
    """Agent configuration. Keys left out keep their current value (server defaults on create)."""

    model: ModelName = Field(
        DEFAULT_MODEL,
        description="`provider:name`: `openai:…`, `anthropic:…`, `openai-compatible:…` or "
        "`atrium:offline` (docs/guide/models.md); default `ATRIUM_DEFAULT_MODEL`.",
    )
    temperature: Temperature = Field(0.7, description="Sampling temperature, 0 to 2.")
    instructions: Instructions = Field("", description="System instructions given to the model.")
    max_output_tokens: MaxOutputTokens | None = Field(
        None, description="Cap on output tokens per model request (1 to 1,000,000); null: none."
    )
    tools: ToolList = Field(
        default_factory=lambda: list[Tool](TOOLS),
        description=f"Built-in tools by name ({', '.join(TOOLS)}), MCP servers "
        '(`{"type": "mcp", …}`) and functions (`{"type": "function", …}`); see '
        "docs/guide/tools.md.",
    )
    output_schema: OutputSchema | None = Field(
        None, description="A JSON Schema (an object type): the run's result is then such an object."
    )
    context_budget: ContextBudget | None = Field(
        None,
        description="Tokens of thread history a run may carry (256 to 10,000,000); over it, the "
        "oldest part is summarised (docs/guide/threads.md#long-threads). null: three quarters "
        "of the model's context window.",
    )
    memory: MemoryConfigField = Field(
        None,
        description="The agent's memory tools: namespaces they may read and write, blocks "
        "they may edit, writes that wait for approval (docs/guide/memory.md). null: none.",
    )
    blocks: BlocksField = Field(
        default_factory=list,
        description="Labels of memory blocks (`/v1/memory/blocks`) rendered into every run's "
        "instructions, read when the run executes (docs/guide/memory.md#8-blocks); a label "
        "without a block renders nothing.",
    )

    def given(self) -> dict[str, Any]:
        """Only the keys the client sent."""
        return self.model_dump(include=self.model_fields_set)


class AgentCreate(_Strict):
    """A new agent: `name` is required; `description` and `config` have server defaults."""

    name: AgentName
    description: AgentDescription = ""
    config: AgentConfigIn = Field(default_factory=AgentConfigIn)


_NEVER_NULL: Final = ("name", "description", "config")


class AgentUpdate(_Strict):
    """PUT: the fields present replace the agent's; config keys present replace those keys."""

    # Optional but never null (`_not_null`): the document shows no null either.
    model_config = ConfigDict(json_schema_extra=never_null(*_NEVER_NULL))

    name: AgentName | None = None
    description: AgentDescription | None = None
    config: AgentConfigIn | None = None

    _not_null = field_validator(*_NEVER_NULL, mode="before")(refuse_null)

    def given(self) -> set[str]:
        return set(self.model_fields_set)


class AgentConfigOut(BaseModel):
    model: str
    temperature: float
    instructions: str
    max_output_tokens: int | None
    tools: list[Tool] = Field(description='MCP header values are shown as "***".')
    output_schema: dict[str, Any] | None = None
    context_budget: int | None = None
    memory: MemoryConfigDocument | None = None
    blocks: list[str] = Field(
        default_factory=list, description="Memory blocks rendered into every run's instructions."
    )

    @classmethod
    def of(cls, config: dict[str, Any]) -> AgentConfigOut:
        return cls.model_validate({**config, "tools": masked(config.get("tools") or [])})


class AgentOut(BaseModel):
    """An agent as the API shows it."""

    agent_id: str
    name: str
    description: str
    version: int = Field(
        description="The number of the version `config` is: the one a run naming the agent "
        "without `@` executes (`GET /v1/agents/{agent_id}/versions` lists them all)."
    )
    config: AgentConfigOut
    created_at: str
    updated_at: str

    @classmethod
    def of(cls, agent: Agent) -> AgentOut:
        return cls(
            agent_id=agent.id,
            name=agent.name,
            description=agent.description,
            version=agent.version,
            config=AgentConfigOut.of(agent.config),
            created_at=isoformat(agent.created_at),
            updated_at=isoformat(agent.updated_at),
        )


class AgentList(BaseModel):
    data: list[AgentOut]


class AgentDeleted(BaseModel):
    model_config = ALWAYS_SENT

    agent_id: str
    deleted: bool = True
