"""The Huxley-Gödel Machine: asynchronous, clade-guided expansion (metauto-ai/HGM).

One action per free worker:
- Expand when evals^alpha >= expansions so far, where expansions count every attempt that
  is not in flight as a node, a failed attempt, or a running job: (nodes - 1) + failed +
  pending. (The reference counts failed children too: they are nodes scored zero there.)
- Expansion: Thompson sampling over nodes with at least one own success, each drawing from
  Beta(tau (1 + clade successes), tau (1 + clade failures)). The clade pools the node's own
  results and all its descendants'. tau = 1 + cooldown * evals sharpens the draw as
  evidence accumulates (cooldown 0: plain Thompson sampling).
- Evaluation: Thompson sampling over nodes with unevaluated open tasks, each drawing from
  its own Beta(1 + successes, 1 + failures); the task is drawn uniformly among them.
- When the rule's choice has no candidate (at the start no node has a success yet), the
  other kind of action is taken rather than idling a worker.
- Final agent: highest posterior mean (1 + s) / (2 + s + f) among nodes with at least
  `min_evals_final` evaluations.

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
from dgm.strategies.base import Strategy, wait_or_stop
from dgm.strategies.state import SearchState


class HGMStrategy(Strategy):
    name = "hgm"

    def __init__(
        self,
        rng: np.random.Generator,
        alpha: float = 0.6,
        cooldown: float = 0.0,
        min_evals_final: int = 5,
    ) -> None:
        super().__init__(rng)
        self.alpha = alpha
        self.cooldown = cooldown
        self.min_evals_final = min_evals_final

    def wants_expansion(self, state: SearchState) -> bool:
        expansions = (
            (state.size - 1) + state.total_failed_expansions + state.total_pending_expansions
        )
        return state.total_evals**self.alpha >= expansions

    def next_action(self, state: SearchState) -> Action:
        if self.wants_expansion(state):
            action = self.choose_expansion(state) or self.choose_evaluation(state)
        else:
            action = self.choose_evaluation(state) or self.choose_expansion(state)
        return action or wait_or_stop(state, "no node can be expanded or evaluated")

    def expansion_posterior(self, state: SearchState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(candidate indices, Beta a, Beta b) for the expansion draw."""
        n = state.size
        idx = np.flatnonzero(state.own_successes[:n] > 0)
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

    def final_choice(self, state: SearchState) -> str:
        evals = state.evals_column()
        # Never ask for more evidence than the open tasks can give (small task sets).
        needed = min(self.min_evals_final, len(state.plan.stage1) + len(state.plan.stage2))
        idx = np.flatnonzero(evals >= needed)
        if len(idx) == 0:
            return state.node_id(int(np.argmax(evals)))  # the root before any evidence
        n = state.size
        mean = (1.0 + state.own_successes[:n][idx]) / (2.0 + evals[idx])
        order = np.lexsort((idx, -evals[idx], -mean))
        return state.node_id(int(idx[order[0]]))
