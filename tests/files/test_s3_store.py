"""The `s3` file store against a local S3 server (moto's server mode, on loopback)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import boto3
import httpx
import pytest
from moto.server import ThreadedMotoServer

from tests.files.helpers import FILES, png, refused, upload, uploaded
from tests.runs.helpers import create_run, wait_finished

BUCKET = "atrium-files"


@pytest.fixture(scope="module")
def s3_url() -> Iterator[str]:
    server = ThreadedMotoServer(ip_address="127.0.0.1", port=0, verbose=False)
    server.start()
    host, port = server.get_host_and_port()
    url = f"http://{host}:{port}"
    _client(url).create_bucket(Bucket=BUCKET)
    yield url
    server.stop()


def _client(url: str) -> Any:
    return boto3.client(
        "s3",
        endpoint_url=url,
        region_name="us-east-1",
        aws_access_key_id="test-key",
        aws_secret_access_key="test-secret",
    )


def _objects(url: str) -> list[str]:
    listed = _client(url).list_objects_v2(Bucket=BUCKET)
    return sorted(item["Key"] for item in listed.get("Contents", []))


@pytest.fixture
def settings_overrides(s3_url: str) -> dict[str, object]:
    return {
        "file_storage": "s3",
        "file_s3_url": f"s3://{BUCKET}/uploads",
        "file_s3_endpoint": s3_url,
        "file_s3_access_key_id": "test-key",
        "file_s3_secret_access_key": "test-secret",
        "file_max_bytes": 10_000_000,
    }


async def test_files_live_in_the_bucket(
    client: httpx.AsyncClient, auth: dict[str, str], s3_url: str
) -> None:
    for key in _objects(s3_url):  # an earlier test's database variant
        _client(s3_url).delete_object(Bucket=BUCKET, Key=key)
    big = b"x" * 6_000_000  # over S3's 5 MiB part: a multipart upload
    notes = await uploaded(client, auth, "big.txt", big)
    image = await uploaded(client, auth, "cat.png", png())
    assert _objects(s3_url) == sorted(
        [f"uploads/{notes['file_id']}", f"uploads/{image['file_id']}"]
    )
    content = await client.get(f"{FILES}/{notes['file_id']}/content", headers=auth)
    assert content.content == big
    run = await create_run(
        client, auth, "Look", input=[{"type": "image", "file_id": image["file_id"]}]
    )
    done = await wait_finished(client, auth, run["run_id"])
    assert f"given as an image of {image['size_bytes']} bytes" in done["result"]
    # Refused uploads leave nothing in the bucket; a deletion removes the object.
    refused(await upload(client, auth, "empty.txt", b""), "file")
    refused(await upload(client, auth, "big.txt", b"y" * 10_000_001), "file")
    await client.delete(f"{FILES}/{notes['file_id']}", headers=auth)
    assert _objects(s3_url) == [f"uploads/{image['file_id']}"]
