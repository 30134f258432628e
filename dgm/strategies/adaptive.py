"""Our policy, designed from the simulator's ablation of hgm (see dgm/simulate/README.md).

The ablation found that hgm's lead over dgm comes mostly from its evaluation *schedule*
(one task at a time; a node earns more evaluations only by being drawn; children made at
the rate N^alpha), much less from clade pooling. This policy keeps that schedule and changes four
things, each measured on its own in the ablation (variants `adaptive-*`):

- Expand when N^alpha >= (nodes - 1) + pending expansions (N = evaluations started), with
  alpha = 0.75 instead of 0.6: more, cheaper looks at children.
- Parent: Thompson sampling on Beta(1 + s, 1 + f) over nodes with an own success, where
  s = own + clade_weight * (clade - own) (likewise f): by default 0.3 of the clade's
  evidence beyond the node's own, instead of hgm's all of it. (`parent_rule = "mean"`:
  the best posterior mean instead of a draw; an ablation.)
- Evaluation: Thompson sampling on each node's own posterior over nodes with open tasks,
  as hgm, except that a node whose posterior mean beats the node that would ship now but
  has fewer results than shipping needs goes first (`fast_track`): making a good agent
  is cheap under this schedule, recognising it is what costs.
- The task: the node's open task whose pooled solve rate over all nodes is nearest 0.5
  (`task_order = "informative"`): tasks every agent solves, or none does, tell agents
  apart least. No stage gate.
- Ships by the run's final-choice rule (lower credible bound, final.py).
"""

from __future__ import annotations

import numpy as np

from dgm.strategies.actions import Action, Evaluate, Expand
from dgm.strategies.base import wait_or_stop
from dgm.strategies.hgm import HGMStrategy
from dgm.strategies.state import SearchState


class AdaptiveStrategy(HGMStrategy):
    name = "adaptive"

    def __init__(
        self,
        rng: np.random.Generator,
        alpha: float = 0.6,
        clade_weight: float = 0.0,
        task_order: str = "random",
        fast_track: bool = False,
        parent_rule: str = "thompson",
    ) -> None:
        super().__init__(rng, alpha=alpha)
        self.parent_rule = parent_rule
        self.fast_track = fast_track
        self.clade_weight = clade_weight
        self.task_order = task_order
        self._task_stats: dict[str, list[int]] = {}

    def choose_evaluation(self, state: SearchState) -> Evaluate | None:
        n = state.size
        idx = np.flatnonzero(state.todo_count[:n] > 0)
        if len(idx) == 0:
            return None
        s, f = state.own_successes[idx], state.own_failures[idx]
        draws = self.rng.beta(1.0 + s, 1.0 + f)
        if self.fast_track:
            # A node that looks better than what would ship now, but has too few results
            # to ship, is evaluated first: the lag between making a good agent and
            # shipping it is mostly this wait.
            best = state.index(self.final.choose(state))
            bs, bf = state.own_successes[best], state.own_failures[best]
            promising = ((1.0 + s) / (2.0 + s + f) > (1.0 + bs) / (2.0 + bs + bf)) & (
                s + f < self.final.min_evals
            )
            if promising.any():
                draws = np.where(promising, draws + 1.0, draws)
        node = state.node_id(int(idx[np.argmax(draws)]))
        tasks = state.unevaluated_tasks(node)
        if self.task_order == "fixed":
            return Evaluate(node, tasks[0])
        if self.task_order == "informative":
            stats = state.task_results
            p = np.array([(1.0 + stats[t][0]) / (2.0 + sum(stats[t])) for t in tasks])
            return Evaluate(node, tasks[int(np.argmax(p * (1.0 - p)))])
        return Evaluate(node, tasks[int(self.rng.integers(len(tasks)))])

    def expansion_posterior(self, state: SearchState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        n = state.size
        idx = np.flatnonzero((state.own_successes[:n] > 0) & state.expandable_column())
        w = self.clade_weight
        own_s, own_f = state.own_successes[idx], state.own_failures[idx]
        s = own_s + w * (state.clade_successes[idx] - own_s)
        f = own_f + w * (state.clade_failures[idx] - own_f)
        return idx, 1.0 + s, 1.0 + f

    def choose_expansion(self, state: SearchState) -> Expand | None:
        idx, a, b = self.expansion_posterior(state)
        if len(idx) == 0:
            return None
        scores = a / (a + b) if self.parent_rule == "mean" else self.rng.beta(a, b)
        return Expand(state.node_id(int(idx[np.argmax(scores)])))

    def next_action(self, state: SearchState) -> Action:
        if self.wants_expansion(state):
            action = self.choose_expansion(state) or self.choose_evaluation(state)
        else:
            action = self.choose_evaluation(state) or self.choose_expansion(state)
        return action or wait_or_stop(state, "no node can be expanded or evaluated")
