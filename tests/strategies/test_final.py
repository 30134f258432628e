import numpy as np
import pytest

from dgm.config import StrategyConfig
from dgm.scoring import beta_quantile, lower_bound
from dgm.strategies import FinalRule, SearchState, TaskPlan, make_strategy

TASKS = tuple(f"t{i:02d}" for i in range(60))


def record(state: SearchState, node: int, solved: int, total: int) -> None:
    for k, task in enumerate(TASKS[:total]):
        state.record_evaluation(node, task, k < solved)


def lucky_and_steady() -> SearchState:
    state = SearchState(TaskPlan(TASKS))
    state.add_node(1, 0)
    state.add_node(2, 0)
    record(state, 0, 3, 20)
    record(state, 1, 2, 5)  # lucky: posterior mean 0.43
    record(state, 2, 20, 50)  # steady: posterior mean 0.40
    return state


@pytest.mark.parametrize("name", ["hgm", "dgm", "gea", "adaptive", "greedy", "random"])
def test_default_final_choice_prefers_20_of_50_over_2_of_5(name):
    strategy = make_strategy(StrategyConfig(name=name), seed=0)
    assert strategy.final_choice(lucky_and_steady()) == 2


def test_the_quantile_alone_prefers_evidence_and_the_mean_would_not():
    state = lucky_and_steady()
    assert FinalRule(quantile=0.1, min_evals=5, prior_strength=0).choose(state) == 2
    assert FinalRule(quantile=0.5, min_evals=5, prior_strength=0).choose(state) == 1  # ~ old
    # The parent prior alone does it too: the lucky 2/5 is a child of a 3/20 root.
    assert FinalRule(quantile=0.5, min_evals=5).choose(state) == 2
    assert FinalRule(min_evals=51).choose(state) == 2  # nobody qualifies: most evaluated
    assert FinalRule().choose(SearchState(TaskPlan(TASKS))) is None  # nothing evaluated


def test_beta_quantile_matches_known_values():
    assert beta_quantile(1.0, 1.0, 0.25) == pytest.approx(0.25, abs=1e-9)
    assert beta_quantile(2.0, 2.0, 0.5) == pytest.approx(0.5, abs=1e-9)
    # Beta(1, b): quantile = 1 - (1 - q)^(1/b)
    assert beta_quantile(1.0, 4.0, 0.1) == pytest.approx(1 - 0.9**0.25, abs=1e-9)
    draws = np.random.default_rng(0).beta(21, 31, 200_000)
    assert lower_bound(20, 30, 0.1) == pytest.approx(np.quantile(draws, 0.1), abs=2e-3)


def test_the_pruned_choice_equals_the_full_ranking():
    rng = np.random.default_rng(5)
    for _ in range(30):
        state = SearchState(TaskPlan(TASKS[:20]))
        for i in range(1, 25):
            state.add_node(i, int(rng.integers(i)))
        for node in state.node_ids:
            for task in TASKS[: int(rng.integers(0, 20))]:
                state.record_evaluation(node, task, bool(rng.random() < 0.4))
        rule = FinalRule(quantile=float(rng.choice([0.05, 0.1, 0.3])), min_evals=8)
        assert rule.choose(state) == rule.ranked(state)[0]
