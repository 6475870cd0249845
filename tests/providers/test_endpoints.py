"""`/v1/providers`: create, list, read (by id or name), update, delete; secrets write-only and
encrypted at rest; every 400 names its parameter; another account's provider is a 404; models
that name a provider are checked against the account's providers and the server's."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
from sqlalchemy import select

from atrium.db.engine import Database
from atrium.db.models import Provider
from atrium.secrets_at_rest import SecretBox
from atrium.settings import Settings
from tests.conftest import KeyFactory, bearer
from tests.runs.helpers import RUNS

PROVIDERS = "/v1/providers"
KEY = "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU="
API_KEY = "sk-walrus-secret-7781"
TENANT = "tenant-hush-42"
# Validated only: nothing connects to it here.
BASE_URL = "https://llm.example.test/v1"


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {
        "secrets_key": KEY,
        "providers": {"shared": {"base_url": "http://127.0.0.1:9/v1", "api_key": "sk-operator"}},
    }


async def _create(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    response = await client.post(
        PROVIDERS, json={"name": "ollama", "base_url": BASE_URL, **body}, headers=auth
    )
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


def _invalid(response: httpx.Response, parameter: str) -> str:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"] == {"parameter": parameter}, error
    message: str = error["message"]
    return message


async def _stored(db: Database, provider_id: str) -> tuple[str | None, dict[str, str]]:
    """The raw columns of the provider's row, as the database holds them."""
    async with db.session(write=False) as session:
        row = (
            await session.execute(
                select(Provider.api_key, Provider.headers).where(Provider.id == provider_id)
            )
        ).one()
    return row.api_key, dict(row.headers)


