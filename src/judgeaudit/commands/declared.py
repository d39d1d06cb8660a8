"""A typer command's options generated from their declarations (``judgeaudit.options.Option``): each becomes
``Annotated[type, typer.Option(flag, help=…)]`` (a path it writes through ``out_option``), so the command line
shows the flag, default and help the declaration gives, and nothing is written twice."""

from __future__ import annotations

import inspect
from collections.abc import Callable, Iterable
from typing import Annotated, Any

import typer

from judgeaudit.commands.outputs import out_option
from judgeaudit.options import Option


def annotation(o: Option) -> Any:
    """``Annotated[type, typer.Option(...)]`` of one declared option."""
    info = (out_option(o.option, what=o.writes, help=o.help_text) if o.writes
            else typer.Option(o.option, help=o.help_text))
    return Annotated[o.type, info]


def parameter(o: Option) -> inspect.Parameter:
    default = inspect.Parameter.empty if o.required else o.default
    return inspect.Parameter(o.keyword, inspect.Parameter.KEYWORD_ONLY, annotation=annotation(o), default=default)


def declared(options: Iterable[Option], **extra: tuple[Any, Any]) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Give a command function that takes ``**options`` the signature typer reads: the declared options (the
    command's ones, ``Option.where`` not ``file``) by their parameter names, then ``extra`` options that are
    the command's alone (``name=(Annotated[...], default)``)."""
    params = [parameter(o) for o in options if o.where != "file"]
    params += [inspect.Parameter(n, inspect.Parameter.KEYWORD_ONLY, annotation=a, default=d)
               for n, (a, d) in extra.items()]
    def wrap(func: Callable[..., Any]) -> Callable[..., Any]:
        func.__signature__ = inspect.Signature(params, return_annotation=None)  # type: ignore[attr-defined]
        return func

    return wrap
