"""Greedy baseline: always expand the archive node with the best own score.

Asynchronous (no generations): every child is evaluated on its whole open stage first,
then each free worker expands the current best. It is the strategy the
metaproductivity-performance mismatch should hurt most.
"""

from __future__ import annotations

from dgm.strategies.actions import Action, Expand
from dgm.strategies.base import (
    Strategy,
    archive_mask,
    best_by_score,
    first_unevaluated,
    wait_or_stop,
)
from dgm.strategies.state import SearchState


class GreedyStrategy(Strategy):
    name = "greedy"

    def next_action(self, state: SearchState) -> Action:
        evaluation = first_unevaluated(state)
        if evaluation is not None:
            return evaluation
        candidates = archive_mask(state) & state.expandable_column()
        if not candidates.any():
            return wait_or_stop(state, "no evaluated node to expand")
        return Expand(best_by_score(state, candidates))
