"""What a run ships: the one shipping rule (`dgm.scoring.ship_choice`) over the search state.

A node with results (s solved, f failed) has the posterior Beta(1 + s + k m, 1 + f +
k (1 - m)) on its true rate: k = `prior_strength` pseudo-results at m, its parent's
posterior mean (the root: none). Ranking by the posterior *mean* rewards luck on small
samples (2/5 has mean 0.43, 20/50 has 0.40); ranking by a low quantile (default 0.1) asks
"how good is it at least, with 90% credibility", which prefers the well-measured 20/50
over 2/5; the parent prior keeps a lucky 3/3 child of a 0.3 parent from outranking a
measured 0.5 agent, so `min_evals` can be 3. Nodes with fewer than `min_evals` results
(capped at the most any node has) never ship; an unevaluated node never ships; with no
evaluation at all nothing ships (None). The store's best node (dgm/store/best.py) calls
the same function.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dgm.scoring import (
    Prior,
    beta_quantile,
    lower_bound,
    parent_prior,
    posterior_ab,
    ship_choice,
    ship_order,
)
from dgm.strategies.state import NodeId, SearchState

__all__ = ["FinalRule", "beta_quantile", "lower_bound"]  # the numbers live in dgm/scoring.py

PRIOR_STRENGTH = 4.0
"""The default `prior_strength` (config: `[strategy.final] prior_strength`)."""


@dataclass(frozen=True)
class FinalRule:
    quantile: float = 0.1
    min_evals: int = 3
    prior_strength: float = PRIOR_STRENGTH

    def prior(self, state: SearchState) -> Prior | None:
        """Each node's pseudo-results from its parent (None: the flat rule)."""
        if not self.prior_strength:
            return None
        solved, failed = state.own_record()
        return parent_prior(solved, solved + failed, state.parent_column(), self.prior_strength)

    def posterior(self, state: SearchState) -> tuple[np.ndarray, np.ndarray]:
        """(a, b) of every node's posterior Beta(a, b), insertion order."""
        solved, failed = state.own_record()
        return posterior_ab(solved, solved + failed, self.prior(state))

    def ranked(self, state: SearchState, k: int | None = None) -> list[NodeId]:
        """Node ids that may ship, best first (ties: more evidence, older)."""
        solved, failed = state.own_record()
        order = ship_order(
            solved, solved + failed, self.quantile, self.min_evals, self.prior(state)
        )
        chosen = [state.node_id(i) for i in order]
        return chosen if k is None else chosen[:k]

    def choose(self, state: SearchState) -> NodeId | None:
        """What ships now: `ranked(state, 1)`'s node, or None when nothing is evaluated."""
        solved, failed = state.own_record()
        best = ship_choice(
            solved, solved + failed, self.quantile, self.min_evals, self.prior(state)
        )
        return None if best is None else state.node_id(best)
