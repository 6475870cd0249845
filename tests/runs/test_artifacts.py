"""Artifacts of a run: metadata list, download with type and checksum."""

from __future__ import annotations

import hashlib

import httpx

from tests.conftest import KeyFactory, bearer
from tests.runs.helpers import RUNS, create_run, wait_finished


async def test_artifacts_are_listed_and_downloadable(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    run = await create_run(client, auth, "make a file")
    done = await wait_finished(client, auth, run["run_id"])
    listing = await client.get(f"{RUNS}/{run['run_id']}/artifacts", headers=auth)
    assert listing.status_code == 200
    [artifact] = listing.json()["data"]
    assert artifact == done["artifacts"][0]
    assert set(artifact) == {
        "artifact_id",
        "run_id",
        "name",
        "mime_type",
        "size_bytes",
        "sha256",
        "created_at",
        "download_url",
    }
    path = artifact["download_url"].removeprefix("http://127.0.0.1:8000")
    download = await client.get(path, headers=auth)
    assert download.status_code == 200
    assert download.headers["content-type"].startswith("text/markdown")
    assert "answer.md" in download.headers["content-disposition"]
    assert len(download.content) == artifact["size_bytes"]
    assert hashlib.sha256(download.content).hexdigest() == artifact["sha256"]
    assert b"make a file" in download.content


async def test_artifact_download_checks_account_and_id(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    run = await create_run(client, auth)
    done = await wait_finished(client, auth, run["run_id"])
    path = done["artifacts"][0]["download_url"].removeprefix("http://127.0.0.1:8000")
    other = bearer((await make_key()).key)
    assert (await client.get(path, headers=other)).status_code == 404
    missing = await client.get(f"{RUNS}/{run['run_id']}/artifacts/art_nope/content", headers=auth)
    assert missing.status_code == 404
    assert missing.json()["error"]["details"]["parameter"] == "artifact_id"
