"""Runs given files, images and text beside their prompt, on the offline model."""

from __future__ import annotations

import json

import httpx

from tests.conftest import KeyFactory, bearer
from tests.files.helpers import FILES, pdf, png, refused, uploaded
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, wait_finished


async def test_a_run_is_given_text_files_and_images(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    notes = await uploaded(client, auth, "notes.txt", b"The queue is durable.\nSecond line.\n")
    image = await uploaded(client, auth, "cat.png", png())
    document = await uploaded(client, auth, "spec.pdf", pdf())
    parts = [
        {"type": "text", "text": "Compare them."},
        {"type": "file", "file_id": notes["file_id"]},
        {"type": "image", "file_id": image["file_id"]},
        {"type": "file", "file_id": document["file_id"]},
    ]
    run = await create_run(client, auth, "Describe the inputs", input=parts)
    # The run stores references and what each file was, never the bytes.
    assert run["input"] == [
        parts[0],
        {**parts[1], "filename": "notes.txt", "content_type": "text/plain", "size_bytes": 35},
        {
            **parts[2],
            "filename": "cat.png",
            "content_type": "image/png",
            "size_bytes": image["size_bytes"],
        },
        {
            **parts[3],
            "filename": "spec.pdf",
            "content_type": "application/pdf",
            "size_bytes": document["size_bytes"],
        },
    ]
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["input"] == run["input"]
    assert done["result"].splitlines() == [
        "Offline answer (turn 1) to: Describe the inputs. I wrote answer.md.",
        "Received text: 'Compare them.'.",
        f'Received File {notes["file_id"]} "notes.txt" (text/plain, 35 bytes), beginning: '
        "'The queue is durable. Second line.'.",
        f'Received File {image["file_id"]} "cat.png" (image/png, {image["size_bytes"]} bytes), '
        f"given as an image of {image['size_bytes']} bytes.",
        f'Received File {document["file_id"]} "spec.pdf" (application/pdf, '
        f"{document['size_bytes']} bytes), given as a document of {document['size_bytes']} bytes.",
    ]
    # The artifact the run wrote is derived from its input: a line for each part.
    [artifact] = done["artifacts"]
    written = await client.get(
        f"{RUNS}/{run['run_id']}/artifacts/{artifact['artifact_id']}/content", headers=auth
    )
    assert written.text.endswith(
        "\n## Input\n\n" + "".join(f"- {line}\n" for line in done["result"].splitlines()[1:])
    )
    # The thread's history names the image and the document, without their bytes.
    messages = (
        await client.get(f"/api/v1/public/threads/{run['thread_id']}/messages", headers=auth)
    ).json()
    [prompt] = [item for item in messages["data"] if item["role"] == "user"]
    assert prompt["content"][0] == "Describe the inputs"
    assert f"[{image['file_id']}: given as image/png; read_file reads it]" in prompt["content"]
    assert "base64" not in json.dumps(messages) and "iVBOR" not in json.dumps(messages)
    # The next run of the thread sees that history.
    later = await create_run(client, auth, "And now?", thread_id=run["thread_id"])
    assert (await wait_finished(client, auth, later["run_id"]))["status"] == "completed"


async def test_read_file_reads_the_runs_files_in_pages(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    text = "".join(f"line {index}\n" for index in range(20_000))  # 208,890 characters
    notes = await uploaded(client, auth, "long.txt", text.encode())
    agent = await make_agent(tools=[])
    file_id = notes["file_id"]
    prompt = "\n".join(
        [
            f'call read_file {{"file_id": "{file_id}", "offset": 100000}}',
            'call read_file {"file_id": "file_nope"}',
        ]
    )
    run = await create_run(
        client, auth, prompt, agent_id=agent, input=[{"type": "file", "file_id": file_id}]
    )
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    result = done["result"]
    # The offline model quotes the first 2,000 characters of each tool output.
    assert f"read_file returned: {text[100_000:102_000]}" in result
    assert f"no file 'file_nope' was given to this run; given: {file_id}" in result


async def test_an_artifact_of_an_earlier_run_is_an_input(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    writer = await make_agent(tools=["write_artifact"])
    first = await create_run(client, auth, "Write the plan", agent_id=writer)
    done = await wait_finished(client, auth, first["run_id"])
    [artifact] = done["artifacts"]
    run = await create_run(
        client,
        auth,
        "Review it",
        input=[{"type": "file", "artifact_id": artifact["artifact_id"]}],
    )
    assert run["input"][0]["run_id"] == first["run_id"]
    as_image = await client.post(
        RUNS,
        json={"prompt": "p", "input": [{"type": "image", "artifact_id": artifact["artifact_id"]}]},
        headers=auth,
    )
    assert "text/markdown, not an image" in refused(as_image, "input.0.artifact_id")
    reviewed = await wait_finished(client, auth, run["run_id"])
    assert (
        f'Received File {artifact["artifact_id"]} "answer.md" (text/markdown, '
        f"{artifact['size_bytes']} bytes), beginning: '# Answer Prompt: Write the plan"
    ) in reviewed["result"]


async def test_bad_input_parts_are_400s_naming_the_part_and_store_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    image = await uploaded(client, auth, "cat.png", png())
    notes = await uploaded(client, auth, "notes.txt", b"text")
    other = bearer((await make_key("other-account")).key)
    theirs = await uploaded(client, other, "theirs.png", png())
    their_run = await create_run(client, other, "Write yours")
    [their_artifact] = (await wait_finished(client, other, their_run["run_id"]))["artifacts"]

    async def create(parts: list[dict[str, object]]) -> httpx.Response:
        return await client.post(RUNS, json={"prompt": "p", "input": parts}, headers=auth)

    text = {"type": "text", "text": "ok"}
    cases = [
        ([text, {"type": "image", "file_id": theirs["file_id"]}], "input.1.file_id", "no file"),
        ([{"type": "file", "file_id": "file_missing"}], "input.0.file_id", "no file"),
        ([{"type": "image", "file_id": notes["file_id"]}], "input.0.file_id", "not an image"),
        ([{"type": "image", "url": "http://127.0.0.1/x.png"}], "input.0.url", "not a public"),
        ([{"type": "image", "url": "http://10.0.0.7/x.png"}], "input.0.url", "not a public"),
        ([{"type": "image", "url": "http://localhost/x.png"}], "input.0.url", "localhost"),
        ([{"type": "image", "url": "file:///etc/passwd"}], "input.0.url", "http or https"),
        (
            [{"type": "image", "file_id": image["file_id"], "url": "http://127.0.0.1:9/a.png"}],
            "input.0",
            "exactly one",
        ),
        ([{"type": "file"}], "input.0", "exactly one"),
        ([{"type": "text", "text": "  "}], "input.0.text", "blank"),
        ([{"type": "file", "artifact_id": "art_missing"}], "input.0.artifact_id", "no artifact"),
        (
            [text, {"type": "file", "artifact_id": their_artifact["artifact_id"]}],
            "input.1.artifact_id",
            "no artifact",
        ),
        ([{"type": "text", "text": "x" * 32_001}], "input.0.text", "longer than 32000"),
    ]
    for parts, parameter, words in cases:
        assert words in refused(await create(parts), parameter), parts
    unknown_type = await create([{"type": "audio", "file_id": image["file_id"]}])
    assert unknown_type.status_code == 400
    assert unknown_type.json()["error"]["details"]["parameter"].startswith("input.0")
    too_many = await create([text] * 17)
    assert refused(too_many, "input")
    assert (await client.get(RUNS, headers=auth)).json()["data"] == []
    # The other account's file is still its own, and unchanged.
    assert (await client.get(f"{FILES}/{theirs['file_id']}", headers=other)).status_code == 200
