"""`/v1/schedules` over HTTP: the resource, its checks (400s naming the parameter), the preview
of next fire times, trigger, and runs carrying `schedule_id`."""

from __future__ import annotations

import httpx
import pytest

from tests.conftest import KeyFactory, bearer
from tests.runs.helpers import wait_finished
from tests.schedules.conftest import Clock
from tests.schedules.helpers import RUNS, SCHEDULES, create, firings


async def test_create_get_list_update_delete(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock
) -> None:
    clock.set("2026-01-05T08:00:00+00:00")  # a Monday
    made = await create(client, auth, cron="0 9 * * MON-FRI", timezone="Europe/Berlin")
    assert made["schedule_id"].startswith("sch_")
    assert made["thread"] == "new"
    assert made["on_overlap"] == "skip" and made["on_missed"] == "run_once"
    assert made["paused"] is False
    # 09:00 in Berlin in winter is 08:00 UTC: the next is tomorrow's (today's is now, and the
    # next fire time is the first after the schedule's creation).
    assert made["next_fire_at"] == "2026-01-06T08:00:00.000000Z"
    got = await client.get(f"{SCHEDULES}/{made['schedule_id']}", headers=auth)
    assert got.json() == made

    listed = await client.get(SCHEDULES, headers=auth)
    assert [each["schedule_id"] for each in listed.json()["data"]] == [made["schedule_id"]]

    updated = await client.put(
        f"{SCHEDULES}/{made['schedule_id']}",
        json={"cron": "30 7 * * *", "timezone": "UTC", "max_credits_per_day": 2.5},
        headers=auth,
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["next_fire_at"] == "2026-01-06T07:30:00.000000Z"
    assert updated.json()["max_credits_per_day"] == 2.5
    assert updated.json()["prompt"] == made["prompt"]

    paused = await client.post(f"{SCHEDULES}/{made['schedule_id']}/pause", headers=auth)
    assert paused.json()["paused"] is True and paused.json()["next_fire_at"] is None
    resumed = await client.post(f"{SCHEDULES}/{made['schedule_id']}/resume", headers=auth)
    assert resumed.json()["next_fire_at"] == "2026-01-06T07:30:00.000000Z"

    deleted = await client.delete(f"{SCHEDULES}/{made['schedule_id']}", headers=auth)
    assert deleted.json() == {"schedule_id": made["schedule_id"], "deleted": True}
    gone = await client.get(f"{SCHEDULES}/{made['schedule_id']}", headers=auth)
    assert gone.status_code == 404
    assert gone.json()["error"]["code"] == "NOT_FOUND"


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        ({"cron": "61 * * * *"}, "cron"),
        ({"cron": "* * *"}, "cron"),
        ({"cron": "@daily"}, "cron"),
        ({"cron": ""}, "cron"),
        ({"cron": "0 0 31 2 *"}, "cron"),
        ({"cron": "* * * * *", "timezone": "Mars/Olympus"}, "timezone"),
        ({"cron": "* * * * *", "timezone": "../../etc/passwd"}, "timezone"),
        ({"cron": "* * * * *", "thread": "thr_nobody"}, "thread"),
        ({"cron": "* * * * *", "agent_id": "agt_nobody"}, "agent_id"),
        ({"cron": "* * * * *", "on_overlap": "later"}, "on_overlap"),
        ({"cron": "* * * * *", "on_missed": "all"}, "on_missed"),
        ({"cron": "* * * * *", "max_credits_per_day": 0}, "max_credits_per_day"),
        ({"cron": "* * * * *", "starts_at": "2026-01-01T00:00:00"}, "starts_at"),
        (
            {
                "cron": "* * * * *",
                "starts_at": "2026-02-01T00:00:00Z",
                "ends_at": "2026-01-01T00:00:00Z",
            },
            "ends_at",
        ),
        ({"cron": "* * * * *", "prompt": " "}, "prompt"),
        ({"cron": "* * * * *", "config": {"model": "nope:model"}}, "config.model"),
        ({"cron": "* * * * *", "colour": "red"}, "colour"),
    ],
)
async def test_bad_input_is_a_400_naming_it(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock, body: dict, parameter: str
) -> None:
    response = await client.post(SCHEDULES, json={"prompt": "Hi", **body}, headers=auth)
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "INVALID_PARAMETER"
    assert error["details"]["parameter"] == parameter
    listed = await client.get(SCHEDULES, headers=auth)
    assert listed.json()["data"] == []  # nothing half-written


