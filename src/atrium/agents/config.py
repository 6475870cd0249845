"""The agent `config` object: its keys, their defaults and their bounds."""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any, Final, TypedDict, cast

from atrium.kit.json_object import JsonObject

TOOLS: Final = ("write_artifact", "list_artifacts", "read_artifact")
OFFLINE_MODEL: Final = "atrium:offline"
# The default of `ATRIUM_DEFAULT_MODEL`: a fresh install runs end to end without a provider.
DEFAULT_MODEL: Final = OFFLINE_MODEL
MAX_MODEL_LENGTH: Final = 200
MAX_INSTRUCTIONS_LENGTH: Final = 20_000
# Far above any model's output limit; only keeps absurd numbers out of provider requests.
MAX_OUTPUT_TOKENS: Final = 1_000_000
TEMPERATURE_MIN: Final = 0.0
TEMPERATURE_MAX: Final = 2.0
# A thread's history budget (tokens) before compaction summarises its oldest part.
MIN_CONTEXT_BUDGET: Final = 256
MAX_CONTEXT_BUDGET: Final = 10_000_000

# `provider:name`, as pydantic-ai names models (`openai:gpt-4o-mini`,
# `openai-compatible:llama3.1:8b`). The shape is checked, not a catalogue: which models exist
# depends on the deployment's providers.
# The part after `provider:`.
MODEL_NAME_PATTERN: Final = r"[A-Za-z0-9][A-Za-z0-9._:/@+-]*"
MODEL_PATTERN: Final = re.compile(rf"^[a-z][a-z0-9_-]*:{MODEL_NAME_PATTERN}$")


# What `new_id("agt")` makes. Anything else cannot name an agent, so it is a 404 without a query
# (and a NUL or a 5,000-character id never reaches the database).
AGENT_ID_PATTERN: Final = re.compile(r"^agt_[A-Za-z0-9_-]{1,36}$")


class MemoryConfig(TypedDict):
    """`config.memory`: what the agent's memory tools may reach (`agents/memory_config.py`).
    A namespace prefix is a list of segments; `[]` is the account's whole store."""

    # Prefixes `memory_search` looks under, and those `memory_write`/`memory_delete` write under.
    read: list[list[str]]
    write: list[list[str]]
    # Labels of the blocks `block_append`/`block_replace` may edit.
    blocks: list[str]
    # "never", "always", or the names of the writing tools whose calls wait for approval.
    require_approval: str | list[str]


class AgentConfig(TypedDict, total=False):
    """An agent's `config` as it is stored and as each run keeps a snapshot of it
    (`runs.agent_config`): the keys of `AgentConfigIn`. A plain dict, so the JSON column reads
    and writes it as it is; readers take a missing key as its default (`.get`), since a row
    written before a key existed lacks it."""

    model: str
    temperature: float
    instructions: str
    max_output_tokens: int | None
    # A built-in tool's name, or an MCP server's or a function's object.
    tools: list[str | JsonObject]
    output_schema: JsonObject | None
    context_budget: int | None
    # None (or absent): the agent has no memory tools.
    memory: MemoryConfig | None
    # Labels of the memory blocks rendered into every run's instructions (absent: none).
    blocks: list[str]


def stored_config(value: Mapping[str, Any]) -> AgentConfig:
    """A config read from a JSON column, as a copy the caller may change. Only validated
    configs (`AgentConfigIn`, merged over the defaults) are ever stored, so the keys are
    trusted rather than checked again on every run."""
    return cast(AgentConfig, dict(value))


def default_config(model: str = DEFAULT_MODEL) -> AgentConfig:
    """A fresh copy of the server defaults (callers may mutate it); `model` is the
    deployment's `ATRIUM_DEFAULT_MODEL`."""
    return {
        "model": model,
        "temperature": 0.7,
        "instructions": "",
        "max_output_tokens": None,
        "tools": list(TOOLS),
        "output_schema": None,
        "context_budget": None,
    }
