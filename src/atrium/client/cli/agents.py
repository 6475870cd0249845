"""`atrium agents list|get|create|update|delete`."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from atrium.client import _view as view
from atrium.client.cli._help import App
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    UrlOption,
    client,
    console,
    print_json,
    print_result,
    print_results,
    print_table,
    read_json_file,
)
from atrium.client.cli.agent_versions import register as register_versions

agents_app = App(
    help="Agents: list, show, create, update, delete; their versions and aliases.",
    no_args_is_help=True,
)
AgentIdArgument = Annotated[str, typer.Argument(metavar="AGENT_ID", help="Agent id (agt_…).")]

DescriptionOption = Annotated[
    str | None, typer.Option(metavar="TEXT", help="What the agent is for.")
]
ModelOption = Annotated[
    str | None,
    typer.Option(
        metavar="PROVIDER:MODEL",
        help="e.g. openai:gpt-4o-mini, anthropic:…, openai-compatible:…, atrium:offline "
        "(docs/guide/models.md).",
    ),
]
TemperatureOption = Annotated[float | None, typer.Option(help="0 to 2.")]
InstructionsOption = Annotated[
    str | None, typer.Option(metavar="TEXT", help="System instructions.")
]
MaxTokensOption = Annotated[
    int | None,
    typer.Option("--max-output-tokens", help="Cap on output tokens per model request."),
]
ToolOption = Annotated[
    list[str] | None,
    typer.Option("--tool", metavar="NAME", help="A built-in tool to allow (repeat); default: all."),
]
ConfigFileOption = Annotated[
    Path | None,
    typer.Option(
        "--config-file",
        metavar="FILE",
        help="A JSON object of config keys (- reads stdin); the options above override it.",
    ),
]
ToolsFileOption = Annotated[
    Path | None,
    typer.Option(
        "--tools-file",
        metavar="FILE",
        help="A JSON array for config.tools: names, MCP servers, functions (docs/guide/tools.md).",
    ),
]
OutputSchemaFileOption = Annotated[
    Path | None,
    typer.Option(
        "--output-schema-file",
        metavar="FILE",
        help="A JSON Schema (an object type) for config.output_schema.",
    ),
]


# Config keys → the option that sets each one.
_KEY_OPTIONS = {
    "model": "--model",
    "temperature": "--temperature",
    "instructions": "--instructions",
    "max_output_tokens": "--max-output-tokens",
    "tools": "--tool",
}


def _config(
    *,
    config_file: Path | None,
    tools_file: Path | None,
    output_schema_file: Path | None,
    **keys: Any,
) -> tuple[dict[str, Any], dict[str, str]]:
    """The config keys to send: the file's, then the files of single keys, then the options;
    and where each came from, by the server's name of its parameter (`config.temperature` →
    `--temperature`), for `client(options=…)`."""
    config: dict[str, Any] = {}
    sources: dict[str, str] = {}
    if config_file is not None:
        loaded = read_json_file(config_file, option="--config-file")
        if not isinstance(loaded, dict):
            raise typer.BadParameter("must hold a JSON object", param_hint="--config-file")
        config.update(loaded)
        sources.update({f"config.{key}": f"{key} in --config-file" for key in loaded})
    if tools_file is not None:
        config["tools"] = read_json_file(tools_file, option="--tools-file")
        sources["config.tools"] = "--tools-file"
    if output_schema_file is not None:
        config["output_schema"] = read_json_file(output_schema_file, option="--output-schema-file")
        sources["config.output_schema"] = "--output-schema-file"
    for key, value in keys.items():
        if value is not None:
            config[key] = value
            sources[f"config.{key}"] = _KEY_OPTIONS[key]
    return config, sources


@agents_app.command("list")
def agents_list(
    as_json: JsonOption = False, url: UrlOption = None, api_key: KeyOption = None
) -> None:
    """The account's agents."""
    with client(url, api_key) as atrium:
        found = atrium.agents.list()
    print_results(
        found,
        view.agents_table,
        as_json=as_json,
        none="No agents yet. Create one: atrium agents create NAME "
        "(the first run without --agent creates the default agent)",
    )


@agents_app.command("get")
def agents_get(
    agent_id: AgentIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """One agent, its whole config."""
    with client(url, api_key) as atrium:
        agent = atrium.agents.get(agent_id)
    print_result(agent, view.agent_details(agent), as_json=as_json)


@agents_app.command("create")
def agents_create(
    name: Annotated[str, typer.Argument(help="Agent name.")],
    description: DescriptionOption = None,
    model: ModelOption = None,
    temperature: TemperatureOption = None,
    instructions: InstructionsOption = None,
    max_output_tokens: MaxTokensOption = None,
    tool: ToolOption = None,
    config_file: ConfigFileOption = None,
    tools_file: ToolsFileOption = None,
    output_schema_file: OutputSchemaFileOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Create an agent; use its id with `atrium run --agent`."""
    config, sources = _config(
        config_file=config_file,
        tools_file=tools_file,
        output_schema_file=output_schema_file,
        model=model,
        temperature=temperature,
        instructions=instructions,
        max_output_tokens=max_output_tokens,
        tools=tool,
    )
    if description is not None:
        sources["description"] = "--description"
    with client(url, api_key, options=sources) as atrium:
        agent = atrium.agents.create(name, description=description, config=config or None)
    if as_json:
        print_json(agent)
        return
    print_table(view.agents_table([agent]))
    console.print(f'[dim]Run it: atrium run --agent {agent.agent_id} "your prompt"[/]')


@agents_app.command("update")
def agents_update(
    agent_id: AgentIdArgument,
    name: Annotated[str | None, typer.Option(metavar="TEXT", help="New name.")] = None,
    description: DescriptionOption = None,
    model: ModelOption = None,
    temperature: TemperatureOption = None,
    instructions: InstructionsOption = None,
    max_output_tokens: MaxTokensOption = None,
    tool: ToolOption = None,
    config_file: ConfigFileOption = None,
    tools_file: ToolsFileOption = None,
    output_schema_file: OutputSchemaFileOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Change an agent: the fields and config keys given replace the agent's, the others stay
    (e.g. `atrium agents update agt_… --model openai:gpt-4o-mini`)."""
    config, sources = _config(
        config_file=config_file,
        tools_file=tools_file,
        output_schema_file=output_schema_file,
        model=model,
        temperature=temperature,
        instructions=instructions,
        max_output_tokens=max_output_tokens,
        tools=tool,
    )
    if name is None and description is None and not config:
        raise typer.BadParameter("give at least one field to change", param_hint="options")
    given = {"name": name, "description": description}
    sources.update({field: f"--{field}" for field, value in given.items() if value is not None})
    with client(url, api_key, options=sources) as atrium:
        agent = atrium.agents.update(
            agent_id, name=name, description=description, config=config or None
        )
    print_result(agent, view.agent_details(agent), as_json=as_json)


@agents_app.command("delete")
def agents_delete(
    agent_id: AgentIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete an agent. Its past runs keep their usage, which `atrium usage` still shows."""
    with client(url, api_key) as atrium:
        deleted = atrium.agents.delete(agent_id)
    print_result(deleted, f"Agent {deleted.agent_id} deleted.", as_json=as_json)


register_versions(agents_app)
