"""A hostile MCP server on a loopback port: a long tool list, or a huge tool result.

Plain ASGI speaking MCP's streamable HTTP (JSON-RPC over POST, answered as JSON or as one
server-sent event), so a list of thousands of tools costs one prepared body, not a framework's
model of each tool. Its tools are `t0`, `t1`, … (each about `tool_bytes` of JSON, taking
`{"text": string}`); any call answers `result_bytes` of text.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from tests.loopback import LoopbackServer

Scope = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[MutableMapping[str, Any]]]
Send = Callable[[MutableMapping[str, Any]], Awaitable[None]]


def tool_list(count: int, tool_bytes: int) -> list[dict[str, Any]]:
    filler = "d" * max(tool_bytes - 120, 0)
    schema = {"type": "object", "properties": {"text": {"type": "string"}}}
    return [{"name": f"t{i}", "description": filler, "inputSchema": schema} for i in range(count)]


class BulkyMcpServer:
    """`async with BulkyMcpServer(tools=5_000) as server:` serves at `server.url`."""

    def __init__(
        self, *, tools: int = 3, tool_bytes: int = 1_600, result_bytes: int = 10, sse: bool = False
    ) -> None:
        self.sse = sse
        self.lists = 0
        self.calls = 0
        self._tools = json.dumps(tool_list(tools, tool_bytes))
        self._result = json.dumps(
            {"content": [{"type": "text", "text": "r" * result_bytes}], "isError": False}
        )
        self._served = LoopbackServer(self._app, path="/mcp", lifespan="off", interface="asgi3")
        self.port, self.url = self._served.port, self._served.url

    def _answer(self, method: str, params: dict[str, Any]) -> str:
        if method == "initialize":
            return json.dumps(
                {
                    "protocolVersion": params.get("protocolVersion", "2025-06-18"),
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "bulky", "version": "1"},
                }
            )
        if method == "tools/list":
            self.lists += 1
            return '{"tools":' + self._tools + "}"
        if method == "tools/call":
            self.calls += 1
            return self._result
        return "{}"

    async def _app(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        body = b""
        while True:
            message = await receive()
            body += message.get("body", b"")
            if not message.get("more_body"):
                break
        if scope["method"] != "POST":  # no stream of the server's own messages
            await _respond(send, 405, b"", "text/plain")
            return
        request = json.loads(body)
        if "id" not in request:  # a notification
            await _respond(send, 202, b"", "text/plain")
            return
        result = self._answer(request["method"], request.get("params") or {})
        payload = '{"jsonrpc":"2.0","id":' + json.dumps(request["id"]) + ',"result":' + result + "}"
        if self.sse:
            await _respond(
                send, 200, f"event: message\ndata: {payload}\n\n".encode(), "text/event-stream"
            )
        else:
            await _respond(send, 200, payload.encode(), "application/json")

    async def __aenter__(self) -> BulkyMcpServer:
        await self._served.__aenter__()
        return self

    async def __aexit__(self, *_: object) -> None:
        await self._served.__aexit__()


async def _respond(send: Send, status: int, body: bytes, content_type: str) -> None:
    headers = [(b"content-type", content_type.encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    # In pieces, as a large answer arrives: a reader may stop before the end.
    step = 1 << 16
    for start in range(0, max(len(body), 1), step):
        more = start + step < len(body)
        await send(
            {"type": "http.response.body", "body": body[start : start + step], "more_body": more}
        )
