"""Image URLs of a run's input: refused at create when their name resolves to an address that
is not public, and fetched by atrium itself when the run executes, through the outbound check
on the address it connects to (docs/decisions/0064-versions-and-files-gaps.md). Names come from
a DNS server on loopback; the only web server is on 127.0.0.1."""

from __future__ import annotations

import gzip
import json

import httpx
import pytest

from tests.dns_server import DNSServer, module_dns, shared_dns
from tests.files.helpers import png, refused
from tests.files.image_host import Answer, ImageHost, image_host
from tests.runs.helpers import RUNS, create_run, wait_finished

__all__ = ["image_host", "module_dns", "shared_dns"]

HOST = "images.test"


@pytest.fixture
def allow_private() -> bool:
    return False


@pytest.fixture
def settings_overrides(shared_dns: DNSServer, allow_private: bool) -> dict[str, object]:
    return {
        "dns_nameservers": [shared_dns.address],
        "dns_timeout_seconds": 2.0,
        "allow_private_targets": allow_private,
        "file_max_bytes": 100_000,
    }


def _image(url: str) -> list[dict[str, str]]:
    return [{"type": "image", "url": url}]


async def _failed(client: httpx.AsyncClient, auth: dict[str, str], url: str) -> str:
    run = await create_run(client, auth, "Look", input=_image(url))
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "failed", done
    assert done["error"]["code"] == "INPUT_UNAVAILABLE", done["error"]
    message: str = done["error"]["message"]
    assert message.startswith(f"image URL {url}: ")
    return message


async def test_a_name_resolving_to_a_private_address_is_a_400_naming_the_part(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer, image_host: ImageHost
) -> None:
    shared_dns.records[HOST] = {"A": ["127.0.0.1"]}
    shared_dns.records["intranet.test"] = {"A": ["10.0.0.7"]}
    shared_dns.records["mapped.test"] = {"AAAA": ["::ffff:169.254.169.254"]}
    for index, name in enumerate((HOST, "intranet.test", "mapped.test")):
        parts = [{"type": "text", "text": "see"}] * index + _image(image_host.url("/cat.png", name))
        response = await client.post(RUNS, json={"prompt": "Look", "input": parts}, headers=auth)
        message = refused(response, f"input.{index}.url")
        assert "is not a public address" in message, message
        assert name in message
    assert (await client.get(RUNS, headers=auth)).json()["data"] == []  # nothing stored
    assert image_host.requests == []


async def test_dns_that_changes_after_create_is_caught_when_the_run_fetches(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer, image_host: ImageHost
) -> None:
    # No address when the run is created (not checkable then), loopback when it executes.
    shared_dns.answer_in_turn("rebind.test", "A", [[], ["127.0.0.1"]])
    image_host.answers["/cat.png"] = Answer(png(), headers={"Content-Type": "image/png"})
    url = image_host.url("/cat.png", "rebind.test")
    message = await _failed(client, auth, url)
    assert "rebind.test (127.0.0.1) is not a public address" in message
    assert image_host.requests == []  # refused before connecting


@pytest.mark.parametrize("allow_private", [True])
async def test_an_image_url_is_fetched_and_given_as_an_image(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer, image_host: ImageHost
) -> None:
    shared_dns.records[HOST] = {"A": ["127.0.0.1"]}
    image = png(3, 3)
    # The server's type is not trusted: the bytes say PNG.
    image_host.answers["/dog"] = Answer(image, headers={"Content-Type": "text/plain"})
    image_host.answers["/moved"] = Answer(b"", 302, {"Location": "/dog"})
    url, moved = image_host.url("/dog", HOST), image_host.url("/moved", HOST)
    run = await create_run(client, auth, "Describe", input=_image(url) + _image(moved))
    assert run["input"] == _image(url) + _image(moved)
    done = await wait_finished(client, auth, run["run_id"])
    assert done["status"] == "completed", done
    assert done["result"].splitlines()[1:] == [
        f"Received Image {u} (image/png, {len(image)} bytes), given as an image of "
        f"{len(image)} bytes."
        for u in (url, moved)
    ]
    assert sorted(path for path, _ in image_host.requests) == ["/dog", "/dog", "/moved"]
    assert all(headers["Accept-Encoding"] == "identity" for _, headers in image_host.requests)
    # The thread's history names the image by its URL, without its bytes.
    messages = (
        await client.get(f"/api/v1/public/threads/{run['thread_id']}/messages", headers=auth)
    ).json()
    [prompt] = [item for item in messages["data"] if item["role"] == "user"]
    assert f"[{url}: given as image/png]" in prompt["content"]
    assert "iVBOR" not in json.dumps(messages)


@pytest.mark.parametrize("allow_private", [True])
async def test_what_is_not_an_image_fails_the_run_saying_why(
    client: httpx.AsyncClient, auth: dict[str, str], shared_dns: DNSServer, image_host: ImageHost
) -> None:
    shared_dns.records[HOST] = {"A": ["127.0.0.1"]}
    image_host.answers["/page"] = Answer(b"<html>hi</html>", headers={"Content-Type": "image/png"})
    # Compressed on the wire although identity was asked for: never inflated, so no image.
    bomb = gzip.compress(b"\x00" * 5_000_000)
    image_host.answers["/bomb.png"] = Answer(bomb, headers={"Content-Encoding": "gzip"})
    image_host.answers["/big.png"] = Answer(png() + b"\x00" * 100_000)
    cases = {
        "/page": "its bytes are text/plain, not an allowed image type",
        "/missing.png": "answered HTTP 404",
        "/bomb.png": "not an allowed image type",
        "/big.png": "over the 100000",
    }
    for path, reason in cases.items():
        message = await _failed(client, auth, image_host.url(path, HOST))
        assert reason in message, message
    unknown = await _failed(client, auth, image_host.url("/x.png", "nowhere.test"))
    assert "nowhere.test" in unknown
