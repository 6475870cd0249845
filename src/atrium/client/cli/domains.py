"""`atrium domains list|get|create|verify|update|delete` (docs/guide/domains.md)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Annotated

import typer
from rich import box
from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table
from rich.text import Text

from atrium.client.cli._help import App
from atrium.client.cli._records import (
    PageOption,
    PerPageOption,
    SearchOption,
    SortByOption,
    SortOption,
    filters,
    print_records,
)
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    UrlOption,
    client,
    console,
    print_json,
    print_result,
)
from atrium.client.records import Domain

domains_app = App(
    help="Domains atrium serves by redirecting: list, show, create, verify, update, delete.",
    no_args_is_help=True,
)
DomainIdArgument = Annotated[int, typer.Argument(metavar="DOMAIN_ID", help="Domain id.")]
IndexPageOption = Annotated[
    str | None,
    typer.Option("--index-page", metavar="URL", help="Where / on the domain redirects."),
]
NotFoundPageOption = Annotated[
    str | None,
    typer.Option(
        "--not-found-page", metavar="URL", help="Where any other path on the domain redirects."
    ),
]

# `verification.last_error` → what it means for the owner.
REASONS = {
    "txt_missing": "no TXT record at {txt_name}",
    "txt_mismatch": "the TXT records at {txt_name} do not hold the token",
    "address_mismatch": "{name} points elsewhere than this deployment",
    "dns_timeout": "no DNS server answered in time; try again",
    "dns_error": "DNS answered with an error; try again later",
}


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S UTC") if moment else ""


def _state(domain: Domain) -> Text:
    if domain.verified:
        return Text("yes", style="green")
    error = domain.verification.last_error if domain.verification else None
    return Text(f"no ({error})" if error else "no", style="yellow")


def domains_table(domains: Sequence[Domain]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("id", justify="right", no_wrap=True)
    table.add_column("name", no_wrap=True)
    table.add_column("verified", no_wrap=True)
    table.add_column("index page", no_wrap=True, overflow="ellipsis", min_width=16, max_width=40)
    table.add_column("404 page", no_wrap=True, overflow="ellipsis", min_width=16, max_width=40)
    table.add_column("created (UTC)", no_wrap=True)
    for domain in domains:
        table.add_row(
            str(domain.id),
            domain.name,
            _state(domain),
            domain.index_page or "",
            domain.not_found_page or "",
            domain.created_at.strftime("%Y-%m-%d %H:%M"),
        )
    return table


def domain_details(domain: Domain) -> Table:
    """One domain, field by field (pages whole, however long)."""
    table = Table(box=None, show_header=False, pad_edge=False)
    table.add_column(style="bold", no_wrap=True)
    table.add_column(overflow="fold")
    table.add_row("id", str(domain.id))
    table.add_row("name", domain.name)
    table.add_row("verified", _state(domain))
    table.add_row("index page", domain.index_page or "")
    table.add_row("404 page", domain.not_found_page or "")
    table.add_row("created", _when(domain.created_at))
    table.add_row("updated", _when(domain.updated_at))
    return table


def reason(domain: Domain) -> str | None:
    """Why the last check did not verify `domain`, in words; None when it did or none ran."""
    verification = domain.verification
    if domain.verified or verification is None or verification.last_error is None:
        return None
    text = REASONS.get(verification.last_error, verification.last_error)
    return text.format(name=domain.name, txt_name=verification.txt_name)


def record_to_publish(domain: Domain) -> Table:
    """The DNS record that verifies `domain`, field by field as DNS providers ask for it."""
    table = Table(box=None, show_header=False, padding=(0, 1, 0, 2))
    table.add_column(style="bold", no_wrap=True)
    table.add_column(no_wrap=True)
    if domain.verification is not None:
        table.add_row("name", domain.verification.txt_name)
        table.add_row("type", "TXT")
        table.add_row("value", domain.verification.txt_value)
    return table


def verification_state(domain: Domain) -> RenderableType:
    """Whether `domain` is verified and, when not, why and what to publish."""
    checked = domain.verification.checked_at if domain.verification else None
    name = escape(domain.name)
    if domain.verified:
        since = f" (checked {_when(checked)})" if checked else ""
        return Text.from_markup(f"[green]{name} is verified[/]: atrium serves it{since}.")
    why = reason(domain)
    if why is None:
        headline = f"[yellow]{name} is not verified yet[/] (not checked)."
    else:
        headline = f"[yellow]{name} is not verified[/]: {escape(why)} (checked {_when(checked)})."
    return Group(
        Text.from_markup(headline),
        Text(f"Publish this DNS record, then run: atrium domains verify {domain.id}"),
        record_to_publish(domain),
    )


def _print_domain(domain: Domain, *, as_json: bool) -> None:
    if as_json:
        print_json(domain)
        return
    console.print(domain_details(domain))
    console.print(verification_state(domain))


@domains_app.command("list")
def domains_list(
    search: SearchOption = None,
    sort_by: SortByOption = "id",
    sort: SortOption = "desc",
    per_page: PerPageOption = "25",
    page: PageOption = 1,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The account's domains, newest first, whether each is verified, and their pages."""
    with client(url, api_key) as atrium:
        found = atrium.domains.list(
            page=page, **filters(search=search, sort_by=sort_by, sort=sort, per_page=per_page)
        )
    print_records(
        found, noun="domains", searched=bool(search), table=domains_table, as_json=as_json
    )


@domains_app.command("get")
def domains_get(
    domain_id: DomainIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """One domain and its verification state, as last checked (`verify` asks DNS again)."""
    with client(url, api_key) as atrium:
        domain = atrium.domains.get(domain_id)
    _print_domain(domain, as_json=as_json)


@domains_app.command("create")
def domains_create(
    name: Annotated[str, typer.Argument(help="Host name, e.g. links.example.com.")],
    index_page: IndexPageOption = None,
    not_found_page: NotFoundPageOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Store a domain; it is served once verified: publish the TXT record it prints, then verify."""
    with client(url, api_key) as atrium:
        domain = atrium.domains.create(name, index_page=index_page, not_found_page=not_found_page)
    _print_domain(domain, as_json=as_json)


@domains_app.command("verify")
def domains_verify(
    domain_id: DomainIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Ask DNS whether the domain is now verified; if not, print why and the record to publish."""
    with client(url, api_key) as atrium:
        domain = atrium.domains.verify(domain_id)
    print_result(domain, verification_state(domain), as_json=as_json)


@domains_app.command("update")
def domains_update(
    domain_id: DomainIdArgument,
    index_page: IndexPageOption = None,
    not_found_page: NotFoundPageOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Change where the domain redirects ("" clears a page; the name cannot change)."""
    if index_page is None and not_found_page is None:
        raise typer.BadParameter(
            'give --index-page or --not-found-page ("" clears)', param_hint="options"
        )
    with client(url, api_key) as atrium:
        domain = atrium.domains.update(
            domain_id, index_page=index_page, not_found_page=not_found_page
        )
    print_result(domain, domain_details(domain), as_json=as_json)


@domains_app.command("delete")
def domains_delete(
    domain_id: DomainIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete a domain: it is no longer served, and its name is free again."""
    with client(url, api_key) as atrium:
        deleted = atrium.domains.delete(domain_id)
    print_result(deleted, f"Domain {deleted.id} deleted.", as_json=as_json)
