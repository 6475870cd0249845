"""The SDK clients of named providers (`openai-compatible:<provider>/<model>`).

A run's provider is read when the run starts (`providers.targets`), so its address and secrets
may differ from one run to the next. Runs on the same connection (address, key and headers)
share one client and its connection pool; a changed provider is a new connection, and the
clients no run uses any more are closed once more than `size` are kept, the least recently
used first: their number stays bounded whatever accounts create.

The client of an account's own provider connects only where the outbound rule allows
(`runtime.checked_http`); the operator's providers are trusted like `ATRIUM_LLM_BASE_URL`.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from atrium.providers.targets import ProviderTarget
from atrium.settings import Settings

if TYPE_CHECKING:
    from pydantic_ai.models import Model

    from atrium.runtime.openai_client import ValidatingOpenAI

Connection = tuple[str, str | None, tuple[tuple[str, str], ...], bool]


@dataclass(slots=True)
class _Pooled:
    client: ValidatingOpenAI
    provider: Any  # pydantic-ai's OpenAICompatibleProvider over `client`
    users: int = 0
    retired: bool = False


class ProviderClients:
    """One SDK client per connection of named providers, at most `size` kept (runs still
    using an evicted one keep it until they end)."""

    def __init__(self, settings: Settings, size: int) -> None:
        self._settings = settings
        self._size = size
        self._pooled: OrderedDict[Connection, _Pooled] = OrderedDict()

    def __len__(self) -> int:
        return len(self._pooled)

    @asynccontextmanager
    async def model(self, target: ProviderTarget) -> AsyncIterator[Model]:
        """The model `target` asks for, over its connection's client, for one run."""
        from pydantic_ai.models.openai import OpenAIChatModel
        from pydantic_ai.profiles import ModelProfile

        pooled = self._pooled.get(target.connection)
        if pooled is None:
            pooled = self._pooled[target.connection] = self._make(target)
        self._pooled.move_to_end(target.connection)
        pooled.users += 1
        try:
            await self._evict()
            # A server's context window is unknown (see `ModelRegistry._openai_compatible`).
            yield OpenAIChatModel(
                target.model,
                provider=pooled.provider,
                profile=ModelProfile(context_window=None),
            )
        finally:
            pooled.users -= 1
            if pooled.retired and pooled.users == 0:
                await pooled.client.close()

    async def aclose(self) -> None:
        pooled, self._pooled = list(self._pooled.values()), OrderedDict()
        for entry in pooled:
            await entry.client.close()

    async def _evict(self) -> None:
        while len(self._pooled) > self._size:
            _, oldest = self._pooled.popitem(last=False)
            if oldest.users == 0:
                await oldest.client.close()
            else:
                oldest.retired = True  # closed by the last run using it

    def _make(self, target: ProviderTarget) -> _Pooled:
        from pydantic_ai.providers.openai_compatible import OpenAICompatibleProvider

        from atrium.runtime.checked_http import checked_http_client
        from atrium.runtime.model_http import AioHttpClient
        from atrium.runtime.openai_client import ValidatingOpenAI

        http_client = checked_http_client(self._settings) if target.checked else AioHttpClient()
        client = ValidatingOpenAI(
            base_url=target.base_url,
            http_client=http_client,
            api_key=target.api_key or "not-needed",
            default_headers=dict(target.headers),
            coalesce_ms=self._settings.stream_coalesce_ms,
        )
        provider = OpenAICompatibleProvider(f"atrium-{target.provider}", openai_client=client)
        return _Pooled(client=client, provider=provider)
