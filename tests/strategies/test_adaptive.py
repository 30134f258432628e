import numpy as np

from dgm.strategies import AdaptiveStrategy, Evaluate, FinalRule, SearchState, TaskPlan

TASKS = tuple(f"t{i:02d}" for i in range(20))


def state_with(results: dict[int, str]) -> SearchState:
    state = SearchState(TaskPlan(TASKS))
    for node in results:
        if node != 0:
            state.add_node(node, 0)
    for node, marks in results.items():
        for task, mark in zip(TASKS, marks, strict=False):
            state.record_evaluation(node, task, mark == "1")
    return state


def test_fast_track_evaluates_a_promising_newcomer_until_it_can_ship():
    # Node 1 ships now (12 results); node 2 looks better after 3 but cannot ship yet;
    # node 3 looks worse after 2 (Thompson alone would still draw it at times).
    state = state_with({0: "100000000000", 1: "110110000000", 2: "111", 3: "00"})
    rule = FinalRule(min_evals=10)
    fast = AdaptiveStrategy(np.random.default_rng(0), fast_track=True)
    fast.final = rule
    picks = [fast.choose_evaluation(state).node for _ in range(50)]
    assert set(picks) == {2}
    plain = AdaptiveStrategy(np.random.default_rng(0), fast_track=False)
    plain.final = rule
    assert {plain.choose_evaluation(state).node for _ in range(200)} >= {2, 3}


def test_informative_task_order_prefers_tasks_that_split_agents():
    # t00 solved by all, t01 by none, t02 by half: a new node is evaluated on t02 first.
    state = state_with({0: "101", 1: "100", 2: "101", 3: "100"})
    state.add_node(4, 0)
    strategy = AdaptiveStrategy(np.random.default_rng(0), task_order="informative")
    strategy.final = FinalRule(min_evals=1)
    action = strategy.choose_evaluation(state)
    assert action == Evaluate(action.node, "t02") or action.node != 4
    evaluations = [strategy.choose_evaluation(state) for _ in range(100)]
    assert all(a.task == "t02" for a in evaluations if a.node == 4)
    assert any(a.node == 4 for a in evaluations)
