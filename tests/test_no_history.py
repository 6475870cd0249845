"""The code says why, not what happened: no lab notebook in `src/`.

A comment or docstring gives the reason, with at most one figure and a link to its record in
`docs/decisions/` or a section of `docs/design.md`; history lives in git and the records. So
`src/` names no issue, no "pass" of a measurement campaign, no document a reader does not
have (an outside DESIGN or SPEC), and every record or design section it links exists.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import atrium

SRC = Path(atrium.__file__).parent
DOCS = SRC.parents[1] / "docs"
_SUFFIXES = frozenset({".py", ".js", ".css", ".html"})

HISTORY = {
    "an issue number": re.compile(r"\bissues? [0-9]+", re.IGNORECASE),
    "a section of DESIGN.md": re.compile(r"\bDESIGN §"),
    "SPEC.md": re.compile(r"\bSPEC\b"),
    "a numbered pass": re.compile(
        r"\b(first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth) pass\b",
        re.IGNORECASE,
    ),
    "'before this'": re.compile(r"\bbefore this\b", re.IGNORECASE),
    "'measured before'": re.compile(r"\bmeasured before\b", re.IGNORECASE),
}
_DECISION = re.compile(r"docs/decisions/([0-9]{4}-[a-z0-9-]+\.md)")
_DESIGN_ANCHOR = re.compile(r"docs/design\.md#([a-z0-9-]+)")
_ANCHOR_TAG = re.compile(r'<a id="([a-z0-9-]+)"></a>')


def _sources() -> list[Path]:
    return sorted(
        path
        for path in SRC.rglob("*")
        if path.suffix in _SUFFIXES and "__pycache__" not in path.parts and path.is_file()
    )


def _lines() -> list[tuple[str, int, str]]:
    return [
        (str(path.relative_to(SRC.parent)), number, line)
        for path in _sources()
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
    ]


@pytest.mark.parametrize("what", sorted(HISTORY))
def test_src_tells_no_history(what: str) -> None:
    pattern = HISTORY[what]
    found = [
        f"{path}:{number}: {line.strip()}"
        for path, number, line in _lines()
        if pattern.search(line)
    ]
    assert not found, (
        f"{what} in src/: give the reason, and link its record in docs/decisions/ or a section "
        "of docs/design.md instead\n" + "\n".join(found)
    )


def test_every_linked_decision_record_exists() -> None:
    missing = [
        f"{path}:{number}: docs/decisions/{name}"
        for path, number, line in _lines()
        for name in _DECISION.findall(line)
        if not (DOCS / "decisions" / name).is_file()
    ]
    assert not missing, "\n".join(missing)


def test_every_linked_design_section_exists() -> None:
    anchors = set(_ANCHOR_TAG.findall((DOCS / "design.md").read_text(encoding="utf-8")))
    missing = [
        f"{path}:{number}: docs/design.md#{anchor}"
        for path, number, line in _lines()
        for anchor in _DESIGN_ANCHOR.findall(line)
        if anchor not in anchors
    ]
    assert not missing, "\n".join(missing)
