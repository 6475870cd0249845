"""The runnable parts of a documentation page: its fenced code blocks and how each one runs.

A page is read top to bottom as a newcomer would follow it. The info string of a fence is the
language, then flags:

- ```` ```sh ```` and ```` ```python ````: run, in the page's order, in one bash process
  (`set -euo pipefail`), so the shell variables a block sets are there for the next one; a
  python block runs with the project's interpreter and sees the exported variables.
- ```` ```sh server ````: how to start atrium. Not run: the runner starts a fresh `atrium serve`
  of its own with the `ATRIUM_*=value` assignments written on the block's `make run` or
  `atrium serve` line. Without one, the page gets no server.
- ```` ```sh background ````: started in the background and kept until the page ends; the next
  block runs once every loopback port the block names accepts connections (or, when it names
  none or only UDP ones, once the block has printed its first line).
- ```` ```sh norun ```` (any language): shown, never run.
- ```` ```text ```` right after a run block: what that block prints. Every non-empty line must
  be in the block's output; `…` in a line matches anything.

A page may also say, in a comment of its own, what it needs: `<!-- docs-test: needs postgres
redis -->` skips the page where the test run has no such server; where it has them, the page's
`postgresql+asyncpg://postgres@127.0.0.1:5432/atrium` becomes a database made for the page and
`redis://127.0.0.1:6379/0` the test run's Redis (tests/docs/test_pages.py).
"""

from __future__ import annotations

import re
import shlex
from dataclasses import dataclass, field
from pathlib import Path

RUNNABLE = frozenset({"sh", "bash", "python"})
FLAGS = frozenset({"server", "background", "norun"})
# The services the machine runs on their standard ports: never remapped.
SERVICE_PORTS = frozenset({5432, 6379})
PORT_PATTERNS = (
    re.compile(r"(?<![\w.])(?:127\.0\.0\.1|localhost):(\d{2,5})\b"),
    re.compile(r"--port[ =](\d{2,5})\b"),
)
_FENCE = re.compile(r"^```(\S*)(.*)$")
_NEEDS = re.compile(r"<!--\s*docs-test:\s*needs\s+([\w\s]+?)\s*-->")
_SETTING = re.compile(r"^(ATRIUM_[A-Z0-9_]+)=(.*)$", re.S)


@dataclass
class Block:
    """One fenced block: its language, flags, text and the line its fence opens on."""

    language: str
    flags: frozenset[str]
    text: str
    line: int
    # The ```text block right after it: what it prints.
    expected: str | None = None

    @property
    def runs(self) -> bool:
        return self.language in RUNNABLE and not self.flags & {"norun", "server"}

    def describe(self) -> str:
        flags = " ".join(sorted(self.flags))
        return f"```{self.language}{' ' + flags if flags else ''} at line {self.line}"


@dataclass
class Page:
    path: Path
    blocks: list[Block]
    needs: frozenset[str] = field(default_factory=frozenset)

    @property
    def server(self) -> Block | None:
        servers = [block for block in self.blocks if "server" in block.flags]
        assert len(servers) <= 1, f"{self.path}: one ```sh server block at most"
        return servers[0] if servers else None

    def server_settings(self) -> dict[str, str]:
        """The `ATRIUM_*=value` words of the server block's `make run`/`atrium serve` line."""
        block = self.server
        if block is None:
            return {}
        settings: dict[str, str] = {}
        for line in block.text.splitlines():
            command = line.split(" #", 1)[0]
            if "make run" not in command and "atrium serve" not in command:
                continue
            for word in shlex.split(command):
                if found := _SETTING.match(word):
                    settings[found[1]] = found[2]
        return settings

    def ports(self) -> list[int]:
        """Every loopback port the page names, in order of appearance, services excepted."""
        seen: dict[int, None] = {}
        for block in self.blocks:
            for text in (block.text, block.expected or ""):
                for pattern in PORT_PATTERNS:
                    for found in pattern.finditer(text):
                        port = int(found[1])
                        if port not in SERVICE_PORTS:
                            seen[port] = None
        return list(seen)


def parse(path: Path, text: str | None = None) -> Page:
    """The page's fenced blocks, each runnable one with the ```text block that follows it."""
    source = path.read_text() if text is None else text
    lines = source.splitlines()
    blocks: list[Block] = []
    index = 0
    while index < len(lines):
        opened = _FENCE.match(lines[index])
        if not opened:
            index += 1
            continue
        start = index
        index += 1
        body: list[str] = []
        while index < len(lines) and not lines[index].startswith("```"):
            body.append(lines[index])
            index += 1
        index += 1  # the closing fence
        language = opened[1]
        flags = frozenset(opened[2].split())
        unknown = flags - FLAGS
        assert not unknown, f"{path}:{start + 1}: unknown flags {sorted(unknown)}"
        block = Block(language, flags, "\n".join(body) + "\n", start + 1)
        if language == "text" and blocks and blocks[-1].runs and blocks[-1].expected is None:
            blocks[-1].expected = block.text
            continue
        blocks.append(block)
    needs = frozenset(word for found in _NEEDS.finditer(source) for word in found[1].split())
    return Page(path, blocks, needs)


def remap(text: str, ports: dict[int, int]) -> str:
    """`text` with each loopback port of `ports` replaced by its counterpart."""

    def swap(found: re.Match[str]) -> str:
        port = int(found[1])
        whole = found[0]
        if port not in ports:
            return whole
        return whole[: found.start(1) - found.start(0)] + str(ports[port])

    for pattern in PORT_PATTERNS:
        text = pattern.sub(swap, text)
    return text


def expected_lines(expected: str) -> list[tuple[str, re.Pattern[str]]]:
    """The lines a block's output must hold, each as written and as a pattern where `…`
    matches anything."""
    patterns = []
    for line in expected.splitlines():
        line = line.strip()
        if line:
            parts = [re.escape(part) for part in line.split("…")]
            patterns.append((line, re.compile(".*?".join(parts))))
    return patterns
