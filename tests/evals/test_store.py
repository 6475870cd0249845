"""Storing, listing, reading and deleting evals over HTTP; credits, latency and version come
from the stored runs; another account sees nothing; a bad field is a 400 naming it."""

from __future__ import annotations

from typing import Any

import httpx

from tests.conftest import KeyFactory, bearer
from tests.evals.conftest import EVALS, SHA, body, finished_run, new_agent


async def _two_version_eval(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> tuple[str, dict[str, Any], list[dict[str, Any]]]:
    agent_id = await new_agent(client, auth, "one")
    put = await client.put(
        f"/v1/agents/{agent_id}", json={"config": {"instructions": "two"}}, headers=auth
    )
    assert put.status_code == 200, put.text
    runs = [
        await finished_run(client, auth, f"{agent_id}@1", "hello"),
        await finished_run(client, auth, f"{agent_id}@2", "hello"),
    ]
    stored = await client.post(
        EVALS,
        json=body(
            [f"{agent_id}@1", f"{agent_id}@2"],
            {
                "c1": [
                    (f"{agent_id}@1", runs[0]["run_id"], True),
                    (f"{agent_id}@2", runs[1]["run_id"], False),
                ]
            },
        ),
        headers=auth,
    )
    assert stored.status_code == 201, stored.text
    return agent_id, stored.json(), runs


async def test_store_read_list_delete(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    agent_id, stored, runs = await _two_version_eval(client, auth)
    assert stored["dataset"] == {"name": "cases.jsonl", "sha256": SHA}
    assert stored["agents"] == [
        {"ref": f"{agent_id}@1", "agent_id": agent_id, "versions": [1]},
        {"ref": f"{agent_id}@2", "agent_id": agent_id, "versions": [2]},
    ]
    first, second = stored["cases"][0]["results"]
    assert (first["passed"], second["passed"]) == (True, False)
    assert (first["agent_version"], second["agent_version"]) == (1, 2)
    assert first["credits"] == runs[0]["billing"]["credits"]
    assert first["latency_ms"] is not None and first["latency_ms"] >= 0
    assert [t["pass_rate"] for t in stored["totals"]] == [1.0, 0.0]

    eval_id = stored["eval_id"]
    read = await client.get(f"{EVALS}/{eval_id}", headers=auth)
    assert read.status_code == 200 and read.json() == stored
    listed = await client.get(EVALS, params={"limit": 1}, headers=auth)
    assert [e["eval_id"] for e in listed.json()["data"]] == [eval_id]
    assert listed.json()["data"][0]["cases"] == 1
    assert listed.json()["has_more"] is False

    deleted = await client.delete(f"{EVALS}/{eval_id}", headers=auth)
    assert deleted.json() == {"eval_id": eval_id, "deleted": True}
    assert (await client.get(f"{EVALS}/{eval_id}", headers=auth)).status_code == 404
    assert (await client.delete(f"{EVALS}/{eval_id}", headers=auth)).status_code == 404
    assert (await client.get(EVALS, headers=auth)).json()["data"] == []


async def test_pages_follow_the_cursor(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    agent_id = await new_agent(client, auth, "one")
    run = await finished_run(client, auth, agent_id, "hi")
    ids = []
    for _ in range(3):
        made = await client.post(
            EVALS, json=body([agent_id], {"c": [(agent_id, run["run_id"], True)]}), headers=auth
        )
        ids.append(made.json()["eval_id"])
    first = (await client.get(EVALS, params={"limit": 2}, headers=auth)).json()
    assert first["has_more"] is True
    rest = (
        await client.get(EVALS, params={"limit": 2, "cursor": first["next_cursor"]}, headers=auth)
    ).json()
    assert [e["eval_id"] for e in first["data"] + rest["data"]] == ids[::-1]


async def test_another_account_sees_nothing(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory
) -> None:
    agent_id, stored, runs = await _two_version_eval(client, auth)
    other = bearer((await make_key("other")).key)
    eval_id = stored["eval_id"]
    assert (await client.get(f"{EVALS}/{eval_id}", headers=other)).status_code == 404
    assert (await client.delete(f"{EVALS}/{eval_id}", headers=other)).status_code == 404
    assert (await client.get(EVALS, headers=other)).json()["data"] == []
    # Nor can it store an eval of this account's runs.
    refused = await client.post(
        EVALS, json=body([agent_id], {"c": [(agent_id, runs[0]["run_id"], True)]}), headers=other
    )
    assert refused.status_code == 400
    assert refused.json()["error"]["details"]["parameter"] == "cases.0.results.0.run_id"
    assert (await client.get(f"{EVALS}/{eval_id}", headers=auth)).status_code == 200


async def _refused(client: httpx.AsyncClient, auth: dict[str, str], payload: dict[str, Any]) -> str:
    response = await client.post(EVALS, json=payload, headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    parameter: str = error["details"]["parameter"]
    return parameter


async def test_bad_input_names_the_field(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    agent_id = await new_agent(client, auth, "one")
    other_agent = await new_agent(client, auth, "other")
    run = (await finished_run(client, auth, agent_id, "hi"))["run_id"]
    good = body([agent_id], {"c": [(agent_id, run, True)]})

    bad_sha = body([agent_id], {"c": [(agent_id, run, True)]})
    bad_sha["dataset"]["sha256"] = "xyz"
    assert "sha256" in await _refused(client, auth, bad_sha)
    assert "run_id" in await _refused(
        client, auth, body([agent_id], {"c": [(agent_id, "run_nosuchrun", True)]})
    )
    assert (
        await _refused(client, auth, body([agent_id], {"c": [("agt_elsewhere", run, True)]}))
        == "cases.0.results.0.agent"
    )
    assert (
        await _refused(client, auth, body([other_agent], {"c": [(other_agent, run, True)]}))
        == "cases.0.results.0.run_id"
    )
    twice = body([agent_id], {"c": [(agent_id, run, True)]})
    twice["cases"].append(twice["cases"][0])
    assert await _refused(client, auth, twice) == "cases.1.case_id"
    bad_check = body([agent_id], {"c": [(agent_id, run, True)]})
    bad_check["cases"][0]["results"][0]["checks"][0]["type"] = "regex"
    assert "type" in await _refused(client, auth, bad_check)
    judged = body([agent_id], {"c": [(agent_id, run, True)]})
    judged["cases"][0]["results"][0]["checks"][0].update(type="judge", judge_run_id="run_nosuch")
    assert await _refused(client, auth, judged) == "cases.0.results.0.checks.0.judge_run_id"
    assert (await client.get(EVALS, headers=auth)).json()["data"] == []
    assert (await client.post(EVALS, json=good, headers=auth)).status_code == 201
