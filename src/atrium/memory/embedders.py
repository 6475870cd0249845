"""Embedders of memory items: the built-in offline one, or an OpenAI-compatible `/embeddings`.

Vectors are L2-normalised float32, so a dot product is the cosine similarity, and stored as
their bytes (docs/decisions/0061-memory-search-by-meaning.md).
"""

from __future__ import annotations

import hashlib
import logging
import re
from collections.abc import Sequence
from typing import Final, Literal, Protocol

import numpy as np
import numpy.typing as npt

from atrium.memory.errors import EmbeddingsUnavailable
from atrium.settings import Settings

log = logging.getLogger(__name__)
OFFLINE_DIMENSIONS: Final = 384
_TIMEOUT_SECONDS: Final = 30.0
_RETRIES: Final = 1
_WORD = re.compile(r"\w+")
Vectors = npt.NDArray[np.float32]


class Embedder(Protocol):
    """Turns texts into unit vectors; `name` is stored beside each vector, so a search only
    compares vectors of the same model."""

    name: str

    async def embed(
        self, texts: Sequence[str], *, kind: Literal["query", "document"]
    ) -> Vectors: ...

    async def aclose(self) -> None:
        """Let go of what the embedder holds (a remote one's HTTP connections)."""


def _feature_index(feature: str) -> tuple[int, float]:
    # blake2b, not hash(): the same text must give the same vector in every process.
    digest = hashlib.blake2b(feature.encode(), digest_size=8).digest()
    number = int.from_bytes(digest, "little")
    return number % OFFLINE_DIMENSIONS, 1.0 if number >> 63 else -1.0


class OfflineEmbedder:
    """Hashed words and character trigrams: texts sharing words or word pieces are near.
    Deterministic and local, for tests and deployments without an embeddings server."""

    name = "offline"

    async def embed(self, texts: Sequence[str], *, kind: Literal["query", "document"]) -> Vectors:
        return np.stack([offline_vector(text) for text in texts]).astype(np.float32)

    async def aclose(self) -> None:
        return None


def offline_vector(text: str) -> Vectors:
    vector = np.zeros(OFFLINE_DIMENSIONS, dtype=np.float32)
    for word in _WORD.findall(text.lower()):
        index, sign = _feature_index("w:" + word)
        vector[index] += sign
        padded = f"#{word}#"
        for start in range(len(padded) - 2):
            index, sign = _feature_index("t:" + padded[start : start + 3])
            vector[index] += 0.5 * sign
    return normalised(vector)


def normalised(vector: Vectors) -> Vectors:
    norm = float(np.linalg.norm(vector))
    return vector / norm if norm > 0 else vector


class RemoteEmbedder:
    """A model behind OpenAI's `/embeddings` (OpenAI's own or an OpenAI-compatible server),
    through pydantic-ai's embedding model."""

    def __init__(self, name: str, *, base_url: str | None, api_key: str | None) -> None:
        from openai import AsyncOpenAI
        from pydantic_ai.embeddings.openai import OpenAIEmbeddingModel
        from pydantic_ai.providers.openai import OpenAIProvider

        self.name = name
        # Bounded: a put or a search waits for the embedding, and openai's default is 10 min.
        self._client = AsyncOpenAI(
            base_url=base_url,
            api_key=api_key or "not-needed",
            timeout=_TIMEOUT_SECONDS,
            max_retries=_RETRIES,
        )
        self._model = OpenAIEmbeddingModel(
            name.partition(":")[2], provider=OpenAIProvider(openai_client=self._client)
        )

    async def embed(self, texts: Sequence[str], *, kind: Literal["query", "document"]) -> Vectors:
        from openai import OpenAIError
        from pydantic_ai.exceptions import AgentRunError

        try:
            result = await self._model.embed(list(texts), input_type=kind)
            rows = np.asarray(result.embeddings, dtype=np.float32)
        except (AgentRunError, OpenAIError, ValueError, TypeError, KeyError) as exc:
            # The last three: an answer that is not lists of numbers of one length.
            raise EmbeddingsUnavailable(self.name, _reason(exc)) from exc
        if rows.ndim != 2 or len(rows) != len(texts) or rows.shape[1] == 0:
            raise EmbeddingsUnavailable(
                self.name, f"{len(texts)} texts were sent, the answer had shape {rows.shape}"
            )
        norms = np.linalg.norm(rows, axis=1, keepdims=True)
        return (rows / np.where(norms > 0, norms, 1.0)).astype(np.float32)

    async def aclose(self) -> None:
        await self._client.close()


def _reason(exc: Exception) -> str:
    """What went wrong, without the server's address or answer (an operator's setting and
    internals, not the caller's to read; the log has them)."""
    from pydantic_ai.exceptions import ModelConnectionError, ModelHTTPError

    log.warning("the embeddings model failed: %r", exc)
    if isinstance(exc, ModelHTTPError):
        return f"its server answered HTTP {exc.status_code}"
    if isinstance(exc, ModelConnectionError):
        return "its server could not be reached or did not answer in time"
    return f"its answer could not be read ({type(exc).__name__})"


def embedder_for(settings: Settings) -> Embedder | None:
    """The embedder `ATRIUM_EMBEDDINGS_MODEL` names, or None when unset."""
    name = settings.embeddings_model
    if name is None:
        return None
    if name == "offline":
        return OfflineEmbedder()
    if name.startswith("openai:"):
        key = settings.openai_api_key
        return RemoteEmbedder(
            name,
            base_url=settings.openai_base_url,
            api_key=key.get_secret_value() if key is not None else None,
        )
    return RemoteEmbedder(name, base_url=settings.llm_base_url, api_key=settings.llm_api_key)


# One embedder per process and configuration, shared by the API's requests and the worker's
# runs: a remote one keeps its HTTP connections across them.
_PROCESS_EMBEDDERS: dict[tuple[str, str | None], Embedder | None] = {}


def _process_key(settings: Settings) -> tuple[str, str | None]:
    name = settings.embeddings_model or ""
    base_url = settings.openai_base_url if name.startswith("openai:") else settings.llm_base_url
    return name, base_url


def process_embedder(settings: Settings) -> Embedder | None:
    """This process's embedder for `settings` (ATRIUM_EMBEDDINGS_MODEL), built on first use;
    None when no embeddings model is set."""
    key = _process_key(settings)
    if key not in _PROCESS_EMBEDDERS:
        _PROCESS_EMBEDDERS[key] = embedder_for(settings)
    return _PROCESS_EMBEDDERS[key]


async def close_process_embedder(settings: Settings) -> None:
    """Close the process's embedder for `settings` (at shutdown); a later use builds another."""
    embedder = _PROCESS_EMBEDDERS.pop(_process_key(settings), None)
    if embedder is not None:
        await embedder.aclose()