async def test_update_refuses_null_and_bad_rules(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock
) -> None:
    made = await create(client, auth, cron="0 9 * * *")
    url = f"{SCHEDULES}/{made['schedule_id']}"
    for body, parameter in [
        ({"cron": None}, "cron"),
        ({"cron": "0 25 * * *"}, "cron"),
        ({"timezone": "Nowhere/City"}, "timezone"),
        ({"ends_at": "2020-01-01T00:00:00Z", "starts_at": "2021-01-01T00:00:00Z"}, "ends_at"),
    ]:
        response = await client.put(url, json=body, headers=auth)
        assert response.status_code == 400, response.text
        assert response.json()["error"]["details"]["parameter"] == parameter
    unchanged = await client.get(url, headers=auth)
    assert unchanged.json() == made


async def test_another_accounts_schedule_is_unknown(
    client: httpx.AsyncClient, auth: dict[str, str], make_key: KeyFactory, clock: Clock
) -> None:
    made = await create(client, auth, cron="0 9 * * *")
    other = bearer((await make_key()).key)
    url = f"{SCHEDULES}/{made['schedule_id']}"
    for method, path in [
        ("GET", url),
        ("PUT", url),
        ("DELETE", url),
        ("POST", f"{url}/trigger"),
        ("POST", f"{url}/pause"),
        ("GET", f"{url}/next"),
        ("GET", f"{url}/firings"),
        ("GET", f"{url}/usage"),
    ]:
        response = await client.request(
            method, path, headers=other, json={} if method == "PUT" else None
        )
        assert response.status_code == 404, (method, path, response.text)
    runs = await client.get(RUNS, params={"schedule_id": made["schedule_id"]}, headers=other)
    assert runs.json()["data"] == []


async def test_next_previews_dst_in_local_time(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock
) -> None:
    clock.set("2026-03-27T12:00:00+00:00")
    made = await create(client, auth, cron="30 2 * * *", timezone="Europe/Berlin")
    response = await client.get(f"{SCHEDULES}/{made['schedule_id']}/next?n=3", headers=auth)
    assert response.status_code == 200
    assert response.json()["data"] == [
        {"fire_at": "2026-03-28T01:30:00.000000Z", "local_time": "2026-03-28T02:30:00+01:00"},
        # 02:30 does not exist on the 29th in Berlin: it fires as the clock jumps, at 03:00.
        {"fire_at": "2026-03-29T01:00:00.000000Z", "local_time": "2026-03-29T03:00:00+02:00"},
        {"fire_at": "2026-03-30T00:30:00.000000Z", "local_time": "2026-03-30T02:30:00+02:00"},
    ]
    too_many = await client.get(f"{SCHEDULES}/{made['schedule_id']}/next?n=51", headers=auth)
    assert too_many.status_code == 400
    assert too_many.json()["error"]["details"]["parameter"] == "n"


async def test_trigger_fires_a_run_carrying_schedule_id(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock
) -> None:
    made = await create(client, auth, cron="0 9 * * *", paused=True, metadata={"report": "daily"})
    response = await client.post(f"{SCHEDULES}/{made['schedule_id']}/trigger", headers=auth)
    assert response.status_code == 201, response.text
    firing = response.json()
    assert firing["status"] == "fired" and firing["trigger"] == "manual"
    assert firing["reason"] is None
    run = await wait_finished(client, auth, firing["run_id"])
    assert run["status"] == "completed"
    assert run["schedule_id"] == made["schedule_id"]
    assert run["metadata"] == {"report": "daily"}
    assert run["prompt"] == made["prompt"]

    listed = await client.get(RUNS, params={"schedule_id": made["schedule_id"]}, headers=auth)
    assert [each["run_id"] for each in listed.json()["data"]] == [firing["run_id"]]
    # A run made by hand carries no schedule_id.
    own = await client.post(RUNS, json={"prompt": "Hi"}, headers=auth)
    assert "schedule_id" not in own.json()
    assert [each["firing_id"] for each in await firings(client, auth, made["schedule_id"])] == [
        firing["firing_id"]
    ]


