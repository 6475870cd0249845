"""`atrium …` with a SIGUSR1 handler that starts tracemalloc (the first signal) and then writes
a heap snapshot (each later one): what the soak uses to find what accumulates
(`bench/soak.py --tracemalloc DIR`). Bench only: the production entry points never trace nor
install the handler. Tracing starts after the warm-up, so start-up is not slowed and a snapshot
holds only what was allocated since and is still alive.

    python bench/traced_serve.py DIR serve --port 8000
    kill -USR1 <pid>        # starts tracing; writes DIR/snapshot-0.done
    kill -USR1 <pid>        # writes DIR/snapshot-1.pickle, then DIR/snapshot-1.done

Tracing costs CPU and memory of its own, so the RSS of a traced soak is not the figure to
report; the snapshot diffs are.
"""

from __future__ import annotations

import signal
import sys
import tracemalloc
from pathlib import Path
from types import FrameType

FRAMES = 12


def main() -> None:
    folder = Path(sys.argv[1])
    folder.mkdir(parents=True, exist_ok=True)
    taken = 0

    def snapshot(_signum: int, _frame: FrameType | None) -> None:
        nonlocal taken
        if tracemalloc.is_tracing():
            taken += 1
            tracemalloc.take_snapshot().dump(str(folder / f"snapshot-{taken}.pickle"))
        else:
            tracemalloc.start(FRAMES)
        (folder / f"snapshot-{taken}.done").touch()

    signal.signal(signal.SIGUSR1, snapshot)
    sys.argv = ["atrium", *sys.argv[2:]]
    from atrium.cli import app

    app()


if __name__ == "__main__":
    main()
