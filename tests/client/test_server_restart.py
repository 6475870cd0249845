"""`atrium run` keeps following a run while the server is killed and started again.

The server process dies in the middle of a live run (SIGKILL: no goodbye on the connection).
The command keeps reconnecting; once the server is back, its recovery re-queues the run (the
lease of the dead worker expires), the run starts over, and the command shows it to the end.
"""

from __future__ import annotations

import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from atrium.client import Client, MessageDelta, RunRestarted, StreamedText
from tests.client.conftest import BOOTSTRAP_KEY, SLOW_MODEL, SLOW_WORDS
from tests.processes import (
    ATRIUM,
    START_TIMEOUT,
    Process,
    atrium_env,
    free_port,
    start_atrium,
    stop_process,
    wait_for_http,
)

ANSWER = " ".join(f"word{i}" for i in range(1, SLOW_WORDS + 1))


class Restartable:
    def __init__(self, tmp: Path, llm_url: str) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.log = tmp / "restartable.log"
        self.env = atrium_env(
            ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp / 'restartable.db'}",
            ATRIUM_BOOTSTRAP_KEY=BOOTSTRAP_KEY,
            ATRIUM_PUBLIC_URL=self.url,
            ATRIUM_LLM_BASE_URL=llm_url,
            ATRIUM_RUN_LEASE_SECONDS="2",
            ATRIUM_RUN_HEARTBEAT_SECONDS="0.5",
            ATRIUM_RUN_POLL_SECONDS="0.5",
            ATRIUM_URL=self.url,
            ATRIUM_API_KEY=BOOTSTRAP_KEY,
        )
        self.process: Process | None = None
        self.start()

    def start(self) -> None:
        command = ["serve", "--port", str(self.port)]
        self.process = start_atrium(command, env=self.env, output=self.log)
        wait_for_http(f"{self.url}/healthz", process=self.process, log=self.log)

    def kill(self) -> None:
        assert self.process is not None
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(timeout=10)


@pytest.fixture
def restartable(tmp_path: Path, slow_llm: str) -> Iterator[Restartable]:
    server = Restartable(tmp_path, slow_llm)
    yield server
    if server.process is not None:
        stop_process(server.process)


def _wait_until_answer_streams(url: str, agent_id: str, follower: subprocess.Popen[str]) -> None:
    """Wait until the follower's run exists and its answer has started streaming, so the kill
    lands in the middle of a live run however slowly the command and the server start."""
    deadline = time.monotonic() + START_TIMEOUT
    with Client(url, BOOTSTRAP_KEY) as client:
        while time.monotonic() < deadline:
            assert follower.poll() is None, follower.communicate()
            runs = client.runs.list(agent_id=agent_id).data
            if runs and any(e.event == "message.delta" for e in client.runs.events(runs[0].run_id)):
                return
            time.sleep(0.1)
    raise AssertionError("the run's answer did not start streaming")


def test_run_is_followed_across_a_server_restart(restartable: Restartable) -> None:
    with Client(restartable.url, BOOTSTRAP_KEY) as client:
        agent = client.agents.create("slow", config={"model": SLOW_MODEL, "tools": []})
    follower = subprocess.Popen(
        [ATRIUM, "run", "Outlive the server", "--agent", agent.agent_id],
        env=restartable.env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    _wait_until_answer_streams(restartable.url, agent.agent_id, follower)
    restartable.kill()
    with pytest.raises(httpx.TransportError):
        httpx.get(f"{restartable.url}/healthz", timeout=1)
    time.sleep(1.0)
    restartable.start()

    stdout, stderr = follower.communicate(timeout=90)
    assert follower.returncode == 0, stderr
    assert "connection dropped" in stderr
    assert "restarted (attempt 2)" in stderr
    assert stdout.rstrip().count(ANSWER) == 1, "the second attempt's text is shown whole"
    assert "completed" in stdout and "Credits:" in stdout
    with Client(restartable.url, BOOTSTRAP_KEY) as client:
        (run,) = client.runs.list(agent_id=agent.agent_id).data
        events = client.runs.events(run.run_id)
    assert run.status == "completed" and run.result == ANSWER
    # The second attempt's events follow `run.restarted` (attempt 2), and the client's text
    # starts over there: every delta joined holds the first attempt's partial answer too.
    kinds = [event.event for event in events]
    restarted = events[kinds.index("run.restarted")]
    assert isinstance(restarted, RunRestarted) and restarted.attempt == 2
    assert kinds[kinds.index("run.restarted") + 1] == "run.started"
    joined = "".join(event.text for event in events if isinstance(event, MessageDelta))
    assert joined != ANSWER and joined.endswith(ANSWER)
    text = StreamedText()
    dropped = [text.add(event) for event in events]
    assert text.text == ANSWER and dropped.count(True) == 1 and text.attempt == 2
