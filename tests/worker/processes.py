"""Real `atrium` processes for the tests that kill one, on a temporary SQLite file."""

from __future__ import annotations

import asyncio
import secrets
import signal
import subprocess
from pathlib import Path

from tests.processes import ATRIUM, atrium_env, free_port, stop_process, wait_for_http


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
        self._out = log.open("w")
        self.process = subprocess.Popen(
            [ATRIUM, *args], env=env, stdout=self._out, stderr=subprocess.STDOUT, text=True
        )

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
        self._out.close()

    def stop(self) -> None:
        stop_process(self.process)
        self._out.close()
