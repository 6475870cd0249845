"""The README is the front door (the two commands first, small enough to read); the generated
guides (configuration, API reference) are what the code has."""

from __future__ import annotations

from pathlib import Path

from tests.docs import configuration, reference

README = Path(__file__).parents[1] / "README.md"
README_MAX_BYTES = 12 * 1024


def test_the_readme_opens_with_the_two_commands() -> None:
    first_block = README.read_text().split("```", 2)[1]
    assert first_block.splitlines()[0] == "sh server"
    assert [line.split()[:2] for line in first_block.splitlines()[1:]] == [
        ["make", "run"],
        ["make", "test"],
    ]


def test_the_readme_is_a_front_door_not_a_notebook() -> None:
    assert len(README.read_bytes()) <= README_MAX_BYTES


def test_the_configuration_guide_lists_every_setting_as_the_code_has_it() -> None:
    page = configuration.PAGE.read_text()
    assert configuration.current(page) == page, "run `make format` to regenerate its tables"


def test_the_api_reference_is_the_openapi_document_the_server_publishes() -> None:
    made = reference.page(reference.openapi())
    assert reference.PAGE.read_text() == made, "run `make format` to regenerate it"
