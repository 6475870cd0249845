"""The tools an agent may be given: write, list and read artifacts (thread scope).

Bad arguments raise `ModelRetry`, so the model sees what was wrong and can try again instead of
failing the run.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pydantic_ai import ModelRetry, RunContext, Tool

from atrium.agents.config import MemoryConfig
from atrium.files.model_input import InputFile
from atrium.kit.filenames import filename_problem
from atrium.runtime.sink import MemoryStore, RunSink

_MIME_TYPE = re.compile(r"^[a-z0-9][a-z0-9!#$&^_.+-]*/[a-z0-9][a-z0-9!#$&^_.+-]*$")
_READ_LIMIT_CHARS = 100_000


@dataclass(frozen=True, slots=True)
class RunDeps:
    """What tools of one run can reach: the run's sink and its artifact limits."""

    run_id: str
    sink: RunSink
    max_artifact_bytes: int
    max_artifacts: int
    written: set[str]
    # The files the run was given (`files.model_input`), by id: what `read_file` reads.
    files: Mapping[str, InputFile] = field(default_factory=dict)
    # `config.memory` and the store its tools reach (`runtime.memory_tools`); None: no memory.
    memory: MemoryConfig | None = None
    memory_store: MemoryStore | None = None


async def write_artifact(
    ctx: RunContext[RunDeps], name: str, content: str, mime_type: str = "text/plain"
) -> str:
    """Save a file as an artifact of this run (writing the same name again replaces it).

    Args:
        name: A plain file name, e.g. `report.md`: no path, not starting with a dot.
        content: The file's text.
        mime_type: Its MIME type, e.g. `text/markdown`.
    """
    deps = ctx.deps
    clean_name = name.strip()
    # The name becomes a file on the user's disk when downloaded: one plain, visible file name.
    problem = filename_problem(clean_name)
    if problem is not None:
        raise ModelRetry(f"name {clean_name[:100]!r} {problem}; choose a plain name like report.md")
    mime = mime_type.strip().lower()
    if not _MIME_TYPE.match(mime):
        raise ModelRetry("mime_type must look like type/subtype, e.g. text/plain")
    data = content.encode()
    if len(data) > deps.max_artifact_bytes:
        raise ModelRetry(f"content is larger than {deps.max_artifact_bytes} bytes")
    if clean_name not in deps.written and len(deps.written) >= deps.max_artifacts:
        raise ModelRetry(f"a run may write at most {deps.max_artifacts} artifacts")
    await deps.sink.write_artifact(name=clean_name, content=data, mime_type=mime)
    deps.written.add(clean_name)
    return f"Saved artifact {clean_name} ({len(data)} bytes, {mime})."


async def list_artifacts(ctx: RunContext[RunDeps]) -> list[dict[str, Any]]:
    """List the artifacts written in this conversation thread (name, MIME type, size)."""
    return [
        {"name": item.name, "mime_type": item.mime_type, "size_bytes": item.size_bytes}
        for item in await ctx.deps.sink.list_artifacts()
    ]


async def read_artifact(ctx: RunContext[RunDeps], name: str) -> str:
    """Read the text of an artifact written in this conversation thread.

    Args:
        name: The artifact's file name, as `list_artifacts` shows it.
    """
    found = await ctx.deps.sink.read_artifact(name.strip())
    if found is None or found.content is None:
        raise ModelRetry(f"no artifact named {name!r} in this thread; call list_artifacts")
    text = found.content.decode("utf-8", errors="replace")
    if len(text) > _READ_LIMIT_CHARS:
        return text[:_READ_LIMIT_CHARS] + f"\n[truncated: {len(text)} characters in all]"
    return text


TOOLS: dict[str, Tool[RunDeps]] = {
    "write_artifact": Tool(write_artifact, takes_ctx=True),
    "list_artifacts": Tool(list_artifacts, takes_ctx=True),
    "read_artifact": Tool(read_artifact, takes_ctx=True),
}
