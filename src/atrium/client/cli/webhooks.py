"""`atrium webhooks create|list|get|delete|deliveries` (docs/guide/webhooks.md)."""

from __future__ import annotations

from typing import Annotated

import typer

from atrium.client import _view as view
from atrium.client.cli._help import App
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    UrlOption,
    client,
    console,
    errors,
    print_json,
    print_result,
    print_results,
    print_table,
)
from atrium.client.records import DeliveryPage

webhooks_app = App(
    help="Webhook endpoints that receive the account's finished runs, signed.",
    no_args_is_help=True,
)
WebhookIdArgument = Annotated[
    str, typer.Argument(metavar="WEBHOOK_ID", help="Webhook endpoint id (wh_…).")
]


@webhooks_app.command("create")
def webhooks_create(
    url_to_call: Annotated[
        str, typer.Argument(metavar="URL", help="Where to POST finished runs (http or https).")
    ],
    event: Annotated[
        list[str] | None,
        typer.Option(
            "--event",
            metavar="EVENT",
            help="run.completed, run.failed, run.cancelled, run.requires_action, "
            "schedule.fired or schedule.skipped (repeat); default: the first three.",
        ),
    ] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Register an endpoint and print its signing secret, shown only this once."""
    with client(url, api_key) as atrium:
        created = atrium.webhooks.create(url_to_call, events=event)
    if as_json:
        print_json(created)
        return
    print_table(view.webhooks_table([created]))
    console.print(f"Signing secret (shown once): {created.secret}")


@webhooks_app.command("list")
def webhooks_list(
    as_json: JsonOption = False, url: UrlOption = None, api_key: KeyOption = None
) -> None:
    """The account's webhook endpoints, oldest first."""
    with client(url, api_key) as atrium:
        found = atrium.webhooks.list()
    none = "No webhook endpoints. Add one: atrium webhooks create URL"
    print_results(found, view.webhooks_table, as_json=as_json, none=none)


@webhooks_app.command("get")
def webhooks_get(
    webhook_id: WebhookIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """One webhook endpoint (its secret is never shown again)."""
    with client(url, api_key) as atrium:
        found = atrium.webhooks.get(webhook_id)
    print_result(found, view.webhooks_table([found]), as_json=as_json)


@webhooks_app.command("delete")
def webhooks_delete(
    webhook_id: WebhookIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete an endpoint and its deliveries; pending ones are never sent."""
    with client(url, api_key) as atrium:
        deleted = atrium.webhooks.delete(webhook_id)
    print_result(deleted, f"Webhook {deleted.webhook_id} deleted.", as_json=as_json)


@webhooks_app.command("deliveries")
def webhooks_deliveries(
    webhook_id: Annotated[
        str | None,
        typer.Argument(
            metavar="WEBHOOK_ID", help="Only this endpoint's (default: all of the account's)."
        ),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option("--run", metavar="RUN_ID", help="Only this run's deliveries."),
    ] = None,
    limit: Annotated[
        int, typer.Option(min=1, max=200, help="Deliveries per page (at most 200).")
    ] = 50,
    cursor: Annotated[
        str | None, typer.Option(metavar="CURSOR", help="The next page's cursor.")
    ] = None,
    every: Annotated[
        bool, typer.Option("--all", help="Every delivery, following the pages.")
    ] = False,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delivery attempts, newest first: status, attempts, response, next attempt."""
    with client(url, api_key) as atrium:
        if every:
            deliveries = atrium.webhooks.iter_deliveries(webhook_id, run_id=run, limit=limit)
            page = DeliveryPage(data=list(deliveries), has_more=False, next_cursor=None)
        else:
            page = atrium.webhooks.delivery_page(webhook_id, run_id=run, limit=limit, cursor=cursor)
    if as_json:
        print_json(page)
        return
    if not page.data:
        console.print("No deliveries match." if webhook_id or run else "No deliveries yet.")
        return
    print_table(view.deliveries_table(page.data))
    if page.has_more and page.next_cursor:
        again = f" {webhook_id}" if webhook_id else ""
        again += f" --run {run}" if run else ""
        errors.print(
            f"[dim]More: atrium webhooks deliveries{again} --cursor {page.next_cursor}"
            " (or --all)[/]"
        )
