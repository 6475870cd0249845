"""The heaps the tests never free are frozen (`gc.freeze`): the one every test process built at
collection (tests/conftest.py) and the forkserver's, which every `atrium` process of the tests
is forked with (tests/frozen_preload.py)."""

from __future__ import annotations

import gc
import sys

from tests import processes

# Far fewer objects than either heap holds (hundreds of thousands), far more than a stray few.
MANY = 50_000


def _exit_zero_when_frozen() -> None:
    sys.exit(0 if gc.get_freeze_count() > MANY else 1)


def test_the_collected_heap_is_frozen() -> None:
    assert gc.get_freeze_count() > MANY


def test_processes_are_forked_with_the_preloaded_heap_frozen() -> None:
    process = processes._forkserver.Process(target=_exit_zero_when_frozen)
    process.start()
    process.join(processes.START_TIMEOUT)
    assert process.exitcode == 0
