"""The one shipping rule (`dgm.scoring.ship_choice`) and its corner cases, asked of every
caller: the store (`dgm status`, `dgm export`, the loop's summary), the report's lineage,
the strategies' final choice (simulator, adaptive's racing) and the confirmation stage."""

from __future__ import annotations

import numpy as np
import pytest

from dgm.config import StrategyConfig
from dgm.loop.confirmation import ConfirmStrategy
from dgm.report import lineage
from dgm.scoring import ship_choice, ship_order
from dgm.store import Evaluation, Run, best_node
from dgm.store.best import Candidate, pick_best
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
    """What each caller ships for these counts (min_evals 10, quantile 0.1)."""
    state = _state(counts)
    candidates = [Candidate(n, "active", s, t) for n, (s, t) in counts.items()]
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
    # root 3/3, A 0/4, B 4/4; min_evals 10 is capped at the most anyone has (4): B.
    assert every_answer({0: (3, 3), 1: (0, 4), 2: (4, 4)}, run) == {2}


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
    for q, k in ((0.1, 10), (0.3, 5), (0.05, 40)):
        assert ship_choice(passed, totals, q, k) == ship_order(passed, totals, q, k)[0]
