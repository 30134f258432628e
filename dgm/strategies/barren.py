"""Barren parents: which codes stopped giving the diagnosis anything new to work from.

A parent whose last `after` expansions made nothing new (no child, or a child whose code
the tree already has) is barren until its code fails a task it had not failed before: the
diagnosis works from failures, so only a new one gives it new material. Expansions in
flight count once a parent has failed to make news, so parallel workers do not overshoot.
Nodes with the same code (the same git tree) share one count: they are one agent.

A person's marks (loop/steering.py) override it: a pinned node is always a parent
candidate, however barren; a banned one never is, for every strategy.
"""

from __future__ import annotations

import numpy as np


class BarrenTracker:
    """Per code group: the streak of expansions without news and the tasks it failed."""

    def __init__(self, after: int) -> None:
        self.after = after
        self.pinned: set[int] = set()  # node ids
        self.banned: set[int] = set()
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

    def pin(self, node: int) -> None:
        self.pinned.add(node)
        self.banned.discard(node)

    def ban(self, node: int) -> None:
        self.banned.add(node)
        self.pinned.discard(node)

    def may_expand(
        self, groups: np.ndarray, pending: np.ndarray, index: dict[int, int], barren: bool
    ) -> np.ndarray:
        """Per node (its group, its expansions in flight): may it be expanded? `barren`
        False: the barren filter is off (reference hgm); the marks always apply."""
        if barren:
            streaks = np.asarray(self._streak, dtype=np.int64)[groups]
            running = np.bincount(groups, weights=pending)[groups]
            column = (streaks == 0) | (streaks + running < self.after)
        else:
            column = np.ones(len(groups), dtype=bool)
        column[[index[n] for n in self.pinned if n in index]] = True
        column[[index[n] for n in self.banned if n in index]] = False
        return column
