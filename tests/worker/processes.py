"""Real `atrium` processes for the tests that kill one, on a temporary SQLite file.

They are started with `tests.processes.start_atrium`: forked from a forkserver that imported
the server's libraries once (`ATRIUM_TEST_SPAWN=exec` runs the installed script instead).
"""

from __future__ import annotations

import asyncio
import secrets
import signal
from pathlib import Path
from types import TracebackType

import httpx

from tests.processes import atrium_env, free_port, start_atrium, stop_process, wait_for_http


def process_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'atrium.db'}",
        ATRIUM_BOOTSTRAP_KEY="atr_" + secrets.token_urlsafe(32),
        ATRIUM_RATE_LIMIT_STANDARD="100000/hour",
        PYTHONUNBUFFERED="1",
    )
    env.update({f"ATRIUM_{name.upper()}": value for name, value in settings.items()})
    return env


class AtriumProcess:
    """`atrium serve` (or another command) in a subprocess, logging to a file."""

    def __init__(self, env: dict[str, str], log: Path, port: int, *args: str) -> None:
        self.url = f"http://127.0.0.1:{port}"
        self.log = log
        log.write_text("")
        self.process = start_atrium(args, env=env, output=log)

    @classmethod
    def serve(cls, env: dict[str, str], log: Path, *options: str) -> AtriumProcess:
        """`atrium serve OPTIONS` on a free port."""
        port = free_port()
        return cls(env, log, port, "serve", *options, "--port", str(port))

    async def ready(self) -> None:
        # In a thread: servers the test runs on its own event loop (a model) keep answering.
        await asyncio.to_thread(
            wait_for_http, self.url + "/healthz", process=self.process, log=self.log
        )

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)

    def stop(self) -> None:
        stop_process(self.process)


class Servers:
    """The `atrium` processes of one test, on one database (`process_env`), all stopped when
    the test ends: `with Servers(tmp_path, env) as servers: first = await servers.serve(...)`."""

    def __init__(self, tmp_path: Path, env: dict[str, str]) -> None:
        self.tmp_path = tmp_path
        self.env = env
        self.auth = {"Authorization": f"Bearer {env['ATRIUM_BOOTSTRAP_KEY']}"}
        self._started: list[AtriumProcess] = []

    def start(self, name: str, *args: str) -> AtriumProcess:
        """`atrium ARGS` (no port of its own), logging to `NAME.log`."""
        return self._add(AtriumProcess(self.env, self.tmp_path / f"{name}.log", free_port(), *args))

    async def serve(self, name: str, *options: str) -> AtriumProcess:
        """`atrium serve OPTIONS`, logging to `NAME.log`, once it answers."""
        process = self._add(AtriumProcess.serve(self.env, self.tmp_path / f"{name}.log", *options))
        await process.ready()
        return process

    def api(self, process: AtriumProcess, *, timeout: float = 10) -> httpx.AsyncClient:
        """A client of `process` with the bootstrap key."""
        return httpx.AsyncClient(base_url=process.url, headers=self.auth, timeout=timeout)

    def _add(self, process: AtriumProcess) -> AtriumProcess:
        self._started.append(process)
        return process

    def __enter__(self) -> Servers:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.stop()

    def stop(self) -> None:
        for process in self._started:
            process.stop()
