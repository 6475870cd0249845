"""What a provider receives of a run's files: OpenAI's multimodal parts, on the wire."""

from __future__ import annotations

import base64
from typing import Any

import httpx
import pytest

from tests.dns_server import DNSServer, dns_server
from tests.files.helpers import pdf, png, uploaded
from tests.files.image_host import Answer, ImageHost, image_host
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.chat_server import ANSWER, ChatServer, chat_server

__all__ = ["chat_server", "dns_server", "image_host"]


@pytest.fixture
def settings_overrides(chat_server: ChatServer, dns_server: DNSServer) -> dict[str, object]:
    # The image URL's host is a name of the test's DNS server, on loopback.
    return {
        "llm_base_url": chat_server.base_url,
        "llm_api_key": "sk-local-test",
        "dns_nameservers": [dns_server.address],
        "allow_private_targets": True,
    }


async def test_images_documents_and_text_reach_the_model_in_openais_format(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    chat_server: ChatServer,
    dns_server: DNSServer,
    image_host: ImageHost,
) -> None:
    image, document = png(), pdf()
    dns_server.records["images.test"] = {"A": ["127.0.0.1"]}
    dog = png(4, 4)
    image_host.answers["/dog.png"] = Answer(dog, headers={"Content-Type": "image/png"})
    dog_url = image_host.url("/dog.png", "images.test")
    cat = await uploaded(client, auth, "cat.png", image)
    spec = await uploaded(client, auth, "spec.pdf", document)
    notes = await uploaded(client, auth, "notes.md", b"# Notes\nDurable queue.\n")
    agent = await make_agent(model="openai-compatible:local-llm", tools=["write_artifact"])
    run = await create_run(
        client,
        auth,
        "Summarise what you see",
        agent_id=agent,
        input=[
            {"type": "image", "file_id": cat["file_id"]},
            {"type": "file", "file_id": spec["file_id"]},
            {"type": "file", "file_id": notes["file_id"]},
            {"type": "image", "url": dog_url},
        ],
    )
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["result"].strip() == ANSWER
    # The model was offered read_file beside the agent's own tool.
    first = chat_server.requests[0]
    assert {tool["function"]["name"] for tool in first["tools"]} == {"write_artifact", "read_file"}
    [user] = [message for message in first["messages"] if message["role"] == "user"]
    content: list[dict[str, Any]] = user["content"]
    assert content[0] == {"type": "text", "text": "Summarise what you see"}
    assert content[1] == {
        "type": "text",
        "text": f'File {cat["file_id"]} "cat.png" (image/png, {len(image)} bytes):',
    }
    data_uri = "data:image/png;base64," + base64.b64encode(image).decode()
    assert content[2]["type"] == "image_url"
    assert content[2]["image_url"]["url"] == data_uri
    assert content[4]["type"] == "file"
    assert content[4]["file"]["file_data"] == (
        "data:application/pdf;base64," + base64.b64encode(document).decode()
    )
    assert content[5]["text"].startswith(f'File {notes["file_id"]} "notes.md" (text/markdown')
    assert content[6] == {"type": "text", "text": "# Notes\nDurable queue.\n"}
    # An image URL: fetched by atrium, given as the image itself.
    assert content[7] == {"type": "text", "text": f"Image {dog_url} (image/png, {len(dog)} bytes):"}
    assert content[8]["type"] == "image_url"
    assert (
        content[8]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(dog).decode()
    )
    # The second request (after the tool call) carries the same parts: one user message.
    second = chat_server.requests[1]
    assert [m for m in second["messages"] if m["role"] == "user"] == [user]
