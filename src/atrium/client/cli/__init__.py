"""Client commands of `atrium`: run a prompt and follow it live, list and cancel runs, read,
fork and delete threads, download artifacts, manage agents, providers, schedules, webhooks,
domains and spaces, show usage. They talk HTTP to a server: `--url`/`ATRIUM_URL` (default
`http://127.0.0.1:8000`) and `--api-key`/`ATRIUM_API_KEY`; every one takes `--json` for
scripts. None imports the server (docs/guide/client.md)."""

from __future__ import annotations

import typer

from atrium.client.cli._help import App, HelpCommand
from atrium.client.cli.agents import agents_app
from atrium.client.cli.artifacts import artifacts_app
from atrium.client.cli.blocks import blocks_app
from atrium.client.cli.domains import domains_app
from atrium.client.cli.evals import evals_app, run_eval
from atrium.client.cli.files import files_app
from atrium.client.cli.memory import memory_app
from atrium.client.cli.providers import providers_app
from atrium.client.cli.runs import run, runs_app
from atrium.client.cli.schedules import schedules_app
from atrium.client.cli.spaces import spaces_app
from atrium.client.cli.threads import threads_app
from atrium.client.cli.usage import usage
from atrium.client.cli.webhooks import webhooks_app

__all__ = ["App", "register"]


def register(app: typer.Typer) -> None:
    """Add the client commands to the `atrium` command."""
    app.command("run", cls=HelpCommand)(run)
    app.add_typer(runs_app, name="runs")
    app.add_typer(threads_app, name="threads")
    app.add_typer(artifacts_app, name="artifacts")
    app.add_typer(files_app, name="files")
    app.add_typer(memory_app, name="memory")
    app.add_typer(blocks_app, name="blocks")
    app.add_typer(agents_app, name="agents")
    app.add_typer(webhooks_app, name="webhooks")
    app.add_typer(providers_app, name="providers")
    app.add_typer(schedules_app, name="schedules")
    app.add_typer(domains_app, name="domains")
    app.add_typer(spaces_app, name="spaces")
    app.command("usage", cls=HelpCommand)(usage)
    app.command("eval", cls=HelpCommand)(run_eval)
    app.add_typer(evals_app, name="evals")
