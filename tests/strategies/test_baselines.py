import numpy as np

from dgm.strategies import Evaluate, Expand, GreedyStrategy, RandomStrategy, Stop, Wait
from tests.strategies.helpers import evaluate, tree


def scored_tree():
    state = tree((1, 0), (2, 0))
    evaluate(state, 0, "10000")
    evaluate(state, 1, "11000")
    evaluate(state, 1, "000")  # 2/8
    evaluate(state, 2, "10000")
    return state


def test_greedy_evaluates_open_tasks_first_then_expands_the_best_scorer():
    state = scored_tree()
    state.add_node(3, 1)
    greedy = GreedyStrategy(np.random.default_rng(0))
    assert greedy.next_action(state) == Evaluate(3, "a")
    evaluate(state, 3, "00000")
    # 0: 1/5 = 0.2, 1: 0.25, 2: 0.2 -> node 1
    assert greedy.next_action(state) == Expand(1)
    assert greedy.final_choice(state) == 1


def test_score_ties_go_to_more_evidence_then_the_older_node():
    state = tree((1, 0), (2, 0))
    evaluate(state, 0, "00000")
    evaluate(state, 1, "11000")
    evaluate(state, 1, "000")  # 2/8 = 0.25
    evaluate(state, 2, "10000")
    evaluate(state, 2, "")  # 1/5 = 0.2
    state.add_node(3, 0)
    evaluate(state, 3, "11000")
    evaluate(state, 3, "000")  # 2/8 as well, newer than node 1
    assert GreedyStrategy(np.random.default_rng(0)).final_choice(state) == 1


def test_random_expands_archive_nodes_uniformly():
    state = scored_tree()
    strategy = RandomStrategy(np.random.default_rng(5))
    counts = {0: 0, 1: 0, 2: 0}
    for _ in range(3000):
        action = strategy.next_action(state)
        assert isinstance(action, Expand)
        counts[action.parent] += 1
    assert all(900 < c < 1100 for c in counts.values())


def test_baselines_wait_while_nothing_is_evaluated_and_stop_when_idle():
    state = tree()
    for task in "abcde":
        state.evaluation_started(0, task)
    for strategy in (GreedyStrategy(np.random.default_rng(0)), RandomStrategy(None)):
        assert strategy.next_action(state) == Wait()
    idle = tree()
    for task in "abcde":
        idle.evaluation_started(0, task)
        idle.evaluation_abandoned(0, task)
    assert isinstance(GreedyStrategy(None).next_action(idle), Evaluate)
    assert Stop().reason
