"""A run given files that waits for its caller gets them again when it resumes; text files are
inlined within the token budget, the rest left to `read_file`."""

from __future__ import annotations

import httpx
import pytest

from tests.files.helpers import FILES, png, uploaded
from tests.run_fixtures import AgentFactory
from tests.runs.actions_helpers import LOOKUP, act, wait_status
from tests.runs.helpers import create_run, wait_finished


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"file_inline_max_tokens": 10}  # 40 characters of text files per run


async def test_a_resumed_run_is_given_its_image_again(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    image = await uploaded(client, auth, "cat.png", png())
    agent = await make_agent(tools=[LOOKUP])
    run = await create_run(
        client,
        auth,
        'call lookup {"word": "cat"}',
        agent_id=agent,
        input=[{"type": "image", "file_id": image["file_id"]}],
    )
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    [call] = waiting["required_action"]["tool_calls"]
    answered = await act(
        client,
        auth,
        run["run_id"],
        {"tool_outputs": [{"tool_call_id": call["id"], "output": "a pet"}]},
    )
    assert answered.status_code == 200, answered.text
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    # The model's prompt after the wait holds the image's bytes again, not the line naming it.
    assert f"given as an image of {image['size_bytes']} bytes" in done["result"]
    assert "lookup returned: a pet" in done["result"]


async def test_text_past_the_budget_is_named_with_its_offset(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    text = "0123456789" * 10
    first = await uploaded(client, auth, "a.txt", text.encode())
    second = await uploaded(client, auth, "b.txt", b"never inlined")
    agent = await make_agent(tools=[])
    run = await create_run(
        client,
        auth,
        f'call read_file {{"file_id": "{first["file_id"]}", "offset": 40}}',
        agent_id=agent,
        input=[
            {"type": "file", "file_id": first["file_id"]},
            {"type": "file", "file_id": second["file_id"]},
        ],
    )
    done = await wait_finished(client, auth, run["run_id"])
    result = done["result"]
    assert "beginning: '0123456789012345678901234567890123456789 [60 more characters" in result
    # The budget is spent: the second file is named, its text left to read_file.
    assert '"b.txt" (text/plain, 13 bytes), beginning: "[13 more characters: read_file(' in result
    assert f"read_file returned: {text[40:]}" in result


async def test_a_file_deleted_before_the_model_reads_it_is_named_as_deleted(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    """Its bytes are read each time the run's model is given its input: deleted while the run
    waits for its caller, the file is named as deleted when it resumes, and the run goes on."""
    notes = await uploaded(client, auth, "notes.txt", b"Read me later.\n")
    agent = await make_agent(tools=[LOOKUP])
    run = await create_run(
        client,
        auth,
        'call lookup {"word": "notes"}',
        agent_id=agent,
        input=[{"type": "file", "file_id": notes["file_id"]}],
    )
    waiting = await wait_status(client, auth, run["run_id"], "requires_action")
    gone = await client.delete(f"{FILES}/{notes['file_id']}", headers=auth)
    assert gone.status_code == 200, gone.text
    [call] = waiting["required_action"]["tool_calls"]
    answered = await act(
        client,
        auth,
        run["run_id"],
        {"tool_outputs": [{"tool_call_id": call["id"], "output": "a word"}]},
    )
    assert answered.status_code == 200, answered.text
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert (
        f'Received File {notes["file_id"]} "notes.txt" (text/plain, 15 bytes): deleted before '
        "the run started."
    ) in done["result"]
    assert "Read me later" not in done["result"]
    assert done["input"][0]["filename"] == "notes.txt"  # the reference stays
