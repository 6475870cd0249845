"""`ATRIUM_PROVIDERS`: the operator's named providers, a JSON object read from the environment;
a malformed one stops the start, naming what is wrong."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from atrium.settings import Settings
from tests.processes import atrium_env, run_atrium


def test_providers_are_read_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "ATRIUM_PROVIDERS",
        '{"ollama": {"base_url": "http://127.0.0.1:11434/v1"}, '
        '"vllm": {"base_url": "https://vllm.internal/v1", "api_key": "sk-v", '
        '"headers": {"X-Team": "ml"}}}',
    )
    providers = Settings(_env_file=None).providers
    assert sorted(providers) == ["ollama", "vllm"]
    assert providers["ollama"].api_key is None and providers["ollama"].headers == {}
    vllm = providers["vllm"]
    assert vllm.api_key is not None and vllm.api_key.get_secret_value() == "sk-v"
    assert {name: value.get_secret_value() for name, value in vllm.headers.items()} == {
        "X-Team": "ml"
    }
    assert "sk-v" not in repr(Settings(_env_file=None))


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ('{"Ollama": {"base_url": "http://127.0.0.1:11434/v1"}}', "provider name 'Ollama'"),
        ('{"a/b": {"base_url": "http://127.0.0.1:11434/v1"}}', "provider name 'a/b'"),
        ('{"ollama": {"base_url": "127.0.0.1:11434/v1"}}', "http or https URL"),
        ('{"ollama": {}}', "base_url"),
        ('{"ollama": {"base_url": "http://h/v1", "key": "x"}}', "key"),
        ('["ollama"]', "providers"),
        ("ollama=http://127.0.0.1:11434/v1", "providers"),  # not JSON
    ],
)
def test_a_malformed_value_is_refused(
    monkeypatch: pytest.MonkeyPatch, value: str, says: str
) -> None:
    monkeypatch.setenv("ATRIUM_PROVIDERS", value)
    with pytest.raises((ValidationError, ValueError)) as refused:
        Settings(_env_file=None)
    assert says in str(refused.value)


@pytest.mark.parametrize(
    ("value", "says"),
    [
        ("ollama=http://127.0.0.1:11434/v1", "Invalid setting ATRIUM_PROVIDERS: not valid JSON"),
        (
            '{"Ollama": {"base_url": "http://127.0.0.1:11434/v1"}}',
            "Invalid setting ATRIUM_PROVIDERS: Value error, provider name 'Ollama' must match "
            "^[a-z][a-z0-9_-]{0,31}$",
        ),
    ],
)
def test_a_server_command_names_the_setting(tmp_path: Path, value: str, says: str) -> None:
    env = atrium_env(
        ATRIUM_DATABASE_URL=f"sqlite+aiosqlite:///{tmp_path / 'atrium.db'}",
        ATRIUM_PROVIDERS=value,
    )
    done = run_atrium(["migrate"], env=env)
    assert done.returncode == 2
    assert says in done.stderr and "Traceback" not in done.stderr
