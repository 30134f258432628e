"""Selection strategies behind one interface, and the state they read.

state = SearchState(TaskPlan(stage1=("t1", ...)))     # or SearchState.replay(...)
strategy = make_strategy(run_config.strategy, seed=run_config.seed)
action = strategy.next_action(state)   # Expand | Evaluate | Wait | Stop
shipped = strategy.final_choice(state)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dgm.config import StrategyConfig
from dgm.strategies.actions import Action, Evaluate, Expand, Job, Stop, Wait
from dgm.strategies.adaptive import AdaptiveStrategy
from dgm.strategies.base import Strategy
from dgm.strategies.dgm import DGMStrategy
from dgm.strategies.final import FinalRule
from dgm.strategies.gea import GEAStrategy
from dgm.strategies.greedy import GreedyStrategy
from dgm.strategies.hgm import HGMStrategy
from dgm.strategies.plan import split_plan
from dgm.strategies.random_search import RandomStrategy
from dgm.strategies.state import ROOT, NodeId, SearchState, TaskPlan

STRATEGY_NAMES = ("hgm", "dgm", "greedy", "random", "gea", "adaptive")


def make_strategy(
    config: StrategyConfig,
    seed: int | np.random.SeedSequence | np.random.Generator = 0,
    workers: int = 1,
    budget: Budget | None = None,
) -> Strategy:
    """The strategy `config.name`, with its settings and an RNG seeded from `seed`;
    `workers`: the run's worker count (hgm's start-up expansions depend on it); `budget`:
    the run's evaluation budget, when it has one (adaptive's endgame)."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    strategy = _build(config, rng, workers, budget or Budget())
    final = config.final
    min_evals = config.hgm.min_evals_final or final.min_evals  # the deprecated spelling wins
    strategy.final = FinalRule(final.quantile, min_evals, final.prior_strength)
    return strategy


@dataclass(frozen=True)
class Budget:
    """A run's evaluation budget, as a strategy may plan with it."""

    max_evals: float | None = None
    expansion_cost: float = 0.0
    """What one expansion costs against `max_evals`."""


def _build(
    config: StrategyConfig, rng: np.random.Generator, workers: int, budget: Budget
) -> Strategy:
    if config.name == "dgm":
        return DGMStrategy(
            rng,
            children_per_generation=config.dgm.children_per_generation,
            parent_selection=config.dgm.parent_selection,
        )
    if config.name == "hgm":
        h = config.hgm
        return HGMStrategy(
            rng,
            alpha=h.alpha,
            sharpen=h.sharpen,
            count_failed_expansions=h.count_failed_expansions,
            count_pending_evals=h.count_pending_evals,
            full_evaluation=h.full_evaluation,
            skip_barren=h.skip_barren,
            startup=h.startup_expansions,
            take_other_action=h.take_other_action,
            workers=workers,
        )
    if config.name == "gea":
        return GEAStrategy(rng, config.gea.group_size, config.gea.novelty_weight)
    if config.name == "adaptive":
        a = config.adaptive
        return AdaptiveStrategy(
            rng,
            alpha=a.alpha,
            clade_weight=a.clade_weight,
            task_order=a.task_order,
            fast_track=a.fast_track,
            parent_rule=a.parent_rule,
            race=a.race,
            stay=a.stay,
            endgame=a.endgame,
            eval_budget=budget.max_evals,
            expansion_cost=budget.expansion_cost,
            race_order=a.race_order,
            screen=a.screen,
            probe=a.probe,
            retry=a.retry,
            lineage=a.lineage,
        )
    if config.name == "greedy":
        return GreedyStrategy(rng)
    if config.name == "random":
        return RandomStrategy(rng)
    raise ValueError(f"unknown strategy {config.name!r}")  # unreachable: config validates


__all__ = [
    "ROOT",
    "STRATEGY_NAMES",
    "Action",
    "AdaptiveStrategy",
    "Budget",
    "FinalRule",
    "GEAStrategy",
    "DGMStrategy",
    "Evaluate",
    "Expand",
    "GreedyStrategy",
    "HGMStrategy",
    "Job",
    "NodeId",
    "RandomStrategy",
    "SearchState",
    "Stop",
    "Strategy",
    "TaskPlan",
    "Wait",
    "make_strategy",
    "split_plan",
]
