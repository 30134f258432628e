"""What a run ships: the one shipping rule (`dgm.scoring.ship_choice`) over the search state.

A node with results (s solved, f failed) has the posterior Beta(1 + s, 1 + f) on its true
rate. Ranking by the posterior *mean* rewards luck on small samples (2/5 has mean 0.43,
20/50 has 0.40); ranking by a low quantile (default 0.1) asks "how good is it at least,
with 90% credibility", which prefers the well-measured 20/50 (0.32) over 2/5 (0.19).
Nodes with fewer than `min_evals` results (capped at the most any node has) never ship;
an unevaluated node never ships; with no evaluation at all nothing ships (None). The
store's best node (dgm/store/best.py) calls the same function.
"""

from __future__ import annotations

from dataclasses import dataclass

from dgm.scoring import beta_quantile, lower_bound, ship_choice, ship_order
from dgm.strategies.state import NodeId, SearchState

__all__ = ["FinalRule", "beta_quantile", "lower_bound"]  # the numbers live in dgm/scoring.py


@dataclass(frozen=True)
class FinalRule:
    quantile: float = 0.1
    min_evals: int = 10

    def ranked(self, state: SearchState, k: int | None = None) -> list[NodeId]:
        """Node ids that may ship, best first (ties: more evidence, older)."""
        solved, failed = state.own_record()
        order = ship_order(solved, solved + failed, self.quantile, self.min_evals)
        chosen = [state.node_id(i) for i in order]
        return chosen if k is None else chosen[:k]

    def choose(self, state: SearchState) -> NodeId | None:
        """What ships now: `ranked(state, 1)`'s node, or None when nothing is evaluated."""
        solved, failed = state.own_record()
        best = ship_choice(solved, solved + failed, self.quantile, self.min_evals)
        return None if best is None else state.node_id(best)
