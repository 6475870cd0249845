"""Compaction: a long thread stays within its agent's `context_budget`, the summary is stored
and readable, the originals stay, the summarising request is billed; `POST …/compact` does it
on demand. The model is the offline one behind a recorder of what each request was sent."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import httpx
import pytest
from pydantic_ai.exceptions import ModelHTTPError
from pydantic_ai.messages import ModelMessage, ModelMessagesTypeAdapter
from pydantic_ai.models.function import AgentInfo, DeltaToolCalls, FunctionModel

from atrium.runtime.compaction import SUMMARY_MARKER, estimate_tokens
from atrium.runtime.llm_models import ModelRegistry
from atrium.runtime.offline import offline_model
from tests.conftest import KeyFactory, bearer
from tests.run_fixtures import AgentFactory
from tests.runs.helpers import RUNS, create_run, wait_finished
from tests.threads.helpers import THREADS, all_messages, create_thread

BUDGET = 400
TURNS = 200


class Recorder:
    """The offline model, recording the estimated size of what each request was sent."""

    def __init__(self) -> None:
        self.sizes: list[int] = []
        self.summaries = 0
        inner = offline_model()
        assert inner.function is not None and inner.stream_function is not None
        self._function = inner.function
        self._stream = inner.stream_function

    def _note(self, messages: list[ModelMessage], info: AgentInfo) -> None:
        if info.instructions and info.instructions.startswith(SUMMARY_MARKER):
            self.summaries += 1
            return
        self.sizes.append(estimate_tokens(ModelMessagesTypeAdapter.dump_python(messages)))

    async def respond(self, messages: list[ModelMessage], info: AgentInfo) -> Any:
        self._note(messages, info)
        return await self._function(messages, info)

    async def stream(
        self, messages: list[ModelMessage], info: AgentInfo
    ) -> AsyncIterator[str | DeltaToolCalls]:
        self._note(messages, info)
        async for item in self._stream(messages, info):
            yield item

    def model(self) -> FunctionModel:
        return FunctionModel(self.respond, stream_function=self.stream, model_name="recorder")


@pytest.fixture
async def auth(make_key: KeyFactory) -> dict[str, str]:
    """A premium key: 200 runs, the polling for the last of them and a read of each pass the
    standard tier's 1,000 requests an hour when the runs take a slow machine 15 s or more."""
    return bearer((await make_key(tier="premium")).key)


@pytest.fixture
def recorder(models: ModelRegistry) -> Recorder:
    made = Recorder()
    models.register("test:recorder", made.model())
    return made


async def test_a_long_thread_stays_within_its_budget(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory, recorder: Recorder
) -> None:
    agent = await make_agent(model="test:recorder", tools=[], context_budget=BUDGET)
    first = await create_run(client, auth, "turn one about zebras", agent_id=agent)
    thread = first["thread_id"]
    runs = [first] + [
        await create_run(client, auth, f"prompt number {n}", agent_id=agent, thread_id=thread)
        for n in range(2, TURNS + 1)
    ]
    last = await wait_finished(client, auth, runs[-1]["run_id"], within=300)
    assert last["status"] == "completed"

    # Every request of the thread's runs fit the budget plus the run's own prompt and answer.
    assert len(recorder.sizes) == TURNS
    assert max(recorder.sizes) <= BUDGET + 60, max(recorder.sizes)
    assert recorder.summaries >= 5
    # The last run saw a summary and a few verbatim turns, not 200 prompts.
    assert "turn 200" not in str(last["result"])

    items = await all_messages(client, auth, thread)
    summaries = [item for item in items if item["role"] == "summary"]
    assert len(summaries) == recorder.summaries
    live = [item for item in summaries if not item["compacted"]]
    assert len(live) == 1  # the latest stands in for everything before it
    assert live[0]["content"].startswith("This summary covers ")
    assert "prompt number" in live[0]["content"]
    # Every prompt is still stored verbatim and listed, the compacted ones marked.
    prompts = [item["content"] for item in items if item["role"] == "user"]
    assert prompts[0] == "turn one about zebras"
    assert len(prompts) == TURNS
    assert any(item["compacted"] for item in items if item["role"] == "user")

    # The runs that compacted were billed the summarising request as well.
    bills = [
        (await client.get(f"{RUNS}/{run['run_id']}", headers=auth)).json()["billing"]
        for run in runs
    ]
    assert sum(bill["requests"] for bill in bills) == TURNS + recorder.summaries


