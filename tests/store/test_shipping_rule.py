"""The one shipping rule (`dgm.scoring.ship_choice`) and its corner cases, asked of every
caller: the store (`dgm status`, `dgm export`, the loop's summary), the report's lineage,
the strategies' final choice (simulator, adaptive's racing) and the confirmation stage."""

from __future__ import annotations

import numpy as np
import pytest

from dgm.config import StrategyConfig
from dgm.loop.confirmation import ConfirmStrategy
from dgm.report import lineage
from dgm.scoring import parent_prior, ship_choice, ship_order
from dgm.store import Evaluation, Run, best_node
from dgm.store.best import BestRule, Candidate, pick_best
from dgm.strategies import FinalRule, SearchState, TaskPlan, make_strategy
from tests.store.conftest import value_diff

TASKS = tuple(f"t{i:02d}" for i in range(12))


def _state(counts: dict[int, tuple[int, int]]) -> SearchState:
    """Node 0 the root, the others its children, each with (solved, total) results."""
    nodes = [(0, None)] + [(n, 0) for n in counts if n != 0]
    history = [(n, TASKS[i], i < s) for n, (s, t) in counts.items() for i in range(t)]
    return SearchState.replay(TaskPlan(TASKS), nodes, history)


def _run(run: Run, counts: dict[int, tuple[int, int]]) -> dict[int, int]:
    """The same counts in a store: {label: node id}."""
    ids = {0: 0}
    for label in sorted(counts):
        if label:
            ids[label] = run.add_node(0, diff=value_diff(1, label + 1), origin=str(label)).id
    for label, (solved, total) in counts.items():
        for i in range(total):
            run.record_evaluation(Evaluation(node_id=ids[label], task_id=TASKS[i],
                                             benchmark="b", resolved=i < solved))  # fmt: skip
    return ids


def every_answer(counts: dict[int, tuple[int, int]], run: Run) -> set[object]:
    """What each caller ships for these counts (the defaults: min_evals 3, quantile 0.1,
    4 pseudo-results at the parent's posterior mean; every node a child of node 0)."""
    state = _state(counts)
    candidates = [Candidate(n, "active", s, t, parent=None if n == 0 else 0)
                  for n, (s, t) in counts.items()]  # fmt: skip
    confirm = ConfirmStrategy(list(counts), FinalRule())
    ids = _run(run, counts)
    labels = {v: k for k, v in ids.items()}
    in_store = best_node(run)
    in_report = lineage.best_node(lineage.build_lineage(run))
    return {
        FinalRule().choose(state),
        make_strategy(StrategyConfig(name="adaptive")).final_choice(state),
        pick_best(candidates),
        confirm.final_choice(state),
        None if in_store is None else labels[in_store],
        None if in_report is None else labels[in_report],
    }


def test_an_unmeasured_node_never_ships_when_nobody_has_enough(run: Run) -> None:
    # root 1/1, A 0/2, B 2/2; min_evals 3 is capped at the most anyone has (2): B.
    assert every_answer({0: (1, 1), 1: (0, 2), 2: (2, 2)}, run) == {2}


def test_a_lucky_child_of_a_weak_parent_does_not_outrank_a_measured_sibling(run: Run) -> None:
    # root 1/10; A 3/3 (flat: Beta(4, 1), 0.1-quantile 0.56) and B 6/10 (0.40). With 4
    # pseudo-results at the root's mean 2/12, A's bound falls below B's: B ships.
    counts = {0: (1, 10), 1: (3, 3), 2: (6, 10)}
    assert every_answer(counts, run) == {2}
    assert ship_choice([1, 3, 6], [10, 3, 10], 0.1, 3) == 1  # the flat rule would ship A


def test_a_grandchild_takes_its_own_parents_prior_in_the_store_and_the_search_state() -> None:
    # Root 1/8; A 8/8 its child; G 1/3 A's child; B 5/8 the root's child. A ships; G's
    # prior is A's mean (0.9), not the root's (0.2), which puts G above B.
    counts = {0: (1, 8), 1: (8, 8), 2: (1, 3), 3: (5, 8)}
    parents = {0: None, 1: 0, 2: 1, 3: 0}
    state = SearchState.replay(
        TaskPlan(TASKS), list(parents.items()),
        [(n, TASKS[i], i < s) for n, (s, t) in counts.items() for i in range(t)],
    )  # fmt: skip
    candidates = [Candidate(n, "active", s, t, parent=parents[n]) for n, (s, t) in counts.items()]
    assert pick_best(candidates) == FinalRule().choose(state) == 1
    assert FinalRule().ranked(state) == [1, 2, 3, 0]
    assert FinalRule().ranked(_state(counts))[:3] == [1, 3, 2]  # all the root's children
    # A banned parent still lends its results; one caught tampering lends none.
    assert pick_best(candidates, BestRule(banned=frozenset({1}))) == 2
    forged = [Candidate(1, "active", 8, 8, 1, 0) if c.node == 1 else c for c in candidates]
    assert pick_best(forged) == 3


def test_a_node_with_no_evaluation_never_ships(run: Run) -> None:
    assert every_answer({0: (3, 3), 1: (0, 0), 2: (1, 1)}, run) == {0}


def test_ties_go_to_more_evaluations_then_the_older_node(run: Run) -> None:
    assert every_answer({0: (1, 4), 1: (6, 12), 2: (6, 12)}, run) == {1}


def test_nothing_evaluated_ships_nothing_everywhere(run: Run) -> None:
    assert every_answer({0: (0, 0), 1: (0, 0)}, run) == {None}
    assert ship_choice([], [], 0.1, 10) is None and ship_order([0, 0], [0, 0], 0.1, 10) == []


@pytest.mark.parametrize("seed", range(5))
def test_the_pruned_choice_is_the_head_of_the_full_order(seed: int) -> None:
    rng = np.random.default_rng(seed)
    totals = rng.integers(0, 30, 200)
    passed = rng.binomial(totals, rng.random(200))
    parents = np.concatenate(([-1], rng.integers(0, np.arange(1, 200))))
    prior = parent_prior(passed, totals, parents, 4.0)
    for q, k in ((0.1, 10), (0.3, 5), (0.05, 40), (0.1, 3)):
        assert ship_choice(passed, totals, q, k) == ship_order(passed, totals, q, k)[0]
        assert (
            ship_choice(passed, totals, q, k, prior) == ship_order(passed, totals, q, k, prior)[0]
        )