async def test_create_list_get_update_delete(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await _create(
        client, auth, api_key=API_KEY, headers={"X-Tenant": TENANT, "OpenAI-Organization": "org"}
    )
    assert created["provider_id"].startswith("prv_")
    assert (created["name"], created["base_url"]) == ("ollama", BASE_URL)
    assert created["api_key"] == "***"
    assert created["headers"] == {"X-Tenant": "***", "OpenAI-Organization": "***"}
    assert created["created_at"].endswith("Z") and created["updated_at"].endswith("Z")
    plain = await _create(client, auth, name="vllm", base_url="http://vllm.example.test:8000/v1")
    assert (plain["api_key"], plain["headers"]) == (None, {})

    listed = await client.get(PROVIDERS, headers=auth)
    assert listed.status_code == 200
    assert "X-RateLimit-Limit" in listed.headers and "X-RateLimit-Remaining" in listed.headers
    assert listed.json() == {"data": [created, plain], "server_providers": ["shared"]}
    for key in (created["provider_id"], "ollama"):
        one = await client.get(f"{PROVIDERS}/{key}", headers=auth)
        assert (one.status_code, one.json()) == (200, created)

    renamed = await client.put(
        f"{PROVIDERS}/ollama", json={"name": "local", "api_key": "***"}, headers=auth
    )
    assert renamed.status_code == 200, renamed.text
    assert renamed.json()["name"] == "local" and renamed.json()["api_key"] == "***"
    assert (await client.get(f"{PROVIDERS}/ollama", headers=auth)).status_code == 404

    deleted = await client.delete(f"{PROVIDERS}/local", headers=auth)
    assert deleted.status_code == 200
    assert deleted.json() == {
        "provider_id": created["provider_id"],
        "name": "local",
        "deleted": True,
    }
    for method in ("GET", "PUT", "DELETE"):
        gone = await client.request(
            method, f"{PROVIDERS}/{created['provider_id']}", json={}, headers=auth
        )
        assert gone.status_code == 404 and gone.json()["error"]["code"] == "NOT_FOUND"
    assert [p["name"] for p in (await client.get(PROVIDERS, headers=auth)).json()["data"]] == [
        "vllm"
    ]


async def test_secrets_are_never_shown_and_encrypted_at_rest(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, settings: Settings
) -> None:
    created = await _create(client, auth, api_key=API_KEY, headers={"X-Tenant": TENANT})
    url = f"{PROVIDERS}/{created['provider_id']}"
    responses = [
        await client.get(PROVIDERS, headers=auth),
        await client.get(url, headers=auth),
        await client.put(url, json={"headers": {"X-Tenant": "***"}}, headers=auth),
    ]
    for response in responses:
        assert response.status_code == 200, response.text
        assert API_KEY not in response.text and TENANT not in response.text

    api_key, headers = await _stored(db, created["provider_id"])
    assert api_key is not None and headers.keys() == {"X-Tenant"}
    raw = json.dumps([api_key, headers])
    assert API_KEY not in raw and "walrus" not in raw and TENANT not in raw
    assert api_key.startswith("gAAAA") and headers["X-Tenant"].startswith("gAAAA")  # Fernet
    box = SecretBox.of(settings)
    assert box.decrypt(api_key) == API_KEY and box.decrypt(headers["X-Tenant"]) == TENANT


async def test_a_put_keeps_masked_secrets_only_for_the_same_base_url(
    client: httpx.AsyncClient, auth: dict[str, str], db: Database, settings: Settings
) -> None:
    created = await _create(client, auth, api_key=API_KEY, headers={"X-Tenant": TENANT})
    url = f"{PROVIDERS}/{created['provider_id']}"
    before = await _stored(db, created["provider_id"])
    box = SecretBox.of(settings)

    # Left out or sent back as "***": kept.
    kept = await client.put(
        url, json={"api_key": "***", "headers": {"x-tenant": "***"}}, headers=auth
    )
    assert kept.status_code == 200, kept.text
    api_key, headers = await _stored(db, created["provider_id"])
    assert box.decrypt(api_key or "") == API_KEY and box.decrypt(headers["x-tenant"]) == TENANT

    # A new address must get its secrets again: the stored ones never follow it there.
    elsewhere = {"base_url": "https://elsewhere.example.net/v1"}
    says = _invalid(await client.put(url, json=elsewhere, headers=auth), "api_key")
    assert "send the key again" in says
    says = _invalid(
        await client.put(url, json={**elsewhere, "api_key": "***"}, headers=auth), "api_key"
    )
    assert "send the value again when base_url changes" in says
    says = _invalid(
        await client.put(url, json={**elsewhere, "api_key": None}, headers=auth), "headers"
    )
    assert "send the values again" in says
    says = _invalid(
        await client.put(
            url, json={**elsewhere, "api_key": None, "headers": {"X-Tenant": "***"}}, headers=auth
        ),
        "headers",
    )
    assert (await client.get(url, headers=auth)).json()["base_url"] == BASE_URL

    moved = await client.put(
        url, json={**elsewhere, "api_key": "sk-new", "headers": {}}, headers=auth
    )
    assert moved.status_code == 200, moved.text
    assert (moved.json()["api_key"], moved.json()["headers"]) == ("***", {})
    api_key, headers = await _stored(db, created["provider_id"])
    assert box.decrypt(api_key or "") == "sk-new" and headers == {}
    assert api_key != before[0]

    removed = await client.put(url, json={"api_key": None}, headers=auth)
    assert removed.status_code == 200 and removed.json()["api_key"] is None
    assert (await _stored(db, created["provider_id"]))[0] is None
    says = _invalid(await client.put(url, json={"api_key": "***"}, headers=auth), "api_key")
    assert says == 'api_key is "***" but no value is stored'


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"base_url": BASE_URL}, "name"),
        ({"name": None, "base_url": BASE_URL}, "name"),
        ({"name": 7, "base_url": BASE_URL}, "name"),
        ({"name": "", "base_url": BASE_URL}, "name"),
        ({"name": "Ollama", "base_url": BASE_URL}, "name"),
        ({"name": "9lives", "base_url": BASE_URL}, "name"),
        ({"name": "a/b", "base_url": BASE_URL}, "name"),
        ({"name": "a" * 33, "base_url": BASE_URL}, "name"),
        ({"name": "ollama\u0000", "base_url": BASE_URL}, "name"),
        ({"name": "ollama"}, "base_url"),
        ({"name": "ollama", "base_url": None}, "base_url"),
        ({"name": "ollama", "base_url": ""}, "base_url"),
        ({"name": "ollama", "base_url": "llm.example.test/v1"}, "base_url"),
        ({"name": "ollama", "base_url": "ftp://llm.example.test/v1"}, "base_url"),
        ({"name": "ollama", "base_url": "https://user:pw@llm.example.test/v1"}, "base_url"),
        ({"name": "ollama", "base_url": "https://llm.example.test/\u0000"}, "base_url"),
        ({"name": "ollama", "base_url": "https://llm.example.test/" + "a" * 2048}, "base_url"),
        ({"name": "ollama", "base_url": "http://127.0.0.1:11434/v1"}, "base_url"),
        ({"name": "ollama", "base_url": "http://localhost:11434/v1"}, "base_url"),
        ({"name": "ollama", "base_url": "http://10.0.0.5/v1"}, "base_url"),
        ({"name": "ollama", "base_url": "http://169.254.169.254/v1"}, "base_url"),
        ({"name": "ollama", "base_url": BASE_URL, "api_key": ""}, "api_key"),
        ({"name": "ollama", "base_url": BASE_URL, "api_key": "two words"}, "api_key"),
        ({"name": "ollama", "base_url": BASE_URL, "api_key": "k\u00e9y"}, "api_key"),
        ({"name": "ollama", "base_url": BASE_URL, "api_key": 42}, "api_key"),
        ({"name": "ollama", "base_url": BASE_URL, "api_key": "***"}, "api_key"),
        ({"name": "ollama", "base_url": BASE_URL, "headers": []}, "headers"),
        ({"name": "ollama", "base_url": BASE_URL, "headers": {"X-A": 1}}, "headers.X-A"),
        ({"name": "ollama", "base_url": BASE_URL, "headers": {"Bad Name": "v"}}, "headers"),
        ({"name": "ollama", "base_url": BASE_URL, "headers": {"Host": "v"}}, "headers"),
        ({"name": "ollama", "base_url": BASE_URL, "headers": {"authorization": "v"}}, "headers"),
        ({"name": "ollama", "base_url": BASE_URL, "headers": {"X-A": ""}}, "headers"),
        ({"name": "ollama", "base_url": BASE_URL, "headers": {"X-A": "a\nb"}}, "headers"),
        ({"name": "ollama", "base_url": BASE_URL, "headers": {"X-A": "1", "x-a": "2"}}, "headers"),
        ({"name": "ollama", "base_url": BASE_URL, "headers": {"X-A": "***"}}, "headers"),
        ({"name": "ollama", "base_url": BASE_URL, "models": ["x"]}, "models"),
    ],
)
@pytest.mark.parametrize("settings_overrides", [{"secrets_key": KEY}])
async def test_invalid_bodies_are_400_naming_the_parameter(
    client: httpx.AsyncClient, auth: dict[str, str], body: dict[str, Any], parameter: str
) -> None:
    _invalid(await client.post(PROVIDERS, json=body, headers=auth), parameter)
    assert (await client.get(PROVIDERS, headers=auth)).json()["data"] == []


