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


def _adaptive(name: str, meaning: str, **settings: Any) -> Variant:
    return Variant(name, "adaptive", {"adaptive": settings}, meaning=meaning)


ABLATION: dict[str, Variant] = {
    v.name: v
    for v in (
        Variant("hgm", "hgm", meaning="the reference"),
        # Each deviation from the reference alone (README "Strategies" names them).
        Variant(
            "hgm-failures-counted",
            "hgm",
            {"hgm": {"count_failed_expansions": True}},
            meaning="failed expansions count as expansions in the expand rule",
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
            "hgm-skip-barren",
            "hgm",
            {"hgm": {"skip_barren": True}},
            meaning="the run's barren-parent filter (barren_after 3)",
        ),
        Variant(
            "hgm-no-startup",
            "hgm",
            {"hgm": {"startup_expansions": False}},
            meaning="without the start-up expansions of the root",
        ),
        Variant(
            "hgm-take-other",
            "hgm",
            {"hgm": {"take_other_action": True}},
            meaning="an impossible action replaced by the other kind (the reference waits)",
        ),
        Variant(
            "hgm-sharpen",
            "hgm",
            {"hgm": {"sharpen": 0.01}},
            meaning="ours: parent draw from Beta(tau a, tau b), tau = 1 + 0.01 N",
        ),
        Variant(
            "hgm-full-eval",
            "hgm",
            {"hgm": {"full_evaluation": True, "staged": True}},
            meaning="hgm's parent choice, each child fully evaluated first (DGM's schedule)",
        ),
        Variant("hgm-1worker", "hgm", workers=1, meaning="one worker, same evaluation budget"),
        # Our policy with one of its changes to hgm undone at a time.
        _adaptive("adaptive-fixed-window", "no race: newcomers first until min_evals", race=False),
        _adaptive(
            "adaptive-no-probe",
            "no newcomer probed unless it beats the incumbent",
            probe=0,
            retry=0,
        ),
        _adaptive("adaptive-no-retry", "one probe, even when it fails", retry=0),
        _adaptive(
            "adaptive-thompson-race",
            "challengers by a Thompson draw, not closest to shipping first",
            race_order="thompson",
            screen=0,
        ),
        _adaptive(
            "adaptive-hysteresis", "a challenger while mean + sd beats the incumbent", stay=1.0
        ),
        _adaptive(
            "adaptive-no-newcomer-first",
            "neither probe, race nor window",
            race=False,
            fast_track=False,
            probe=0,
            retry=0,
        ),
        _adaptive("adaptive-no-endgame", "expansions until the budget ends", endgame=0.0),
        _adaptive("adaptive-alpha-0.6", "hgm's expansion rate", alpha=0.6),
        _adaptive("adaptive-random-tasks", "hgm's uniform task choice", task_order="random"),
        _adaptive("adaptive-full-clade", "hgm's clade-only parent posterior", clade_weight=1.0),
        # Issue 27's earlier policies, for paired comparisons (`--headline`): round two's
        # default, and its race-closest variant (= adaptive-no-probe since round three).
        Variant(
            "adaptive-round2",
            "adaptive",
            {
                "adaptive": {
                    "race_order": "thompson",
                    "stay": 1.0,
                    "screen": 0,
                    "probe": 0,
                    "retry": 0,
                }
            },
            meaning="round two's default: challengers by Thompson, hysteresis 1, no probe",
        ),
        Variant(
            "race-closest",
            "adaptive",
            {"adaptive": {"race_order": "lower", "stay": 0.0, "screen": 1, "probe": 0, "retry": 0}},
            meaning="adaptive; each challenger one result first, then the challenger with the "
            "best lower bound, no hysteresis, no probe",
        ),
        # Issue 27 round five: a child of a productive lineage raced sooner (not the default).
        Variant(
            "lineage-prior",
            "adaptive",
            {"adaptive": {"lineage": 4.0}},
            meaning="adaptive; a challenger by its mean with 4 pseudo-results at its "
            "siblings' pooled rate, where that raises it",
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
