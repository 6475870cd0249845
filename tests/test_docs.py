"""The README stays true: every setting is documented, and the two commands are its first lines."""

from __future__ import annotations

from pathlib import Path

from atrium.settings import Settings

README = (Path(__file__).parents[1] / "README.md").read_text()


def test_every_setting_is_in_the_readme_table() -> None:
    missing = [
        f"ATRIUM_{name.upper()}"
        for name in Settings.model_fields
        if f"`ATRIUM_{name.upper()}`" not in README
    ]
    assert missing == []


def test_the_readme_opens_with_the_two_commands() -> None:
    head = README.split("\n## ", 1)[0]
    assert "make run" in head
    assert "make test" in head
