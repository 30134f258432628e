"""Our hgm against the reference's formulas (metauto-ai/HGM `hgm.py`), transcribed here as
an independent implementation, on random event histories: same decisions every step."""

from __future__ import annotations

import numpy as np
import pytest

from dgm.strategies import HGMStrategy, SearchState, TaskPlan

TASKS = tuple(f"t{i}" for i in range(6))


class ReferenceHGM:
    """The reference's bookkeeping: `hgm_utils.nodes` (valid children only),
    `n_task_evals` (incremented in `eval_agent` *before* the harness runs),
    `n_pending_expands`, `submitted_ids` and each node's `utility_measures`."""

    def __init__(self, alpha: float) -> None:
        self.alpha = alpha
        self.nodes: dict[int, int | None] = {0: None}
        self.utility: dict[int, list[int]] = {0: []}
        self.submitted: dict[int, set[str]] = {0: set()}
        self.n_task_evals = 0
        self.n_pending_expands = 0

    # sample(): `n_task_evals**alpha >= len(nodes) - 1 + n_pending_expands`
    def should_expand(self) -> bool:
        return self.n_task_evals**self.alpha >= len(self.nodes) - 1 + self.n_pending_expands

    def start_expand(self) -> None:
        self.n_pending_expands += 1

    def finish_expand(self, parent: int, child: int | None) -> None:
        self.n_pending_expands -= 1
        if child is not None:  # `if child_commit != "failed"`: only then a Node
            self.nodes[child] = parent
            self.utility[child] = []
            self.submitted[child] = set()

    def start_eval(self, node: int, task: str) -> None:
        self.submitted[node].add(task)
        self.n_task_evals += 1

    def finish_eval(self, node: int, solved: bool) -> None:
        self.utility[node].append(int(solved))

    def descendants(self, node: int) -> list[int]:
        kids = [c for c, p in self.nodes.items() if p == node]
        return kids + [d for k in kids for d in self.descendants(k)]

    def expansion_candidates(self) -> dict[int, tuple[float, float]]:
        """`mean_utility > 0` nodes; TS_sample's alphas/betas on the node's own plus all
        descendants' measures (tree.py's double-count and dropped node are fixed)."""
        out = {}
        for node, measures in self.utility.items():
            if measures and np.mean(measures) > 0:
                pooled = measures + [m for d in self.descendants(node) for m in self.utility[d]]
                out[node] = (1 + sum(pooled), 1 + len(pooled) - sum(pooled))
        return out

    def evaluation_candidates(self) -> dict[int, tuple[float, float]]:
        """`len(submitted_ids[node]) < total_num_tasks`; TS on own utility_measures."""
        return {
            node: (1 + sum(m), 1 + len(m) - sum(m))
            for node, m in self.utility.items()
            if len(self.submitted[node]) < len(TASKS)
        }


def ours_expansion(strategy: HGMStrategy, state: SearchState) -> dict[int, tuple[float, float]]:
    idx, a, b = strategy.expansion_posterior(state)
    return {state.node_id(int(i)): (float(x), float(y)) for i, x, y in zip(idx, a, b, strict=True)}


def ours_evaluation(state: SearchState) -> dict[int, tuple[float, float]]:
    out = {}
    for i in np.flatnonzero(state.todo_count[: state.size] > 0):
        s, f = int(state.own_successes[i]), int(state.own_failures[i])
        out[state.node_id(int(i))] = (1.0 + s, 1.0 + f)
    return out


@pytest.mark.parametrize("seed", range(20))
def test_same_decisions_as_the_reference_formulas(seed):
    rng = np.random.default_rng(seed)
    alpha = float(rng.choice([0.4, 0.6, 0.8]))
    ref = ReferenceHGM(alpha)
    state = SearchState(TaskPlan(TASKS))
    state.barren_after = 10**9  # the reference re-expands barren parents (state.py)
    ours = HGMStrategy(np.random.default_rng(0), alpha=alpha)
    running_evals: list[tuple[int, str]] = []
    running_expands: list[int] = []
    decisions = 0
    for _ in range(300):
        assert ours.wants_expansion(state) == ref.should_expand()
        assert ours_expansion(ours, state) == ref.expansion_candidates()
        assert ours_evaluation(state) == ref.evaluation_candidates()
        decisions += 1
        kind = rng.integers(4)
        if kind == 0:  # start an evaluation of a random node with an open task
            open_nodes = [n for n in state.node_ids if state.unevaluated_tasks(n)]
            if open_nodes:
                node = int(rng.choice(open_nodes))
                task = str(rng.choice(state.unevaluated_tasks(node)))
                state.evaluation_started(node, task)
                ref.start_eval(node, task)
                running_evals.append((node, task))
        elif kind == 1 and running_evals:  # one finishes
            node, task = running_evals.pop(int(rng.integers(len(running_evals))))
            solved = bool(rng.random() < 0.4)
            state.evaluation_finished(node, task, solved)
            ref.finish_eval(node, solved)
        elif kind == 2:  # start an expansion
            parent = int(rng.choice(state.node_ids))
            state.expansion_started(parent)
            ref.start_expand()
            running_expands.append(parent)
        elif running_expands:  # one finishes: a valid child, or a failure (30%)
            parent = running_expands.pop(int(rng.integers(len(running_expands))))
            child = None if rng.random() < 0.3 else state.size + len(running_expands) + 100
            child = None if child in state.node_ids else child
            state.expansion_finished(parent, child)
            ref.finish_expand(parent, child)
    assert decisions == 300
