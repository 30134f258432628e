"""The Huxley-Gödel Machine: asynchronous, clade-guided expansion (metauto-ai/HGM).

Faithful to the reference `hgm.py` by default; every deviation is a named option.
One action per free worker:
- Expand when N^alpha >= (nodes - 1) + pending expansions, where N counts every task
  evaluation *started* (the reference adds to `n_task_evals` when `eval_agent` starts,
  so running ones count) and nodes are valid children only: the reference adds a node
  only when the child is not "failed" and counts failed expansions nowhere. Options:
  `count_failed_expansions` (adds them on the right; our old default) and
  `count_pending_evals = false` (N = finished evaluations only).
- Expansion: Thompson sampling over nodes with at least one own success, each drawing from
  Beta(tau (1 + clade successes), tau (1 + clade failures)). The clade pools the node's own
  results and all its descendants'. tau = 1 + cooldown * evals sharpens the draw as
  evidence accumulates (cooldown 0, the reference's default `cool_down: false`).
- Evaluation: Thompson sampling over nodes with unevaluated tasks, each drawing from its own
  Beta(1 + successes, 1 + failures); the task uniformly among them (the reference's
  default `eval_random_level: 1.0`). No stage gate: every node may be evaluated on every
  task (the reference has none); `staged = true` keeps the benchmark's stage-2 gate.
  `full_evaluation = true` (an ablation) evaluates each child on all its open tasks
  first, oldest first, and expands otherwise: DGM's schedule with hgm's parent choice.
- Where ours must differ: the reference evaluates the seed on every task before the
  search, outside the count; here the seed is evaluated inside the run like any node, so
  at the start (no node with a success) the rule's other kind of action is taken rather
  than idling a worker. The shipped agent follows the run's final-choice rule (final.py).

Reference bugs fixed: `Node.get_decendant_evals` in `tree.py` extended the list returned
by `get_pseudo_decendant_evals`, which *is* the node's own `utility_measures`, so every
clade query appended descendants' results to the node's own record; and it iterated
`get_sub_tree()[:-1]`, which counts the node itself twice and drops its last descendant.
Here own and clade counts are separate columns, and a result is added once to the node and
once to each ancestor.
"""

from __future__ import annotations

import numpy as np

from dgm.strategies.actions import Action, Evaluate, Expand
from dgm.strategies.base import Strategy, first_unevaluated, wait_or_stop
from dgm.strategies.final import FinalRule
from dgm.strategies.state import SearchState


class HGMStrategy(Strategy):
    name = "hgm"

    def __init__(
        self,
        rng: np.random.Generator,
        alpha: float = 0.6,
        cooldown: float = 0.0,
        count_failed_expansions: bool = False,
        count_pending_evals: bool = True,
        full_evaluation: bool = False,
        final: FinalRule | None = None,
    ) -> None:
        super().__init__(rng, final)
        self.full_evaluation = full_evaluation
        self.alpha = alpha
        self.cooldown = cooldown
        self.count_failed_expansions = count_failed_expansions
        self.count_pending_evals = count_pending_evals

    def wants_expansion(self, state: SearchState) -> bool:
        evals = state.total_evals + (state.total_pending_evals if self.count_pending_evals else 0)
        expansions = (state.size - 1) + state.total_pending_expansions
        if self.count_failed_expansions:
            expansions += state.total_failed_expansions
        return evals**self.alpha >= expansions

    def next_action(self, state: SearchState) -> Action:
        if self.full_evaluation:  # ablation: DGM's schedule with hgm's parent choice
            action = first_unevaluated(state) or self.choose_expansion(state)
            return action or wait_or_stop(state, "no node can be expanded or evaluated")
        if self.wants_expansion(state):
            action = self.choose_expansion(state) or self.choose_evaluation(state)
        else:
            action = self.choose_evaluation(state) or self.choose_expansion(state)
        return action or wait_or_stop(state, "no node can be expanded or evaluated")

    def expansion_posterior(self, state: SearchState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(candidate indices, Beta a, Beta b) for the expansion draw."""
        n = state.size
        idx = np.flatnonzero((state.own_successes[:n] > 0) & state.expandable_column())
        tau = 1.0 + self.cooldown * state.total_evals
        a = tau * (1.0 + state.clade_successes[idx])
        b = tau * (1.0 + state.clade_failures[idx])
        return idx, a, b

    def choose_expansion(self, state: SearchState) -> Expand | None:
        idx, a, b = self.expansion_posterior(state)
        if len(idx) == 0:
            return None
        winner = int(idx[np.argmax(self.rng.beta(a, b))])
        return Expand(state.node_id(winner))

    def choose_evaluation(self, state: SearchState) -> Evaluate | None:
        n = state.size
        idx = np.flatnonzero(state.todo_count[:n] > 0)
        if len(idx) == 0:
            return None
        draws = self.rng.beta(1.0 + state.own_successes[idx], 1.0 + state.own_failures[idx])
        node = state.node_id(int(idx[np.argmax(draws)]))
        tasks = state.unevaluated_tasks(node)
        return Evaluate(node, tasks[int(self.rng.integers(len(tasks)))])
