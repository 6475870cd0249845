"""`atrium schedules list|create|get|update|pause|resume|next|trigger|firings|delete`: prompts
run on a cron expression in a time zone, once per fire time."""

from __future__ import annotations

import json
from collections.abc import Iterable
from datetime import datetime
from typing import Annotated, Any, cast

import typer
from rich import box
from rich.table import Table

from atrium.client._calls import ScheduleChanges
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
    print_table,
)
from atrium.client.records import Schedule, ScheduleFiring, ScheduleFiringPage, SchedulePage

schedules_app = App(
    help="Schedules: a prompt run at each fire time of a cron expression in a time zone.",
    no_args_is_help=True,
)
ScheduleArgument = Annotated[
    str, typer.Argument(metavar="SCHEDULE_ID", help="The schedule's id (sch_…).")
]
CronOption = Annotated[
    str | None,
    typer.Option(
        "--cron",
        metavar="EXPR",
        help="Five fields: minute hour day-of-month month day-of-week ('0 9 * * MON-FRI').",
        show_default=False,
    ),
]
ZoneOption = Annotated[
    str | None,
    typer.Option(
        "--timezone", "--tz", metavar="ZONE", help="An IANA zone (default UTC).", show_default=False
    ),
]
# The server's parameter names and the options that set them, for its 400s.
_OPTIONS = {
    "cron": "--cron",
    "timezone": "--timezone",
    "agent_id": "--agent",
    "thread": "--thread",
    "on_overlap": "--on-overlap",
    "on_missed": "--on-missed",
    "max_credits_per_day": "--max-credits-per-day",
    "metadata": "--metadata",
    "starts_at": "--starts-at",
    "ends_at": "--ends-at",
    "prompt": "PROMPT",
}


def _when(moment: datetime | None) -> str:
    return moment.strftime("%Y-%m-%d %H:%M UTC") if moment else "—"


