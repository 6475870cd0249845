"""Help pages in click's words. Typer 0.29 labels every parameter with its Python type
(`--help <bool>`, `--agent <str>`) and writes a required argument `{prompt}`; here a flag shows
no value, an option shows click's name of its value (`TEXT`, `INTEGER`, or its own metavar)
and an argument is `PROMPT` (`[PROMPT]` when optional)."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import Any, TypeVar

import typer
from typer import _click as click  # typer 0.29 runs on its own copy of click
from typer.core import TyperArgument, TyperCommand, TyperGroup, TyperOption

F = TypeVar("F", bound=Callable[..., Any])


# Python types → the words of click's help pages.
_LABELS = {"str": "TEXT", "int": "INTEGER", "float": "NUMBER", "Path": "PATH", "bool": "BOOLEAN"}


def _value_label(param: TyperArgument | TyperOption, ctx: click.Context) -> str | None:
    if isinstance(param, TyperArgument) or (isinstance(param, TyperOption) and param.is_flag):
        return None  # an argument's name says it; a flag takes no value
    if param.metavar:
        return param.metavar
    bare = param.bare_type().removeprefix("list[").removesuffix("]")
    return _LABELS.get(bare, bare.upper())


def _typer_params(command: click.Command, ctx: click.Context) -> list[TyperArgument | TyperOption]:
    return [p for p in command.get_params(ctx) if isinstance(p, TyperArgument | TyperOption)]


def _plain_params(command: click.Command, ctx: click.Context) -> None:
    for param in _typer_params(command, ctx):
        if isinstance(param, TyperArgument) and param.metavar is None and param.name:
            param.metavar = param.name.upper()
        # An instance attribute shadows typer's method (the one that writes `<str>`).
        param.display_type_rich = partial(_value_label, param)  # type: ignore[method-assign]


def _usage_pieces(command: click.Command, ctx: click.Context) -> list[str]:
    pieces = [command.options_metavar] if command.options_metavar else []
    for param in _typer_params(command, ctx):
        if isinstance(param, TyperArgument):
            name = param.metavar or (param.name or "").upper()
            name = name if param.required else f"[{name}]"
            pieces.append(name + ("..." if param.nargs != 1 else ""))
    return pieces


class HelpCommand(TyperCommand):
    """A command whose help page says `PROMPT` and `TEXT`, not `{prompt}` and `<str>`."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _plain_params(self, ctx)
        super().format_help(ctx, formatter)

    def collect_usage_pieces(self, ctx: click.Context) -> list[str]:
        return _usage_pieces(self, ctx)


class HelpGroup(TyperGroup):
    """A group of commands whose own help page has no type labels either."""

    def format_help(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        _plain_params(self, ctx)
        super().format_help(ctx, formatter)


class App(typer.Typer):
    """`typer.Typer` whose groups and commands write plain help pages."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(cls=HelpGroup, **kwargs)

    def command(self, name: str | None = None, **kwargs: Any) -> Callable[[F], F]:
        kwargs.setdefault("cls", HelpCommand)
        decorator: Callable[[F], F] = super().command(name, **kwargs)
        return decorator
