"""The allocator trim thread: runs on glibc Linux, never when turned off, survives its calls."""

from __future__ import annotations

import sys
import time

import pytest

from atrium.kit.malloc_trim import _malloc_trim, start_trimming

linux = pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc only")


@linux
def test_trim_returns_whether_memory_was_released() -> None:
    trim = _malloc_trim()
    assert trim is not None
    assert trim() in {0, 1}


@linux
def test_the_thread_keeps_trimming() -> None:
    trimming = start_trimming(0.01)
    assert trimming is not None and trimming.thread.daemon
    try:
        time.sleep(0.2)  # about twenty calls
        assert trimming.thread.is_alive()
    finally:
        trimming.stop()
    assert not trimming.thread.is_alive()


def test_zero_turns_it_off() -> None:
    assert start_trimming(0) is None
