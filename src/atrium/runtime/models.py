"""From an agent's `config.model` string to a pydantic-ai model.

- `atrium:offline`: the built-in deterministic model (no network).
- `openai-compatible:<name>`: `<name>` on the server at `ATRIUM_LLM_BASE_URL` (Ollama, vLLM,
  llama.cpp server, …), with `ATRIUM_LLM_API_KEY` when it needs one.
- anything else: pydantic-ai's own names (`openai:gpt-4o-mini`, `anthropic:claude-…`), with
  keys from the providers' usual environment variables.
"""

from __future__ import annotations

from openai import AsyncOpenAI
from pydantic_ai.models import Model, infer_model
from pydantic_ai.models.openai import OpenAIChatModel
from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider

from atrium.runtime.offline import OFFLINE_MODEL_NAME, offline_model
from atrium.settings import Settings

OPENAI_COMPATIBLE = "openai-compatible:"


class ModelUnavailable(Exception):
    """The model named by an agent cannot be used here (unknown provider, missing key, …)."""


class ModelRegistry:
    """Resolves and caches models; `register` adds a named model (embedding apps, tests)."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings
        self._models: dict[str, Model] = {}
        # Owned here (not pydantic-ai's shared client), so shutting down closes its connections.
        self._clients: list[AsyncOpenAI] = []

    async def aclose(self) -> None:
        for client in self._clients:
            await client.close()
        self._clients.clear()

    def register(self, name: str, model: Model) -> None:
        self._models[name] = model

    def resolve(self, name: str) -> Model:
        model = self._models.get(name)
        if model is None:
            model = self._build(name)
            self._models[name] = model
        return model

    def _build(self, name: str) -> Model:
        if name == OFFLINE_MODEL_NAME:
            return offline_model()
        if name.startswith(OPENAI_COMPATIBLE):
            model_name = name[len(OPENAI_COMPATIBLE) :]
            if not self._settings.llm_base_url:
                raise ModelUnavailable(f"{name}: ATRIUM_LLM_BASE_URL is not set")
            if not model_name:
                raise ModelUnavailable(f"{name}: no model name after 'openai-compatible:'")
            client = AsyncOpenAI(
                base_url=self._settings.llm_base_url,
                api_key=self._settings.llm_api_key or "not-needed",
            )
            self._clients.append(client)
            provider = OpenAICompatibleProvider("atrium-llm", openai_client=client)
            return OpenAIChatModel(model_name, provider=provider)
        try:
            return infer_model(name)
        except Exception as exc:  # unknown provider, missing SDK or API key: all "unavailable"
            raise ModelUnavailable(f"{name}: {exc}") from exc
