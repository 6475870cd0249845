"""The blocking client is generated from the asyncio one: `_sync.py` must be what `_async.py` makes.

The build writes it (hatch_build.py) and git ignores it; an editable install keeps the copy it
wrote, so an `_async.py` edited since must not pass unnoticed: `make lint` runs the same check,
and this keeps `make test` from passing on a stale copy too.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from atrium.client._unasync import SOURCE, TARGET, StaleRules, generate, rewrite, yield_from


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "atrium.client._unasync", "--check", *args],
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_the_sync_client_is_what_the_async_one_generates() -> None:
    expected = generate(SOURCE.read_text())
    assert TARGET.read_text() == expected, "_sync.py is stale: run `make format`"
    # Not formatted by ruff (git ignores it, so lint does not read it), but valid for mypy, and
    # the re-yielding loops became `yield from` (closing a stream closes its connection).
    assert "        yield from self._client._events(" in expected
    assert TARGET.read_text().startswith("# Code generated from _async.py")


def test_check_passes_on_the_built_file_and_fails_on_a_stale_copy(tmp_path: Path) -> None:
    current = _check()
    assert current.returncode == 0, current.stdout + current.stderr

    stale = tmp_path / "_sync.py"
    # A hand edit of the generated file: the kind of drift the check exists for.
    stale.write_text(TARGET.read_text().replace("time.sleep(delay)", "time.sleep(0)", 1))
    result = _check(str(stale))
    assert result.returncode == 1
    assert f"{stale} is stale" in result.stdout
    assert "-            time.sleep(0)" in result.stdout
    assert "+            time.sleep(delay)" in result.stdout

    missing = _check(str(tmp_path / "absent.py"))
    assert missing.returncode == 1


def test_a_rule_that_matches_nothing_fails_the_generation() -> None:
    with pytest.raises(StaleRules, match="matched nothing"):
        rewrite("def plain() -> None:\n    pass\n")


def test_the_rewrite_turns_asyncio_words_into_blocking_ones() -> None:
    # Every rule at least once (rewrite() insists), so what each does is visible here too.
    source = "".join(
        [
            '"""`AsyncClient`: the asyncio client."""\n',
            "import asyncio\n",
            "from collections.abc import AsyncIterator, Awaitable, Callable\n",
            "async def f(x: AsyncIterator[int]) -> None:  # noqa: ASYNC109 - why\n",
            "    async with aconnect_sse(x) as s:\n",
            "        async for e in s.aiter_sse():\n",
            "            await acall_hook(hook, e)\n",
            "    await asyncio.sleep(1)\n",
            "    await r.aread(); await r.aclose(); r.aiter_bytes()\n",
            "@asynccontextmanager\n",
            "async def __aenter__(self, h: Callable[[E], Awaitable[None] | None]) -> None: ...\n",
            "async def __aexit__(self) -> None: ...\n",
        ]
    )
    assert rewrite(source).splitlines() == [
        '"""`Client`: the blocking client."""',
        "from collections.abc import Iterator, Callable",
        "def f(x: Iterator[int]) -> None:",
        "    with connect_sse(x) as s:",
        "        for e in s.iter_sse():",
        "            call_hook(hook, e)",
        "    time.sleep(1)",
        "    r.read(); r.close(); r.iter_bytes()",
        "@contextmanager",
        "def __enter__(self, h: Callable[[E], None]) -> None: ...",
        "def __exit__(self) -> None: ...",
    ]


def test_only_loops_that_just_re_yield_become_yield_from() -> None:
    source = "".join(
        [
            "def f(pages):\n",
            "    for page in pages(\n",
            "        1,\n",
            "    ):\n",
            "        yield page\n",
            "    for page in pages():\n",
            "        yield page.data\n",
            "    for page in pages():\n",
            "        yield page\n",
            "    else:\n",
            "        pass\n",
        ]
    )
    assert yield_from(source).splitlines() == [
        "def f(pages):",
        "    yield from pages(",
        "        1,",
        "    )",
        "    for page in pages():",
        "        yield page.data",
        "    for page in pages():",
        "        yield page",
        "    else:",
        "        pass",
    ]
