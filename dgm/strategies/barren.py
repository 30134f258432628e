"""Barren parents: which codes stopped giving the diagnosis anything new to work from.

A parent whose last `after` expansions made nothing new (no child, or a child whose code
the tree already has) is barren until its code fails a task it had not failed before: the
diagnosis works from failures, so only a new one gives it new material. Expansions in
flight count once a parent has failed to make news, so parallel workers do not overshoot.
Nodes with the same code (the same git tree) share one count: they are one agent.
"""

from __future__ import annotations

import numpy as np


class BarrenTracker:
    """Per code group: the streak of expansions without news and the tasks it failed."""

    def __init__(self, after: int) -> None:
        self.after = after
        self._streak: list[int] = []
        self._failed: list[set[str]] = []
        self._groups: dict[str, int] = {}

    def group_of(self, code: str | None) -> tuple[int, bool]:
        """(the code's group, whether the code is new); None: a code unlike any other."""
        group = self._groups.get(code) if code is not None else None
        if group is not None:
            return group, False
        group = len(self._streak)
        self._streak.append(0)
        self._failed.append(set())
        if code is not None:
            self._groups[code] = group
        return group, True

    def streak(self, group: int) -> int:
        return self._streak[group]

    def set_streak(self, group: int, count: int) -> None:
        self._streak[group] = count

    def expansion_made(self, group: int, news: bool) -> None:
        self._streak[group] = 0 if news else self._streak[group] + 1

    def task_failed(self, group: int, task: str) -> None:
        if task not in self._failed[group]:  # new material for the diagnosis
            self._failed[group].add(task)
            self._streak[group] = 0

    def not_barren(self, groups: np.ndarray, pending: np.ndarray) -> np.ndarray:
        """Per node (its group, its expansions in flight): may it be expanded?"""
        streaks = np.asarray(self._streak, dtype=np.int64)[groups]
        running = np.bincount(groups, weights=pending)[groups]
        return (streaks == 0) | (streaks + running < self.after)
