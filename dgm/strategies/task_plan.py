"""The benchmark's task ids, split in stages, as the search sees them."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class TaskPlan:
    """The benchmark's task ids, split in stages."""

    stage1: tuple[str, ...]
    stage2: tuple[str, ...] = ()
    stage2_threshold: float = 0.4

    def __post_init__(self) -> None:
        if not self.stage1:
            raise ValueError("a task plan needs at least one stage-1 task")
        if len(set(self.stage1) | set(self.stage2)) != len(self.stage1) + len(self.stage2):
            raise ValueError("task ids must be unique across both stages")
