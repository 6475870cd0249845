"""docs/guide/configuration.md's tables, made from the `Settings` class: one table per section
of settings.py (its `# --- name ---` comments), each setting with its default and description.

`python -m tests.docs.configuration` rewrites the page's tables (`make format` runs it);
tests/docs/test_configuration.py fails while the page is stale.
"""

from __future__ import annotations

import inspect
import json
import re
import sys
from pathlib import Path
from typing import Any

from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from atrium import settings as settings_module
from atrium.settings import Settings

PAGE = Path(__file__).parents[2] / "docs" / "guide" / "configuration.md"
START, END = "<!-- settings: generated from src/atrium/settings.py -->", "<!-- /settings -->"
_SECTION = re.compile(r"^\s*# --- (.+?) -+\s*$")
_FIELD = re.compile(r"^    (\w+): ")


def _default(field: FieldInfo) -> str:
    if field.default_factory in (list, dict):
        return "—"
    value: Any = field.default
    if field.default_factory is not None:
        doc = " ".join((field.default_factory.__doc__ or "").split())
        if doc:
            return re.split(r"(?<=\.)\s", doc, maxsplit=1)[0]
        value = field.default_factory()  # type: ignore[call-arg]
    if value is None or value is PydanticUndefined or value == [] or value == {}:
        return "—"
    if hasattr(value, "get_secret_value"):
        return "—"
    if hasattr(value, "model_dump"):
        value = value.model_dump()
    if isinstance(value, dict):
        dumped = {k: v.model_dump() if hasattr(v, "model_dump") else v for k, v in value.items()}
        return f"`{json.dumps(dumped)}`"
    if isinstance(value, list):
        return f"`{','.join(map(str, value))}`"
    return f"`{value}`"


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def sections() -> list[tuple[str, list[str]]]:
    """Each section of settings.py in source order, with its settings' field names."""
    found: list[tuple[str, list[str]]] = [("service", [])]
    for line in inspect.getsource(settings_module.Settings).splitlines():
        if section := _SECTION.match(line):
            found.append((section[1], []))
        elif (field := _FIELD.match(line)) and field[1] in Settings.model_fields:
            found[-1][1].append(field[1])
    return [(name, fields) for name, fields in found if fields]


def tables() -> str:
    parts = [START]
    for name, fields in sections():
        parts += [f"\n### {name[0].upper()}{name[1:]}\n", "| variable | default | meaning |"]
        parts.append("|---|---|---|")
        for field_name in fields:
            field = Settings.model_fields[field_name]
            variable = f"ATRIUM_{field_name.upper()}"
            parts.append(
                f"| `{variable}` | {_cell(_default(field))} | {_cell(field.description or '')} |"
            )
    parts.append(END)
    return "\n".join(parts)


def current(page: str) -> str:
    """The page with its tables made anew."""
    start, end = page.index(START), page.index(END) + len(END)
    return page[:start] + tables() + page[end:]


if __name__ == "__main__":
    text = PAGE.read_text()
    made = current(text)
    if made != text:
        PAGE.write_text(made)
        print(f"{PAGE} rewritten", file=sys.stderr)
