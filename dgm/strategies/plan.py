"""The tasks a search may use: the stage gate per strategy, and the held-out split.

    search, held_out = split_plan(plan, config.strategy, seed)

- Stages: hgm (faithful) and adaptive evaluate any node on any task, so their plan has
  one stage; the others (and hgm with `staged = true`) keep the benchmark's gate.
- Held out: when the final choice confirms its top candidates, `held_out_fraction` of
  each stage's tasks (drawn with the run's seed) never reaches the search; only the
  confirmation stage evaluates on them, so its verdict is not biased by the selection.
"""

from __future__ import annotations

import numpy as np

from dgm.config import StrategyConfig
from dgm.strategies.state import TaskPlan

UNSTAGED = frozenset({"hgm", "adaptive"})


def is_staged(config: StrategyConfig) -> bool:
    if config.name == "hgm":
        return config.hgm.staged
    return config.name not in UNSTAGED


def split_plan(
    plan: TaskPlan, config: StrategyConfig, seed: int = 0
) -> tuple[TaskPlan, tuple[str, ...]]:
    """(the search's plan, the held-out task ids in plan order)."""
    held: set[str] = set()
    if config.final.confirm_top_k > 0 and config.final.held_out_fraction > 0:
        rng = np.random.default_rng([seed, 17])
        for i, stage in enumerate((plan.stage1, plan.stage2)):
            # Stage 1 must keep at least one task; round so tiny stages still give one.
            n = int(round(config.final.held_out_fraction * len(stage)))
            n = min(n, len(stage) - 1) if i == 0 else n
            if n > 0:
                held |= {str(t) for t in rng.choice(stage, size=n, replace=False)}
    stage1 = tuple(t for t in plan.stage1 if t not in held)
    stage2 = tuple(t for t in plan.stage2 if t not in held)
    held_out = tuple(t for t in plan.stage1 + plan.stage2 if t in held)
    if not is_staged(config):
        return TaskPlan(stage1 + stage2, (), plan.stage2_threshold), held_out
    return TaskPlan(stage1, stage2, plan.stage2_threshold), held_out
