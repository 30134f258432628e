"""Staged evaluation, as the DGM does it: every child is scored on a small stage first and
goes on to a larger stage only past a threshold, so weak children stay cheap.

    stages = stages_for(config.benchmark, benchmark)

A later stage holds only tasks not in an earlier one; the strategies' `TaskPlan` gates
stage 2 on stage 1's pass rate (dgm/strategies/state.py).
"""

from __future__ import annotations

from dataclasses import dataclass

from dgm.benchmarks.task import TaskSource
from dgm.config import BenchmarkConfig


@dataclass(frozen=True)
class Stage:
    index: int
    """1, 2, ...: stored as `Evaluation.stage`."""
    subset: str
    task_ids: tuple[str, ...]
    threshold: float | None
    """Pass rate the previous stage must reach for this one to run (None: always)."""


def stages_for(config: BenchmarkConfig, benchmark: TaskSource) -> list[Stage]:
    first = tuple(t.id for t in benchmark.tasks(config.subset))
    stages = [Stage(1, config.subset, first, None)]
    if config.stage2_subset:
        seen = set(first)
        second = tuple(t.id for t in benchmark.tasks(config.stage2_subset) if t.id not in seen)
        if second:
            stages.append(Stage(2, config.stage2_subset, second, config.stage2_threshold))
    return stages
