"""`read_file`: the tool of every run given files (`files.model_input`), with which its model
reads them, text in pages, by the id each file's line gives."""

from __future__ import annotations

from pydantic_ai import ModelRetry, RunContext, Tool

from atrium.files.reading import FileGone
from atrium.files.sniffing import is_text_type
from atrium.runtime.artifact_tools import RunDeps

PAGE_CHARS = 100_000


async def read_file(ctx: RunContext[RunDeps], file_id: str, offset: int = 0) -> str:
    """Read a file given with the prompt: its text from `offset` on, a page at a time.

    Args:
        file_id: The file's id, as its line in the prompt gives it (`file_…` or `art_…`).
        offset: The character to start from (0: the beginning).
    """
    file = ctx.deps.files.get(file_id.strip())
    if file is None:
        given = ", ".join(ctx.deps.files) or "none"
        raise ModelRetry(f"no file {file_id[:60]!r} was given to this run; given: {given}")
    if file.content is None:
        return f"{file.header()} deleted before the run started."
    if not is_text_type(file.content_type):
        return (
            f"{file.header()} not text; an image or PDF was given to you with the prompt as it is."
        )
    start = max(offset, 0)
    try:  # the page's bytes alone, from where they are stored (`files.reading`)
        page, characters = await file.content.text(start, PAGE_CHARS)
    except FileGone:
        return f"{file.header()} deleted while the run ran."
    end = start + len(page)
    if end < characters:
        page += f"\n[{characters - end} more characters: read_file({file_id!r}, offset={end})]"
    return page


READ_FILE: Tool[RunDeps] = Tool(read_file, takes_ctx=True)
