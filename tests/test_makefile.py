"""The Makefile's `run` target takes the address to serve on (`make run PORT=8001 HOST=…`)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).parents[1]


@pytest.mark.skipif(shutil.which("make") is None, reason="make is not installed")
def test_make_run_passes_host_and_port_to_serve() -> None:
    dry = subprocess.run(
        ["make", "--dry-run", "--always-make", "run", "PORT=8001", "HOST=0.0.0.0"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    serve = [line for line in dry.splitlines() if "atrium serve" in line]
    assert serve == [".venv/bin/atrium serve --host 0.0.0.0 --port 8001"]
