"""Signing secrets at rest: the database holds them encrypted with the deployment's key
(`ATRIUM_SECRETS_KEY`, or on SQLite the key file beside the database), the client gets the
secret once, and deliveries are signed with it (checked with `standardwebhooks`)."""

from __future__ import annotations

import httpx
import pytest
from sqlalchemy import Select, select

from atrium.db.engine import Database
from atrium.db.models import Run, WebhookEndpoint
from atrium.secrets_at_rest import SecretBox
from atrium.settings import Settings
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.webhooks.conftest import FAST
from tests.webhooks.receiver import Receiver, verify

KEY = "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU="


@pytest.fixture(params=["configured key", "key file"])
def settings_overrides(request: pytest.FixtureRequest) -> dict[str, object]:
    """The key from `ATRIUM_SECRETS_KEY`, or (SQLite only) the key file beside the database."""
    if request.param == "configured key":
        return {**FAST, "secrets_key": KEY}
    if "postgres" in request.node.callspec.id:
        pytest.skip("a PostgreSQL deployment has no key file")
    return dict(FAST)


async def _stored(db: Database, query: Select[tuple[str | None]]) -> str:
    async with db.session(write=False) as session:
        found = await session.scalar(query)
    assert isinstance(found, str)
    return found


async def test_the_database_holds_only_sealed_secrets_and_deliveries_verify(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    db: Database,
    settings: Settings,
    receiver: Receiver,
) -> None:
    created = await client.post("/v1/webhooks", json={"url": receiver.url("/hook")}, headers=auth)
    assert created.status_code == 201, created.text
    hook = created.json()
    run = await create_run(client, auth, webhook_url=receiver.url("/own"))

    box = SecretBox.of(settings)
    endpoint_secret = select(WebhookEndpoint.secret).where(WebhookEndpoint.id == hook["webhook_id"])
    run_secret = select(Run.webhook_secret).where(Run.id == run["run_id"])
    for query, secret in ((endpoint_secret, hook["secret"]), (run_secret, run["webhook_secret"])):
        stored = await _stored(db, query)
        assert secret.startswith("whsec_")
        assert secret not in stored and secret.removeprefix("whsec_") not in stored
        assert box.decrypt(stored) == secret

    done = await wait_finished(client, auth, run["run_id"])
    (to_hook,) = await receiver.wait_for("/hook", 1)
    (to_run,) = await receiver.wait_for("/own", 1)
    assert verify(hook["secret"], to_hook) == done
    assert verify(run["webhook_secret"], to_run) == done
    # Never shown again: not in the list, the endpoint, or the run.
    listed = (await client.get("/v1/webhooks", headers=auth)).text
    shown = (await client.get(f"/v1/webhooks/{hook['webhook_id']}", headers=auth)).text
    assert hook["secret"] not in listed and hook["secret"] not in shown
    assert (
        run["webhook_secret"]
        not in (await client.get(f"{RUNS}/{run['run_id']}", headers=auth)).text
    )


async def test_an_idempotent_replay_shows_the_runs_secret_again(
    client: httpx.AsyncClient, auth: dict[str, str], receiver: Receiver
) -> None:
    headers = {**auth, "Idempotency-Key": "sealed-replay"}
    body = {"prompt": "Say hello", "webhook_url": receiver.url("/replayed")}
    first = await client.post(RUNS, json=body, headers=headers)
    replay = await client.post(RUNS, json=body, headers=headers)
    assert replay.headers["idempotent-replayed"] == "true"
    assert replay.json()["webhook_secret"] == first.json()["webhook_secret"]
    assert replay.json()["webhook_secret"].startswith("whsec_")
