"""The Python examples of docs/client.md run as written, against a real server."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.client.conftest import Server

DOC = Path(__file__).parents[2] / "docs" / "client.md"
EXAMPLES = re.findall(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)


def test_the_page_has_examples() -> None:
    assert len(EXAMPLES) >= 5


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_example_runs(index: int, server: Server, api_key: str, tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-c", EXAMPLES[index]],
        env={**server.env, "ATRIUM_API_KEY": api_key},
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip(), "every example prints what it did"
