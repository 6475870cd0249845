"""`config.memory`: which namespaces an agent's memory tools may read and write, which blocks
they may edit, and which writes wait for the caller's approval
(docs/decisions/0059-memory-tools.md).

Every problem is a 400 whose `parameter` names the exact entry (`config.memory.write[0]`),
raised from the validator as an `InvalidParameter`: a pydantic error would name it
`config.memory.write.0`, unlike the messages of `config.tools` (`tools[0]…`).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Annotated, Any, Final, Literal, get_args

from pydantic import BaseModel, ConfigDict, Field, PlainValidator

from atrium.agents.config import MemoryConfig
from atrium.errors import InvalidParameter

# The store's namespace segments (`memory/namespaces.py`, a package of the same layer, which
# agents may not import; a test keeps the two equal).
SEGMENT_PATTERN: Final = r"^[A-Za-z0-9_.:@-]{1,64}$"
MAX_SEGMENTS: Final = 8
MAX_PREFIXES: Final = 32
MAX_BLOCKS: Final = 32
BLOCK_LABEL_PATTERN: Final = r"^[A-Za-z0-9_.-]{1,64}$"
READ_TOOLS: Final = ("memory_search",)
WriteTool = Literal["memory_write", "memory_delete", "block_append", "block_replace"]
WRITE_TOOLS: Final[tuple[str, ...]] = get_args(WriteTool)
MEMORY_TOOLS: Final = (*READ_TOOLS, *WRITE_TOOLS)
_SEGMENT = re.compile(SEGMENT_PATTERN)
_LABEL = re.compile(BLOCK_LABEL_PATTERN)
_WHERE: Final = "config.memory"
_KEYS: Final = ("read", "write", "blocks", "require_approval")


def _prefixes(value: object, name: str) -> list[list[str]]:
    where = f"{_WHERE}.{name}"
    if not isinstance(value, list):
        raise InvalidParameter(where, f"{where} must be a list of namespace prefixes")
    if len(value) > MAX_PREFIXES:
        raise InvalidParameter(where, f"{where} lists at most {MAX_PREFIXES} prefixes")
    prefixes: list[list[str]] = []
    for index, prefix in enumerate(value):
        here = f"{where}[{index}]"
        if not isinstance(prefix, list) or len(prefix) > MAX_SEGMENTS:
            raise InvalidParameter(
                here, f'{here} must be a list of at most {MAX_SEGMENTS} segments, e.g. ["users"]'
            )
        for position, segment in enumerate(prefix):
            if not isinstance(segment, str) or not _SEGMENT.fullmatch(segment):
                raise InvalidParameter(
                    f"{here}[{position}]",
                    f"{here}[{position}]: segments are 1-64 of A-Z a-z 0-9 _ . : @ -",
                )
        if prefix in prefixes:
            raise InvalidParameter(here, f"{here} repeats {where}[{prefixes.index(prefix)}]")
        prefixes.append(list(prefix))
    return prefixes


def _blocks(value: object) -> list[str]:
    where = f"{_WHERE}.blocks"
    if not isinstance(value, list) or len(value) > MAX_BLOCKS:
        raise InvalidParameter(where, f"{where} must be a list of at most {MAX_BLOCKS} labels")
    for index, label in enumerate(value):
        if not isinstance(label, str) or not _LABEL.fullmatch(label):
            raise InvalidParameter(
                f"{where}[{index}]", f"{where}[{index}] must be 1-64 of A-Z a-z 0-9 _ . -"
            )
        if label in value[:index]:
            raise InvalidParameter(f"{where}[{index}]", f"{where}[{index}] repeats {label!r}")
    return list(value)


def _approval(value: object) -> str | list[str]:
    where = f"{_WHERE}.require_approval"
    if value in ("never", "always"):
        return str(value)
    if not isinstance(value, list):
        raise InvalidParameter(
            where, f'{where} must be "never", "always" or a list of {", ".join(WRITE_TOOLS)}'
        )
    for index, name in enumerate(value):
        if name not in WRITE_TOOLS or name in value[:index]:
            raise InvalidParameter(
                f"{where}[{index}]",
                f"{where}[{index}] must be one of {', '.join(WRITE_TOOLS)}, each once",
            )
    return [str(name) for name in value]


def parse_memory(value: object) -> MemoryConfig | None:
    """`config.memory` as a client sent it, or an `InvalidParameter` naming the entry."""
    if value is None:
        return None
    if not isinstance(value, dict):
        raise InvalidParameter(_WHERE, f"{_WHERE} must be an object or null")
    unknown = [key for key in value if key not in _KEYS]
    if unknown:
        name = str(unknown[0])[:64]
        raise InvalidParameter(f"{_WHERE}.{name}", f"{_WHERE} has no key {name!r}")
    return {
        "read": _prefixes(value.get("read", []), "read"),
        "write": _prefixes(value.get("write", []), "write"),
        "blocks": _blocks(value.get("blocks", [])),
        "require_approval": _approval(value.get("require_approval", "never")),
    }


def _prefix_list(description: str) -> Any:
    return Field(
        default_factory=list,
        max_length=MAX_PREFIXES,
        description=description,
        json_schema_extra={
            "uniqueItems": True,
            "items": {
                "type": "array",
                "maxItems": MAX_SEGMENTS,
                "items": {"type": "string", "pattern": SEGMENT_PATTERN},
            },
        },
    )


class MemoryConfigDocument(BaseModel):
    """The agent's memory tools (docs/guide/memory.md#7-agents-with-memory): `memory_search`
    under `read`, `memory_write`/`memory_delete` under `write`, `block_append`/
    `block_replace` on `blocks`."""

    model_config = ConfigDict(extra="forbid")

    read: list[list[str]] = _prefix_list(
        'Namespace prefixes memory_search looks under, e.g. [["users", "alice"]]; [] is all.'
    )
    write: list[list[str]] = _prefix_list(
        "Namespace prefixes memory_write and memory_delete may change."
    )
    blocks: list[Annotated[str, Field(pattern=BLOCK_LABEL_PATTERN)]] = Field(
        default_factory=list,
        max_length=MAX_BLOCKS,
        description="Labels of editable blocks.",
        json_schema_extra={"uniqueItems": True},
    )
    require_approval: (
        Literal["never", "always"]
        | Annotated[list[WriteTool], Field(json_schema_extra={"uniqueItems": True})]
    ) = Field(
        "never",
        description="Writes that wait for the caller's approval (run status requires_action): "
        f"none, all, or those of the tools named ({', '.join(WRITE_TOOLS)}).",
    )


# `Any`: pydantic builds no schema of a `typing.TypedDict` on Python 3.11; `parse_memory`
# returns a `MemoryConfig`.
MemoryConfigField = Annotated[
    Any,
    PlainValidator(parse_memory, json_schema_input_type=MemoryConfigDocument | None),
]
"""`config.memory` in a request body."""


def needs_approval(memory: MemoryConfig, tool: str) -> bool:
    """Whether a call of the writing tool `tool` waits for the caller's approval."""
    rule = memory.get("require_approval", "never")
    return tool in rule if isinstance(rule, list) else rule == "always"


def allows(prefixes: list[list[str]], namespace: list[str]) -> bool:
    """Whether `namespace` lies under one of `prefixes` (whole segments)."""
    return any(namespace[: len(prefix)] == prefix for prefix in prefixes)


def check_tool_names(config: Mapping[str, Any], *, parameter: str) -> None:
    """A 400 on `parameter` when a function tool has a memory tool's name: the run could not
    start with two tools of one name. (An MCP server's tools are only known when a run lists
    them; a clash among those fails that run.)"""
    if not config.get("memory"):
        return
    for index, tool in enumerate(config.get("tools") or []):
        if not isinstance(tool, dict):  # a built-in tool's name
            continue
        name = tool.get("name")
        if tool.get("type") == "function" and name in MEMORY_TOOLS:
            raise InvalidParameter(
                parameter,
                f"config.tools[{index}].name {name!r} is the name of a memory tool "
                "(config.memory gives the agent memory_search, memory_write, memory_delete, "
                "block_append and block_replace)",
            )
