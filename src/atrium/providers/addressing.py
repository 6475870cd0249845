"""How a model name addresses an OpenAI-compatible server, and what is wrong when it cannot.

`openai-compatible:<provider>/<model>` goes to the named provider: the account's own of that
name, else the operator's (`ATRIUM_PROVIDERS`). Any other `openai-compatible:<model>`, and one
whose first segment names no provider, is `<model>` on the server of `ATRIUM_LLM_BASE_URL`, as
it always was: a model id may hold slashes itself (`Qwen/Qwen2.5-7B-Instruct` on vLLM), so a
segment that names no provider is part of the model (docs/decisions/0038-named-providers.md).
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Final

from atrium.settings import PROVIDER_NAME, Settings

OPENAI_COMPATIBLE: Final = "openai-compatible"
_PREFIX: Final = OPENAI_COMPATIBLE + ":"


def named_provider(model: str) -> tuple[str, str] | None:
    """`openai-compatible:ollama/llama3.2` -> ("ollama", "llama3.2"): the provider a full model
    name may address and the model it asks it for; None when its first segment cannot be a
    provider's name (or it is not an `openai-compatible:` name)."""
    if not model.startswith(_PREFIX):
        return None
    provider, slash, rest = model[len(_PREFIX) :].partition("/")
    if not slash or not rest or not PROVIDER_NAME.match(provider):
        return None
    return provider, rest


def known_to_all(settings: Settings) -> list[str]:
    """The providers every account may use: the operator's."""
    return sorted(settings.providers)


def unknown_provider(name: str, known: Collection[str]) -> str:
    listed = ", ".join(sorted(known)) or "none"
    return (
        f"no provider named {name!r} (known: {listed}; add one with POST /v1/providers, or "
        "ATRIUM_PROVIDERS on the server)"
    )


def compatible_problem(model: str, settings: Settings, known: Collection[str]) -> str | None:
    """What keeps `openai-compatible:` model `model` from being used by an account whose own
    providers are `known` (with the operator's); None when nothing does."""
    named = named_provider(model)
    every = set(known) | set(settings.providers)
    if named is not None and named[0] in every:
        return None
    if settings.llm_base_url:
        return None
    if named is not None:
        return unknown_provider(named[0], every)
    problem = (
        "openai-compatible models need ATRIUM_LLM_BASE_URL, the address of the server "
        "(e.g. http://127.0.0.1:11434/v1 for Ollama)"
    )
    if every:
        problem += (
            f", or a provider: openai-compatible:<provider>/<model> (known: "
            f"{', '.join(sorted(every))})"
        )
    return problem