async def test_schedule_on_a_thread_continues_it(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock
) -> None:
    first = await client.post(RUNS, json={"prompt": "Remember me"}, headers=auth)
    thread_id = first.json()["thread_id"]
    await wait_finished(client, auth, first.json()["run_id"])
    made = await create(client, auth, cron="0 9 * * *", thread=thread_id)
    assert made["thread"] == thread_id
    fired = (await client.post(f"{SCHEDULES}/{made['schedule_id']}/trigger", headers=auth)).json()
    run = await wait_finished(client, auth, fired["run_id"])
    assert run["thread_id"] == thread_id

    # The thread deleted: the next firing is skipped, saying why.
    deleted = await client.delete(f"/api/v1/public/threads/{thread_id}", headers=auth)
    assert deleted.status_code == 200, deleted.text
    response = await client.post(f"{SCHEDULES}/{made['schedule_id']}/trigger", headers=auth)
    assert response.status_code == 201, response.text
    skipped = response.json()
    assert skipped["status"] == "skipped" and skipped["reason"] == "thread_missing"


async def test_usage_by_schedule(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock
) -> None:
    made = await create(client, auth, cron="0 9 * * *")
    fired = (await client.post(f"{SCHEDULES}/{made['schedule_id']}/trigger", headers=auth)).json()
    run = await wait_finished(client, auth, fired["run_id"])
    day = run["finished_at"][:10]
    response = await client.get(
        f"{SCHEDULES}/{made['schedule_id']}/usage",
        params={"start_date": day, "end_date": day},
        headers=auth,
    )
    assert response.status_code == 200, response.text
    usage = response.json()
    assert usage["totals"]["runs"] == 1 and usage["totals"]["completed"] == 1
    assert usage["totals"]["credits"] == run["billing"]["credits"]
    assert usage["daily"][0]["date"] == day
    bad = await client.get(
        f"{SCHEDULES}/{made['schedule_id']}/usage",
        params={"start_date": "2026-13-01"},
        headers=auth,
    )
    assert bad.status_code == 400
    assert bad.json()["error"]["details"]["parameter"] == "start_date"


async def test_a_fired_run_records_the_agent_version_it_executes(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock
) -> None:
    agent = await client.post(
        "/v1/agents", json={"name": "Reporter", "config": {"instructions": "one"}}, headers=auth
    )
    agent_id = agent.json()["agent_id"]
    made = await create(client, auth, cron="0 9 * * *", agent_id=agent_id, paused=True)
    trigger = f"{SCHEDULES}/{made['schedule_id']}/trigger"
    first = (await client.post(trigger, headers=auth)).json()
    runs = [await wait_finished(client, auth, first["run_id"])]
    edited = await client.put(
        f"/v1/agents/{agent_id}", json={"config": {"instructions": "two"}}, headers=auth
    )
    assert edited.status_code == 200, edited.text
    second = (await client.post(trigger, headers=auth)).json()
    runs.append(await wait_finished(client, auth, second["run_id"]))
    assert [run["agent_version"] for run in runs] == [1, 2]
    # The runs list finds a version's runs (of one agent).
    listed = await client.get(RUNS, params={"agent_id": agent_id, "agent_version": 2}, headers=auth)
    assert [run["run_id"] for run in listed.json()["data"]] == [second["run_id"]]
    bad = await client.get(RUNS, params={"agent_id": agent_id, "agent_version": 0}, headers=auth)
    assert bad.status_code == 400
    assert bad.json()["error"]["details"]["parameter"] == "agent_version"


