"""Runs a documentation page as a newcomer would follow it (the conventions: tests/docs/pages.py).

What the runner changes, and only that: each loopback port the page names becomes a free one
(8000, atrium's default, becomes the port of the server the runner started); `atr_…` becomes a
real key of a new account; the commands run in an empty folder where `.venv`, `examples` and
`bench` are the checkout's, so `.venv/bin/atrium` and `python examples/…` run as written, with
`ATRIUM_URL` set to the server. The client's commands (`atrium run`, `atrium runs …`) are forked
from a process that has imported the client (forked_cli.py): a page runs up to two dozen.
"""

from __future__ import annotations

import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass
from pathlib import Path

from tests.docs import forked_cli
from tests.docs.pages import Block, Page, expected_lines, remap
from tests.processes import (
    SPAWN,
    START_TIMEOUT,
    atrium_env,
    free_port,
    log_tail,
    new_account_key,
    start_atrium,
    stop_process,
    wait_for_http,
)

ROOT = Path(__file__).parents[2]
VENV = Path(sys.executable).parents[1]
DEFAULT_PORT = 8000
# A page starts a CLI process per command (about a second of CPU each, all imports), and the
# longest pages hold twenty: under a busy CI machine's load they took over 3 minutes.
PAGE_TIMEOUT = 540.0
BACKGROUND_TIMEOUT = 60.0
_MARK = "@@docs-block {}@@"
_PYTHON_END = "__DOCS_PYTHON_END__"


class PageFailed(AssertionError):
    """A block of the page failed, or printed other than what the page shows."""


@dataclass
class Server:
    url: str
    key: str


@contextmanager
def serving(page: Page, ports: dict[int, int], workdir: Path) -> Iterator[Server | None]:
    """The page's atrium, started with the settings of its ```sh server block (none without)."""
    if page.server is None:
        yield None
        return
    settings = {name: remap(value, ports) for name, value in page.server_settings().items()}
    url = f"http://127.0.0.1:{ports[DEFAULT_PORT]}"
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{workdir / 'atrium.db'}",
        ATRIUM_PUBLIC_URL=url,
        **settings,
    )
    log = workdir / "atrium.log"
    process = start_atrium(["serve", "--port", str(ports[DEFAULT_PORT])], env=env, output=log)
    try:
        wait_for_http(f"{url}/healthz", process=process, log=log)
        yield Server(url, new_account_key(env))
    finally:
        stop_process(process)


def _script(
    page: Page, ports: dict[int, int], key: str | None, workdir: Path, replace: dict[str, str]
) -> str:
    """The page's runnable blocks as one bash script, each announced by a marker line."""
    lines = [
        "set -euo pipefail",
        # Background blocks' process groups, killed when the page ends (and by the runner).
        f"__docs_pids={shlex.quote(str(workdir / '.docs-pids'))}",
        'trap \'while read -r p; do kill -- "-$p" 2>/dev/null || true; done'
        ' < "$__docs_pids"\' EXIT',
        ': > "$__docs_pids"',
    ]
    for index, block in enumerate(page.blocks):
        if not block.runs:
            continue
        text = remap(block.text, ports)
        for written, used in replace.items():
            text = text.replace(written, used)
        if key is not None:
            text = text.replace("atr_…", key)
        # On a line of its own even after output that did not end its line.
        lines.append(f"printf '\\n%s\\n' {shlex.quote(_MARK.format(index))}")
        if block.language == "python":
            lines += [f"python - <<'{_PYTHON_END}'", text.rstrip("\n"), _PYTHON_END]
        elif "background" in block.flags:
            log = workdir / f"background-{index}.log"
            named = [str(ports[p]) for p in Page(page.path, [block]).ports()]
            lines += [
                "set -m",
                f"( {text.rstrip()}\n) > {shlex.quote(str(log))} 2>&1 &",
                'echo $! >> "$__docs_pids"',
                "set +m",
                f"python -m tests.docs.wait_ports {BACKGROUND_TIMEOUT} {shlex.quote(str(log))} "
                + " ".join(named),
            ]
        else:
            lines.append(text.rstrip("\n"))
    return "\n".join(lines) + "\n"


def _outputs(printed: str) -> dict[int, str]:
    """What each block printed, by its index, from the marker lines between them."""
    outputs: dict[int, str] = {}
    current: int | None = None
    for line in printed.splitlines(keepends=True):
        stripped = line.strip()
        if stripped.startswith("@@docs-block ") and stripped.endswith("@@"):
            current = int(stripped.removeprefix("@@docs-block ").removesuffix("@@"))
            outputs[current] = ""
        elif current is not None:
            outputs[current] += line
    return outputs


def _failure(page: Page, block: Block, output: str, why: str, extra: str = "") -> PageFailed:
    return PageFailed(
        f"{page.path.name}: {block.describe()} {why}\n--- block ---\n{block.text}"
        f"--- output ---\n{output}{extra}"
    )


