"""The run's closing summary counts skips by reason (tests/skips.py), with xdist's workers too."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import BACKENDS

ROOT = Path(__file__).parents[1]
SKIPPING = """
import pytest

@pytest.mark.skipif(True, reason="needs the moon")
@pytest.mark.parametrize("n", range(300))
def test_marked(n):
    pass

@pytest.fixture
def server():
    pytest.skip("no server")

@pytest.mark.parametrize("n", range(3))
def test_needs_a_server(server, n):
    pass

@pytest.mark.parametrize("n", range(25))
def test_each_its_own(n):
    pytest.skip(f"reason {n:02d}")

def test_runs():
    pass
"""


def test_skips_are_counted_by_reason(tmp_path: Path) -> None:
    (tmp_path / "test_skipping.py").write_text(SKIPPING)
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    # Only the plugins this needs: the entry points' (schemathesis, hypothesis, ...) take
    # seconds to import in each worker.
    env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    result = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "xdist", "-p", "tests.skips", "-n", "2"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    [start] = [i for i, line in enumerate(lines) if "328 skipped, by reason" in line]
    summary = lines[start + 1 : start + 23]
    assert summary[:2] == ["300  needs the moon", "  3  no server"]
    assert summary[2:20] == [f"  1  reason {n:02d}" for n in range(18)]
    assert summary[20] == "  7  for 7 other reasons (pytest -rs lists every skip)"
    assert "1 passed, 328 skipped" in summary[21]


def test_the_backends_skip_says_how_to_run_it() -> None:
    marks = [mark for param in BACKENDS for mark in getattr(param, "marks", ())]
    [skipif] = [mark for mark in marks if mark.name == "skipif"]
    assert "set ATRIUM_TEST_POSTGRES_URL=postgresql+asyncpg://" in skipif.kwargs["reason"]


def test_the_redis_skip_says_how_to_run_it(
    monkeypatch: pytest.MonkeyPatch, request: pytest.FixtureRequest
) -> None:
    from tests import conftest

    monkeypatch.setattr(conftest, "REDIS_URL", None)
    with pytest.raises(pytest.skip.Exception, match="set ATRIUM_TEST_REDIS_URL=redis://"):
        request.getfixturevalue("redis_url")
