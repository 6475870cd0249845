"""`atrium providers list|create|get|update|delete`: the account's named OpenAI-compatible
servers, which models address as `openai-compatible:<name>/<model>`."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Annotated

import typer
from rich import box
from rich.table import Table

from atrium.client.cli._help import App
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    UrlOption,
    client,
    console,
    print_json,
    print_result,
    print_table,
)
from atrium.client.records import Provider

providers_app = App(
    help="Named OpenAI-compatible servers (Ollama, vLLM, …): models name them as "
    "openai-compatible:<name>/<model>.",
    no_args_is_help=True,
)
ProviderArgument = Annotated[
    str, typer.Argument(metavar="PROVIDER", help="The provider's name (or id, prv_…).")
]
ProviderKeyOption = Annotated[
    str | None,
    typer.Option(
        "--provider-key",
        metavar="KEY",
        help="The server's API key, sent as Authorization: Bearer KEY (write-only).",
        show_default=False,
    ),
]
HeaderOption = Annotated[
    list[str] | None,
    typer.Option(
        "--header",
        metavar="NAME=VALUE",
        help="A header sent with every request to the server (repeat; write-only).",
        show_default=False,
    ),
]


def _headers(given: list[str] | None) -> dict[str, str] | None:
    if given is None:
        return None
    headers: dict[str, str] = {}
    for item in given:
        name, equals, value = item.partition("=")
        if not equals or not name.strip():
            raise typer.BadParameter(f"{item!r} is not NAME=VALUE", param_hint="--header")
        headers[name.strip()] = value
    return headers


def providers_table(providers: Iterable[Provider]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("name", no_wrap=True)
    table.add_column("base url", no_wrap=True)
    table.add_column("key")
    table.add_column("headers")
    table.add_column("provider", no_wrap=True)
    for provider in providers:
        table.add_row(
            provider.name,
            provider.base_url,
            "set" if provider.api_key else "—",
            ", ".join(provider.headers) or "—",
            provider.provider_id,
        )
    return table


@providers_app.command("list")
def providers_list(
    as_json: JsonOption = False, url: UrlOption = None, api_key: KeyOption = None
) -> None:
    """The account's providers, and the names of the server's own."""
    with client(url, api_key) as atrium:
        found = atrium.providers.list()
    if as_json:
        print_json(found)
        return
    if found.data:
        print_table(providers_table(found.data))
    else:
        console.print(
            "No providers in this account. Add one: atrium providers create NAME BASE_URL"
        )
    if found.server_providers:
        console.print(f"The server's providers: {', '.join(found.server_providers)}")


@providers_app.command("create")
def providers_create(
    name: Annotated[
        str, typer.Argument(metavar="NAME", help="Lower-case letters, digits, _ and -.")
    ],
    base_url: Annotated[
        str,
        typer.Argument(
            metavar="BASE_URL",
            help="The server's OpenAI API root, e.g. http://127.0.0.1:11434/v1 for Ollama.",
        ),
    ],
    provider_key: ProviderKeyOption = None,
    header: HeaderOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Add a server; models then name it as openai-compatible:NAME/<model>."""
    headers = _headers(header)
    with client(url, api_key) as atrium:
        created = atrium.providers.create(name, base_url, api_key=provider_key, headers=headers)
    print_result(created, providers_table([created]), as_json=as_json)


@providers_app.command("get")
def providers_get(
    provider: ProviderArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """One provider of the account (its secrets are never shown)."""
    with client(url, api_key) as atrium:
        found = atrium.providers.get(provider)
    print_result(found, providers_table([found]), as_json=as_json)


@providers_app.command("update")
def providers_update(
    provider: ProviderArgument,
    name: Annotated[str | None, typer.Option("--name", metavar="NAME", help="A new name.")] = None,
    base_url: Annotated[
        str | None,
        typer.Option(
            "--base-url",
            metavar="BASE_URL",
            help="A new address (give --provider-key and --header again, or --no-key).",
        ),
    ] = None,
    provider_key: ProviderKeyOption = None,
    no_key: Annotated[bool, typer.Option("--no-key", help="Remove the server's API key.")] = False,
    header: HeaderOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Change a provider; the next run on it uses the change. --header replaces every header."""
    headers = _headers(header)
    with client(url, api_key) as atrium:
        updated = atrium.providers.update(
            provider,
            name=name,
            base_url=base_url,
            api_key=provider_key,
            headers=headers,
            remove_api_key=no_key,
        )
    print_result(updated, providers_table([updated]), as_json=as_json)


@providers_app.command("delete")
def providers_delete(
    provider: ProviderArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete a provider; runs of agents that still name it fail."""
    with client(url, api_key) as atrium:
        deleted = atrium.providers.delete(provider)
    print_result(deleted, f"Provider {deleted.name} deleted.", as_json=as_json)
