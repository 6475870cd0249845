"""Runs that wait for their caller, through the client: `wait()` returns on `requires_action`,
`submit_actions` answers, `run_tools` is the run's function tools (sync and async)."""

from __future__ import annotations

from typing import Any

from atrium.client import AsyncClient, Client, ConflictError, PendingToolCall, RunRequiresAction

LOOKUP = {
    "type": "function",
    "name": "lookup",
    "parameters": {
        "type": "object",
        "properties": {"word": {"type": "string"}},
        "required": ["word"],
    },
}
SHOUT = {"type": "function", "name": "shout", "description": "Upper-case a text."}


def test_wait_returns_when_the_run_needs_its_caller(atrium: Client) -> None:
    agent = atrium.agents.create("hitl", config={"tools": [LOOKUP]})
    run = atrium.runs.create('call lookup {"word": "atrium"}', agent_id=agent.agent_id)
    seen: list[Any] = []
    waiting = atrium.runs.wait(run.run_id, timeout=30, on_event=seen.append)
    assert waiting.waiting and waiting.status == "requires_action"
    assert waiting.required_action is not None
    [call] = waiting.required_action.tool_calls
    assert (call.kind, call.name, call.arguments) == ("function", "lookup", {"word": "atrium"})
    assert isinstance(seen[-1], RunRequiresAction)
    assert seen[-1].required_action.tool_calls[0].id == call.id

    queued = atrium.runs.submit_actions(run.run_id, tool_outputs={call.id: "a hall"})
    assert queued.status == "queued"
    try:
        atrium.runs.submit_actions(run.run_id, tool_outputs={call.id: "again"})
    except ConflictError:
        pass
    else:  # the run may already have finished; either way it no longer waits
        raise AssertionError("a second answer to the same wait must be a 409")
    done = atrium.runs.wait(run.run_id, timeout=30)
    assert done.status == "completed"
    assert "lookup returned: a hall" in str(done.result)


def test_run_tools_answers_every_wait(atrium: Client) -> None:
    """An error the function raises, or a function the caller lacks, is a failed output: with
    on_error "return" the model reads it and the run goes on."""
    tools = [{**LOOKUP, "on_error": "return"}, {**SHOUT, "on_error": "return"}]
    agent = atrium.agents.create("hitl", config={"tools": tools})
    prompt = 'call lookup {"word": "one"}\ncall shout {}\ncall lookup {"word": "boom"}'
    run = atrium.runs.create(prompt, agent_id=agent.agent_id)

    def lookup(word: str) -> dict[str, str]:
        if word == "boom":
            raise ValueError("no such word")
        return {"word": word, "meaning": "the first number"}

    done = atrium.runs.run_tools(run.run_id, {"lookup": lookup}, timeout=60)
    assert done.status == "completed"
    result = str(done.result)
    assert 'lookup returned: {"word":"one","meaning":"the first number"}' in result
    assert "shout failed: LookupError: the caller has no function 'shout'" in result
    assert "lookup failed: ValueError: no such word" in result
    assert done.billing is not None and done.billing.requests == 4


def test_run_tools_with_a_function_that_raises_and_on_error_fail(atrium: Client) -> None:
    agent = atrium.agents.create("hitl", config={"tools": [LOOKUP]})  # on_error "fail"
    run = atrium.runs.create('call lookup {"word": "boom"}', agent_id=agent.agent_id)

    def lookup(word: str) -> str:
        raise ValueError(f"no such word: {word}")

    done = atrium.runs.run_tools(run.run_id, {"lookup": lookup}, timeout=60)
    assert done.status == "failed"
    assert done.error is not None
    assert (done.error.code, done.error.message) == (
        "TOOL_ERROR",
        "lookup failed: ValueError: no such word: boom",
    )


async def test_async_run_tools_with_coroutines_and_an_approver(async_atrium: AsyncClient) -> None:
    agent = await async_atrium.agents.create("hitl", config={"tools": [LOOKUP]})
    run = await async_atrium.runs.create('call lookup {"word": "async"}', agent_id=agent.agent_id)
    asked: list[PendingToolCall] = []

    async def lookup(word: str) -> str:
        return word.upper()

    async def approve(call: PendingToolCall) -> bool:
        asked.append(call)
        return True

    done = await async_atrium.runs.run_tools(
        run.run_id, {"lookup": lookup}, approve=approve, timeout=60
    )
    assert done.status == "completed"
    assert "lookup returned: ASYNC" in str(done.result)
    assert asked == []  # no approval was pending
