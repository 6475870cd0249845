"""Every link between the project's pages leads somewhere: the README, the guides, the design
and the decision records link files that exist and, after `#`, headings or anchors they have;
and every `docs/….md` page the code names (a CLI hint, an error, an OpenAPI description)
exists."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import atrium
from tests.docs.runner import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_LINK = re.compile(r"\]\(([^)\s]+)\)")
_HEADING = re.compile(r"^#+\s+(.*)$", re.M)
_ANCHOR = re.compile(r'<a id="([^"]+)"></a>')
_FENCE = re.compile(r"^```.*?^```", re.M | re.S)
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_NAMED_PAGE = re.compile(r"\bdocs/[a-z0-9_/-]+\.md\b")


def _slug(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = page.read_text()
    return {_slug(h) for h in _HEADING.findall(_FENCE.sub("", text))} | set(_ANCHOR.findall(text))


@pytest.mark.parametrize("page", PAGES, ids=[str(p.relative_to(ROOT)) for p in PAGES])
def test_links_lead_somewhere(page: Path) -> None:
    broken = []
    prose = _CODE_SPAN.sub("", _FENCE.sub("", page.read_text()))
    for target in _LINK.findall(prose):
        if re.match(r"[a-z]+:", target):
            continue  # another site, or mailto:
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in _anchors(linked):
            broken.append(f"{target}: no such heading or anchor")
    assert not broken, f"{page.relative_to(ROOT)}:\n" + "\n".join(broken)


def test_every_page_the_code_names_exists() -> None:
    src = Path(atrium.__file__).parent
    missing = sorted(
        f"{path.relative_to(ROOT)}: {name}"
        for path in src.rglob("*")
        if path.suffix in {".py", ".js", ".html"} and "__pycache__" not in path.parts
        for name in _NAMED_PAGE.findall(path.read_text(encoding="utf-8"))
        if not (ROOT / name).is_file()
    )
    assert not missing, "\n".join(missing)
