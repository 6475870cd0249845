"""Evals through the Python client and `atrium eval`, against a real server with the offline
model: two versions of one agent on a dataset with every kind of check, a judge agent
scripted to its verdict; the stored eval read back; the same dataset twice gives the same
table (latency aside); a bad line runs nothing."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from atrium.client import Client, DatasetError
from tests.client.conftest import Server

SCHEMA = {"type": "object", "properties": {"answer": {"type": "string"}}, "required": ["answer"]}


@pytest.fixture
def user(server: Server, api_key: str) -> Server:
    return replace(server, env={**server.env, "ATRIUM_API_KEY": api_key, "COLUMNS": "250"})


def _agents(atrium: Client) -> tuple[str, str]:
    """An agent whose version 2 answers with an object (output schema), and a judge."""
    agent = atrium.agents.create("answerer", config={"instructions": "Answer.", "tools": []})
    atrium.agents.update(agent.agent_id, config={"output_schema": SCHEMA})
    judge = atrium.agents.create("judge", config={"instructions": "Judge.", "tools": []})
    return agent.agent_id, judge.agent_id


def _dataset(tmp_path: Path, judge: str) -> Path:
    cases: list[dict[str, Any]] = [
        {
            "id": "greet",
            "prompt": "hello there",
            "checks": [{"type": "contains", "value": "hello"}],
        },
        {
            "id": "json",
            "prompt": 'give json\noutput {"answer": "42"}',
            "checks": [
                {"type": "json_schema", "schema": SCHEMA},
                {"type": "contains", "value": "42"},
            ],
        },
        {
            "id": "exact",
            "prompt": 'exactly\noutput {"answer": "yes"}',
            "checks": [{"type": "exact", "value": {"answer": "yes"}}],
        },
        {
            "id": "judged",
            "prompt": "say hi",
            "checks": [
                {
                    "type": "judge",
                    "agent": judge,
                    "criteria": 'Polite?\noutput {"pass": true, "reason": "polite"}',
                }
            ],
        },
    ]
    path = tmp_path / "cases.jsonl"
    path.write_text("\n".join(json.dumps(case) for case in cases) + "\n")
    return path


def _table(found: dict[str, Any]) -> list[tuple[Any, ...]]:
    """The eval's table without latency and run ids (which change from one run to the next)."""
    return [
        (
            case["case_id"],
            result["agent"],
            result["agent_version"],
            result["passed"],
            [(check["type"], check["passed"]) for check in result["checks"]],
            result["credits"],
        )
        for case in found["cases"]
        for result in case["results"]
    ]


def test_eval_of_two_versions_through_the_cli(user: Server, atrium: Client, tmp_path: Path) -> None:
    agent_id, judge = _agents(atrium)
    dataset = _dataset(tmp_path, judge)
    v1, v2 = f"{agent_id}@v1", f"{agent_id}@v2"  # as `@1`, `@2`
    done = user.cli("eval", str(dataset), "--agent", v1, "--agent", v2, "--json", timeout=180)
    assert done.returncode == 0, done.stderr
    found = json.loads(done.stdout)
    assert [(a["ref"], a["versions"]) for a in found["agents"]] == [(v1, [1]), (v2, [2])]
    passed = {(row[0], row[1]): row[3] for row in _table(found)}
    assert passed == {
        ("greet", v1): True,
        ("greet", v2): False,  # an object answer does not quote the prompt
        ("json", v1): False,  # text is not JSON
        ("json", v2): True,
        ("exact", v1): False,
        ("exact", v2): True,
        ("judged", v1): True,
        ("judged", v2): True,
    }
    judged = found["cases"][3]["results"][0]["checks"][0]
    assert (judged["passed"], judged["reason"]) == (True, "polite")
    assert judged["judge_run_id"].startswith("run_")
    assert [(t["agent"], t["passed"], t["cases"]) for t in found["totals"]] == [
        (v1, 2, 4),
        (v2, 3, 4),
    ]
    # Credits and versions are the server's, from the runs.
    run = atrium.runs.get(found["cases"][0]["results"][0]["run_id"])
    assert found["cases"][0]["results"][0]["credits"] == (run.billing.credits if run.billing else 0)

    # The same dataset again: the same table, latency aside.
    again = user.cli("eval", str(dataset), "--agent", v1, "--agent", v2, "--json", timeout=180)
    assert again.returncode == 0, again.stderr
    assert _table(json.loads(again.stdout)) == _table(found)

    # The human table, and the stored evals.
    shown = user.cli("evals", "show", found["eval_id"])
    assert shown.returncode == 0, shown.stderr
    lines = shown.stdout.splitlines()
    json_row = next(line for line in lines if line.strip().startswith("json "))
    assert "FAIL json_schema" in json_row and "pass" in json_row
    total = next(line for line in lines if line.strip().startswith("total"))
    assert "2/4 (50%)" in total and "3/4 (75%)" in total and "p50" in total
    listed = user.cli("evals", "list", "--json")
    assert [e["eval_id"] for e in json.loads(listed.stdout)["data"]][1] == found["eval_id"]
    removed = user.cli("evals", "rm", found["eval_id"])
    assert removed.returncode == 0, removed.stderr
    assert user.cli("evals", "show", found["eval_id"]).returncode == 1


def test_the_python_client_runs_and_stores(atrium: Client, tmp_path: Path) -> None:
    agent_id, judge = _agents(atrium)
    found = atrium.evals.run(_dataset(tmp_path, judge), agents=[f"{agent_id}@2"], concurrency=2)
    assert [t.passed for t in found.totals] == [3]
    assert atrium.evals.get(found.eval_id).cases == found.cases
    assert [e.eval_id for e in atrium.evals.list().data] == [found.eval_id]


def test_a_bad_line_names_line_and_field_and_runs_nothing(
    user: Server, atrium: Client, tmp_path: Path
) -> None:
    agent = atrium.agents.create("a", config={"tools": []}).agent_id
    path = tmp_path / "bad.jsonl"
    path.write_text(
        json.dumps({"prompt": "ok", "checks": [{"type": "contains", "value": "x"}]})
        + "\n"
        + json.dumps({"prompt": "bad", "checks": [{"type": "contains"}]})
        + "\n"
    )
    with pytest.raises(DatasetError) as raised:
        atrium.evals.run(path, agents=[agent])
    assert raised.value.line == 2 and "value" in raised.value.field
    done = user.cli("eval", str(path), "--agent", agent)
    assert done.returncode == 1
    assert "bad.jsonl line 2" in done.stderr and "value" in done.stderr
    assert atrium.runs.list().data == []
    assert atrium.evals.list().data == []
