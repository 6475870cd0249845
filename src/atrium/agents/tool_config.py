"""`config.tools` (docs/design.md#tools): built-in tools, remote MCP servers, caller-run functions.

Every problem with the list is a 400 on `config.tools` whose message names the entry
(`tools[1].server_label …`), so a client sees which of its tools is wrong. Header values are
write-only: they are stored encrypted (`atrium.secrets_at_rest`) and every response shows `"***"`.

A list being written must also leave the model one tool per name, and none of the names the
runtime gives tools itself (`check_model_names`). A stored list is read without that check: an
agent saved before a name was reserved still shows and runs (its runs say what is wrong).
"""

from __future__ import annotations

from typing import Annotated, Any, Final, Literal

from pydantic import (
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    PlainSerializer,
    PlainValidator,
    StringConstraints,
    Tag,
    ValidationError,
    WithJsonSchema,
)

from atrium.agents.config import TOOLS as BUILTIN_TOOLS
from atrium.agents.config import AgentConfig
from atrium.agents.json_schemas import DOCUMENTED_SCHEMA, NO_ARGUMENTS, check_object_schema
from atrium.kit.headers import HEADERS_SCHEMA, TRANSPORT_HEADERS, check_headers
from atrium.kit.wire_schemas import PUBLIC_URL, integral
from atrium.secrets_at_rest import MASK

MAX_TOOLS: Final = 64
MAX_URL_LENGTH: Final = 2_048
MAX_TOOL_NAMES: Final = 256
MAX_DESCRIPTION: Final = 1_024
SERVER_LABEL: Final = r"^[a-zA-Z][a-zA-Z0-9_]{0,31}$"
# A tool that fails this many times in a row with `on_error: "return"` ends its run: enough
# for a model to retry a flaky tool or try other arguments, few enough that a tool that is
# down does not spend the run's requests (docs/decisions/0049-tool-errors-to-the-model.md).
DEFAULT_MAX_CONSECUTIVE_ERRORS: Final = 3
MAX_CONSECUTIVE_ERRORS: Final = 100
# The names model providers accept for a tool (OpenAI's rule, the strictest of them).
FUNCTION_NAME: Final = r"^[a-zA-Z0-9_-]{1,64}$"
# MCP's recommended tool names (its spec, "Tool names").
MCP_TOOL_NAME: Final = r"^[A-Za-z0-9_.-]{1,128}$"
# The name pydantic-ai gives a run's output tool (`DEFAULT_OUTPUT_TOOL_NAME` in its `_output`
# module), used when the run has an output schema; with several output types it names them
# `final_result_<type>`, so that whole family is reserved
# (docs/decisions/0043-reserved-tool-names-and-long-call-ids.md).
OUTPUT_TOOL_NAME: Final = "final_result"
_OUTPUT_TOOLS: Final = f"{OUTPUT_TOOL_NAME}_"
# Headers the MCP transport itself sets, or that would change how the request travels.
RESERVED_HEADERS: Final = TRANSPORT_HEADERS | {
    "accept",
    "content-type",
    "mcp-protocol-version",
    "mcp-session-id",
}


def _unique_items(schema: dict[str, Any]) -> None:
    """The document's list of names: each once (`_check_mcp` refuses a repeat)."""
    for variant in schema.get("anyOf", []):
        if variant.get("type") == "array":
            variant["uniqueItems"] = True


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


# What an error of an entry's tools does to the run (`runtime/tool_errors.py`).
OnError = Annotated[
    Literal["fail", "return"],
    Field(
        description='"fail": a failed call ends the run with TOOL_ERROR. "return": the error '
        "text goes back to the model as the call's result, and the run goes on."
    ),
]
MaxConsecutiveErrors = Annotated[
    int,
    Field(
        ge=1,
        le=MAX_CONSECUTIVE_ERRORS,
        description='With on_error "return": how many failed calls of one tool in a row go '
        "back to the model; one more ends the run with TOOL_ERROR_LIMIT.",
    ),
    BeforeValidator(integral),
]


McpToolName = Annotated[str, StringConstraints(pattern=MCP_TOOL_NAME)]


class ApprovalList(_Strict):
    """`{"always": ["tool", …]}`: these tools of the server wait for approval, the others not."""

    always: list[McpToolName] = Field(
        max_length=MAX_TOOL_NAMES, json_schema_extra={"uniqueItems": True}
    )


def _bool_or_names(value: object) -> str | None:
    """Which form of `idempotent` a value is meant as (None: neither)."""
    if isinstance(value, bool):
        return "bool"
    return "names" if isinstance(value, list) else None


