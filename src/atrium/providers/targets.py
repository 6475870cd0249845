"""Where a run on `openai-compatible:<provider>/<model>` goes: read from the database when the
run starts, so a provider created, changed or deleted counts from the next run on, in every
process (nothing is cached between runs; the read is one indexed row)."""

from __future__ import annotations

import functools
from dataclasses import dataclass, field

from atrium.db.engine import Database
from atrium.outbound.public_targets import TargetRefused, check_url
from atrium.providers import repository
from atrium.providers.addressing import named_provider, unknown_provider
from atrium.secrets_at_rest import SecretBox, SecretsUnavailable
from atrium.settings import Settings


class ProviderUnavailable(Exception):
    """The provider a model names cannot be used now; the message says why."""


@dataclass(frozen=True, slots=True)
class ProviderTarget:
    """A named provider as one run uses it: its address and opened secrets, and the model to
    ask it for. `checked`: the account's own provider, whose every connection is held to the
    outbound rule (the operator's are not, like `ATRIUM_LLM_BASE_URL`)."""

    provider: str
    model: str
    base_url: str
    # Secrets: never in a repr (a logged run spec).
    api_key: str | None = field(repr=False)
    headers: tuple[tuple[str, str], ...] = field(repr=False)
    checked: bool

    @property
    def connection(self) -> tuple[str, str | None, tuple[tuple[str, str], ...], bool]:
        """What an HTTP client of this provider is made of: runs with the same one share it."""
        return (self.base_url, self.api_key, self.headers, self.checked)


async def target_of(
    db: Database, settings: Settings, *, account_id: int, model: str
) -> ProviderTarget | None:
    """The named provider `model` goes to for this account; None when it names none (it is
    then a model of `ATRIUM_LLM_BASE_URL`, or not an `openai-compatible:` model at all)."""
    named = named_provider(model)
    if named is None:
        return None
    name, asked = named
    stored = await db.point_read(
        functools.partial(repository.named, account_id=account_id, name=name)
    )
    if stored is not None:
        return _opened(stored, asked, settings, model=model)
    configured = settings.providers.get(name)
    if configured is not None:
        return ProviderTarget(
            provider=name,
            model=asked,
            base_url=configured.base_url,
            api_key=configured.api_key.get_secret_value() if configured.api_key else None,
            headers=tuple(
                (header, value.get_secret_value()) for header, value in configured.headers.items()
            ),
            checked=False,
        )
    if settings.llm_base_url:
        return None
    names = await repository.names_of_account(db, account_id=account_id)
    raise ProviderUnavailable(f"{model}: {unknown_provider(name, {*names, *settings.providers})}")


def _opened(
    stored: repository.StoredProvider, asked: str, settings: Settings, *, model: str
) -> ProviderTarget:
    where = f"{model}: provider {stored.name!r}"
    try:
        # Checked again at each use: the rule (ATRIUM_ALLOW_PRIVATE_TARGETS) may have changed.
        check_url(stored.base_url, allow_private=settings.allow_private_targets)
    except TargetRefused as exc:
        raise ProviderUnavailable(f"{where}: base_url {exc}") from None
    box = SecretBox.of(settings)
    try:
        api_key = box.decrypt(stored.api_key) if stored.api_key is not None else None
        headers = tuple((name, box.decrypt(token)) for name, token in stored.headers.items())
    except SecretsUnavailable as exc:
        raise ProviderUnavailable(f"{where}: {exc}") from None
    return ProviderTarget(
        provider=stored.name,
        model=asked,
        base_url=stored.base_url,
        api_key=api_key,
        headers=headers,
        checked=True,
    )
