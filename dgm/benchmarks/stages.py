"""Staged evaluation, as the DGM does it: every child is scored on a small stage first and
goes on to a larger stage only past a threshold, so weak children stay cheap.

    stages = stages_for(config.benchmark, benchmark)
    stage = next_stage(stages, scores)     # scores: {stage index: Score(passed, total)}
    ...evaluate stage.task_ids, record each Evaluation with stage=stage.index...

Scores are always passed/total per stage, never a bare ratio; a later stage holds only
tasks not in an earlier one.
"""

from __future__ import annotations

from dataclasses import dataclass

from dgm.benchmarks.task import TaskSource
from dgm.config import BenchmarkConfig
from dgm.store.records import Evaluation, Score


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


def stage_scores(evaluations: list[Evaluation]) -> dict[int, Score]:
    """passed/total per stage of one node's evaluations."""
    counts: dict[int, list[int]] = {}
    for ev in evaluations:
        pair = counts.setdefault(ev.stage, [0, 0])
        pair[0] += ev.resolved
        pair[1] += 1
    return {stage: Score(*pair) for stage, pair in sorted(counts.items())}


def next_stage(stages: list[Stage], scores: dict[int, Score]) -> Stage | None:
    """The next stage to evaluate, or None when done (all stages, or a gate not passed).

    A stage is complete when its score covers all its tasks. An incomplete stage is
    returned again (e.g. after a crash), and the caller evaluates its missing tasks.
    """
    previous: Stage | None = None
    for stage in stages:
        score = scores.get(stage.index, Score(0, 0))
        if score.total < len(stage.task_ids):
            if previous is not None and stage.threshold is not None:
                gate = scores.get(previous.index, Score(0, 0))
                if gate.rate < stage.threshold:
                    return None
            return stage
        previous = stage
    return None
