"""The suite writes bytecode even where `PYTHONDONTWRITEBYTECODE` is set (this machine, CI).

Loaded by `-p tests.bytecode` in pyproject's `addopts`, before pytest imports any plugin found by
entry point, conftest or test file. Without bytecode every process compiles what it imports anew:
pytest's assertion rewriter re-rewrote ~490 modules per run (every pytest11 plugin's whole
package: schemathesis, hypothesis, anyio, ...) and `atrium` itself was compiled in every xdist
worker and every server process a test starts. Collecting the suite took ~14.5 s of CPU in each
worker with the variable set, ~10.6 s with cached bytecode (calibration ~12 ms).

The variable is also removed from the environment, so what this process starts (xdist's workers,
`atrium serve`, `atrium worker`, the CLI) writes and reads the same caches. The `.pyc` files go to
`__pycache__/` beside their sources (ignored by git); CPython and pytest check each against its
source's mtime and size and write it atomically, so parallel workers share them safely.
"""

from __future__ import annotations

import os
import sys

sys.dont_write_bytecode = False
os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
