"""Named strategy configurations: the strategies, and the ablation variants of hgm.

A variant is a strategy with settings (and optionally its own worker count), usable
wherever `dgm simulate --strategies` takes a name. The ablation separates what makes hgm
good: its parent choice (clade vs own), its evaluation schedule (one task at a time vs each
child on every task), its parallelism, and the reference deviations it used to have.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dgm.config import StrategyConfig
from dgm.errors import ConfigError
from dgm.strategies import STRATEGY_NAMES


@dataclass(frozen=True)
class Variant:
    name: str
    strategy: str
    settings: dict[str, Any] = field(default_factory=dict)
    """Overrides of the [strategy.<name>] table (and `final`)."""
    workers: int | None = None
    """None: the experiment's worker count."""
    meaning: str = ""

    def config(self, base: StrategyConfig | None = None) -> StrategyConfig:
        data = (base or StrategyConfig()).model_dump()
        data["name"] = self.strategy
        for section, values in self.settings.items():
            data[section] = {**data.get(section, {}), **values}
        return StrategyConfig.model_validate(data)


ABLATION: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("hgm", "hgm", meaning="faithful hgm"),
        Variant("hgm-1worker", "hgm", workers=1, meaning="one worker, same evaluation budget"),
        Variant(
            "hgm-failures-counted",
            "hgm",
            {"hgm": {"count_failed_expansions": True}},
            meaning="the old deviation: failed expansions count as expansions",
        ),
        Variant(
            "hgm-pending-uncounted",
            "hgm",
            {"hgm": {"count_pending_evals": False}},
            meaning="running evaluations not counted in the expand rule",
        ),
        Variant(
            "hgm-staged",
            "hgm",
            {"hgm": {"staged": True}},
            meaning="the benchmark's stage-2 gate on top of hgm",
        ),
        Variant(
            "hgm-own",
            "adaptive",
            {
                "adaptive": {
                    "clade_weight": 0.0,
                    "alpha": 0.6,
                    "task_order": "random",
                    "fast_track": False,
                }
            },  # fmt: skip
            meaning="hgm's schedule, parent by own results (no clade pooling)",
        ),
        Variant(
            "hgm-greedy-own",
            "adaptive",
            {
                "adaptive": {
                    "clade_weight": 0.0,
                    "alpha": 0.6,
                    "task_order": "random",
                    "fast_track": False,
                    "parent_rule": "mean",
                }
            },  # fmt: skip
            meaning="hgm's schedule, parent = best own posterior mean (greedy)",
        ),
        Variant(
            "hgm-full-eval",
            "hgm",
            {"hgm": {"full_evaluation": True, "staged": True}},
            meaning="hgm's parent choice, each child fully evaluated first (DGM's schedule)",
        ),
        # Our policy with one of its four changes to hgm undone at a time.
        Variant(
            "adaptive-alpha-0.6",
            "adaptive",
            {"adaptive": {"alpha": 0.6}},
            meaning="adaptive with hgm's expansion rate",
        ),
        Variant(
            "adaptive-random-tasks",
            "adaptive",
            {"adaptive": {"task_order": "random"}},
            meaning="adaptive with hgm's uniform task choice",
        ),
        Variant(
            "adaptive-no-fast-track",
            "adaptive",
            {"adaptive": {"fast_track": False}},
            meaning="adaptive without evaluating promising newcomers first",
        ),
        Variant(
            "adaptive-full-clade",
            "adaptive",
            {"adaptive": {"clade_weight": 1.0}},
            meaning="adaptive with hgm's clade-only parent posterior",
        ),
    )
}

STRATEGIES: dict[str, Variant] = {n: Variant(n, n) for n in STRATEGY_NAMES}


def variant(name: str) -> Variant:
    found = STRATEGIES.get(name) or ABLATION.get(name)
    if found is None:
        raise ConfigError(
            f"unknown strategy {name!r}",
            f"use one of {', '.join(STRATEGIES)} or an ablation variant: {', '.join(ABLATION)}",
        )
    return found
