"""The Huxley-Gödel Machine: asynchronous, clade-guided expansion (metauto-ai/HGM `hgm.py`).

The reference by default; every deviation is an option in `[strategy.hgm]`, off by
default (README "Strategies" names each with its measured effect).
- Start-up: the reference first expands the root `min(5, int(workers**alpha))` times
  (less the children it already has) and waits for all of them before sampling.
- Then, one action per free worker: expand when N^alpha >= (nodes - 1) + pending
  expansions, where N counts every task evaluation *started* (`n_task_evals` grows when
  `eval_agent` starts) and nodes are valid children only (a failed expansion makes no
  node and is counted nowhere); evaluate otherwise.
- Expansion: Thompson sampling over nodes with at least one own success, each drawing from
  Beta(1 + clade successes, 1 + clade failures): the clade is the node's own results and
  every descendant's, each counted once.
- Evaluation: Thompson sampling over nodes with unevaluated tasks, each drawing from its own
  Beta(1 + successes, 1 + failures); the task uniformly among them (`eval_random_level:
  1.0`). No stage gate: every node may be evaluated on every task.
- When the chosen kind of action is impossible (no node to expand, or none with a task
  left), the reference's worker does nothing and samples again later: here, Wait.

Options (deviations): `count_failed_expansions` (failed expansions count as nodes in the
rule), `count_pending_evals = false` (N = finished evaluations only), `staged` (the
benchmark's stage-2 gate), `skip_barren` (the run's barren-parent filter, state.py),
`sharpen` (ours, not the reference's `cool_down`: Beta(tau a, tau b) with tau = 1 +
sharpen * N), `startup_expansions = false`, `take_other_action` (an impossible action
is replaced by the other kind at once) and `full_evaluation` (an ablation: DGM's
schedule with hgm's parent choice).

Where ours must differ: the reference evaluates the seed on every task before the search,
outside N; here the seed is evaluated inside the run. So an impossible action with
nothing in flight (a Wait that would never end, e.g. before the seed has a success)
takes the other kind of action. The shipped agent follows the one shipping rule (final.py).
"""

from __future__ import annotations

import numpy as np

from dgm.strategies.actions import WAIT, Action, Evaluate, Expand
from dgm.strategies.base import Strategy, first_unevaluated, wait_or_stop
from dgm.strategies.final import FinalRule
from dgm.strategies.state import SearchState

STARTUP_CAP = 5
"""The reference's cap on start-up expansions of the root."""


def startup_expansions(workers: int, alpha: float) -> int:
    """How many times the reference expands the root before it samples anything."""
    return min(STARTUP_CAP, int(workers**alpha))


class HGMStrategy(Strategy):
    name = "hgm"

    def __init__(
        self,
        rng: np.random.Generator,
        alpha: float = 0.6,
        sharpen: float = 0.0,
        count_failed_expansions: bool = False,
        count_pending_evals: bool = True,
        full_evaluation: bool = False,
        skip_barren: bool = False,
        startup: bool = True,
        take_other_action: bool = False,
        workers: int = 1,
        final: FinalRule | None = None,
    ) -> None:
        super().__init__(rng, final)
        self.full_evaluation = full_evaluation
        self.alpha = alpha
        self.sharpen = sharpen
        self.count_failed_expansions = count_failed_expansions
        self.count_pending_evals = count_pending_evals
        self.skip_barren = skip_barren
        self.take_other_action = take_other_action
        self.startup = startup
        self.workers = workers
        self._startup_left: int | None = None if startup else 0

    def wants_expansion(self, state: SearchState) -> bool:
        evals = state.total_evals + (state.total_pending_evals if self.count_pending_evals else 0)
        expansions = (state.size - 1) + state.total_pending_expansions
        if self.count_failed_expansions:
            expansions += state.total_failed_expansions
        return evals**self.alpha >= expansions

    def startup_action(self, state: SearchState) -> Action | None:
        """Expand(root) until the start-up expansions are started, then Wait until they
        have all finished (the reference's first executor); None once done."""
        if self._startup_left is None:  # first call: the reference's range(nodes - 1, k)
            self._startup_left = max(
                0, startup_expansions(self.workers, self.alpha) - (state.size - 1)
            )
            self._startup_waiting = self._startup_left > 0
        if self._startup_left > 0:
            self._startup_left -= 1
            return Expand(state.node_id(0))
        if self._startup_waiting and state.total_pending_expansions:
            return WAIT
        self._startup_waiting = False
        return None

    def next_action(self, state: SearchState) -> Action:
        startup = self.startup_action(state) if self.startup else None
        if startup is not None:
            return startup
        if self.full_evaluation:  # ablation: DGM's schedule with hgm's parent choice
            action = first_unevaluated(state) or self.choose_expansion(state)
            return action or wait_or_stop(state, "no node can be expanded or evaluated")
        if self.wants_expansion(state):
            chosen, other = self.choose_expansion, self.choose_evaluation
        else:
            chosen, other = self.choose_evaluation, self.choose_expansion
        action = chosen(state)
        if action is None and (self.take_other_action or not state.in_flight):
            action = other(state)
        return action or wait_or_stop(state, "no node can be expanded or evaluated")

    def parent_candidates(self, state: SearchState) -> np.ndarray:
        """Indices of nodes that may be expanded: an own success (and, with `skip_barren`,
        not barren)."""
        solved, _ = state.own_record()
        mask = solved > 0
        return np.flatnonzero(mask & state.expandable_column(skip_barren=self.skip_barren))

    def expansion_posterior(self, state: SearchState) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(candidate indices, Beta a, Beta b) for the expansion draw."""
        idx = self.parent_candidates(state)
        clade_s, clade_f = state.clade_record()
        tau = 1.0 + self.sharpen * state.total_evals
        return idx, tau * (1.0 + clade_s[idx]), tau * (1.0 + clade_f[idx])

    def choose_expansion(self, state: SearchState) -> Expand | None:
        idx, a, b = self.expansion_posterior(state)
        if len(idx) == 0:
            return None
        winner = int(idx[np.argmax(self.rng.beta(a, b))])
        return Expand(state.node_id(winner))

    def choose_evaluation(self, state: SearchState) -> Evaluate | None:
        idx = np.flatnonzero(state.awaiting_evaluation_column())
        if len(idx) == 0:
            return None
        solved, failed = state.own_record()
        draws = self.rng.beta(1.0 + solved[idx], 1.0 + failed[idx])
        node = state.node_id(int(idx[np.argmax(draws)]))
        tasks = state.unevaluated_tasks(node)
        return Evaluate(node, tasks[int(self.rng.integers(len(tasks)))])
