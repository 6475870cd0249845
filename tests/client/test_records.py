"""Domains and spaces through the client: phpShort's form API and its Laravel pages."""

from __future__ import annotations

import secrets

import pytest

from atrium.client import AsyncClient, Client, InvalidParameterError, NotFoundError


def test_domains_crud(atrium: Client) -> None:
    name = f"crud-{secrets.token_hex(4)}.example.com"
    created = atrium.domains.create(
        name.upper(), index_page="https://example.com/", not_found_page="https://example.com/404"
    )
    assert created.name == name, "the server normalises the name; the client shows it"
    assert created.url == f"https://{name}"
    assert created.index_page == "https://example.com/"

    updated = atrium.domains.update(created.id, index_page="https://example.org/")
    assert updated.index_page == "https://example.org/"
    assert updated.not_found_page == "https://example.com/404", "an omitted field is kept"
    cleared = atrium.domains.update(created.id, not_found_page="")
    assert cleared.not_found_page in (None, "")
    assert atrium.domains.get(created.id).index_page == "https://example.org/"

    deleted = atrium.domains.delete(created.id)
    assert (deleted.id, deleted.object, deleted.deleted) == (created.id, "domain", True)
    with pytest.raises(NotFoundError) as caught:
        atrium.domains.get(created.id)
    assert caught.value.status_code == 404
    assert caught.value.code == "NOT_FOUND"


def test_iterating_domains_walks_every_page(atrium: Client) -> None:
    prefix = secrets.token_hex(3)
    made = {atrium.domains.create(f"p{i:02d}-{prefix}.example.net").id for i in range(23)}

    first = atrium.domains.list(per_page=10, sort_by="name", sort="asc")
    assert (first.meta.total, first.meta.last_page, len(first.data)) == (23, 3, 10)
    assert first.has_next

    pages = list(atrium.domains.iter_pages(per_page=10, sort_by="name", sort="asc"))
    assert [page.meta.current_page for page in pages] == [1, 2, 3]
    names = [domain.name for page in pages for domain in page.data]
    assert names == sorted(names)

    every = list(atrium.domains.iter_all(per_page=10))
    assert len(every) == 23
    assert {domain.id for domain in every} == made

    found = list(atrium.domains.iter_all(search=f"p07-{prefix}"))
    assert [domain.name for domain in found] == [f"p07-{prefix}.example.net"]


def test_domain_errors_name_the_parameter(atrium: Client) -> None:
    with pytest.raises(InvalidParameterError) as caught:
        atrium.domains.list(per_page=7)
    assert caught.value.status_code == 400
    assert caught.value.code == "INVALID_PARAMETER"
    assert caught.value.parameter == "per_page"
    assert caught.value.details["parameter"] == "per_page"
    assert caught.value.message


async def test_spaces_crud_and_pages_async(async_atrium: AsyncClient) -> None:
    made = [(await async_atrium.spaces.create(f"space {i}", color=i % 6 + 1)) for i in range(12)]
    assert [space.color for space in made[:3]] == [1, 2, 3]
    default = await async_atrium.spaces.create("plain")
    assert default.color == 1

    every = [space async for space in async_atrium.spaces.iter_all(per_page=10)]
    assert len(every) == 13
    assert {space.id for space in every} == {space.id for space in [*made, default]}
    pages = [page async for page in async_atrium.spaces.iter_pages(per_page=10)]
    assert [len(page.data) for page in pages] == [10, 3]

    renamed = await async_atrium.spaces.update(made[0].id, name="renamed", color=6)
    assert (renamed.name, renamed.color) == ("renamed", 6)
    assert (await async_atrium.spaces.get(made[0].id)).name == "renamed"

    with pytest.raises(InvalidParameterError) as caught:
        await async_atrium.spaces.create("bad color", color=9)
    assert caught.value.parameter == "color"

    deleted = await async_atrium.spaces.delete(made[0].id)
    assert deleted.object == "space" and deleted.deleted
    with pytest.raises(NotFoundError):
        await async_atrium.spaces.get(made[0].id)
