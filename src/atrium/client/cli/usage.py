"""`atrium usage`: usage per day, a table and a bar chart."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated

import typer

from atrium.client import _view as view
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    UrlOption,
    client,
    console,
    print_json,
    print_table,
)


def usage(
    start: Annotated[
        datetime | None,
        typer.Option(
            "--from",
            formats=["%Y-%m-%d"],
            metavar="YYYY-MM-DD",
            help="First day (default: 29 days ago).",
        ),
    ] = None,
    end: Annotated[
        datetime | None,
        typer.Option(
            "--to", formats=["%Y-%m-%d"], metavar="YYYY-MM-DD", help="Last day (default: today)."
        ),
    ] = None,
    agent: Annotated[
        str | None, typer.Option("--agent", metavar="AGENT_ID", help="Only this agent.")
    ] = None,
    metric: Annotated[
        str,
        typer.Option(
            metavar="METRIC", help=f"What the chart shows: {', '.join(view.USAGE_METRICS)}."
        ),
    ] = "credits",
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Usage per day (UTC): a table and a bar chart; with --agent, its runs by version too."""
    if metric not in view.USAGE_METRICS:
        raise typer.BadParameter(f"one of {', '.join(view.USAGE_METRICS)}", param_hint="--metric")
    with client(url, api_key) as atrium:
        report = atrium.analytics.usage(
            start_date=start.date() if start else None,
            end_date=end.date() if end else None,
            agent_id=agent,
        )
    if as_json:
        print_json(report)
        return
    print_table(view.usage_table(report))
    console.print(view.usage_chart(report, metric=metric))
    by_version = view.usage_versions_table(report)
    if by_version is not None:
        print_table(by_version)
