"""Options shared by several commands."""

from __future__ import annotations

from typing import Annotated

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

SelfImproveOption = Annotated[
    str | None,
    typer.Option(
        "--self-improve",
        metavar="dgm|agent",
        help="Who improves an agent: dgm (the built-in procedure, default) or agent (its "
        "own `improve` command: hyperagent mode). Kept in run.toml.",
    ),
]


def check_self_improve(mode: str | None) -> str | None:
    """`--self-improve` as given, or one line and exit 2 for a value that is no mode."""
    if mode is not None and mode not in SELF_IMPROVE_MODES:
        typer.echo(f"error: --self-improve must be dgm or agent, not {mode!r}", err=True)
        raise typer.Exit(2)
    return mode