class McpServerTool(_Strict):
    """A remote MCP server (streamable HTTP) whose tools the model sees as `<label>_<tool>`."""

    type: Literal["mcp"]
    server_label: Annotated[str, StringConstraints(pattern=SERVER_LABEL)]
    server_url: Annotated[
        str,
        StringConstraints(min_length=1, max_length=MAX_URL_LENGTH),
        Field(json_schema_extra=PUBLIC_URL),
    ]
    headers: dict[str, str] = Field(
        default_factory=dict,
        description='Sent on every request; responses show "***".',
        # What `_check_mcp` takes (besides the names atrium sets itself, once each).
        json_schema_extra=HEADERS_SCHEMA,
    )
    allowed_tools: list[McpToolName] | None = Field(
        None,
        max_length=MAX_TOOL_NAMES,
        description="Only these tools of the server, each once (null: all).",
        json_schema_extra=_unique_items,
    )
    require_approval: Literal["never", "always"] | ApprovalList = "never"
    idempotent: Annotated[
        Annotated[bool, Tag("bool")]
        | Annotated[
            list[McpToolName],
            Tag("names"),
            Field(max_length=MAX_TOOL_NAMES, json_schema_extra={"uniqueItems": True}),
        ],
        Discriminator(
            _bool_or_names,
            custom_error_type="idempotent",
            custom_error_message="must be true, false or a list of the server's tool names",
        ),
    ] = Field(
        False,
        description="The server's tools that are safe to call twice (true: all of them): a "
        "call whose worker was lost is sent again instead of failing the run.",
    )
    on_error: OnError = "fail"
    max_consecutive_errors: MaxConsecutiveErrors = DEFAULT_MAX_CONSECUTIVE_ERRORS


class FunctionTool(_Strict):
    """A tool the caller executes: the run waits for its output (not executable yet)."""

    type: Literal["function"]
    name: Annotated[str, StringConstraints(pattern=FUNCTION_NAME)]
    description: Annotated[str, StringConstraints(max_length=MAX_DESCRIPTION)] = ""
    parameters: dict[str, Any] = Field(
        default_factory=lambda: dict(NO_ARGUMENTS), json_schema_extra=DOCUMENTED_SCHEMA
    )
    on_error: OnError = "fail"
    max_consecutive_errors: MaxConsecutiveErrors = DEFAULT_MAX_CONSECUTIVE_ERRORS


Tool = str | McpServerTool | FunctionTool
# A `Tool` as the OpenAPI document shows it: a text entry names a built-in tool.
_DocumentedTool = (
    Annotated[str, WithJsonSchema({"type": "string", "enum": list(BUILTIN_TOOLS)})]
    | McpServerTool
    | FunctionTool
)


def _entry_error(index: int, exc: ValidationError) -> ValueError:
    error = exc.errors()[0]
    where = "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in error["loc"])
    message = "is required" if error["type"] == "missing" else error["msg"]
    return ValueError(f"tools[{index}]{where} {message}")


def _parse_entry(index: int, item: object) -> Tool:
    if isinstance(item, str):
        if item not in BUILTIN_TOOLS:
            raise ValueError(
                f"tools[{index}]: unknown tool {item[:100]!r}; built-in tools are "
                f"{', '.join(BUILTIN_TOOLS)}, other tools are objects with a type"
            )
        return item
    if not isinstance(item, dict):
        raise ValueError(f"tools[{index}] must be a built-in tool's name or an object")
    kinds: dict[str, type[McpServerTool | FunctionTool]] = {
        "mcp": McpServerTool,
        "function": FunctionTool,
    }
    kind_name = item.get("type")
    kind = kinds.get(kind_name) if isinstance(kind_name, str) else None
    if kind is None:
        raise ValueError(f'tools[{index}].type must be "mcp" or "function"')
    try:
        tool = kind.model_validate(item)
    except ValidationError as exc:
        raise _entry_error(index, exc) from None
    if isinstance(tool, McpServerTool):
        _check_mcp(index, tool)
    else:
        try:
            check_object_schema(tool.parameters)
        except ValueError as exc:
            raise ValueError(f"tools[{index}].parameters {exc}") from None
    return tool


def _check_mcp(index: int, tool: McpServerTool) -> None:
    check_headers(tool.headers, where=f"tools[{index}].headers", reserved=RESERVED_HEADERS)
    allowed = tool.allowed_tools
    if allowed is not None and len(set(allowed)) != len(allowed):
        raise ValueError(f"tools[{index}].allowed_tools must not repeat")
    if isinstance(tool.require_approval, ApprovalList):
        _check_names(
            f"tools[{index}].require_approval.always", tool.require_approval.always, allowed
        )
    if isinstance(tool.idempotent, list):
        _check_names(f"tools[{index}].idempotent", tool.idempotent, allowed)


def _check_names(where: str, names: list[str], allowed: list[str] | None) -> None:
    """A list of a server's tools: each once, and none that `allowed_tools` leaves out."""
    if len(set(names)) != len(names):
        raise ValueError(f"{where} must not repeat")
    outside = [name for name in names if allowed is not None and name not in allowed]
    if outside:
        raise ValueError(f"{where} names {outside[0]!r}, which allowed_tools leaves out")