async def test_compaction_on_demand(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    agent = await make_agent(tools=[])
    run = await create_run(client, auth, "first question", agent_id=agent)
    thread = run["thread_id"]
    await wait_finished(client, auth, run["run_id"])
    for prompt in ("second question", "third question"):
        run = await create_run(client, auth, prompt, agent_id=agent, thread_id=thread)
        await wait_finished(client, auth, run["run_id"])

    response = await client.post(f"{THREADS}/{thread}/compact", headers=auth)
    assert response.status_code == 200, response.text
    body = response.json()
    assert body["compacted"] is True
    assert body["text"].startswith("This summary covers 2 earlier prompts")
    assert body["billing"]["input_tokens"] > 0
    # The newest run is kept verbatim: the next run sees the summary, that run, and itself.
    run = await create_run(client, auth, "fourth question", agent_id=agent, thread_id=thread)
    done = await wait_finished(client, auth, run["run_id"])
    assert "(turn 3)" in done["result"], done["result"]
    items = await all_messages(client, auth, thread)
    assert [item["compacted"] for item in items if item["role"] == "user"] == [
        True,
        True,
        False,
        False,
    ]


async def test_compaction_of_an_empty_busy_or_unknown_thread(
    client: httpx.AsyncClient, auth: dict[str, str], make_agent: AgentFactory
) -> None:
    empty = (await create_thread(client, auth))["id"]
    response = await client.post(f"{THREADS}/{empty}/compact", headers=auth)
    assert response.json() == {
        "thread_id": empty,
        "object": "thread.compaction",
        "compacted": False,
        "summary_id": None,
        "text": None,
        "through_run_id": None,
        "billing": None,
    }
    unknown = await client.post(f"{THREADS}/thr_nothere/compact", headers=auth)
    assert unknown.status_code == 404
    waiting = await create_run(
        client,
        auth,
        'call lookup {"word": "x"}',
        agent_id=await make_agent(
            tools=[{"type": "function", "name": "lookup", "parameters": {"type": "object"}}]
        ),
    )
    for _ in range(200):
        got = (await client.get(f"{RUNS}/{waiting['run_id']}", headers=auth)).json()
        if got["status"] == "requires_action":
            break
        await asyncio.sleep(0.05)
    busy = await client.post(f"{THREADS}/{waiting['thread_id']}/compact", headers=auth)
    assert busy.status_code == 409
    assert busy.json()["error"]["code"] == "THREAD_BUSY"


@pytest.mark.parametrize("budget", [0, 255, 10_000_001, "400", 1.5])
async def test_a_bad_budget_is_refused(
    client: httpx.AsyncClient, auth: dict[str, str], budget: object
) -> None:
    response = await client.post(
        "/v1/agents", json={"name": "a", "config": {"context_budget": budget}}, headers=auth
    )
    assert response.status_code == 400
    assert response.json()["error"]["details"]["parameter"] == "config.context_budget"


class FailingSummariser(Recorder):
    """The offline model, but its summarising request fails (`fail`) or never answers."""

    def __init__(self, *, fail: bool) -> None:
        super().__init__()
        self.fail = fail
        self.summarising = asyncio.Event()

    def _note(self, messages: list[ModelMessage], info: AgentInfo) -> None:
        if info.instructions and info.instructions.startswith(SUMMARY_MARKER):
            self.summarising.set()
            if self.fail:
                raise ModelHTTPError(503, "test:summariser", "overloaded")

    async def respond(self, messages: list[ModelMessage], info: AgentInfo) -> Any:
        self._note(messages, info)
        if info.instructions and info.instructions.startswith(SUMMARY_MARKER):
            await asyncio.Event().wait()  # never answers: only a cancellation ends it
        return await self._function(messages, info)


async def _over_budget_thread(
    client: httpx.AsyncClient, auth: dict[str, str], agent: str
) -> tuple[str, int]:
    """A thread whose history is over a budget of 256 (the agent's is larger): the thread, and
    how many items its conversation has."""
    long = "a long question " * 60
    run = await create_run(client, auth, long, agent_id=agent)
    await wait_finished(client, auth, run["run_id"])
    again = await create_run(client, auth, long, agent_id=agent, thread_id=run["thread_id"])
    await wait_finished(client, auth, again["run_id"])
    return run["thread_id"], len(await all_messages(client, auth, run["thread_id"]))


@pytest.mark.parametrize("fail", [True, False], ids=["provider-error", "cancelled"])
async def test_a_failed_or_cancelled_summary_ends_the_run_as_a_model_request_would(
    client: httpx.AsyncClient,
    auth: dict[str, str],
    make_agent: AgentFactory,
    models: ModelRegistry,
    fail: bool,
) -> None:
    summariser = FailingSummariser(fail=fail)
    models.register("test:summariser", summariser.model())
    agent = await make_agent(tools=[])
    thread, items = await _over_budget_thread(client, auth, agent)
    # From now on the history is over the budget: the next run summarises first.
    changed = await client.put(
        f"/v1/agents/{agent}",
        json={"config": {"model": "test:summariser", "context_budget": 256}},
        headers=auth,
    )
    assert changed.status_code == 200, changed.text
    run = await create_run(client, auth, "and now?", agent_id=agent, thread_id=thread)
    if not fail:
        await asyncio.wait_for(summariser.summarising.wait(), 20)
        cancel = await client.post(f"{RUNS}/{run['run_id']}/cancel", headers=auth)
        assert cancel.status_code == 200, cancel.text
    done = await wait_finished(client, auth, run["run_id"])
    if fail:
        assert done["status"] == "failed"
        assert done["error"]["code"] == "MODEL_ERROR", done["error"]
        assert "503" in done["error"]["message"]
    else:
        assert done["status"] == "cancelled"
    # Nothing was summarised: the conversation is the two runs and this run's prompt.
    after = await all_messages(client, auth, thread)
    assert not [item for item in after if item["role"] == "summary"]
    assert len(after) >= items

    if fail:  # on demand, the provider's failure is a 502 naming it, and nothing is stored
        response = await client.post(f"{THREADS}/{thread}/compact", headers=auth)
        assert response.status_code == 502, response.text
        error = response.json()["error"]
        assert error["code"] == "MODEL_ERROR"
        assert error["details"] == {"error_code": "MODEL_ERROR"}
        assert not [i for i in await all_messages(client, auth, thread) if i["role"] == "summary"]
