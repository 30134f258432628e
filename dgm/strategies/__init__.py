"""Selection strategies behind one interface, and the state they read.

state = SearchState(TaskPlan(stage1=("t1", ...)))     # or SearchState.replay(...)
strategy = make_strategy(run_config.strategy, seed=run_config.seed)
action = strategy.next_action(state)   # Expand | Evaluate | Wait | Stop
shipped = strategy.final_choice(state)
"""

from __future__ import annotations

import numpy as np

from dgm.config import StrategyConfig
from dgm.strategies.actions import Action, Evaluate, Expand, Job, Stop, Wait
from dgm.strategies.base import Strategy
from dgm.strategies.dgm import DGMStrategy
from dgm.strategies.greedy import GreedyStrategy
from dgm.strategies.hgm import HGMStrategy
from dgm.strategies.random_search import RandomStrategy
from dgm.strategies.state import ROOT, SearchState, TaskPlan

STRATEGY_NAMES = ("hgm", "dgm", "greedy", "random")


def make_strategy(
    config: StrategyConfig, seed: int | np.random.SeedSequence | np.random.Generator = 0
) -> Strategy:
    """The strategy `config.name`, with its settings and an RNG seeded from `seed`."""
    rng = seed if isinstance(seed, np.random.Generator) else np.random.default_rng(seed)
    if config.name == "dgm":
        return DGMStrategy(
            rng,
            children_per_generation=config.dgm.children_per_generation,
            parent_selection=config.dgm.parent_selection,
        )
    if config.name == "hgm":
        return HGMStrategy(
            rng,
            alpha=config.hgm.alpha,
            cooldown=config.hgm.cooldown,
            min_evals_final=config.hgm.min_evals_final,
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
    "DGMStrategy",
    "Evaluate",
    "Expand",
    "GreedyStrategy",
    "HGMStrategy",
    "Job",
    "RandomStrategy",
    "SearchState",
    "Stop",
    "Strategy",
    "TaskPlan",
    "Wait",
    "make_strategy",
]
