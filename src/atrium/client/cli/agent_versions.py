"""`atrium agents versions|diff|restore|alias …`: an agent's versions and aliases."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Annotated, Any

import typer
from rich import box
from rich.table import Table
from rich.text import Text

from atrium.client import _view as view
from atrium.client.cli._help import App
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    UrlOption,
    client,
    console,
    print_json,
    print_list,
    print_result,
    print_results,
    print_table,
)
from atrium.client.records import AgentAlias, AgentVersion, AgentVersionDiff

AgentIdArgument = Annotated[str, typer.Argument(metavar="AGENT_ID", help="Agent id (agt_…).")]
VersionArgument = Annotated[int, typer.Argument(metavar="VERSION", help="A version number.")]
AliasArgument = Annotated[str, typer.Argument(metavar="NAME", help="Alias name (prod, canary).")]
alias_app = App(
    help="Aliases of an agent: names (prod, canary) that runs use as AGENT_ID@NAME.",
    no_args_is_help=True,
)


def _shown(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def versions_table(versions: Iterable[AgentVersion]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("version", justify="right", no_wrap=True)
    table.add_column("live", no_wrap=True)
    table.add_column("hash", no_wrap=True)
    table.add_column("created", no_wrap=True)
    table.add_column("model", no_wrap=True)
    table.add_column("restored", justify="right", no_wrap=True)
    table.add_column("instructions")
    for version in versions:
        table.add_row(
            str(version.version),
            "live" if version.live else "",
            version.content_hash[:8],
            version.created_at.strftime("%Y-%m-%d %H:%M"),
            version.config.model,
            "" if version.restored_from is None else f"from {version.restored_from}",
            view.first_line(version.config.instructions),
        )
    return table


def patch_text(diff: AgentVersionDiff) -> Text:
    """One line per change: `~ path: before → after`, `+ path: value`, `- path: before`."""
    text = Text()
    if not diff.patch:
        text.append(f"Versions {diff.against} and {diff.version} have the same config.")
        return text
    for operation in diff.patch:
        if operation.op == "replace":
            line = f"~ {operation.path}: {_shown(operation.before)} → {_shown(operation.value)}"
            text.append(line + "\n", style="yellow")
        elif operation.op == "add":
            text.append(f"+ {operation.path}: {_shown(operation.value)}\n", style="green")
        else:
            text.append(f"- {operation.path}: {_shown(operation.before)}\n", style="red")
    text.rstrip()
    return text


def aliases_table(aliases: Iterable[AgentAlias]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("alias", no_wrap=True)
    table.add_column("version", justify="right", no_wrap=True)
    table.add_column("split", no_wrap=True)
    table.add_column("updated", no_wrap=True)
    for alias in aliases:
        split = (
            ""
            if alias.split is None
            else f"{alias.split.weight:.0%} to version {alias.split.version}"
        )
        table.add_row(
            alias.name,
            str(alias.version),
            split,
            alias.updated_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
    return table


def versions(
    agent_id: AgentIdArgument,
    limit: Annotated[int, typer.Option(min=1, help="Show the newest this many.")] = 20,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The agent's versions, newest first: every config it has had."""
    with client(url, api_key) as atrium:
        page = atrium.agents.versions(agent_id, limit=limit)
    if as_json:
        print_list(page.data, has_more=page.has_more, next_cursor=page.next_cursor)
        return
    print_table(versions_table(page.data))


def diff(
    agent_id: AgentIdArgument,
    version: VersionArgument,
    against: Annotated[
        int | None,
        typer.Option(metavar="VERSION", help="Compare with this version; default: the one before."),
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """What changed from version --against to VERSION (a JSON Patch with --json)."""
    base = against if against is not None else max(version - 1, 1)
    with client(url, api_key, options={"against": "--against"}) as atrium:
        found = atrium.agents.diff(agent_id, version, against=base)
    print_result(found, patch_text(found), as_json=as_json)


def restore(
    agent_id: AgentIdArgument,
    version: VersionArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Make VERSION's config the agent's again (a new version, the live one)."""
    with client(url, api_key) as atrium:
        live_before = atrium.agents.versions(agent_id, limit=1).data[0].version
        restored = atrium.agents.restore(agent_id, version)
    if as_json:
        print_json(restored)
        return
    if restored.version != live_before:
        console.print(f"Version {version} restored as version {restored.version}, now live.")
    else:
        console.print(f"Version {version} is already the live config (version {restored.version}).")


@alias_app.command("list")
def alias_list(
    agent_id: AgentIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The agent's aliases."""
    with client(url, api_key) as atrium:
        found = atrium.agents.aliases(agent_id)
    print_results(
        found,
        aliases_table,
        as_json=as_json,
        none=f"No aliases yet. Make one: atrium agents alias set {agent_id} prod --version 1",
    )


@alias_app.command("set")
def alias_set(
    agent_id: AgentIdArgument,
    name: AliasArgument,
    version: Annotated[int, typer.Option(metavar="VERSION", help="The version it runs.")],
    split_version: Annotated[
        int | None,
        typer.Option(metavar="VERSION", help="A second version for a share of runs."),
    ] = None,
    split_weight: Annotated[
        float | None,
        typer.Option(metavar="SHARE", help="The share (0 to 1) of runs on --split-version."),
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Create the alias or point it elsewhere; runs use it as AGENT_ID@NAME."""
    options = {
        "version": "--version",
        "split.version": "--split-version",
        "split.weight": "--split-weight",
        "alias": "NAME",
    }
    with client(url, api_key, options=options) as atrium:
        alias = atrium.agents.set_alias(
            agent_id, name, version, split_version=split_version, split_weight=split_weight
        )
    print_result(alias, aliases_table([alias]), as_json=as_json)


@alias_app.command("delete")
def alias_delete(
    agent_id: AgentIdArgument,
    name: AliasArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete the alias; runs naming it are refused from then on."""
    with client(url, api_key) as atrium:
        deleted = atrium.agents.delete_alias(agent_id, name)
    print_result(deleted, f"Alias {deleted.name} of {deleted.agent_id} deleted.", as_json=as_json)


def register(agents_app: typer.Typer) -> None:
    """Add these commands to `atrium agents`."""
    agents_app.command("versions")(versions)
    agents_app.command("diff")(diff)
    agents_app.command("restore")(restore)
    agents_app.add_typer(alias_app, name="alias")