@contextmanager
def _checkout(workdir: Path) -> Iterator[None]:
    """`examples`, `bench` and `.venv` in `workdir` as the checkout's, but for `.venv/bin/atrium`:
    the client's commands forked from a server kept while the block runs (forked_cli.py)."""
    for name in ("examples", "bench"):
        (workdir / name).symlink_to(ROOT / name)
    if SPAWN == "exec":
        (workdir / ".venv").symlink_to(VENV)
        yield
        return
    bin_dir = workdir / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    for entry in VENV.iterdir():
        if entry.name != "bin":
            (workdir / ".venv" / entry.name).symlink_to(entry)
    for entry in (VENV / "bin").iterdir():
        if entry.name != "atrium":
            (bin_dir / entry.name).symlink_to(entry)
    with tempfile.TemporaryDirectory(prefix="atrium-cli-") as folder:  # a socket's path is short
        socket_path = Path(folder) / "socket"
        log = workdir / "forked-cli.log"
        with log.open("w") as out:
            server = subprocess.Popen(
                [sys.executable, "-m", "tests.docs.forked_cli", str(socket_path)],
                cwd=ROOT,
                env=atrium_env(PYTHONPATH=str(ROOT)),
                stdout=out,
                stderr=subprocess.STDOUT,
            )
        try:
            deadline = time.monotonic() + START_TIMEOUT
            while not socket_path.exists():
                if server.poll() is not None or time.monotonic() > deadline:
                    raise PageFailed(f"the forked commands' server did not start:\n{log_tail(log)}")
                time.sleep(0.02)
            forked_cli.install(bin_dir, socket_path, VENV / "bin" / "atrium")
            yield
        finally:
            stop_process(server)


def _kill_leftovers(workdir: Path) -> None:
    """Kill the background blocks' process groups and wait until they are gone, so their
    ports are free when the page's test ends."""
    pids = workdir / ".docs-pids"
    if not pids.exists():
        return
    groups = [int(pid) for pid in pids.read_text().split()]
    for group in groups:
        with suppress(ProcessLookupError, PermissionError):
            os.killpg(group, signal.SIGKILL)
    deadline = time.monotonic() + 10
    for group in groups:
        while time.monotonic() < deadline:
            try:
                os.killpg(group, 0)
            except (ProcessLookupError, PermissionError):
                break
            time.sleep(0.02)


def run_page(page: Page, workdir: Path, *, replace: dict[str, str] | None = None) -> dict[int, str]:
    """Run every block of `page`; raise `PageFailed` naming the first block that went wrong.
    `replace` maps text the page writes to what the test uses instead (a database made for
    it in place of the page's). Returns what each block printed."""
    ports = {port: free_port() for port in page.ports()}
    ports.setdefault(DEFAULT_PORT, free_port())
    workdir.mkdir(parents=True, exist_ok=True)
    with _checkout(workdir), serving(page, ports, workdir) as server:
        key = server.key if server else None
        script = _script(page, ports, key, workdir, replace or {})
        (workdir / "page.sh").write_text(script)
        env = atrium_env(
            PATH=f"{workdir / '.venv' / 'bin'}:{os.environ['PATH']}",
            HOME=str(workdir),
            COLUMNS="100",
            NO_COLOR="1",
            PYTHONPATH=str(ROOT),  # for `python -m tests.docs.wait_ports` only
        )
        if server is not None:
            env["ATRIUM_URL"] = server.url
        try:
            done = subprocess.run(
                ["bash", str(workdir / "page.sh")],
                cwd=workdir,
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
                timeout=PAGE_TIMEOUT,
            )
            printed, code = done.stdout, done.returncode
        except subprocess.TimeoutExpired as timeout:
            raw = timeout.stdout or b""
            printed = raw.decode(errors="replace") if isinstance(raw, bytes) else raw
            code = None
        finally:
            _kill_leftovers(workdir)
        outputs = _outputs(printed)
        server_log = f"\n--- atrium log ---\n{log_tail(workdir / 'atrium.log')}" if server else ""
        if code != 0:
            last = max(outputs, default=None)
            if last is None:
                raise PageFailed(f"{page.path.name}: the script failed at once:\n{printed}")
            why = f"timed out after {PAGE_TIMEOUT} s" if code is None else f"exited {code}"
            raise _failure(page, page.blocks[last], outputs[last], why, server_log)
        for index, block in enumerate(page.blocks):
            if block.expected is None or not block.runs:
                continue
            output = outputs.get(index, "")
            for line, pattern in expected_lines(remap(block.expected, ports)):
                if not pattern.search(output):
                    raise _failure(page, block, output, f"did not print {line!r}", server_log)
        return outputs
