"""Options shared by several commands."""

from __future__ import annotations

import inspect
from collections.abc import Callable
from dataclasses import MISSING, fields
from typing import Annotated, Any, get_type_hints

import typer

from dgm.config import PRICE_FORMAT, Price, parse_price
from dgm.errors import ConfigError


def _parse_price(text: str) -> Price:
    try:
        return parse_price(text)
    except ConfigError:
        raise typer.BadParameter(f"{text!r}: give {PRICE_FORMAT}") from None


PriceOption = Annotated[
    Price | None,
    typer.Option(
        "--price",
        parser=_parse_price,
        metavar="INPUT,OUTPUT",
        help="$ per million input,output tokens of the --llm model, for one the price table "
        "lacks (e.g. openai-compatible/...); 0,0 for a free local server.",
    ),
]


SELF_IMPROVE_MODES = ("dgm", "agent")


def _parse_mode(text: str) -> str:
    if text not in SELF_IMPROVE_MODES:
        raise typer.BadParameter(f"{text!r} is not a mode: give dgm or agent")
    return text


SelfImproveOption = Annotated[
    str | None,
    typer.Option(
        "--self-improve",
        parser=_parse_mode,
        metavar="dgm|agent",
        help="Who improves an agent: dgm (the built-in procedure, default) or agent (its "
        "own `improve` command: hyperagent mode). Kept in run.toml.",
    ),
]


def options_command(options_type: type[Any], handler: Callable[[Any], None]) -> Callable[..., None]:
    """A typer command whose parameters are the fields of the dataclass `options_type`
    (each annotated with its `typer.Option`/`typer.Argument`): the command builds one
    `options_type` from the command line and calls `handler` with it, so a command with
    many options takes one settings object, not a long parameter list."""
    hints = get_type_hints(options_type, include_extras=True)
    parameters = [
        inspect.Parameter(
            f.name,
            inspect.Parameter.KEYWORD_ONLY,
            default=inspect.Parameter.empty if f.default is MISSING else f.default,
            annotation=hints[f.name],
        )
        for f in fields(options_type)
    ]

    def command(**given: Any) -> None:
        handler(options_type(**given))

    command.__signature__ = inspect.Signature(parameters)  # type: ignore[attr-defined]
    command.__annotations__ = {p.name: p.annotation for p in parameters}
    command.__doc__ = handler.__doc__
    command.__name__ = handler.__name__
    return command
