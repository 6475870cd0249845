"""`atrium eval DATASET.jsonl --agent A --agent B`: a dataset's cases run on agents through the
API, scored, shown side by side and stored; `atrium evals list|show|rm` for stored ones. The
work is the client library's (`Client.evals.run`); this prints it."""

from __future__ import annotations

from pathlib import Path
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
    print_json,
    print_list,
    print_result,
)
from atrium.client.records import Eval, EvalSummary

evals_app = App(help="Stored evals: list, show, delete.", no_args_is_help=True)
EvalIdArgument = Annotated[str, typer.Argument(metavar="EVAL_ID", help="The eval's id (eval_…).")]


def _credits(value: float) -> str:
    return f"{value:.6f}".rstrip("0").rstrip(".") or "0"


def _ms(value: int | None) -> str:
    return "-" if value is None else f"{value} ms"


def eval_table(found: Eval) -> Table:
    """Case by agent: pass or FAIL (with the failed checks), credits, latency; then each agent's
    pass rate, credits and median latency."""
    table = Table(box=box.SIMPLE_HEAD, title=f"{found.dataset.name} · {found.eval_id}")
    table.add_column("case", overflow="fold")
    for agent in found.agents:
        versions = ",".join(f"v{v}" for v in agent.versions)
        table.add_column(f"{agent.ref} ({versions})" if versions else agent.ref, overflow="fold")
        table.add_column("credits", justify="right", no_wrap=True)
        table.add_column("latency", justify="right", no_wrap=True)
    for case in found.cases:
        by_agent = {result.agent: result for result in case.results}
        row = [case.case_id]
        for agent in found.agents:
            result = by_agent.get(agent.ref)
            if result is None:
                row += ["-", "-", "-"]
                continue
            failed: list[str] = [check.type for check in result.checks if not check.passed]
            if result.status != "completed":
                failed.insert(0, result.status)
            verdict = "pass" if result.passed else "FAIL " + ",".join(failed)
            row += [verdict, _credits(result.credits), _ms(result.latency_ms)]
        table.add_row(*row)
    totals = {total.agent: total for total in found.totals}
    row = ["total"]
    for agent in found.agents:
        total = totals[agent.ref]
        row += [
            f"{total.passed}/{total.cases} ({total.pass_rate:.0%})",
            _credits(total.credits),
            "p50 " + _ms(total.p50_latency_ms),
        ]
    table.add_section()
    table.add_row(*row)
    return table


def evals_table(found: list[EvalSummary]) -> Table:
    table = Table(box=box.SIMPLE_HEAD)
    table.add_column("eval", no_wrap=True)
    table.add_column("dataset", overflow="fold")
    table.add_column("cases", justify="right")
    table.add_column("pass rate by agent", overflow="fold")
    table.add_column("created (UTC)", no_wrap=True)
    for summary in found:
        rates = ", ".join(f"{t.agent} {t.pass_rate:.0%}" for t in summary.totals)
        table.add_row(
            summary.eval_id,
            summary.dataset.name,
            str(summary.cases),
            rates,
            summary.created_at.strftime("%Y-%m-%d %H:%M:%S"),
        )
    return table


def run_eval(
    dataset: Annotated[
        Path,
        typer.Argument(
            metavar="DATASET.jsonl", exists=True, dir_okay=False, help="One case per line."
        ),
    ],
    agents: Annotated[
        list[str],
        typer.Option(
            "--agent",
            help="An agent to run each case on (agt_…, agt_…@prod, agt_…@2 or agt_…@v2); repeat.",
        ),
    ],
    concurrency: Annotated[int, typer.Option(min=1, max=64, help="Runs in flight at once.")] = 4,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Run every case of DATASET on every --agent through the API, score each with its checks,
    print them side by side (pass/fail, credits, latency) and store the eval."""
    with client(url, api_key) as atrium:
        found = atrium.evals.run(dataset, agents=agents, concurrency=concurrency)
    print_result(found, eval_table(found), as_json=as_json)


@evals_app.command("list")
def evals_list(
    limit: Annotated[int, typer.Option(min=1, max=100, help="Evals per page.")] = 20,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The account's stored evals, newest first."""
    with client(url, api_key) as atrium:
        page = atrium.evals.list(limit=limit)
    if as_json:
        print_list(page.data, has_more=page.has_more, next_cursor=page.next_cursor)
    else:
        print_result(page.data, evals_table(page.data), as_json=False)


@evals_app.command("show")
def evals_show(
    eval_id: EvalIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """One stored eval, side by side."""
    with client(url, api_key) as atrium:
        found = atrium.evals.get(eval_id)
    print_result(found, eval_table(found), as_json=as_json)


@evals_app.command("rm")
def evals_rm(
    eval_id: EvalIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Delete a stored eval (its runs stay)."""
    with client(url, api_key) as atrium:
        deleted = atrium.evals.delete(eval_id)
    if as_json:
        print_json(deleted)
    else:
        typer.echo(f"deleted {deleted.eval_id}")
