"""The Darwin Gödel Machine's selection: generations of k children from an archive.

Faithful to jennyzzt/dgm `DGM_outer.py` (`choose_selfimproves`, `update_archive`), with
its bugs fixed:
- `best` sorted the archive ascending and took the *lowest* scores; here it takes the
  highest (ties: more evaluations, then the older node).
- `latest` (the `no_darwin` baseline) made one child per generation whatever `k` was;
  here it makes `k` children of the latest archive node.

A generation: choose `k` parents at once (with replacement, as `random.choices` did),
expand each, evaluate each child on stage 1 and, past the threshold, stage 2. The next
generation starts only when every job of this one has finished: that barrier is this
strategy answering Wait. Every valid child that completes its evaluation joins the
archive (`keep_all`); failed expansions never become nodes.

On resume the planned-but-unstarted parents of the interrupted generation are forgotten:
the jobs in flight finish, then a new generation starts.
"""

from __future__ import annotations

from typing import Literal

import numpy as np

from dgm.strategies.actions import WAIT, Action, Expand, Stop
from dgm.strategies.base import Strategy, archive_mask, first_unevaluated, own_scores
from dgm.strategies.state import NodeId, SearchState

ParentSelection = Literal["score_child_prop", "score_prop", "random", "best", "latest"]


def sigmoid_score(scores: np.ndarray) -> np.ndarray:
    """DGM's squashing of a solve rate: 1 / (1 + exp(-10 (score - 0.5)))."""
    return 1.0 / (1.0 + np.exp(-10.0 * (scores - 0.5)))


def parent_probabilities(
    scores: np.ndarray, child_counts: np.ndarray, method: ParentSelection
) -> np.ndarray:
    """Probability of each archive node being drawn as a parent (sampling methods only)."""
    if method == "score_child_prop":
        weights = sigmoid_score(scores) / (1.0 + child_counts)
    elif method == "score_prop":
        weights = sigmoid_score(scores)
    elif method == "random":
        weights = np.ones(len(scores))
    else:
        raise ValueError(f"{method} is not a sampling method")
    return weights / weights.sum()


class DGMStrategy(Strategy):
    name = "dgm"

    def __init__(
        self,
        rng: np.random.Generator,
        children_per_generation: int = 2,
        parent_selection: ParentSelection = "score_child_prop",
    ) -> None:
        super().__init__(rng)
        self.k = children_per_generation
        self.parent_selection = parent_selection
        self.generation = 0  # 0 = evaluating the seed
        self._planned: list[NodeId] = []  # parents of this generation not yet expanded

    def next_action(self, state: SearchState) -> Action:
        evaluation = first_unevaluated(state)
        if evaluation is not None:
            return evaluation
        if self._planned:
            return Expand(self._planned.pop(0))
        if state.in_flight:
            return WAIT  # the generation barrier
        parents = self.choose_parents(state)
        if not parents:
            return Stop("no node in the archive can be a parent (none left, or all barren)")
        self.generation += 1
        self._planned = parents[1:]
        return Expand(parents[0])

    def choose_parents(self, state: SearchState) -> list[NodeId]:
        """The `k` parents of the next generation, drawn from the archive."""
        idx = np.flatnonzero(archive_mask(state) & state.expandable_column())
        if len(idx) == 0:
            return []
        if self.parent_selection == "best":
            chosen = self._best(state, idx)
        elif self.parent_selection == "latest":
            chosen = [int(idx[-1])] * self.k
        else:
            probs = parent_probabilities(
                own_scores(state)[idx], state.children_column()[idx], self.parent_selection
            )
            chosen = [int(i) for i in self.rng.choice(idx, size=self.k, p=probs)]
        return [state.node_id(i) for i in chosen]

    def _best(self, state: SearchState, idx: np.ndarray) -> list[int]:
        scores = own_scores(state)[idx]
        evals = state.evals_column()[idx]
        top = [int(i) for i in idx[np.lexsort((idx, -evals, -scores))][: self.k]]
        # Fewer archive nodes than k: fill up with random picks among them.
        extra = self.rng.choice(top, size=self.k - len(top)) if len(top) < self.k else []
        return top + [int(i) for i in extra]
