"""Runs on named providers, over the wire: two OpenAI-compatible servers on loopback at once,
each run reaching the server its model names, with that provider's key and headers; a change
or a deletion counts from the next run on, also when made through another app on the same
database (no process keeps a provider between runs); the operator's providers from settings;
the old single server beside them; the outbound rule when connecting."""

from __future__ import annotations

import gc
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from asgi_lifespan import LifespanManager
from openai import AsyncOpenAI
from starlette.requests import Request
from starlette.responses import Response

from atrium.app import create_app
from atrium.runtime.llm_models import ModelRegistry
from atrium.settings import Settings
from tests.dns_server import DNSServer
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import create_run, wait_finished
from tests.runtime.chat_server import ChatServer

PROVIDERS = "/v1/providers"
KEY = "S1bW8pJ0Mr0rD8vY3G7wI8i3oW3ci6ZK0oDk7Q0Z5mU="


class Server(ChatServer):
    """A chat server that answers with its own name, and keeps each request's headers."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self.name = name
        self.headers: list[dict[str, str]] = []

    async def _chat(self, request: Request) -> Response:
        self.headers.append(dict(request.headers))
        return await super()._chat(request)

    def _move(self, body: dict[str, Any]) -> dict[str, Any]:
        return {"content": f"{self.name} answers {body['model']}"}

    @property
    def models(self) -> list[str]:
        return [request["model"] for request in self.requests]


@pytest.fixture
async def alpha() -> AsyncIterator[Server]:
    async with Server("alpha") as server:
        yield server


@pytest.fixture
async def beta() -> AsyncIterator[Server]:
    async with Server("beta") as server:
        yield server


@pytest.fixture
def settings_overrides(beta: Server) -> dict[str, object]:
    # Loopback servers stand in for the providers: the outbound rule is lifted (its own test
    # below keeps it). `beta` is also the operator's provider `shared`.
    return {
        "secrets_key": KEY,
        "allow_private_targets": True,
        "providers": {
            "shared": {
                "base_url": beta.base_url,
                "api_key": "sk-operator",
                "headers": {"X-Deployment": "eu-1"},
            }
        },
        "credit_prices": {"openai-compatible:alpha/llama3.2": {"input": 2.0, "output": 10.0}},
    }


async def _provider(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    response = await client.post(PROVIDERS, json=body, headers=auth)
    assert response.status_code == 201, response.text
    created: dict[str, Any] = response.json()
    return created


async def _run(client: httpx.AsyncClient, auth: dict[str, str], **body: Any) -> dict[str, Any]:
    run = await create_run(client, auth, "hello", **body)
    return await wait_finished(client, auth, run["run_id"])


async def test_two_providers_at_once_each_run_reaches_its_own(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    alpha: Server,
    beta: Server,
) -> None:
    await _provider(
        client,
        auth,
        name="alpha",
        base_url=alpha.base_url,
        api_key="sk-alpha",
        headers={"X-Tenant": "acme"},
    )
    await _provider(client, auth, name="beta", base_url=beta.base_url, api_key="sk-beta")
    agent_id = await make_agent(model="openai-compatible:alpha/llama3.2", tools=[])

    first = await _run(client, auth, agent_id=agent_id)
    assert first["status"] == "completed", first
    assert first["result"].strip() == "alpha answers llama3.2"
    assert first["model"] == "openai-compatible:alpha/llama3.2"
    # Priced by the full name, as any model: 120 + 30 tokens at 2 and 10 per million.
    assert first["billing"]["credits"] == (120 * 2.0 + 30 * 10.0) / 1_000_000
    # A run's own model, on the other provider (the model id keeps its colons).
    second = await _run(
        client, auth, agent_id=agent_id, config={"model": "openai-compatible:beta/qwen2.5:7b"}
    )
    assert second["status"] == "completed", second
    assert second["result"].strip() == "beta answers qwen2.5:7b"
    # Not in the price table: the default price, as every openai-compatible model.
    assert second["billing"]["credits"] == (120 * 5.0 + 30 * 15.0) / 1_000_000

    assert (alpha.models, beta.models) == (["llama3.2"], ["qwen2.5:7b"])
    assert alpha.authorizations == ["Bearer sk-alpha"]
    assert beta.authorizations == ["Bearer sk-beta"]
    assert alpha.headers[0]["x-tenant"] == "acme" and "x-tenant" not in beta.headers[0]


async def test_a_change_counts_from_the_next_run_in_every_app(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    settings: Settings,
    alpha: Server,
    beta: Server,
) -> None:
    await _provider(client, auth, name="local", base_url=alpha.base_url, api_key="sk-1")
    agent_id = await make_agent(model="openai-compatible:local/llama3.2", tools=[])
    assert (await _run(client, auth, agent_id=agent_id))["result"].strip().startswith("alpha")

    # Changed through another app on the same database (an API process of a scaled-out
    # deployment), run by this app's worker: nothing of the old provider was kept.
    other = create_app(settings.model_copy(update={"run_worker": False}))
    async with LifespanManager(other):
        transport = httpx.ASGITransport(app=other)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as api:
            moved = await api.put(
                f"{PROVIDERS}/local",
                json={"base_url": beta.base_url, "api_key": "sk-2"},
                headers=auth,
            )
            assert moved.status_code == 200, moved.text
    done = await _run(client, auth, agent_id=agent_id)
    assert done["status"] == "completed", done
    assert done["result"].strip() == "beta answers llama3.2"
    assert (len(alpha.requests), beta.authorizations) == (1, ["Bearer sk-2"])

    # The key alone changed: the same address, a new key from the next run on.
    changed = await client.put(f"{PROVIDERS}/local", json={"api_key": "sk-3"}, headers=auth)
    assert changed.status_code == 200, changed.text
    assert (await _run(client, auth, agent_id=agent_id))["status"] == "completed"
    assert beta.authorizations == ["Bearer sk-2", "Bearer sk-3"]


async def test_a_deleted_provider_fails_the_runs_that_name_it(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory, alpha: Server
) -> None:
    await _provider(client, auth, name="alpha", base_url=alpha.base_url)
    agent_id = await make_agent(model="openai-compatible:alpha/llama3.2", tools=[])
    deleted = await client.delete(f"{PROVIDERS}/alpha", headers=auth)
    assert deleted.status_code == 200, deleted.text

    done = await _run(client, auth, agent_id=agent_id)
    assert done["status"] == "failed"
    assert done["error"] == {
        "code": "MODEL_UNAVAILABLE",
        "message": "openai-compatible:alpha/llama3.2: no provider named 'alpha' (known: shared; "
        "add one with POST /v1/providers, or ATRIUM_PROVIDERS on the server)",
    }
    assert alpha.requests == []
    refused = await client.put(
        f"/v1/agents/{agent_id}",
        json={"config": {"model": "openai-compatible:alpha/llama3.2"}},
        headers=auth,
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["details"] == {"parameter": "config.model"}

    # Created again, it serves the same agent's next run.
    await _provider(client, auth, name="alpha", base_url=alpha.base_url)
    assert (await _run(client, auth, agent_id=agent_id))["status"] == "completed"
    assert alpha.models == ["llama3.2"]


async def test_the_operators_provider_and_an_accounts_of_the_same_name(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    alpha: Server,
    beta: Server,
) -> None:
    listed = (await client.get(PROVIDERS, headers=auth)).json()
    assert listed == {"data": [], "server_providers": ["shared"]}
    agent_id = await make_agent(model="openai-compatible:shared/mistral", tools=[])
    done = await _run(client, auth, agent_id=agent_id)
    assert done["status"] == "completed", done
    assert done["result"].strip() == "beta answers mistral"
    assert beta.authorizations == ["Bearer sk-operator"]
    assert beta.headers[0]["x-deployment"] == "eu-1"

    # The account's own provider of that name comes first, for this account only.
    await _provider(client, auth, name="shared", base_url=alpha.base_url)
    assert (await _run(client, auth, agent_id=agent_id))["result"].strip().startswith("alpha")
    await client.delete(f"{PROVIDERS}/shared", headers=auth)
    assert (await _run(client, auth, agent_id=agent_id))["result"].strip().startswith("beta")
    assert (alpha.models, beta.models) == (["mistral"], ["mistral", "mistral"])


@pytest.fixture
async def single() -> AsyncIterator[Server]:
    async with Server("single") as server:
        yield server


# The test's own app below runs the runs: the fixture's app (the key's) has no worker.
@pytest.mark.parametrize(
    "settings_overrides", [{"allow_private_targets": True, "run_worker": False}]
)
async def test_the_single_server_setting_works_beside_named_providers(
    auth: dict[str, str], settings: Settings, alpha: Server, single: Server
) -> None:
    """`openai-compatible:<model>` is the model of ATRIUM_LLM_BASE_URL as before, a model id
    with slashes included, unless its first segment names a provider."""
    both = create_app(
        settings.model_copy(update={"llm_base_url": single.base_url, "run_worker": True})
    )
    async with LifespanManager(both):
        transport = httpx.ASGITransport(app=both)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as http:
            await _provider(http, auth, name="alpha", base_url=alpha.base_url)
            results = []
            for model in (
                "openai-compatible:llama3.1:8b",
                "openai-compatible:Qwen/Qwen2.5-7B-Instruct",
                "openai-compatible:meta-llama/Llama-3.1-8B",
                "openai-compatible:alpha/llama3.2",
            ):
                done = await _run(http, auth, config={"model": model})
                assert done["status"] == "completed", done
                results.append(done["result"].strip())
    assert results == [
        "single answers llama3.1:8b",
        "single answers Qwen/Qwen2.5-7B-Instruct",
        "single answers meta-llama/Llama-3.1-8B",
        "alpha answers llama3.2",
    ]
    assert alpha.models == ["llama3.2"]


@pytest.mark.parametrize("settings_overrides", [{"secrets_key": KEY}])
async def test_an_accounts_provider_connects_only_to_public_addresses(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    quiet_dns: DNSServer,
    alpha: Server,
) -> None:
    """A name is judged when connecting, by the address it resolves to then (the server is
    on loopback, so refused: ATRIUM_ALLOW_PRIVATE_TARGETS is off here)."""
    quiet_dns.records["models.example.test"] = {"A": ["127.0.0.1"]}
    try:
        url = f"http://models.example.test:{alpha.port}/v1"
        await _provider(client, auth, name="alpha", base_url=url, api_key="sk-alpha")
        agent_id = await make_agent(model="openai-compatible:alpha/llama3.2", tools=[])
        done = await _run(client, auth, agent_id=agent_id)
    finally:
        quiet_dns.reset()
    assert done["status"] == "failed"
    assert done["error"]["code"] == "MODEL_UNAVAILABLE"
    assert "models.example.test (127.0.0.1) is not a public address" in done["error"]["message"]
    assert "ATRIUM_ALLOW_PRIVATE_TARGETS=true allows it" in done["error"]["message"]
    assert alpha.requests == []


@pytest.mark.parametrize(
    "settings_overrides", [{"secrets_key": KEY, "allow_private_targets": True}]
)
async def test_a_name_is_looked_up_through_atriums_resolver(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    quiet_dns: DNSServer,
    alpha: Server,
) -> None:
    quiet_dns.records["models.example.test"] = {"A": ["127.0.0.1"]}
    try:
        url = f"http://models.example.test:{alpha.port}/v1"
        await _provider(client, auth, name="alpha", base_url=url)
        agent_id = await make_agent(model="openai-compatible:alpha/llama3.2", tools=[])
        done = await _run(client, auth, agent_id=agent_id)
        asked = quiet_dns.asked("models.example.test")
    finally:
        quiet_dns.reset()
    assert done["status"] == "completed", done
    assert "A" in asked
    assert alpha.headers[0]["host"] == f"models.example.test:{alpha.port}"


@pytest.mark.parametrize(
    "settings_overrides",
    [{"secrets_key": KEY, "allow_private_targets": True, "model_cache_size": 2}],
)
async def test_the_clients_of_named_providers_stay_bounded(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    alpha: Server,
) -> None:
    """Every key change is a new connection: at most `ATRIUM_MODEL_CACHE_SIZE` clients are
    kept, the others closed once no run uses them."""
    await _provider(client, auth, name="alpha", base_url=alpha.base_url, api_key="sk-0")
    agent_id = await make_agent(model="openai-compatible:alpha/llama3.2", tools=[])
    for number in range(6):
        changed = await client.put(
            f"{PROVIDERS}/alpha", json={"api_key": f"sk-{number}"}, headers=auth
        )
        assert changed.status_code == 200, changed.text
        assert (await _run(client, auth, agent_id=agent_id))["status"] == "completed"
        assert len(models.named) <= 2
    assert alpha.authorizations == [f"Bearer sk-{number}" for number in range(6)]
    gc.collect()
    alive = [
        o
        for o in gc.get_objects()
        if isinstance(o, AsyncOpenAI) and str(o.base_url).rstrip("/") == alpha.base_url
    ]
    assert len([o for o in alive if not o.is_closed()]) <= 2
