"""A domain search tells no account anything about another account's names, and
both ways of finding matches (the account's own rows, the shared substring index) agree.

Time on a shared machine is too noisy to assert on, so the isolation test counts what time is
made of: SQLite's virtual-machine steps (`sqlite3_progress_handler` called on every step). A
search that reads only the caller's rows costs the same number of steps whatever other accounts
hold; the shared index's probe read the other accounts' hits (`bench/search_isolation_bench.py`
measures the time itself).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx
import pytest
from sqlalchemy import event
from sqlalchemy.util import await_only

from atrium.db.engine import Database
from tests.conftest import KeyFactory, bearer
from tests.domains.conftest import PUBLIC_URL, DomainFactory

LIST = "/api/v1/domains"
GENEROUS = {"rate_limit_standard": "1000000/hour", "public_url": PUBLIC_URL}
OWN_ROWS = {**GENEROUS, "domain_search_scan_max_rows": 1_000_000}  # every account scanned
INDEX = {**GENEROUS, "domain_search_scan_max_rows": 0}  # every account through the index


def count_vm_steps(db: Database) -> Callable[[], int]:
    """Count SQLite VM steps on every connection of the app's async engines from now on."""
    steps = [0]

    def step() -> int:
        steps[0] += 1
        return 0  # 0: go on

    def on_checkout(dbapi_connection: Any, _record: Any, _proxy: Any) -> None:
        # Runs inside SQLAlchemy's greenlet, so the driver's coroutine can be awaited here.
        await_only(dbapi_connection.driver_connection.set_progress_handler(step, 1))

    for engine in {db.read_engine, db.write_engine}:
        event.listen(engine.sync_engine, "checkout", on_checkout)
    return lambda: steps[0]


async def search_steps(
    client: httpx.AsyncClient, db: Database, key: str, term: str
) -> tuple[int, int]:
    """VM steps of one search (after a warm-up of the same search) and its total."""
    counter = count_vm_steps(db)
    await client.get(LIST, params={"search": term}, headers=bearer(key))
    before = counter()
    response = await client.get(LIST, params={"search": term}, headers=bearer(key))
    assert response.status_code == 200, response.text
    return counter() - before, response.json()["meta"]["total"]


@pytest.mark.parametrize(
    ("settings_overrides", "isolated"),
    [(GENEROUS, True), (INDEX, False)],
    ids=["default-settings", "index-for-every-account"],
)
async def test_search_work_does_not_depend_on_other_accounts(
    client: httpx.AsyncClient,
    db: Database,
    make_key: KeyFactory,
    make_domains: DomainFactory,
    isolated: bool,
) -> None:
    if not db.sqlite:
        pytest.skip("counts SQLite's virtual-machine steps")
    victim, prober = await make_key(), await make_key()
    await make_domains(victim.account_id, [f"shop-qzv{i}.example" for i in range(300)])
    await make_domains(prober.account_id, [f"own-{i}.test" for i in range(20)])

    victims_term = await search_steps(client, db, prober.key, "qzv")
    no_ones_term = await search_steps(client, db, prober.key, "qzj")

    assert victims_term[1] == no_ones_term[1] == 0
    if isolated:
        # The prober's own 20 rows are read either way; nothing else.
        assert victims_term[0] == no_ones_term[0]
    else:
        # What the setting trades away: the shared index reads the victim's 300 hits
        # (docs/decisions/0021-domain-search.md).
        assert victims_term[0] > no_ones_term[0] + 300


def expected(
    rows: list[tuple[int, str]], term: str, sort_by: str, sort: str
) -> list[tuple[int, str]]:
    found = [row for row in rows if term in row[1]]
    if sort_by == "name":
        return sorted(found, key=lambda row: (row[1], row[0]), reverse=sort == "desc")
    return sorted(found, key=lambda row: row[0], reverse=sort == "desc")


@pytest.mark.parametrize("settings_overrides", [OWN_ROWS, INDEX], ids=["own-rows", "index"])
async def test_both_plans_search_sort_and_paginate_alike(
    client: httpx.AsyncClient, make_key: KeyFactory, make_domains: DomainFactory
) -> None:
    mine, theirs = await make_key(), await make_key()
    names = [f"{word}-{i}.example" for i, word in enumerate(["alpha", "beta", "gamma"] * 12)]
    ids = await make_domains(mine.account_id, names)
    await make_domains(theirs.account_id, [f"alpha-theirs-{i}.example" for i in range(40)])
    rows = list(zip(ids, names, strict=True))

    for term in ("alpha", "a-1", "et", "-", "zzz"):
        for sort_by in ("id", "name"):
            for sort in ("asc", "desc"):
                seen: list[tuple[int, str]] = []
                page, last_page = 1, 1
                while page <= last_page:
                    params = {"search": term, "sort_by": sort_by, "sort": sort}
                    params |= {"per_page": "10", "page": str(page)}
                    body = (await client.get(LIST, params=params, headers=bearer(mine.key))).json()
                    want = expected(rows, term, sort_by, sort)
                    assert body["meta"]["total"] == len(want), (term, sort_by, sort)
                    last_page = body["meta"]["last_page"]
                    seen += [(d["id"], d["name"]) for d in body["data"]]
                    page += 1
                assert seen == want, (term, sort_by, sort)


@pytest.mark.parametrize("settings_overrides", [OWN_ROWS, INDEX], ids=["own-rows", "index"])
async def test_both_plans_agree_past_the_candidate_cap(
    client: httpx.AsyncClient, make_key: KeyFactory, make_domains: DomainFactory
) -> None:
    """Over 2,000 matches the account's index is scanned in order, whichever plan found them."""
    mine, theirs = await make_key(), await make_key()
    await make_domains(mine.account_id, [f"bulk-{i:04d}.com" for i in range(2050)])
    await make_domains(theirs.account_id, [f"bulk-x{i}.org" for i in range(30)])
    auth = bearer(mine.key)
    params = {"search": "bulk", "sort_by": "name", "sort": "desc", "per_page": "100"}
    first = (await client.get(LIST, params={**params, "page": "1"}, headers=auth)).json()
    assert first["meta"]["total"] == 2050
    assert [d["name"] for d in first["data"]] == [
        f"bulk-{i:04d}.com" for i in range(2049, 1949, -1)
    ]
    last = (await client.get(LIST, params={**params, "page": "21"}, headers=auth)).json()
    assert [d["name"] for d in last["data"]] == [f"bulk-{i:04d}.com" for i in range(49, -1, -1)]