async def test_invalid_updates_are_400_and_change_nothing(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await _create(client, auth, api_key=API_KEY)
    await _create(client, auth, name="vllm")
    url = f"{PROVIDERS}/ollama"
    for body, parameter in (
        ({"name": "vllm"}, "name"),
        ({"name": None}, "name"),
        ({"name": "Bad"}, "name"),
        ({"base_url": None}, "base_url"),
        ({"base_url": "http://127.0.0.1:9/v1", "api_key": None}, "base_url"),
        ({"headers": None}, "headers"),
        ({"headers": {"Host": "x"}}, "headers"),
        ({"api_key": "with space"}, "api_key"),
        ({"provider_id": "prv_x"}, "provider_id"),
    ):
        _invalid(await client.put(url, json=body, headers=auth), parameter)
    assert (await client.get(url, headers=auth)).json() == created
    body = await client.put(url, content=b"[]", headers=auth)
    assert body.status_code == 400 and body.json()["error"]["code"] == "INVALID_PARAMETER"


async def test_names_are_unique_per_account(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    await _create(client, auth)
    says = _invalid(
        await client.post(PROVIDERS, json={"name": "ollama", "base_url": BASE_URL}, headers=auth),
        "name",
    )
    assert says == "name has already been taken"
    other = bearer((await make_key()).key)
    assert (await _create(client, other))["name"] == "ollama"  # another account's namespace


async def test_another_accounts_provider_is_a_404(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    mine = await _create(client, auth, api_key=API_KEY)
    other = bearer((await make_key()).key)
    for key in (mine["provider_id"], "ollama"):
        for method, body in (("GET", None), ("PUT", {"base_url": BASE_URL}), ("DELETE", None)):
            response = await client.request(method, f"{PROVIDERS}/{key}", json=body, headers=other)
            assert response.status_code == 404, response.text
            assert response.json()["error"]["details"] == {"parameter": "provider"}
    assert (await client.get(PROVIDERS, headers=other)).json()["data"] == []
    assert (await client.get(f"{PROVIDERS}/ollama", headers=auth)).json() == mine


async def test_a_server_provider_is_listed_by_name_but_not_an_account_record(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    listed = (await client.get(PROVIDERS, headers=auth)).json()
    assert listed == {"data": [], "server_providers": ["shared"]}
    response = await client.get(f"{PROVIDERS}/shared", headers=auth)
    assert response.status_code == 404
    assert "one of the server's providers" in response.json()["error"]["message"]
    assert "sk-operator" not in response.text and "127.0.0.1" not in listed.__repr__()
    for key in ("x" * 5000, "prv_" + "a" * 40, "%00", "Ollama"):
        assert (await client.get(f"{PROVIDERS}/{key}", headers=auth)).status_code == 404


async def test_unauthenticated_requests_are_401(client: httpx.AsyncClient) -> None:
    for method in ("GET", "POST"):
        response = await client.request(method, PROVIDERS, json={})
        assert response.status_code == 401
        assert response.json()["error"]["code"] == "UNAUTHORIZED"


async def test_models_name_providers_the_account_or_the_server_has(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    """Checked at agent create and update and for a run's own model: an unknown provider is a
    400 on `config.model` listing the known ones (no ATRIUM_LLM_BASE_URL to fall back to)."""
    await _create(client, auth)
    for model in ("openai-compatible:ollama/llama3.2", "openai-compatible:shared/qwen2.5:7b"):
        agent = await client.post(
            "/v1/agents", json={"name": "a", "config": {"model": model}}, headers=auth
        )
        assert agent.status_code == 201, agent.text
    unknown = {"name": "a", "config": {"model": "openai-compatible:vllm/llama3.2"}}
    says = _invalid(await client.post("/v1/agents", json=unknown, headers=auth), "config.model")
    assert says == (
        "config.model: no provider named 'vllm' (known: ollama, shared; add one with "
        "POST /v1/providers, or ATRIUM_PROVIDERS on the server)"
    )
    run = {"prompt": "hi", "config": {"model": "openai-compatible:vllm/llama3.2"}}
    assert _invalid(await client.post(RUNS, json=run, headers=auth), "config.model") == says
    bare = {"name": "a", "config": {"model": "openai-compatible:llama3.2"}}
    says = _invalid(await client.post("/v1/agents", json=bare, headers=auth), "config.model")
    assert says.endswith(
        "or a provider: openai-compatible:<provider>/<model> (known: ollama, shared)"
    )

    # Another account does not see this one's provider.
    other = bearer((await make_key()).key)
    mine = {"name": "a", "config": {"model": "openai-compatible:ollama/llama3.2"}}
    says = _invalid(await client.post("/v1/agents", json=mine, headers=other), "config.model")
    assert "no provider named 'ollama' (known: shared;" in says

    # Deleted, the provider is unknown to agents again.
    created = await client.post("/v1/agents", json={"name": "b"}, headers=auth)
    await client.delete(f"{PROVIDERS}/ollama", headers=auth)
    changed = await client.put(
        f"/v1/agents/{created.json()['agent_id']}",
        json={"config": {"model": "openai-compatible:ollama/llama3.2"}},
        headers=auth,
    )
    assert "no provider named 'ollama' (known: shared;" in _invalid(changed, "config.model")
