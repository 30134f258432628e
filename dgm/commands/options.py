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
