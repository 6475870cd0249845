"""A run given a large text file: the worker reads the ranges of it that it needs from the
store, so its memory does not grow with the file, and `read_file` pages past the inline budget
give the file's text at any offset, a character split between two ranges included."""

from __future__ import annotations

import json
import tracemalloc
from collections.abc import AsyncIterator
from pathlib import Path

import httpx
import pytest
from pydantic_ai.messages import ModelMessage, ToolReturnPart
from pydantic_ai.models.function import AgentInfo, DeltaToolCall, DeltaToolCalls, FunctionModel

from atrium.files.reading import RANGE_BYTES
from atrium.runtime.llm_models import ModelRegistry
from tests.files.helpers import FILES, uploaded
from tests.files.test_s3_store import BUCKET, s3_url
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import create_run, wait_finished

__all__ = ["s3_url"]

MB = 1_048_576
# The memory test's file, and what the worker may allocate while the run reads it.
LARGE = 40 * MB
ALLOWED_PEAK = 16 * MB


@pytest.fixture(params=["database", "disk", "s3"])
def settings_overrides(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, object]:
    values: dict[str, object] = {
        "file_storage": request.param,
        "file_dir": tmp_path / "files",
        "file_max_bytes": LARGE + MB,
        "file_inline_max_tokens": 10,  # 40 characters inline
    }
    if request.param == "s3":
        values.update(
            file_s3_url=f"s3://{BUCKET}/pages",
            file_s3_endpoint=request.getfixturevalue("s3_url"),
            file_s3_access_key_id="test-key",
            file_s3_secret_access_key="test-secret",
        )
    return values


def _char_at(text: str, byte: int) -> int:
    """The index of the character whose UTF-8 bytes hold byte `byte`."""
    return len(text.encode()[:byte].decode("utf-8", "ignore"))


def _paged_text() -> str:
    """ASCII up to a 4-byte character across the first range's end, then lines starting with
    a 2-byte character, one of which straddles the second range's end."""
    head = "a" * (RANGE_BYTES - 2) + "\U0001d11e" + "bbb"
    lines = "".join(f"\u00e9{index:07d}\n" for index in range(160_000))
    return head + lines


async def test_read_file_pages_past_the_budget_at_any_offset(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    text = _paged_text()
    data = text.encode()
    first, second = _char_at(text, RANGE_BYTES), _char_at(text, 2 * RANGE_BYTES)
    assert data[RANGE_BYTES - 2 : RANGE_BYTES + 2].decode() == text[first] == "\U0001d11e"
    assert data[2 * RANGE_BYTES - 1 : 2 * RANGE_BYTES + 1].decode() == text[second] == "\u00e9"
    notes = await uploaded(client, auth, "long.txt", data)
    file_id = notes["file_id"]
    # Out of order: each page is read from the range its offset falls in.
    offsets = [second - 3, first - 3, first + 1, second + 1, len(text) - 30, 5, len(text) + 9]
    agent = await make_agent(tools=[])
    run = await create_run(
        client,
        auth,
        "\n".join(
            f'call read_file {{"file_id": "{file_id}", "offset": {offset}}}' for offset in offsets
        ),
        agent_id=agent,
        input=[{"type": "file", "file_id": file_id}],
    )
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    result = done["result"]
    # The inline budget's 40 characters, and how many characters are left: counted as text.
    assert f"beginning: '{'a' * 40} [{len(text) - 40} more" in result
    assert len(text) - 40 != len(data) - 40
    # The offline model quotes the first 2,000 characters of each tool output.
    for offset in offsets[:-2]:
        assert f"read_file returned: {text[offset : offset + 2_000]}" in result, offset
    # The last 30 characters with nothing after them; past the end, nothing.
    assert f"read_file returned: {text[-30:]}\n" in result + "\n"
    assert "read_file returned: \n" in result + "\n"


@pytest.mark.parametrize("settings_overrides", ["disk", "database"], indirect=True)
async def test_a_large_text_file_is_read_with_memory_flat(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    """The worker's allocations while a run is given a 40 MB text file and reads a page of it
    far into it, measured by tracemalloc's peak (allocations, not timing or the process's
    resident size: the same on a loaded machine). Python's allocations only: what SQLite or
    PostgreSQL allocate on their side is not traced (SQLite reads a range of the blob
    through its incremental blob I/O, PostgreSQL returns a substring)."""
    line = "0123456789abcdef" * 4095 + "0123456789abcde\n"  # 65,536 characters
    data = (line * (LARGE // len(line))).encode()
    notes = await uploaded(client, auth, "large.txt", data)
    del data
    file_id = notes["file_id"]
    agent = await make_agent(tools=[])
    offset = LARGE - 4 * len(line)  # a line's start
    prompt = f'call read_file {{"file_id": "{file_id}", "offset": {offset}}}'
    tracemalloc.start()
    try:
        run = await create_run(
            client, auth, prompt, agent_id=agent, input=[{"type": "file", "file_id": file_id}]
        )
        done = await wait_finished(client, auth, run["run_id"], within=120)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert done["status"] == "completed", done
    assert f"read_file returned: {line[:2_000]}" in done["result"]
    assert f"[{LARGE - 40} more" in done["result"]
    print(f"traced peak during a run given {LARGE // MB} MiB of text: {peak / MB:.1f} MiB")
    assert peak < ALLOWED_PEAK


async def test_a_file_deleted_while_the_run_runs_is_named_as_deleted(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
) -> None:
    """`read_file` reads the store when called: a file deleted after the run's model was given
    it is named as deleted, and the run goes on."""
    notes = await uploaded(client, auth, "notes.txt", b"Read me, if you can.\n" * 10)
    file_id = notes["file_id"]

    async def deletes_then_reads(
        messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        returns = [part for part in messages[-1].parts if isinstance(part, ToolReturnPart)]
        if returns:
            yield f"read_file said: {returns[0].content}"
            return
        deleted = await client.delete(f"{FILES}/{file_id}", headers=auth)
        assert deleted.status_code == 200, deleted.text
        call = json.dumps({"file_id": file_id, "offset": 5})
        yield {0: DeltaToolCall(name="read_file", json_args=call)}

    models.register("test:deletes-then-reads", FunctionModel(stream_function=deletes_then_reads))
    agent = await make_agent(model="test:deletes-then-reads", tools=[])
    run = await create_run(
        client, auth, "Read it", agent_id=agent, input=[{"type": "file", "file_id": file_id}]
    )
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["result"] == (
        f'read_file said: File {file_id} "notes.txt" (text/plain, 210 bytes): deleted while '
        "the run ran."
    )
