"""The three API groups: their path prefixes and the body format each takes
(docs/design.md#groups)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal


@dataclass(frozen=True, slots=True)
class Group:
    name: str
    prefix: str
    body: Literal["form", "json"]

    def owns(self, path: str) -> bool:
        return path == self.prefix or path.startswith(self.prefix + "/")


RUNS = Group("runs", "/api/v1/public", "json")
DOMAINS = Group("domains", "/api/v1", "form")
AGENTS = Group("agents", "/v1", "json")

# Longest prefix first: /api/v1/public belongs to the runs group, not to /api/v1.
GROUPS: tuple[Group, ...] = (RUNS, DOMAINS, AGENTS)


def group_for(path: str) -> Group | None:
    for group in GROUPS:
        if group.owns(path):
            return group
    return None
