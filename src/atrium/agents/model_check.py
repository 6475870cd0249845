"""Is a `config.model` usable on this deployment? Asked when an agent is created or its model
changed, and for a run's own `config.model`, so that a typo or a missing key is a 400 naming
what is missing, not a run that fails later with the provider library's advice
(docs/design.md#models).

The runtime (`runtime/llm_models.py`) builds the models this module accepts, and gives the same
sentences for a stored model that has become unusable (a key removed since).
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass, field
from typing import Annotated, Any, Final

from fastapi import Depends, Request

from atrium.agents.config import MODEL_NAME_PATTERN, OFFLINE_MODEL
from atrium.agents.errors import ModelUnusable
from atrium.providers.addressing import OPENAI_COMPATIBLE, compatible_problem
from atrium.settings import Settings

__all__ = ["OPENAI_COMPATIBLE", "ModelCheck", "ModelCheckDep", "ProviderNames", "model_problem"]

PROVIDERS: Final = ("openai", "anthropic", OPENAI_COMPATIBLE, "atrium")
KNOWN: Final = "openai, anthropic, openai-compatible:<name>, atrium:offline"
# The names of the providers an account has made (`/v1/providers`), read when needed.
ProviderNames = Callable[[], Awaitable[Collection[str]]]


def model_problem(name: str, settings: Settings, providers: Collection[str] = ()) -> str | None:
    """What keeps model `name` from being used with these settings, in atrium's words; None
    when nothing does. `providers`: the names of the account's own providers. Only the
    provider and its settings are checked: whether the provider serves a model of that name
    only the provider knows."""
    provider, _, model = name.partition(":")
    if provider == "atrium":
        if name == OFFLINE_MODEL:
            return None
        return f"unknown model {name!r}: atrium's built-in model is {OFFLINE_MODEL}"
    if not model:
        return f"{name!r} names no model: write provider:model, e.g. openai:gpt-4o-mini"
    if provider == "openai":
        return None if settings.openai_api_key else "openai models need ATRIUM_OPENAI_API_KEY"
    if provider == "anthropic":
        if settings.anthropic_api_key:
            return None
        return "anthropic models need ATRIUM_ANTHROPIC_API_KEY"
    if provider == OPENAI_COMPATIBLE:
        return compatible_problem(name, settings, providers)
    close = difflib.get_close_matches(provider, PROVIDERS, n=1)
    hint = f"did you mean {close[0]}? " if close else ""
    return f"unknown provider {provider!r} ({hint}known: {KNOWN})"


@dataclass(frozen=True, slots=True)
class ModelCheck:
    """`model_problem` for one app, where names registered on its model registry (a test
    model, an embedding application's own) are usable too."""

    settings: Settings
    registered: Callable[[str], bool] = field(default=lambda _name: False)

    def problem(self, name: str, providers: Collection[str] = ()) -> str | None:
        return None if self.registered(name) else model_problem(name, self.settings, providers)

    def model_pattern(self) -> str:
        """A pattern of the model names this deployment's settings make usable, for the OpenAPI
        document (models registered at run time, and those of an account's own providers, are
        usable too, but not listed)."""
        names = [re.escape(OFFLINE_MODEL)]
        usable = {
            "openai": bool(self.settings.openai_api_key),
            "anthropic": bool(self.settings.anthropic_api_key),
            OPENAI_COMPATIBLE: bool(self.settings.llm_base_url),
        }
        providers = [re.escape(name) for name, configured in usable.items() if configured]
        if providers:
            names.append(f"({'|'.join(providers)}):{MODEL_NAME_PATTERN}")
        if self.settings.providers and not self.settings.llm_base_url:
            named = "|".join(re.escape(name) for name in sorted(self.settings.providers))
            names.append(f"{re.escape(OPENAI_COMPATIBLE)}:({named})/{MODEL_NAME_PATTERN}")
        return f"^({'|'.join(names)})$"

    def document(self, openapi: dict[str, Any]) -> None:
        """State `model_pattern` on every `config.model` of the OpenAPI document."""
        schemas = openapi.get("components", {}).get("schemas", {})
        for name in ("AgentConfigIn", "RunConfig"):
            model = schemas.get(name, {}).get("properties", {}).get("model")
            if model is None:
                continue
            for variant in model.get("anyOf", [model]):
                if variant.get("type") == "string":
                    variant["pattern"] = self.model_pattern()
                    variant["description"] = (
                        "Usable here: the providers configured on this server "
                        "(docs/guide/models.md)."
                    )

    async def require(
        self,
        name: str,
        *,
        account_providers: ProviderNames | None = None,
        parameter: str = "config.model",
    ) -> None:
        """Raise the 400 on `parameter` when `name` is not usable here. The account's own
        providers are read (`account_providers`) only for an `openai-compatible:` model that
        the server's settings do not make usable."""
        problem = self.problem(name)
        compatible = name.partition(":")[0] == OPENAI_COMPATIBLE
        if problem is not None and compatible and account_providers is not None:
            problem = self.problem(name, await account_providers())
        if problem is not None:
            raise ModelUnusable(parameter, problem)


async def _model_check(request: Request) -> ModelCheck:
    check: ModelCheck = request.app.state.model_check
    return check


ModelCheckDep = Annotated[ModelCheck, Depends(_model_check)]
