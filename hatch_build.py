"""Build hook: write the blocking client `src/atrium/client/_sync.py` from the asyncio one.

`_sync.py` is generated (see `src/atrium/client/_unasync.py`) and git ignores it, so every build
writes it: wheels, and the editable install `make install` makes. The generator is loaded from
its file because nothing of atrium is importable while the package is being built.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Any

from hatchling.builders.hooks.plugin.interface import BuildHookInterface

GENERATOR = Path("src/atrium/client/_unasync.py")
GENERATED = "src/atrium/client/_sync.py"


class SyncClientHook(BuildHookInterface):
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        spec = importlib.util.spec_from_file_location("_unasync", Path(self.root, GENERATOR))
        assert spec is not None and spec.loader is not None
        unasync = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(unasync)
        unasync.main([])
        # Ignored by git, so hatch would leave it out of a wheel unless named here.
        build_data["artifacts"].append(GENERATED)
