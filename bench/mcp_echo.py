"""A minimal MCP server (fastmcp, streamable HTTP) with one tool, `echo(text)`.

Run as `python mcp_echo.py PORT`. `agent_loop_bench.py` runs it in a process of its own, so a
run's MCP session costs atrium's side only: the server's CPU is not counted.
"""

from __future__ import annotations

import logging
import sys

from fastmcp import FastMCP

server = FastMCP("bench")


@server.tool
def echo(text: str) -> str:
    """The text, back."""
    return text


if __name__ == "__main__":
    # The MCP SDK logs a traceback ("Error in standalone SSE writer") each time a client ends
    # its session (mcp 1.x, the server's side of the close); the bench ends one every run.
    logging.getLogger("mcp.server.streamable_http").setLevel(logging.CRITICAL)
    port = int(sys.argv[1])
    server.run(transport="http", host="127.0.0.1", port=port, show_banner=False, log_level="error")
