"""From an agent's `config.model` string to a pydantic-ai model (docs/guide/models.md).

- `atrium:offline`: the built-in deterministic model (no network).
- `openai:<name>`: OpenAI's chat completions with `ATRIUM_OPENAI_API_KEY` (at
  `ATRIUM_OPENAI_BASE_URL` when set: a proxy or gateway speaking OpenAI's API).
- `anthropic:<name>`: Anthropic's messages API with `ATRIUM_ANTHROPIC_API_KEY`.
- `openai-compatible:<name>`: `<name>` on the server at `ATRIUM_LLM_BASE_URL` (Ollama, vLLM,
  llama.cpp server, …), with `ATRIUM_LLM_API_KEY` when it needs one.
- `openai-compatible:<provider>/<name>`: `<name>` on a named provider (`providers`), whose
  address and secrets the worker reads when the run starts; `named` holds their clients.
Keys come from the settings only: a provider library never reads the environment itself.
Which names are usable, and the sentence when one is not, is `agents.model_check`' to say.

Each provider's SDK (and pydantic-ai's model module over it) is imported when the first model
of that provider is built, not with this module: `anthropic` and `openai` are 40% of
`import atrium.app` (`python -X importtime`), which every process would pay at start on
deployments that may use neither (docs/decisions/0015-imports-on-first-use.md).
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache
from typing import TYPE_CHECKING, Any, Final

from pydantic import SecretStr
from pydantic_ai.models import Model
from pydantic_ai.providers import Provider

from atrium.agents.model_check import OPENAI_COMPATIBLE, model_problem
from atrium.runtime.imports import import_off_loop
from atrium.runtime.offline import OFFLINE_MODEL_NAME, offline_model
from atrium.runtime.provider_clients import ProviderClients
from atrium.settings import Settings

if TYPE_CHECKING:
    from atrium.runtime.openai_client import ValidatingOpenAI

# What each provider's builder below imports: pydantic-ai's modules over its SDK.
PROVIDER_MODULES: Final[dict[str, tuple[str, ...]]] = {
    "openai": ("pydantic_ai.models.openai", "pydantic_ai.providers.openai"),
    "anthropic": ("pydantic_ai.models.anthropic", "pydantic_ai.providers.anthropic"),
    OPENAI_COMPATIBLE: (
        "pydantic_ai.models.openai",
        "pydantic_ai.providers.openai_compatible",
        "atrium.runtime.openai_client",
        "atrium.runtime.model_http",
        "atrium.runtime.checked_http",
    ),
}


class ModelUnavailable(Exception):
    """The model named by an agent cannot be used here (unknown provider, missing key, …)."""


class ModelRegistry:
    """Resolves model names to models; `register` adds a named model (embedding apps, tests).

    Any key may name any model, so nothing here may grow with the number of names. One
    provider per provider name (so one HTTP client, connection pool and TLS context) serves
    all of its models, and built models sit in an LRU cache of `ATRIUM_MODEL_CACHE_SIZE`: a
    client per name would hold ~0.84 MB each for good
    (docs/decisions/0019-bounded-model-cache.md). Providers are atrium's fixed list (an unknown
    one raises before anything is kept), so the provider map is bounded too.
    """

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._registered: dict[str, Model] = {}
        self._providers: dict[str, Provider[Any]] = {}
        # SDK clients made here (not by a provider, which would close its own).
        self._clients: list[ValidatingOpenAI] = []
        self._built = lru_cache(maxsize=settings.model_cache_size)(self._build)
        # Named providers' clients, by connection: as bounded as the built models.
        self.named = ProviderClients(settings, settings.model_cache_size)

    @property
    def providers(self) -> int:
        """How many providers (each with its own HTTP client) this registry holds."""
        return len(self._providers)

    @property
    def cached(self) -> int:
        """How many built models the cache holds now (at most `ATRIUM_MODEL_CACHE_SIZE`)."""
        return self._built.cache_info().currsize

    async def aclose(self) -> None:
        providers = list(self._providers.values())
        self._providers.clear()
        self._built.cache_clear()
        for provider in providers:
            # Leaving a provider's context closes the HTTP client it created.
            async with provider:
                pass
        clients, self._clients = self._clients, []
        for client in clients:
            await client.close()
        await self.named.aclose()

    def register(self, name: str, model: Model) -> None:
        self._registered[name] = model

    def is_registered(self, name: str) -> bool:
        """Whether `name` was registered (it is then usable whatever its provider)."""
        return name in self._registered

    async def load(self, name: str) -> None:
        """Import what model `name` needs, off the event loop, before `resolve` builds it
        (`runtime/imports.py`); nothing once its provider's modules are imported."""
        modules = PROVIDER_MODULES.get(name.partition(":")[0])
        if modules is not None and name not in self._registered:
            await import_off_loop(modules)

    def resolve(self, name: str) -> Model:
        model = self._registered.get(name)
        return model if model is not None else self._built(name)

    def _build(self, name: str) -> Model:
        if name == OFFLINE_MODEL_NAME:
            return offline_model()
        problem = model_problem(name, self._settings)
        if problem is not None:  # a stored model whose provider has since lost its settings
            raise ModelUnavailable(f"{name}: {problem}")
        provider_name, _, model_name = name.partition(":")
        if provider_name == "openai":
            return self._openai(model_name)
        if provider_name == "anthropic":
            return self._anthropic(model_name)
        if provider_name != OPENAI_COMPATIBLE:  # pragma: no cover - model_problem refused it
            raise ModelUnavailable(f"{name}: unknown provider")
        return self._openai_compatible(model_name)

    # Each builder imports its provider's SDK (through pydantic-ai's modules) on its first call.

    def _openai(self, model_name: str) -> Model:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.providers.openai import OpenAIProvider

        settings = self._settings
        # Chat completions, which OpenAI serves for every chat model and which every
        # gateway in front of it (ATRIUM_OPENAI_BASE_URL) speaks too.
        return OpenAIChatModel(
            model_name,
            provider=self._provider(
                "openai",
                lambda: OpenAIProvider(
                    api_key=_secret(settings.openai_api_key), base_url=settings.openai_base_url
                ),
            ),
        )

    def _anthropic(self, model_name: str) -> Model:
        from pydantic_ai.models.anthropic import AnthropicModel
        from pydantic_ai.providers.anthropic import AnthropicProvider

        settings = self._settings
        return AnthropicModel(
            model_name,
            provider=self._provider(
                "anthropic",
                lambda: AnthropicProvider(api_key=_secret(settings.anthropic_api_key)),
            ),
        )

    def _openai_compatible(self, model_name: str) -> Model:
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.profiles import ModelProfile
        from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider

        base_url = self._settings.llm_base_url or ""  # model_problem checked it is set
        provider = self._provider(
            OPENAI_COMPATIBLE,
            lambda: OpenAICompatibleProvider(
                # Its SDK client builds chunks by validation (runtime/openai_client.py).
                "atrium-llm",
                openai_client=self._client(base_url),
            ),
        )
        # A local model's context window is unknown; saying so skips pydantic-ai's lookup
        # in genai-prices, which keeps every name it misses in a set forever (~0.3 KB each).
        return OpenAIChatModel(
            model_name, provider=provider, profile=ModelProfile(context_window=None)
        )

    def _client(self, base_url: str) -> ValidatingOpenAI:
        from atrium.runtime.model_http import AioHttpClient
        from atrium.runtime.openai_client import ValidatingOpenAI

        client = ValidatingOpenAI(
            base_url=base_url,
            # aiohttp under the SDK: a fraction of httpx2's CPU per request (runtime/model_http.py).
            http_client=AioHttpClient(),
            api_key=self._settings.llm_api_key or "not-needed",
            coalesce_ms=self._settings.stream_coalesce_ms,
        )
        self._clients.append(client)
        return client

    def _provider(self, name: str, make: Callable[[], Provider[Any]]) -> Provider[Any]:
        provider = self._providers.get(name)
        if provider is None:
            provider = self._providers[name] = make()
        return provider


def _secret(value: SecretStr | None) -> str | None:
    return value.get_secret_value() if value is not None else None
