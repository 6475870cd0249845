"""Every change of an agent's config is a version; versions are listed, compared, restored."""

from __future__ import annotations

import httpx

from tests.agents.versions.conftest import AGENTS, edit, new_agent


async def _versions(client: httpx.AsyncClient, auth: dict[str, str], agent_id: str) -> list[dict]:
    response = await client.get(f"{AGENTS}/{agent_id}/versions", headers=auth)
    assert response.status_code == 200, response.text
    data: list[dict] = response.json()["data"]
    return data


async def test_creating_an_agent_makes_version_1(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await new_agent(client, auth)
    agent = (await client.get(f"{AGENTS}/{agent_id}", headers=auth)).json()
    (version,) = await _versions(client, auth, agent_id)
    assert version["version"] == 1
    assert version["live"] is True
    assert version["restored_from"] is None
    assert version["config"] == agent["config"]
    assert len(version["content_hash"]) == 64
    one = await client.get(f"{AGENTS}/{agent_id}/versions/1", headers=auth)
    assert one.json() == version


async def test_every_edit_is_a_version_an_identical_one_is_not(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await new_agent(client, auth)
    await edit(client, auth, agent_id, instructions="v2")
    await edit(client, auth, agent_id, temperature=0.1)
    await edit(client, auth, agent_id, temperature=0.1)  # the same config: no version
    await edit(client, auth, agent_id, instructions="v2")  # the same again
    renamed = await client.put(f"{AGENTS}/{agent_id}", json={"name": "Other"}, headers=auth)
    assert renamed.status_code == 200  # a name is not config: no version
    versions = await _versions(client, auth, agent_id)
    assert [v["version"] for v in versions] == [3, 2, 1]
    assert [v["live"] for v in versions] == [True, False, False]
    assert [v["config"]["instructions"] for v in versions] == ["v2", "v2", "v1"]
    assert [v["config"]["temperature"] for v in versions] == [0.1, 0.7, 0.7]
    assert len({v["content_hash"] for v in versions}) == 3


async def test_the_agent_says_which_version_is_live(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    created = await client.post(
        AGENTS, json={"name": "Live", "config": {"instructions": "v1"}}, headers=auth
    )
    agent_id = created.json()["agent_id"]
    shown = [created.json()["version"]]
    shown.append((await edit(client, auth, agent_id, instructions="v2"))["version"])
    shown.append((await edit(client, auth, agent_id, instructions="v2"))["version"])  # no version
    renamed = await client.put(f"{AGENTS}/{agent_id}", json={"name": "Renamed"}, headers=auth)
    shown.append(renamed.json()["version"])
    await client.post(f"{AGENTS}/{agent_id}/versions/1/restore", headers=auth)
    shown.append((await client.get(f"{AGENTS}/{agent_id}", headers=auth)).json()["version"])
    assert shown == [1, 2, 2, 2, 3]
    listed = (await client.get(AGENTS, headers=auth)).json()["data"]
    assert [a["version"] for a in listed if a["agent_id"] == agent_id] == [3]
    [live] = [v for v in await _versions(client, auth, agent_id) if v["live"]]
    assert live["version"] == 3


async def test_back_to_an_earlier_config_is_a_new_version_with_its_hash(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await new_agent(client, auth)
    await edit(client, auth, agent_id, instructions="v2")
    await edit(client, auth, agent_id, instructions="v1")
    three, _, one = await _versions(client, auth, agent_id)
    assert three["version"] == 3
    assert three["content_hash"] == one["content_hash"]


async def test_restore_gives_exactly_the_earlier_config(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await new_agent(client, auth, max_output_tokens=300)
    first = (await client.get(f"{AGENTS}/{agent_id}", headers=auth)).json()["config"]
    await edit(
        client,
        auth,
        agent_id,
        instructions="changed",
        temperature=1.5,
        max_output_tokens=None,
        tools=["write_artifact"],
        output_schema={"type": "object", "properties": {"x": {"type": "string"}}},
    )
    restored = await client.post(f"{AGENTS}/{agent_id}/versions/1/restore", headers=auth)
    assert restored.status_code == 201, restored.text
    body = restored.json()
    assert body["version"] == 3
    assert body["restored_from"] == 1
    assert body["live"] is True
    assert body["config"] == first
    agent = (await client.get(f"{AGENTS}/{agent_id}", headers=auth)).json()
    assert agent["config"] == first
    one = (await client.get(f"{AGENTS}/{agent_id}/versions/1", headers=auth)).json()
    assert body["content_hash"] == one["content_hash"]
    # Restoring what is already live changes nothing.
    again = await client.post(f"{AGENTS}/{agent_id}/versions/1/restore", headers=auth)
    assert again.status_code == 200
    assert again.json()["version"] == 3
    assert [v["version"] for v in await _versions(client, auth, agent_id)] == [3, 2, 1]


async def test_diff_is_a_json_patch_with_what_each_change_drops(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    agent_id = await new_agent(client, auth)
    await edit(
        client,
        auth,
        agent_id,
        instructions="v2",
        tools=["write_artifact", "read_artifact"],
        context_budget=1000,
    )
    response = await client.get(f"{AGENTS}/{agent_id}/versions/2/diff?against=1", headers=auth)
    assert response.status_code == 200, response.text
    assert response.json() == {
        "agent_id": agent_id,
        "version": 2,
        "against": 1,
        "patch": [
            {"op": "replace", "path": "/context_budget", "value": 1000, "before": None},
            {"op": "replace", "path": "/instructions", "value": "v2", "before": "v1"},
            {
                "op": "replace",
                "path": "/tools",
                "value": ["write_artifact", "read_artifact"],
                "before": ["write_artifact", "list_artifacts", "read_artifact"],
            },
        ],
    }
    same = await client.get(f"{AGENTS}/{agent_id}/versions/2/diff?against=2", headers=auth)
    assert same.json()["patch"] == []


async def test_versions_page_newest_first(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    agent_id = await new_agent(client, auth)
    for number in range(2, 8):
        await edit(client, auth, agent_id, instructions=f"v{number}")
    seen: list[int] = []
    cursor = None
    while True:
        params: dict[str, str | int] = {"limit": 3}
        if cursor:
            params["cursor"] = cursor
        page = await client.get(f"{AGENTS}/{agent_id}/versions", params=params, headers=auth)
        assert page.status_code == 200, page.text
        body = page.json()
        seen += [v["version"] for v in body["data"]]
        if not body["has_more"]:
            break
        cursor = body["next_cursor"]
    assert seen == [7, 6, 5, 4, 3, 2, 1]


async def test_unknown_versions_and_agents(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    agent_id = await new_agent(client, auth)
    missing = await client.get(f"{AGENTS}/{agent_id}/versions/9", headers=auth)
    assert missing.status_code == 404
    assert missing.json()["error"]["details"]["parameter"] == "version"
    against = await client.get(f"{AGENTS}/{agent_id}/versions/1/diff?against=9", headers=auth)
    assert against.status_code == 404
    assert against.json()["error"]["details"]["parameter"] == "against"
    restore = await client.post(f"{AGENTS}/{agent_id}/versions/9/restore", headers=auth)
    assert restore.status_code == 404
    for path in ("versions", "versions/1", "aliases"):
        response = await client.get(f"{AGENTS}/agt_nope/{path}", headers=auth)
        assert response.status_code == 404, path
    bad = await client.get(f"{AGENTS}/{agent_id}/versions/0", headers=auth)
    assert bad.status_code == 400
    assert bad.json()["error"]["details"]["parameter"] == "number"
    no_against = await client.get(f"{AGENTS}/{agent_id}/versions/1/diff", headers=auth)
    assert no_against.status_code == 400
    assert no_against.json()["error"]["details"]["parameter"] == "against"