async def test_a_schedule_runs_the_version_or_alias_its_agent_id_names(
    client: httpx.AsyncClient, auth: dict[str, str], clock: Clock
) -> None:
    agent = await client.post(
        "/v1/agents", json={"name": "Pinned", "config": {"instructions": "one"}}, headers=auth
    )
    agent_id = agent.json()["agent_id"]
    await client.put(
        f"/v1/agents/{agent_id}", json={"config": {"instructions": "two"}}, headers=auth
    )
    alias = f"/v1/agents/{agent_id}/aliases/prod"
    await client.put(alias, json={"version": 1}, headers=auth)
    pinned = await create(client, auth, cron="0 9 * * *", agent_id=f"{agent_id}@1", paused=True)
    pinned_v = await create(client, auth, cron="0 9 * * *", agent_id=f"{agent_id}@v1", paused=True)
    aliased = await create(client, auth, cron="0 9 * * *", agent_id=f"{agent_id}@prod", paused=True)
    assert (pinned["agent_id"], aliased["agent_id"]) == (f"{agent_id}@1", f"{agent_id}@prod")
    assert pinned_v["agent_id"] == f"{agent_id}@v1"

    async def fire(schedule: dict) -> dict:
        trigger = f"{SCHEDULES}/{schedule['schedule_id']}/trigger"
        fired = (await client.post(trigger, headers=auth)).json()
        assert fired["status"] == "fired", fired
        run: dict = await wait_finished(client, auth, fired["run_id"])
        return run

    # Version 2 is live; the pinned schedules run 1, the alias follows prod as it moves.
    assert [(await fire(s))["agent_version"] for s in (pinned, pinned_v, aliased)] == [1, 1, 1]
    await client.put(alias, json={"version": 2}, headers=auth)
    run = await fire(aliased)
    assert (run["agent_id"], run["agent_version"]) == (agent_id, 2)
    assert run["schedule_id"] == aliased["schedule_id"]

    # A split's share of fired runs goes to its version, as for runs created by hand.
    await client.put(
        alias, json={"version": 1, "split": {"version": 2, "weight": 1.0}}, headers=auth
    )
    assert (await fire(aliased))["agent_version"] == 2

    # An alias deleted later skips the firings, saying so; a PUT back to the plain id runs live.
    await client.delete(alias, headers=auth)
    trigger = f"{SCHEDULES}/{aliased['schedule_id']}/trigger"
    skipped = (await client.post(trigger, headers=auth)).json()
    assert (skipped["status"], skipped["reason"]) == ("skipped", "agent_missing")
    assert "prod" in skipped["detail"]
    plain = await client.put(
        f"{SCHEDULES}/{aliased['schedule_id']}", json={"agent_id": agent_id}, headers=auth
    )
    assert plain.json()["agent_id"] == agent_id
    assert (await fire(plain.json()))["agent_version"] == 2

    # A version or an alias the agent does not have is a 400 naming agent_id; nothing stored.
    before = len((await client.get(SCHEDULES, headers=auth)).json()["data"])
    for reference in (
        f"{agent_id}@9",
        f"{agent_id}@v9",
        f"{agent_id}@canary",
        f"{agent_id}@Bad!",
        f"{agent_id}@",
    ):
        response = await client.post(
            SCHEDULES,
            json={"prompt": "x", "cron": "0 9 * * *", "agent_id": reference},
            headers=auth,
        )
        assert response.status_code == 400, response.text
        assert response.json()["error"]["details"]["parameter"] == "agent_id"
    assert len((await client.get(SCHEDULES, headers=auth)).json()["data"]) == before
    unknown = await client.post(
        SCHEDULES,
        json={"prompt": "x", "cron": "0 9 * * *", "agent_id": "agt_nobody00000000000000@1"},
        headers=auth,
    )
    assert unknown.status_code == 400
    assert unknown.json()["error"]["details"]["parameter"] == "agent_id"
