"""The errors of the agents group, named; each keeps the status and code of its parent."""

from __future__ import annotations

from atrium.errors import InvalidParameter, NotFound


class AgentNotFound(NotFound):
    """The account has no agent with the id: unknown, deleted or another account's."""

    def __init__(self, agent_id: str) -> None:
        message = f"no agent with id {agent_id[:64]!r}"  # the id echoed, shortened
        super().__init__(message, details={"parameter": "agent_id"})


class ModelUnusable(InvalidParameter):
    """The model's provider is not configured on this server (nor, for an
    `openai-compatible:` model, among the account's providers); the message says what is
    missing."""

    def __init__(self, parameter: str, problem: str) -> None:
        super().__init__(parameter, f"{parameter}: {problem}")


class ToolsRefused(InvalidParameter):
    """`config.tools` names an MCP server the outbound rule refuses, or headers that can not be
    kept (docs/guide/tools.md)."""

    def __init__(self, message: str) -> None:
        super().__init__("config.tools", f"config.tools: {message}")
