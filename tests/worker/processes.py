"""Real `atrium` processes for the tests that kill one: free loopback ports, a temp SQLite file."""

from __future__ import annotations

import asyncio
import os
import secrets
import signal
import subprocess
import sys
from pathlib import Path

import httpx

ATRIUM = str(Path(sys.executable).with_name("atrium"))


def process_env(tmp_path: Path, **settings: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ATRIUM_")}
    env.update(
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

    async def ready(self) -> None:
        async with httpx.AsyncClient() as http:
            for _ in range(300):
                assert self.process.poll() is None, self.log.read_text()
                try:
                    if (await http.get(self.url + "/healthz", timeout=1)).status_code == 200:
                        return
                except httpx.TransportError:
                    await asyncio.sleep(0.1)
        raise AssertionError("server did not start:\n" + self.log.read_text())

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)
        self._out.close()

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                self.kill()
                return
        if not self._out.closed:
            self._out.close()