def schedules_table(schedules: Iterable[Schedule]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("schedule", no_wrap=True)
    table.add_column("cron", no_wrap=True)
    table.add_column("zone")
    table.add_column("next")
    table.add_column("overlap / missed")
    table.add_column("prompt")
    for schedule in schedules:
        table.add_row(
            schedule.schedule_id,
            schedule.cron,
            schedule.timezone,
            "paused" if schedule.paused else _when(schedule.next_fire_at),
            f"{schedule.on_overlap} / {schedule.on_missed}",
            schedule.prompt,
        )
    return table


def firings_table(firings: Iterable[ScheduleFiring]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("fire time", no_wrap=True)
    table.add_column("status")
    table.add_column("run or reason", no_wrap=True)
    table.add_column("detail")
    for firing in firings:
        manual = " (manual)" if firing.trigger == "manual" else ""
        table.add_row(
            _when(firing.fire_at) + manual,
            firing.status,
            firing.run_id or firing.reason or "",
            firing.detail or "",
        )
    return table


def _metadata(given: str | None) -> dict[str, Any] | None:
    if given is None:
        return None
    try:
        value = json.loads(given)
    except ValueError:
        raise typer.BadParameter("not JSON", param_hint="--metadata") from None
    if not isinstance(value, dict):
        raise typer.BadParameter("must be a JSON object", param_hint="--metadata")
    return value


AgentOption = Annotated[
    str | None, typer.Option("--agent", metavar="AGENT_ID", help="Default: the default agent.")
]
ThreadOption = Annotated[
    str | None,
    typer.Option("--thread", metavar="THREAD", help='"new" (default) or a thread id to continue.'),
]
OverlapOption = Annotated[
    str | None,
    typer.Option(
        "--on-overlap", metavar="POLICY", help="skip (default) | enqueue | cancel_previous."
    ),
]
MissedOption = Annotated[
    str | None,
    typer.Option("--on-missed", metavar="POLICY", help="run_once (default) | skip | run_all."),
]
CapOption = Annotated[
    float | None,
    typer.Option("--max-credits-per-day", metavar="CREDITS", help="A daily credit cap."),
]
MetadataOption = Annotated[
    str | None, typer.Option("--metadata", metavar="JSON", help="A JSON object for its runs.")
]
StartsOption = Annotated[
    str | None, typer.Option("--starts-at", metavar="TIME", help="ISO 8601 with offset.")
]
EndsOption = Annotated[
    str | None, typer.Option("--ends-at", metavar="TIME", help="ISO 8601 with offset.")
]


@schedules_app.command("list")
def schedules_list(
    every: Annotated[bool, typer.Option("--all", help="Every schedule, all pages.")] = False,
    cursor: Annotated[str | None, typer.Option(metavar="CURSOR", help="The next page.")] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The account's schedules, newest first, with their next fire time."""
    with client(url, api_key) as atrium:
        if every:
            page = SchedulePage(data=list(atrium.schedules.iter_all()), has_more=False)
        else:
            page = atrium.schedules.list(cursor=cursor)
    if as_json:
        print_json(page)
        return
    if not page.data:
        console.print(
            "No schedules yet. Make one: atrium schedules create \"…\" --cron '0 9 * * *'"
        )
        return
    print_table(schedules_table(page.data))
    if page.has_more and page.next_cursor:
        errors.print(f"[dim]More: atrium schedules list --cursor {page.next_cursor} (or --all)[/]")


@schedules_app.command("create")
def schedules_create(
    prompt: Annotated[str, typer.Argument(metavar="PROMPT", help="The task text of every run.")],
    cron: CronOption = None,
    timezone: ZoneOption = None,
    agent: AgentOption = None,
    thread: ThreadOption = None,
    on_overlap: OverlapOption = None,
    on_missed: MissedOption = None,
    max_credits_per_day: CapOption = None,
    metadata: MetadataOption = None,
    starts_at: StartsOption = None,
    ends_at: EndsOption = None,
    paused: Annotated[bool, typer.Option("--paused", help="Create it paused.")] = False,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """A schedule: PROMPT run at each fire time of --cron in --timezone."""
    if cron is None:
        raise typer.BadParameter("a cron expression is required", param_hint="--cron")
    with client(url, api_key, options=_OPTIONS) as atrium:
        made = atrium.schedules.create(
            prompt,
            cron,
            timezone=timezone,
            agent_id=agent,
            thread=thread,
            metadata=_metadata(metadata),
            starts_at=starts_at,
            ends_at=ends_at,
            paused=paused or None,
            on_overlap=on_overlap,
            on_missed=on_missed,
            max_credits_per_day=max_credits_per_day,
        )
    print_result(made, schedules_table([made]), as_json=as_json)


@schedules_app.command("get")
def schedules_get(
    schedule_id: ScheduleArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """One schedule."""
    with client(url, api_key) as atrium:
        found = atrium.schedules.get(schedule_id)
    print_result(found, schedules_table([found]), as_json=as_json)


@schedules_app.command("update")
def schedules_update(
    schedule_id: ScheduleArgument,
    prompt: Annotated[str | None, typer.Option("--prompt", metavar="TEXT")] = None,
    cron: CronOption = None,
    timezone: ZoneOption = None,
    agent: AgentOption = None,
    thread: ThreadOption = None,
    on_overlap: OverlapOption = None,
    on_missed: MissedOption = None,
    max_credits_per_day: CapOption = None,
    no_cap: Annotated[bool, typer.Option("--no-cap", help="Remove the daily cap.")] = False,
    metadata: MetadataOption = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Change a schedule; it fires by the new rule from now on."""
    # The options given, under ScheduleChanges' names.
    given: dict[str, Any] = {
        name: value
        for name, value in {
            "prompt": prompt,
            "cron": cron,
            "timezone": timezone,
            "agent_id": agent,
            "thread": thread,
            "on_overlap": on_overlap,
            "on_missed": on_missed,
            "max_credits_per_day": max_credits_per_day,
            "metadata": _metadata(metadata),
        }.items()
        if value is not None
    }
    if no_cap:
        given["max_credits_per_day"] = None
    with client(url, api_key, options=_OPTIONS) as atrium:
        updated = atrium.schedules.update(schedule_id, **cast(ScheduleChanges, given))
    print_result(updated, schedules_table([updated]), as_json=as_json)


@schedules_app.command("pause")
def schedules_pause(
    schedule_id: ScheduleArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Stop firing until resumed."""
    with client(url, api_key) as atrium:
        paused = atrium.schedules.pause(schedule_id)
    print_result(paused, f"Schedule {paused.schedule_id} paused.", as_json=as_json)


@schedules_app.command("resume")
def schedules_resume(
    schedule_id: ScheduleArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Fire again from the next fire time on."""
    with client(url, api_key) as atrium:
        resumed = atrium.schedules.resume(schedule_id)
    print_result(
        resumed,
        f"Schedule {resumed.schedule_id} resumed; next: {_when(resumed.next_fire_at)}.",
        as_json=as_json,
    )


@schedules_app.command("next")
def schedules_next(
    schedule_id: ScheduleArgument,
    n: Annotated[int, typer.Option("-n", min=1, max=50, help="How many.")] = 5,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The next fire times, in UTC and in the schedule's zone."""
    with client(url, api_key, options={"n": "-n"}) as atrium:
        found = atrium.schedules.next(schedule_id, n=n)
    if as_json:
        print_json(found)
        return
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("UTC", no_wrap=True)
    table.add_column(found.timezone, no_wrap=True)
    for each in found.data:
        table.add_row(_when(each.fire_at), each.local_time.strftime("%Y-%m-%d %H:%M %z"))
    print_table(table)


@schedules_app.command("trigger")
def schedules_trigger(
    schedule_id: ScheduleArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Fire now, by the schedule's overlap and credit rules."""
    with client(url, api_key) as atrium:
        firing = atrium.schedules.trigger(schedule_id)
    if firing.status == "fired":
        human = f"Fired: run {firing.run_id}."
    else:
        human = f"Skipped ({firing.reason}): {firing.detail or ''}"
    print_result(firing, human, as_json=as_json)


@schedules_app.command("firings")
def schedules_firings(
    schedule_id: ScheduleArgument,
    status: Annotated[
        str | None, typer.Option("--status", metavar="STATUS", help="fired | skipped.")
    ] = None,
    cursor: Annotated[str | None, typer.Option(metavar="CURSOR", help="The next page.")] = None,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Fire times handled, latest first: the run, or why one was skipped."""
    with client(url, api_key, options={"status": "--status"}) as atrium:
        page: ScheduleFiringPage = atrium.schedules.firings(
            schedule_id, status=status, cursor=cursor
        )
    if as_json:
        print_json(page)
        return
    if not page.data:
        console.print("No firings yet.")
        return
    print_table(firings_table(page.data))
    if page.has_more and page.next_cursor:
        errors.print(
            f"[dim]More: atrium schedules firings {schedule_id} --cursor {page.next_cursor}[/]"
        )


@schedules_app.command("delete")
def schedules_delete(
    schedule_id: ScheduleArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete a schedule and its firings; its runs stay."""
    with client(url, api_key) as atrium:
        deleted = atrium.schedules.delete(schedule_id)
    print_result(deleted, f"Schedule {deleted.schedule_id} deleted.", as_json=as_json)
