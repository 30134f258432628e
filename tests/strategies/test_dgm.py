import math

import numpy as np
import pytest

from dgm.strategies import DGMStrategy, Evaluate, Expand, Wait
from dgm.strategies.dgm import parent_probabilities, sigmoid_score
from tests.strategies.helpers import evaluate, tree


def test_sigmoid_matches_the_reference_formula():
    for score in (0.0, 0.3, 0.5, 0.9, 1.0):
        expected = 1 / (1 + math.exp(-10 * (score - 0.5)))
        assert sigmoid_score(np.array([score]))[0] == pytest.approx(expected)


def test_score_child_prop_probabilities_by_hand():
    # sigmoid(10(s - 0.5)) / (1 + children): 0.5/1, 0.880797/2, 0.0474259/4
    probs = parent_probabilities(np.array([0.5, 0.7, 0.2]), np.array([0, 1, 3]), "score_child_prop")
    weights = [0.5, 0.8807971 / 2, 0.0474259 / 4]
    assert probs == pytest.approx([w / sum(weights) for w in weights], rel=1e-5)


def test_score_prop_and_random_probabilities_by_hand():
    probs = parent_probabilities(np.array([0.5, 0.7]), np.array([9, 0]), "score_prop")
    assert probs == pytest.approx([0.5 / 1.3807971, 0.8807971 / 1.3807971], rel=1e-5)
    assert parent_probabilities(np.zeros(4), np.arange(4), "random") == pytest.approx([0.25] * 4)


def test_parents_are_drawn_with_those_probabilities():
    state = tree((1, 0), (2, 0))
    evaluate(state, 0, "11000")
    evaluate(state, 1, "10000")
    evaluate(state, 2, "11110")
    evaluate(state, 2, "000")  # stage 2: 4/8 overall
    state.add_node(3, 2)  # node 2 has 1 child; node 3 is not evaluated: not a parent
    strategy = DGMStrategy(np.random.default_rng(1), children_per_generation=20000)
    counts = dict.fromkeys(range(4), 0)
    for parent in strategy.choose_parents(state):
        counts[parent] += 1
    # Node 0 scored 2/5, so its stage 2 is open and unevaluated: not in the archive yet.
    assert counts[0] == 0 and counts[3] == 0
    # Node 1: sigmoid(-3) / 1 = 0.0474259; node 2: sigmoid(0) / 2 = 0.25.
    assert counts[1] / 20000 == pytest.approx(0.0474259 / 0.2974259, abs=0.01)


def test_best_takes_the_highest_scores_not_the_lowest():
    state = tree((1, 0), (2, 0))
    evaluate(state, 0, "10000")
    evaluate(state, 1, "11100", ())
    evaluate(state, 1, "111")  # stage 2 of node 1: 6/8
    evaluate(state, 2, "00000")
    strategy = DGMStrategy(np.random.default_rng(0), parent_selection="best")
    assert strategy.choose_parents(state) == [1, 0]


def test_latest_expands_the_newest_archive_node_k_times():
    state = tree((1, 0))
    evaluate(state, 0, "10000")
    evaluate(state, 1, "00000")
    strategy = DGMStrategy(np.random.default_rng(0), 3, parent_selection="latest")
    assert strategy.choose_parents(state) == [1, 1, 1]


def test_generation_flow_evaluates_the_seed_then_barriers_between_generations():
    state = tree()
    strategy = DGMStrategy(np.random.default_rng(0), children_per_generation=2)
    # Generation 0: the seed's whole stage 1, one task per call.
    for task in "abcde":
        action = strategy.next_action(state)
        assert action == Evaluate(0, task)
        state.evaluation_started(0, task)
    assert strategy.next_action(state) == Wait()
    for task in "abcde":
        state.evaluation_finished(0, task, task == "a")  # 1/5: no stage 2
    # Generation 1: two expansions, then a barrier.
    first, second = strategy.next_action(state), strategy.next_action(state)
    assert first == second == Expand(0)
    state.expansion_started(0)
    state.expansion_started(0)
    assert strategy.next_action(state) == Wait()
    state.expansion_finished(0, 1)
    assert strategy.next_action(state) == Evaluate(1, "a")  # the child, while 1 expands
    for task in "abcde":
        state.record_evaluation(1, task, False)
    assert strategy.next_action(state) == Wait()  # the other expansion still runs
    state.expansion_finished(0, None)
    assert isinstance(strategy.next_action(state), Expand)
    assert strategy.generation == 2


def test_a_seed_that_solves_nothing_is_still_a_parent():
    state = tree()
    evaluate(state, 0, "00000")
    strategy = DGMStrategy(np.random.default_rng(0))
    assert strategy.next_action(state) == Expand(0)
