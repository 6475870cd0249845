"""Compaction: a thread's history that would outgrow its budget is summarised by the agent's
model, and the summary stands in for its oldest part (docs/guide/threads.md#long-threads).

The budget is the agent's `context_budget` (tokens), else three quarters of its model's context
window (the rest is left to the instructions, the new prompt and the answer). Tokens are
estimated from the text the model would read (characters / 4, plus a little per part), not
from a tokenizer: the estimate decides when to summarise, where a few percent do not matter,
and a tokenizer per provider would be a dependency per provider.

What is summarised: every part of the history but the most recent runs that fit in half the
budget (on demand: all but the newest run), so a summary is followed by enough verbatim turns
to go on from, and the next compaction is half a budget away. The summary is written from a
plain transcript of that part (an earlier summary first), cut to the budget from its oldest end.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final

from pydantic_ai import Agent
from pydantic_ai.models import Model
from pydantic_ai.settings import ModelSettings

from atrium.agents.config import OFFLINE_MODEL, AgentConfig
from atrium.runtime.history_parts import HistoryPart

# The instructions of a summarising request. The offline model recognises them by this first
# line and writes a deterministic summary (runtime/offline.py).
SUMMARY_MARKER: Final = "You summarise conversations for an assistant that will continue them."
SUMMARY_INSTRUCTIONS: Final = (
    f"{SUMMARY_MARKER}\n"
    "Write a concise summary of the transcript below: the user's requests and facts they gave, "
    "decisions made, tool results that matter, and anything left open. Write it as notes the "
    "assistant can rely on; do not address the user."
)
# A transcript line per item; how the summariser sees each role.
USER_LINE: Final = "User: "
ASSISTANT_LINE: Final = "Assistant: "
SUMMARY_LINE: Final = "Earlier summary: "

# Known context windows (tokens), by the model's name after its provider; a prefix matches.
_WINDOWS: Final = (
    ("gpt-4.1", 1_000_000),
    ("gpt-4o", 128_000),
    ("gpt-5", 400_000),
    ("o3", 200_000),
    ("o4", 200_000),
    ("claude", 200_000),
)
# A model not in the table: small enough for most models served today.
DEFAULT_WINDOW: Final = 32_000
# The offline model's window is small, so a test thread reaches it in a few dozen turns.
OFFLINE_WINDOW: Final = 4_000
_CHARS_PER_TOKEN: Final = 4
_TOKENS_PER_PART: Final = 4
_SUMMARY_MAX_OUTPUT_TOKENS: Final = 1_000


def context_window(model: str) -> int:
    if model == OFFLINE_MODEL:
        return OFFLINE_WINDOW
    name = model.partition(":")[2].rpartition("/")[2]
    for prefix, window in _WINDOWS:
        if name.startswith(prefix):
            return window
    return DEFAULT_WINDOW


def budget_of(config: AgentConfig) -> int:
    """The history budget of a run with this agent config (tokens)."""
    given = config.get("context_budget")
    if isinstance(given, int) and given > 0:
        return given
    return context_window(str(config.get("model") or OFFLINE_MODEL)) * 3 // 4


def _texts(messages: Sequence[Any]) -> list[tuple[str, str]]:
    """(role, text) of each part of pydantic-ai JSON messages that the model reads."""
    found: list[tuple[str, str]] = []
    for message in messages:
        for part in message.get("parts", []) if isinstance(message, dict) else []:
            kind = part.get("part_kind")
            if kind == "user-prompt":
                content = part.get("content")
                found.append(("user", content if isinstance(content, str) else json.dumps(content)))
            elif kind == "text":
                found.append(("assistant", str(part.get("content", ""))))
            elif kind == "tool-call":
                args = part.get("args")
                text = args if isinstance(args, str) else json.dumps(args)
                found.append(("call", f"{part.get('tool_name')}({text})"))
            elif kind in ("tool-return", "retry-prompt"):
                content = part.get("content")
                text = content if isinstance(content, str) else json.dumps(content)
                found.append(("result", f"{part.get('tool_name')} returned: {text}"))
            elif kind == "system-prompt":
                found.append(("system", str(part.get("content", ""))))
    return found


def estimate_tokens(messages: Sequence[Any]) -> int:
    texts = _texts(messages)
    return sum(len(text) for _, text in texts) // _CHARS_PER_TOKEN + _TOKENS_PER_PART * len(texts)


@dataclass(frozen=True, slots=True)
class Cut:
    """What a compaction summarises (`covered`) and keeps verbatim (`kept`)."""

    covered: list[HistoryPart]
    kept: list[HistoryPart]

    @property
    def through_run_id(self) -> str | None:
        """The last run the summary covers (None: only a base or an earlier summary)."""
        runs = [part.run_id for part in self.covered if part.run_id is not None]
        return runs[-1] if runs else None


def cut(parts: Sequence[HistoryPart], budget: int, *, force: bool = False) -> Cut | None:
    """Where to cut a history over `budget` (None: it fits, or nothing older than the newest
    runs is left to summarise). `force` (compaction on demand): cut even if it fits, keeping
    the newest run only."""
    sizes = [estimate_tokens(part.messages) for part in parts]
    if not force and sum(sizes) <= budget:
        return None
    most_kept = 1 if force else len(parts)
    kept_tokens, first_kept = 0, len(parts)
    for index in range(len(parts) - 1, -1, -1):
        if (
            parts[index].run_id is None
            or kept_tokens + sizes[index] > budget // 2
            or len(parts) - index > most_kept
        ):
            break
        kept_tokens += sizes[index]
        first_kept = index
    covered = list(parts[:first_kept])
    if not covered or (len(covered) == 1 and covered[0].summary):
        return None
    return Cut(covered, list(parts[first_kept:]))


def transcript(parts: Sequence[HistoryPart], budget: int) -> str:
    """The covered parts as plain text for the summariser, at most `budget` tokens of it (the
    oldest lines go first: an earlier summary is kept whole at the top)."""
    lines: list[str] = []
    for part in parts:
        for role, text in _texts(part.messages):
            if part.summary:
                lines.append(SUMMARY_LINE + text.partition("\n\n")[2])
            elif role == "user":
                lines.append(USER_LINE + text)
            elif role == "assistant":
                lines.append(ASSISTANT_LINE + text)
            elif role == "call":
                lines.append("Assistant called " + text)
            elif role == "result":
                lines.append("Tool: " + text)
    limit = budget * _CHARS_PER_TOKEN
    head = lines[:1] if lines and lines[0].startswith(SUMMARY_LINE) else []
    tail = lines[len(head) :]
    size = sum(len(line) + 1 for line in lines)
    first = 0
    while first < len(tail) and size > limit:
        size -= len(tail[first]) + 1
        first += 1
    return "\n".join(head + tail[first:])


@dataclass(frozen=True, slots=True)
class Summary:
    text: str
    input_tokens: int
    output_tokens: int


async def summarise(model: Model, text: str) -> Summary:
    """One request to `model`: the summary of `text` and what it used."""
    agent = Agent[None, str](output_type=str, instructions=SUMMARY_INSTRUCTIONS, name="atrium")
    settings = ModelSettings(max_tokens=_SUMMARY_MAX_OUTPUT_TOKENS, temperature=0.0)
    result = await agent.run(text, model=model, model_settings=settings)
    usage = result.usage
    return Summary(result.output.strip(), usage.input_tokens, usage.output_tokens)
