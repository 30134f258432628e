"""What a run ships: the candidate with the best lower credible bound on its solve rate.

A node with results (s solved, f failed) has the posterior Beta(1 + s, 1 + f) on its true
rate. Ranking by the posterior *mean* rewards luck on small samples (2/5 has mean 0.43,
20/50 has 0.40); ranking by a low quantile (default 0.1) asks "how good is it at least,
with 90% credibility", which prefers the well-measured 20/50 (0.32) over 2/5 (0.19).
Nodes with fewer than `min_evals` results (capped at the number of tasks) never ship.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from dgm.scoring import beta_quantile, lower_bound
from dgm.strategies.state import NodeId, SearchState

__all__ = ["FinalRule", "beta_quantile", "lower_bound"]  # the numbers live in dgm/scoring.py


@dataclass(frozen=True)
class FinalRule:
    quantile: float = 0.1
    min_evals: int = 10

    def ranked(self, state: SearchState, k: int | None = None) -> list[NodeId]:
        """Node ids that may ship, best lower bound first (ties: more evidence, older);
        the most-evaluated node alone when none has enough evaluations."""
        evals = state.evals_column()
        n_tasks = len(state.plan.stage1) + len(state.plan.stage2)
        idx = np.flatnonzero(evals >= min(self.min_evals, n_tasks))
        if len(idx) == 0:
            return [state.node_id(int(np.argmax(evals)))]
        s, f = state.own_successes[idx], state.own_failures[idx]
        bounds = np.array(
            [lower_bound(int(a), int(b), self.quantile) for a, b in zip(s, f, strict=True)]
        )
        order = np.lexsort((idx, -evals[idx], -bounds))
        chosen = [state.node_id(int(i)) for i in idx[order]]
        return chosen if k is None else chosen[:k]

    def choose(self, state: SearchState) -> NodeId:
        """`ranked(state, 1)[0]`, computing bounds only for nodes that could win: a bound
        never exceeds the posterior mean, so nodes are visited by mean, best first."""
        evals = state.evals_column()
        n_tasks = len(state.plan.stage1) + len(state.plan.stage2)
        idx = np.flatnonzero(evals >= min(self.min_evals, n_tasks))
        if len(idx) == 0:
            return state.node_id(int(np.argmax(evals)))
        s, f = state.own_successes[idx], state.own_failures[idx]
        means = (1.0 + s) / (2.0 + s + f)
        best: tuple[float, int, int] | None = None
        for k in np.argsort(-means, kind="stable"):
            if best is not None and means[k] < best[0]:
                break
            key = (
                lower_bound(int(s[k]), int(f[k]), self.quantile),
                int(evals[idx[k]]),
                -int(idx[k]),
            )
            best = key if best is None or key > best else best
        assert best is not None
        return state.node_id(-best[2])
