"""Our hgm against the reference's formulas (metauto-ai/HGM `hgm.py`), transcribed here as
an independent implementation, on random event histories: same decisions every step,
the start-up expansions of the root, and a Wait where the chosen action is impossible."""

from __future__ import annotations

import numpy as np
import pytest

from dgm.strategies import Evaluate, Expand, HGMStrategy, SearchState, TaskPlan, Wait

TASKS = tuple(f"t{i}" for i in range(6))


class ReferenceHGM:
    """The reference's bookkeeping: `hgm_utils.nodes` (valid children only),
    `n_task_evals` (incremented in `eval_agent` *before* the harness runs),
    `n_pending_expands`, `submitted_ids` and each node's `utility_measures`."""

    def __init__(self, alpha: float, n_tasks: int = len(TASKS)) -> None:
        self.alpha = alpha
        self.n_tasks = n_tasks
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

    def decide(self) -> str:
        """sample(): the kind of action, or "wait" when it has no candidate (the worker
        returns without doing anything and samples again later)."""
        if self.should_expand():
            return "expand" if self.expansion_candidates() else "wait"
        return "evaluate" if self.evaluation_candidates() else "wait"

    def startup_expansions(self, workers: int) -> int:
        """main(): `range(len(nodes) - 1, min(5, int(max_workers**alpha)))` expansions of
        the root, all finished before the first sample()."""
        return len(range(len(self.nodes) - 1, min(5, int(workers**self.alpha))))

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
            if len(self.submitted[node]) < self.n_tasks
        }


def ours_expansion(strategy: HGMStrategy, state: SearchState) -> dict[int, tuple[float, float]]:
    idx, a, b = strategy.expansion_posterior(state)
    return {state.node_id(int(i)): (float(x), float(y)) for i, x, y in zip(idx, a, b, strict=True)}


def ours_evaluation(state: SearchState) -> dict[int, tuple[float, float]]:
    out = {}
    solved, failed = state.own_record()
    for i in np.flatnonzero(state.awaiting_evaluation_column()):
        out[state.node_id(int(i))] = (1.0 + int(solved[i]), 1.0 + int(failed[i]))
    return out


@pytest.mark.parametrize("seed", range(20))
def test_same_decisions_as_the_reference_formulas(seed):
    rng = np.random.default_rng(seed)
    alpha = float(rng.choice([0.4, 0.6, 0.8]))
    ref = ReferenceHGM(alpha)
    state = SearchState(TaskPlan(TASKS))  # hgm ignores barren parents unless `skip_barren`
    ours = HGMStrategy(np.random.default_rng(0), alpha=alpha, startup=False)
    running_evals: list[tuple[int, str]] = []
    running_expands: list[int] = []
    decisions = 0
    for _ in range(300):
        assert ours.wants_expansion(state) == ref.should_expand()
        assert ours_expansion(ours, state) == ref.expansion_candidates()
        assert ours_evaluation(state) == ref.evaluation_candidates()
        assert_same_kind(ours.next_action(state), ref.decide(), ref, state)
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


def assert_same_kind(action, kind: str, ref: ReferenceHGM, state: SearchState) -> None:
    if kind == "expand":
        assert isinstance(action, Expand) and action.parent in ref.expansion_candidates()
    elif kind == "evaluate":
        assert isinstance(action, Evaluate) and action.node in ref.evaluation_candidates()
        assert action.task not in ref.submitted[action.node]
    elif state.in_flight:
        assert action == Wait()
    else:  # the one difference: with nothing in flight a Wait would never end (hgm.py)
        assert not isinstance(action, Wait)


@pytest.mark.parametrize("workers", [1, 2, 3, 8, 20, 64])
@pytest.mark.parametrize("alpha", [0.4, 0.6, 0.8])
@pytest.mark.parametrize("children", [0, 2])
def test_start_up_expands_the_root_as_often_as_the_reference_then_waits(workers, alpha, children):
    ref = ReferenceHGM(alpha)
    state = SearchState(TaskPlan(TASKS))
    for child in range(1, children + 1):  # a resumed run already has some children
        state.add_node(child, 0)
        ref.nodes[child] = 0
    expected = ref.startup_expansions(workers)
    ours = HGMStrategy(np.random.default_rng(0), alpha=alpha, workers=workers)
    for _ in range(expected):
        assert ours.next_action(state) == Expand(0)
        state.expansion_started(0)
    if expected:
        assert ours.next_action(state) == Wait()  # not one sample() before all finish
        for k in range(expected - 1):
            state.expansion_finished(0, None if k % 2 else 100 + k)
            assert ours.next_action(state) == Wait()
        state.expansion_finished(0, None)
    action = ours.next_action(state)  # the search proper: N = 0, so evaluate (or expand)
    assert action != Wait() and not (action == Expand(0) and state.size - 1 > 0)


def test_an_impossible_action_waits_as_the_reference_does():
    ref = ReferenceHGM(0.6, n_tasks=1)
    state = SearchState(TaskPlan(("a",)))
    ours = HGMStrategy(np.random.default_rng(0), startup=False)
    # Evaluate wins (1^0.6 < 1 child + 1 pending) but no node has a task left.
    state.evaluation_started(0, "a")
    ref.start_eval(0, "a")
    state.evaluation_finished(0, "a", True)
    ref.finish_eval(0, True)
    state.add_node(1, 0)
    ref.nodes[1], ref.utility[1], ref.submitted[1] = 0, [], set()
    state.evaluation_started(1, "a")
    ref.start_eval(1, "a")
    state.expansion_started(0)
    ref.start_expand()
    assert not ours.wants_expansion(state) and not ref.should_expand()
    assert ref.decide() == "wait" and ours.next_action(state) == Wait()
    other = HGMStrategy(np.random.default_rng(0), startup=False, take_other_action=True)
    assert other.next_action(state) == Expand(0)  # the option: the other kind at once
    # Expand wins (2^0.6 >= 0) but no node has an own success: Wait too.
    ref = ReferenceHGM(0.6, n_tasks=2)
    state = SearchState(TaskPlan(("a", "b")))
    for task in ("a", "b"):
        state.evaluation_started(0, task)
        ref.start_eval(0, task)
    state.evaluation_finished(0, "a", False)
    ref.finish_eval(0, False)  # "b" still running
    assert ours.wants_expansion(state) and ref.should_expand()
    assert ref.decide() == "wait" and ours.next_action(state) == Wait()
    assert other.next_action(state) == Wait()  # nothing to evaluate either
