"""A tiny MCP server to try atrium's MCP tools with (docs/guide/tools.md).

    .venv/bin/python examples/mcp_server.py [--port 8765]

fastmcp's server half is one of atrium's development dependencies (`make run` installs them;
atrium itself ships only its client). It serves streamable HTTP at http://127.0.0.1:8765/mcp
with three tools, `lookup(word)`, `add(a, b)` and `define(word)` (a busy one: it fails the
first time it is asked for each word), and prints each call it receives, so you can see
atrium's calls arrive. The address is loopback: atrium refuses private and loopback MCP
URLs unless it runs with `ATRIUM_ALLOW_PRIVATE_TARGETS=true` (for local development only).
"""

from __future__ import annotations

import argparse
import json
import sys

from fastmcp import FastMCP
from fastmcp.exceptions import ToolError

GLOSSARY = {
    "atrium": "the central hall of a Roman house, open to the sky",
    "agent": "a program that uses a model and tools to do a task",
    "mcp": "the Model Context Protocol: how a model's tools are served",
}

server = FastMCP("atrium-example")
# The words `define` was asked for: it fails the first time, as a busy service does.
_asked: set[str] = set()


def _seen(name: str, arguments: dict[str, object]) -> None:
    print(f"called {name} {json.dumps(arguments)}", file=sys.stderr, flush=True)


@server.tool
def lookup(word: str) -> str:
    """Look a word up in a small glossary."""
    _seen("lookup", {"word": word})
    return GLOSSARY.get(word.lower(), f"no entry for {word!r}")


@server.tool
def add(a: int, b: int) -> int:
    """Add two integers."""
    _seen("add", {"a": a, "b": b})
    return a + b


@server.tool
def define(word: str) -> str:
    """Define a word (a busy service: the first request for a word fails; ask again)."""
    _seen("define", {"word": word})
    if word.lower() not in _asked:
        _asked.add(word.lower())
        raise ToolError("the dictionary is busy, try again")
    return GLOSSARY.get(word.lower(), f"no entry for {word!r}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--port", type=int, default=8765)
    port = parser.parse_args().port
    print(f"MCP server at http://127.0.0.1:{port}/mcp (tools: lookup, add, define)", flush=True)
    # Stateless: every request stands alone (no session to keep or close); warnings only, so
    # the calls printed above are what the terminal shows.
    server.run(
        transport="http",
        host="127.0.0.1",
        port=port,
        path="/mcp",
        stateless_http=True,
        show_banner=False,
        log_level="warning",
    )


if __name__ == "__main__":
    main()
