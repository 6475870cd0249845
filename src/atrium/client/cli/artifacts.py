"""`atrium artifacts list|download`: the files a run wrote."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Annotated, NoReturn

import typer
from rich.markup import escape

from atrium.client import _view as view
from atrium.client.cli._help import App
from atrium.client.cli._shared import (
    JsonOption,
    KeyOption,
    RunIdArgument,
    UrlOption,
    client,
    console,
    errors,
    print_list,
    print_results,
)
from atrium.client.records import Artifact
from atrium.kit.filenames import filename_problem

artifacts_app = App(help="Files written by runs.", no_args_is_help=True)


@artifacts_app.command("list")
def artifacts_list(
    run_id: RunIdArgument,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """The files a run wrote."""
    with client(url, api_key) as atrium:
        found = atrium.runs.artifacts(run_id)
    none = f"{run_id} has no artifacts."
    print_results(found, view.artifacts_table, as_json=as_json, none=none)


@artifacts_app.command("download")
def artifacts_download(
    run_id: RunIdArgument,
    output: Annotated[
        Path,
        typer.Option(
            "--output", "-o", metavar="DIR", help="Directory to save into (created if needed)."
        ),
    ] = Path("."),
    overwrite: Annotated[
        bool, typer.Option("--overwrite", help="Replace files of the same name in the directory.")
    ] = False,
    as_json: JsonOption = False,
    url: UrlOption = None,
    api_key: KeyOption = None,
) -> None:
    """Download every artifact of a run into a directory (SHA-256 checked). An existing file is
    never replaced without --overwrite: then nothing is downloaded and the status is 1."""
    saved: list[dict[str, object]] = []
    with client(url, api_key) as atrium:
        found = atrium.runs.artifacts(run_id)
        if found:
            targets = _download_targets(found, output, overwrite=overwrite)
            output.mkdir(parents=True, exist_ok=True)
            # Each file is fetched into a private directory beside its target (the client
            # library reduces the response's file name to a bare one there), then moved to the
            # name checked above, whatever the response's headers said.
            with tempfile.TemporaryDirectory(dir=output, prefix=".atrium-download-") as staging:
                for artifact, target in targets:
                    fetched = atrium.runs.download_artifact(
                        run_id, artifact.artifact_id, to=staging
                    )
                    _move_into_place(fetched, target, overwrite=overwrite)
                    saved.append({**artifact.model_dump(mode="json"), "path": str(target)})
                    if not as_json:
                        console.print(f"{target}  [dim]{view.human_bytes(artifact.size_bytes)}[/]")
    if as_json:
        print_list(saved)
    elif not found:
        console.print(f"{run_id} has no artifacts.")


def _download_targets(
    artifacts: list[Artifact], output: Path, *, overwrite: bool
) -> list[tuple[Artifact, Path]]:
    """Where each artifact goes: `output / name`. Exits (status 1, nothing written) when a name
    is not a plain file name (a server must not send one; this client checks anyway), or, without
    `overwrite`, when a file of that name exists."""
    problems: list[str] = []
    targets: list[tuple[Artifact, Path]] = []
    seen: set[str] = set()
    for artifact in artifacts:
        problem = filename_problem(artifact.name)
        if problem is not None:
            problems.append(
                f"refusing {artifact.artifact_id}: its name {artifact.name!r} {problem}"
            )
            continue
        target = output / artifact.name
        if artifact.name in seen:
            problems.append(f"two artifacts are named {artifact.name!r}")
        elif not overwrite and os.path.lexists(target):
            problems.append(f"{target} exists; pass --overwrite to replace it")
        seen.add(artifact.name)
        targets.append((artifact, target))
    if problems:
        _refuse(problems)
    return targets


def _move_into_place(staged: Path, target: Path, *, overwrite: bool) -> None:
    if overwrite:
        staged.replace(target)
        return
    try:
        # A hard link never replaces an existing file, even one created since the check.
        os.link(staged, target)
    except FileExistsError:
        _refuse([f"{target} exists; pass --overwrite to replace it"])
    except OSError:  # a file system without hard links: create exclusively, then copy
        with staged.open("rb") as source, target.open("xb") as copy:
            shutil.copyfileobj(source, copy)
    staged.unlink()


def _refuse(problems: list[str]) -> NoReturn:
    for problem in problems:
        errors.print(f"[red]error:[/] {escape(problem)}")
    raise typer.Exit(1)
