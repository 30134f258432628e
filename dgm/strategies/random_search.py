"""Random baseline: expand a uniformly random archive node.

Same evaluation policy as greedy (each child on its whole open stage), so the two differ
only in how the parent is picked; ships the best-scoring node.
"""

from __future__ import annotations

import numpy as np

from dgm.strategies.actions import Action, Expand
from dgm.strategies.base import (
    Strategy,
    archive_mask,
    first_unevaluated,
    wait_or_stop,
)
from dgm.strategies.state import SearchState


class RandomStrategy(Strategy):
    name = "random"

    def next_action(self, state: SearchState) -> Action:
        evaluation = first_unevaluated(state)
        if evaluation is not None:
            return evaluation
        idx = np.flatnonzero(archive_mask(state) & state.expandable_column())
        if len(idx) == 0:
            return wait_or_stop(state, "no evaluated node to expand")
        return Expand(state.node_id(int(self.rng.choice(idx))))