def declares_idempotent(tool: McpServerTool, name: str) -> bool:
    """Whether the agent declares the server's tool `name` safe to call twice."""
    rule = tool.idempotent
    return name in rule if isinstance(rule, list) else rule


def tool_name(tool: Tool) -> str:
    """The name an entry is known by: a built-in's or function's name, a server's label."""
    if isinstance(tool, str):
        return tool
    return tool.server_label if isinstance(tool, McpServerTool) else tool.name


def parse_tools(value: object) -> list[Tool]:
    """`config.tools` as given by a client; ValueError naming the entry that is wrong."""
    if not isinstance(value, list):
        raise ValueError("tools must be a list")
    if len(value) > MAX_TOOLS:
        raise ValueError(f"tools may list at most {MAX_TOOLS} tools")
    tools = [_parse_entry(index, item) for index, item in enumerate(value)]
    seen: set[str] = set()
    for tool in tools:
        name = tool_name(tool)
        if name in seen:
            raise ValueError(f"tools must not repeat a name: {name!r} is used twice")
        seen.add(name)
    return tools


def is_reserved(name: str) -> bool:
    """Whether the runtime may give a tool this name itself (the run's output tool)."""
    return name == OUTPUT_TOOL_NAME or name.startswith(_OUTPUT_TOOLS)


def _known_mcp_names(tool: McpServerTool) -> tuple[str, list[str]]:
    """The server's tools known before a run lists them, and the field that names them."""
    if tool.allowed_tools is not None:
        return "allowed_tools", tool.allowed_tools
    if isinstance(tool.require_approval, ApprovalList):
        return "require_approval.always", tool.require_approval.always
    return "", []


def _model_names(tool: Tool) -> list[str]:
    """The names the model sees for an entry's tools, as far as they are known now."""
    if isinstance(tool, str):
        return [tool]
    if isinstance(tool, FunctionTool):
        return [tool.name]
    prefix = f"{tool.server_label}_"
    # `<label>_<tool>` stands for every tool of the server.
    return [f"{prefix}<tool>", *(prefix + name for name in _known_mcp_names(tool)[1])]


def _where(index: int, tool: Tool, seen: str) -> str:
    """How a message names the entry's field that makes the model see `seen`."""
    if isinstance(tool, str):
        return f"tools[{index}] {tool!r}"
    if isinstance(tool, FunctionTool):
        return f"tools[{index}].name {tool.name!r}"
    field, names = _known_mcp_names(tool)
    given = seen.removeprefix(f"{tool.server_label}_")
    if given not in names:
        field, given = "server_label", tool.server_label
    return f"tools[{index}].{field} {given!r} (the model sees {seen!r})"


def check_model_names(tools: list[Tool]) -> None:
    """ValueError when the model would see a reserved name, or one name for two tools (a run
    could not start: pydantic-ai refuses both). An MCP server's tools count as far as
    `allowed_tools` or `require_approval` name them; the others are checked when a run lists
    them (`runtime.observed_calls.RunToolset`)."""
    first: dict[str, int] = {}
    for index, tool in enumerate(tools):
        for seen in _model_names(tool):
            if is_reserved(seen):
                raise ValueError(
                    f"{_where(index, tool, seen)} is reserved: {OUTPUT_TOOL_NAME!r} and the "
                    f"names starting with {_OUTPUT_TOOLS!r} are the run's output tools"
                )
            earlier = first.setdefault(seen, index)
            if earlier != index:
                raise ValueError(f"{_where(index, tool, seen)} is used by tools[{earlier}] too")


def parse_new_tools(value: object) -> list[Tool]:
    """`parse_tools` for a list being written: also `check_model_names`."""
    tools = parse_tools(value)
    check_model_names(tools)
    return tools


def _dump(tools: list[Tool]) -> list[Any]:
    return [tool if isinstance(tool, str) else tool.model_dump(mode="json") for tool in tools]


ToolList = Annotated[
    list[Tool],
    PlainValidator(parse_new_tools, json_schema_input_type=list[_DocumentedTool]),
    PlainSerializer(_dump, return_type=list[Any]),
]
"""`config.tools` in a request body."""


def stored_tools(config: AgentConfig) -> list[Tool]:
    """The tools of a stored config (validated when they were written)."""
    return parse_tools(list(config.get("tools") or []))


def masked(tools: list[Any]) -> list[Tool]:
    """Stored tools as responses show them: every header value is `"***"`."""
    shown: list[Tool] = []
    for tool in parse_tools(tools):
        if isinstance(tool, McpServerTool):
            tool = tool.model_copy(update={"headers": dict.fromkeys(tool.headers, MASK)})
        shown.append(tool)
    return shown
