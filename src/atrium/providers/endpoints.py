"""`/v1/providers`: an account's named OpenAI-compatible servers."""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Path, status

from atrium.http.deps import CurrentPrincipal, SessionDep, SettingsDep
from atrium.http.openapi import error_responses
from atrium.providers import service
from atrium.providers.addressing import known_to_all
from atrium.providers.errors import (
    BaseUrlRefused,
    ProviderLimitReached,
    ProviderNameTaken,
    ProviderNotFound,
    SecretsNotResent,
)
from atrium.providers.schemas import (
    ProviderCreate,
    ProviderDeleted,
    ProviderList,
    ProviderOut,
    ProviderUpdate,
)

# A body sent without Content-Type is read as JSON (what this group takes); the gateway already
# answers 415 for any other declared type.
router = APIRouter(prefix="/providers", tags=["providers"], strict_content_type=False)
_NOT_FOUND = error_responses(ProviderNotFound)
ProviderKey = Annotated[str, Path(description="The provider's id (`prv_…`) or name.")]


@router.get("")
async def list_providers(
    session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> ProviderList:
    """The account's providers by name (secrets shown as `"***"`), and the names of the
    server's providers, which every account may use too."""
    providers = await service.list_providers(session, account_id=principal.account_id)
    return ProviderList(
        data=[ProviderOut.of(provider) for provider in providers],
        server_providers=known_to_all(settings),
    )


@router.post(
    "",
    status_code=status.HTTP_201_CREATED,
    responses=error_responses(ProviderNameTaken, ProviderLimitReached, BaseUrlRefused),
)
async def create_provider(
    body: ProviderCreate, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> ProviderOut:
    """Add an OpenAI-compatible server under `name`: models then name it as
    `openai-compatible:<name>/<model>`, from the next run on."""
    provider = await service.create_provider(
        session, settings=settings, account_id=principal.account_id, data=body
    )
    return ProviderOut.of(provider)


@router.get("/{provider}", responses=_NOT_FOUND)
async def get_provider(
    provider: ProviderKey, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> ProviderOut:
    """One provider of the account, by id or name (404 when unknown or another account's)."""
    found = await service.get_provider(
        session, settings=settings, account_id=principal.account_id, key=provider
    )
    return ProviderOut.of(found)


@router.put(
    "/{provider}",
    responses=error_responses(
        ProviderNotFound, ProviderNameTaken, BaseUrlRefused, SecretsNotResent
    ),
)
async def update_provider(
    provider: ProviderKey,
    body: ProviderUpdate,
    session: SessionDep,
    principal: CurrentPrincipal,
    settings: SettingsDep,
) -> ProviderOut:
    """Replace the fields present in the body; the next run on the provider uses them. When
    `base_url` changes, `api_key` and `headers` must be sent again (or removed)."""
    updated = await service.update_provider(
        session, settings=settings, account_id=principal.account_id, key=provider, data=body
    )
    return ProviderOut.of(updated)


@router.delete("/{provider}", responses=_NOT_FOUND)
async def delete_provider(
    provider: ProviderKey, session: SessionDep, principal: CurrentPrincipal, settings: SettingsDep
) -> ProviderDeleted:
    """Delete a provider. Runs of agents that still name it fail with MODEL_UNAVAILABLE."""
    deleted = await service.delete_provider(
        session, settings=settings, account_id=principal.account_id, key=provider
    )
    return ProviderDeleted(provider_id=deleted.id, name=deleted.name)
