"""Rules of providers: checked URLs and headers, sealed secrets, unique names, ownership."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Final

from sqlalchemy.exc import IntegrityError
from sqlalchemy.ext.asyncio import AsyncSession

from atrium.db.models import Provider
from atrium.errors import InvalidParameter
from atrium.kit.headers import TRANSPORT_HEADERS, check_headers
from atrium.kit.ids import new_id
from atrium.kit.time import utcnow
from atrium.outbound.public_targets import TargetRefused, check_url
from atrium.providers import repository
from atrium.providers.errors import (
    BaseUrlRefused,
    ProviderLimitReached,
    ProviderNameTaken,
    ProviderNotFound,
    SecretsNotResent,
)
from atrium.providers.repository import MAX_PER_ACCOUNT
from atrium.providers.schemas import (
    API_KEY_PATTERN,
    MAX_API_KEY,
    ProviderCreate,
    ProviderUpdate,
)
from atrium.secrets_at_rest import SecretBox, SecretRefused, seal
from atrium.settings import Settings

# Headers of a chat-completions request that the SDK sets itself; the key goes in `api_key`.
RESERVED_HEADERS: Final = TRANSPORT_HEADERS | {"accept", "authorization", "content-type"}
_API_KEY: Final = re.compile(API_KEY_PATTERN)


def _base_url(settings: Settings, url: str) -> str:
    try:
        return check_url(url, allow_private=settings.allow_private_targets)
    except TargetRefused as exc:
        raise BaseUrlRefused(str(exc)) from None


def _api_key(value: str) -> str:
    if not _API_KEY.match(value):
        raise InvalidParameter(
            "api_key", f"api_key must be 1-{MAX_API_KEY} printable ASCII characters, no spaces"
        )
    return value


def _headers(headers: dict[str, str]) -> dict[str, str]:
    try:
        check_headers(headers, where="headers", reserved=RESERVED_HEADERS)
    except ValueError as exc:
        message = str(exc)
        if "authorization" in message.lower() and "set by atrium" in message:
            message = "headers: Authorization is set from api_key (Bearer): give the key there"
        raise InvalidParameter("headers", message) from None
    return headers


def _sealed(
    parameter: str,
    given: dict[str, str],
    *,
    stored: dict[str, str] | None,
    same_target: bool,
    box: SecretBox,
) -> dict[str, str]:
    try:
        return seal(
            given,
            stored=stored,
            same_target=same_target,
            box=box,
            where="" if parameter == "api_key" else parameter,
            target="base_url",
        )
    except SecretRefused as exc:
        raise InvalidParameter(parameter, str(exc)) from None


async def _flush(session: AsyncSession) -> None:
    try:
        await session.flush()
    except IntegrityError as exc:  # a concurrent write of the same name won the race
        raise ProviderNameTaken() from exc


async def create_provider(
    session: AsyncSession, *, settings: Settings, account_id: int, data: ProviderCreate
) -> Provider:
    base_url = _base_url(settings, data.base_url)
    api_key = _api_key(data.api_key) if data.api_key is not None else None
    headers = _headers(data.headers)
    if await repository.count(session, account_id=account_id) >= MAX_PER_ACCOUNT:
        raise ProviderLimitReached(MAX_PER_ACCOUNT)
    if await repository.name_taken(session, account_id=account_id, name=data.name):
        raise ProviderNameTaken()
    box = SecretBox.of(settings)
    sealed_key = (
        _sealed("api_key", {"api_key": api_key}, stored=None, same_target=False, box=box)
        if api_key is not None
        else {}
    )
    now = utcnow()
    provider = Provider(
        id=new_id("prv"),
        account_id=account_id,
        name=data.name,
        base_url=base_url,
        api_key=sealed_key.get("api_key"),
        headers=_sealed("headers", headers, stored=None, same_target=False, box=box),
        created_at=now,
        updated_at=now,
    )
    session.add(provider)
    await _flush(session)
    return provider


async def list_providers(session: AsyncSession, *, account_id: int) -> Sequence[Provider]:
    """The account's providers, by name."""
    return await repository.list_of_account(session, account_id=account_id)


async def get_provider(
    session: AsyncSession, *, settings: Settings, account_id: int, key: str
) -> Provider:
    """The account's provider whose id or name is `key`; NotFound otherwise (another
    account's included)."""
    provider = await repository.get(session, account_id=account_id, key=key)
    if provider is None:
        raise ProviderNotFound(key, server_provider=key in settings.providers)
    return provider


async def update_provider(
    session: AsyncSession, *, settings: Settings, account_id: int, key: str, data: ProviderUpdate
) -> Provider:
    """The fields given replace the provider's. A secret may be kept by sending `"***"`, or
    by leaving it out, only while `base_url` stays the same: a new address gets the secrets
    sent again (or removed), never the stored ones."""
    provider = await get_provider(session, settings=settings, account_id=account_id, key=key)
    given = data.given()
    base_url = provider.base_url
    if "base_url" in given and data.base_url is not None:
        base_url = _base_url(settings, data.base_url)
    same_target = base_url == provider.base_url
    box = SecretBox.of(settings)

    name = provider.name
    if "name" in given and data.name is not None and data.name != provider.name:
        if await repository.name_taken(
            session, account_id=account_id, name=data.name, other_than=provider.id
        ):
            raise ProviderNameTaken()
        name = data.name

    api_key = provider.api_key
    if "api_key" in given:
        api_key = None
        if data.api_key is not None:
            stored = {"api_key": provider.api_key} if provider.api_key is not None else None
            api_key = _sealed(
                "api_key",
                {"api_key": _api_key(data.api_key)},
                stored=stored,
                same_target=same_target,
                box=box,
            )["api_key"]
    elif not same_target and provider.api_key is not None:
        raise SecretsNotResent("api_key", what="the key", empty="null")

    headers = dict(provider.headers or {})
    if "headers" in given and data.headers is not None:
        headers = _sealed(
            "headers",
            _headers(data.headers),
            stored=provider.headers,
            same_target=same_target,
            box=box,
        )
    elif not same_target and headers:
        raise SecretsNotResent("headers", what="the values", empty="{}")

    provider.name, provider.base_url = name, base_url
    # New values, not in-place changes: the JSON column only notices reassignment.
    provider.api_key, provider.headers = api_key, headers
    provider.updated_at = utcnow()
    await _flush(session)
    return provider


async def delete_provider(
    session: AsyncSession, *, settings: Settings, account_id: int, key: str
) -> Provider:
    """Hard delete. Agents that name it keep their model; their runs then fail with
    MODEL_UNAVAILABLE until it is created again (or the agent's model changed)."""
    provider = await get_provider(session, settings=settings, account_id=account_id, key=key)
    await session.delete(provider)
    await session.flush()
    return provider
