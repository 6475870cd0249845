"""`config.tools` as it is stored: MCP server URLs checked against the outbound rule, header
values encrypted (`"***"` sent back keeps a stored value). Every refusal is a 400 on
`config.tools`."""

from __future__ import annotations

from typing import Any

from atrium.agents.config import stored_config
from atrium.agents.errors import ToolsRefused
from atrium.agents.outbound import TargetRefused, check_server_url
from atrium.agents.tool_config import McpServerTool, Tool, parse_tools, stored_tools
from atrium.secrets_at_rest import SecretBox, SecretRefused, seal
from atrium.settings import Settings


def _sealed_headers(
    index: int, tool: McpServerTool, before: McpServerTool | None, box: SecretBox
) -> dict[str, str]:
    """The headers as stored: each value encrypted, or the stored one kept where `"***"` was
    sent back, for the same server URL only (`secrets_at_rest.seal`)."""
    try:
        return seal(
            tool.headers,
            stored=None if before is None else before.headers,
            same_target=before is not None and before.server_url == tool.server_url,
            box=box,
            where=f"tools[{index}].headers",
            target="server_url",
        )
    except SecretRefused as exc:
        raise ToolsRefused(str(exc)) from None


async def tools_to_store(
    given: list[Any], *, before: dict[str, Any] | None, settings: Settings
) -> list[Any]:
    """`config.tools` as stored: MCP server URLs checked, header values encrypted."""
    previous = {
        tool.server_label: tool
        for tool in (stored_tools(stored_config(before)) if before is not None else [])
        if isinstance(tool, McpServerTool)
    }
    box = SecretBox.of(settings)
    stored: list[Tool] = []
    for index, tool in enumerate(parse_tools(given)):
        if isinstance(tool, McpServerTool):
            try:
                check_server_url(tool.server_url, settings)
            except TargetRefused as exc:
                raise ToolsRefused(f"tools[{index}].server_url {exc}") from None
            headers = _sealed_headers(index, tool, previous.get(tool.server_label), box)
            tool = tool.model_copy(update={"headers": headers})
        stored.append(tool)
    return [tool if isinstance(tool, str) else tool.model_dump(mode="json") for tool in stored]
