"""Dollars per call: the shipped price table (`prices.toml`) plus run.toml overrides."""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from functools import cache
from importlib import resources

from dgm.config import Price
from dgm.errors import ConfigError
from dgm.gateway.types import Usage


@cache
def shipped_prices() -> dict[str, Price]:
    text = resources.files("dgm.gateway").joinpath("prices.toml").read_text()
    return {model: Price(**entry) for model, entry in tomllib.loads(text).items()}


def cache_read_rate(price: Price) -> float:
    return price.input if price.cache_read is None else price.cache_read


def cache_write_rate(price: Price) -> float:
    return price.input if price.cache_write is None else price.cache_write


def cost_usd(price: Price, usage: Usage) -> float:
    """Dollars of one call: uncached input, cache reads, cache writes and output, each
    at its own rate."""
    return (
        usage.uncached_tokens * price.input
        + usage.cached_tokens * cache_read_rate(price)
        + usage.cache_write_tokens * cache_write_rate(price)
        + usage.output_tokens * price.output
    ) / 1_000_000


def worst_case_usd(price: Price, input_tokens: int, output_tokens: int) -> float:
    """The most a call can cost: every input token at the dearest input rate (a cache
    write costs more than plain input at Anthropic) and every output token allowed."""
    input_rate = max(price.input, cache_write_rate(price), cache_read_rate(price))
    return (input_tokens * input_rate + output_tokens * price.output) / 1_000_000


class PriceBook:
    """Finds the price of a model string: overrides first, then the shipped table."""

    def __init__(self, overrides: Mapping[str, Price] | None = None) -> None:
        self._table = {**shipped_prices(), **(overrides or {})}

    def lookup(self, model: str) -> Price | None:
        """Exact key, else the key without an `@base_url`, else the longest prefix key."""
        candidates = [model]
        if "@" in model:
            candidates.append(model.split("@", 1)[0])
        for name in candidates:
            if name in self._table:
                return self._table[name]
        prefixes = [key for key in self._table if any(c.startswith(key) for c in candidates)]
        return self._table[max(prefixes, key=len)] if prefixes else None

    def require(self, model: str) -> Price:
        price = self.lookup(model)
        if price is None:
            raise ConfigError(
                f"no price known for model {model!r}, so its spending cannot be counted",
                "pass --price INPUT,OUTPUT in $ per million tokens (--price 0,0 for a free"
                f' local server), or in run.toml: [llm.prices."{model}"] input = .. output = ..',
            )
        return price
