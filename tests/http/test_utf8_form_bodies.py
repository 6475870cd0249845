"""Form bodies of the phpShort groups are UTF-8, raw or percent-encoded (docs/design.md#domains):
text round-trips exactly, a declared charset other than UTF-8 is a 415, bytes that are not
UTF-8 are a 400 naming the field. Starlette's own parser would read raw UTF-8 in a form as
Latin-1 and store `üüü` as `Ã¼Ã¼Ã¼`, with or without `charset=utf-8`."""

from __future__ import annotations

from urllib.parse import quote

import httpx
import pytest

from tests.domains.test_endpoints import assert_invalid

SPACES = "/api/v1/spaces"
DOMAINS = "/api/v1/domains"
FORM = "application/x-www-form-urlencoded"
UTF8_FORMS = [FORM, f"{FORM}; charset=utf-8", f'{FORM}; charset="UTF-8"', f"{FORM};charset=UTF8"]
NAMES = ["üüü", "日本語 名前", "Zoë & Émile", "emoji 😀", "a=b+c%d"]


@pytest.fixture
def settings_overrides() -> dict[str, object]:
    return {"rate_limit_standard": "1000000/hour", "public_url": "https://atrium.example.org"}


def raw_form(**fields: str) -> bytes:
    """`curl --data name=üüü`: UTF-8 bytes as they are; only `%`, `&`, `=` and `+` escaped."""

    def escaped(value: str) -> str:
        for char in "%&=+":
            value = value.replace(char, f"%{ord(char):02X}")
        return value

    return "&".join(f"{key}={escaped(value)}" for key, value in fields.items()).encode()


async def post(
    client: httpx.AsyncClient, url: str, auth: dict[str, str], body: bytes, content_type: str
) -> httpx.Response:
    return await client.post(url, content=body, headers={**auth, "Content-Type": content_type})


@pytest.mark.parametrize("content_type", UTF8_FORMS)
@pytest.mark.parametrize("name", NAMES)
async def test_raw_utf8_space_name_round_trips(
    client: httpx.AsyncClient, auth: dict[str, str], content_type: str, name: str
) -> None:
    created = await post(client, SPACES, auth, raw_form(name=name, color="2"), content_type)
    assert created.status_code == 201, created.text
    assert created.json()["data"]["name"] == name
    space_id = created.json()["data"]["id"]
    shown = await client.get(f"{SPACES}/{space_id}", headers=auth)
    assert shown.json()["data"]["name"] == name

    renamed = name[::-1] + " ✓"
    updated = await client.patch(
        f"{SPACES}/{space_id}",
        content=raw_form(name=renamed),
        headers={**auth, "Content-Type": content_type},
    )
    assert updated.status_code == 200, updated.text
    assert (await client.get(f"{SPACES}/{space_id}", headers=auth)).json()["data"][
        "name"
    ] == renamed
    listed = await client.get(SPACES, params={"search": renamed[:3]}, headers=auth)
    assert [space["name"] for space in listed.json()["data"]] == [renamed]


@pytest.mark.parametrize("name", NAMES)
async def test_percent_encoded_multipart_and_json_agree(
    client: httpx.AsyncClient, auth: dict[str, str], name: str
) -> None:
    encoded = await post(client, SPACES, auth, f"name={quote(name)}".encode(), FORM)
    multipart = await client.post(SPACES, files={"name": (None, name + "!")}, headers=auth)
    as_json = await client.post(SPACES, json={"name": name + "?"}, headers=auth)
    assert [r.status_code for r in (encoded, multipart, as_json)] == [201, 201, 201]
    assert encoded.json()["data"]["name"] == name
    assert multipart.json()["data"]["name"] == name + "!"
    assert as_json.json()["data"]["name"] == name + "?"


@pytest.mark.parametrize("content_type", UTF8_FORMS)
async def test_raw_utf8_domain_name_is_idna_encoded_not_mojibake(
    client: httpx.AsyncClient, auth: dict[str, str], content_type: str
) -> None:
    created = await post(client, DOMAINS, auth, "name=Bücher.example".encode(), content_type)
    assert created.status_code == 201, created.text
    assert created.json()["data"]["name"] == "xn--bcher-kva.example"
    domain_id = created.json()["data"]["id"]
    # The pages are ASCII URLs: raw UTF-8 in one is refused on its field, never stored altered.
    page = "https://example.org/bücher"
    refused = await client.put(
        f"{DOMAINS}/{domain_id}",
        content=f"index_page={page}".encode(),
        headers={**auth, "Content-Type": content_type},
    )
    assert_invalid(refused, "index_page")
    encoded = "https://example.org/b%C3%BCcher"
    updated = await client.put(
        f"{DOMAINS}/{domain_id}",
        content=f"index_page={quote(encoded)}".encode(),
        headers={**auth, "Content-Type": content_type},
    )
    assert updated.status_code == 200, updated.text
    assert updated.json()["data"]["index_page"] == encoded


@pytest.mark.parametrize("url", [SPACES, DOMAINS])
@pytest.mark.parametrize(
    "content_type",
    [
        f"{FORM}; charset=iso-8859-1",
        f"{FORM}; charset=windows-1252",
        f"{FORM}; charset=utf-16",
        f"{FORM}; charset=nonsense",
        "multipart/form-data; boundary=x; charset=latin1",
        "application/json; charset=iso-8859-1",
    ],
)
async def test_another_charset_is_415(
    client: httpx.AsyncClient, auth: dict[str, str], url: str, content_type: str
) -> None:
    response = await post(client, url, auth, "name=üüü.example".encode("latin-1"), content_type)
    assert response.status_code == 415, response.text
    error = response.json()["error"]
    assert error["code"] == "UNSUPPORTED_MEDIA_TYPE"
    assert "UTF-8" in error["message"]
    listed = await client.get(url, headers=auth)
    assert listed.json()["meta"]["total"] == 0  # nothing stored


@pytest.mark.parametrize(
    ("body", "parameter"),
    [
        (b"name=\xfc\xfc\xfc", "name"),  # Latin-1 bytes sent raw
        (b"name=%FC%FC", "name"),  # percent-encoded, still not UTF-8
        (b"color=2&name=ok\xc3", "name"),  # a truncated sequence
        (b"na\xffme=x", "body"),  # the field's own name
    ],
)
async def test_bytes_that_are_not_utf8_are_400(
    client: httpx.AsyncClient, auth: dict[str, str], body: bytes, parameter: str
) -> None:
    assert_invalid(await post(client, SPACES, auth, body, FORM), parameter)


async def test_form_parsing_keeps_phps_rules(
    client: httpx.AsyncClient, auth: dict[str, str]
) -> None:
    """`+` is a space, `;` is not a separator, a repeated field keeps its last value, a pair
    without `=` is empty, values are trimmed."""
    body = b"name=first&color=3;x&name=+last+one+&flag&&"
    assert_invalid(await post(client, SPACES, auth, body, FORM), "color")
    body = b"name=first&color=3&name=+last+one+&flag&&"
    created = await post(client, SPACES, auth, body, FORM)
    assert created.status_code == 201, created.text
    assert created.json()["data"]["name"] == "last one"
    assert created.json()["data"]["color"] == 3


async def test_too_many_fields_is_400(client: httpx.AsyncClient, auth: dict[str, str]) -> None:
    body = "&".join(f"f{i}=x" for i in range(1001)).encode()
    assert_invalid(await post(client, SPACES, auth, body, FORM), "body")
