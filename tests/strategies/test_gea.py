import numpy as np
import pytest

from dgm.strategies import Evaluate, Expand, GEAStrategy, SearchState, TaskPlan
from dgm.strategies.gea import (
    choose_group,
    cosine_distances,
    group_experience,
    member_record,
    success_vectors,
)

TASKS = ("a", "b", "c", "d", "e", "f")


def state_with(results: dict[int, str]) -> SearchState:
    """Nodes (children of 0 in order) with results over TASKS given as 1/0 strings."""
    state = SearchState(TaskPlan(TASKS))
    for node in results:
        if node != 0:
            state.add_node(node, 0)
    for node, marks in results.items():
        for task, mark in zip(TASKS, marks, strict=True):
            state.record_evaluation(node, task, mark == "1")
    return state


def test_cosine_distance_of_success_vectors():
    state = state_with({0: "110000", 1: "110000", 2: "001100"})
    d = cosine_distances(success_vectors(state, [0, 1, 2]))
    assert d[0, 1] == pytest.approx(0.0)
    # +1+1-1-1-1-1 vs -1-1+1+1-1-1: dot = -2 of 6
    assert d[0, 2] == pytest.approx(1 + 2 / 6)


def test_novelty_brings_a_different_agent_into_the_group():
    # 1 and 2 solve the same tasks as each other; 3 scores a bit lower but solves others.
    state = state_with({0: "100000", 1: "111000", 2: "111000", 3: "000110"})
    assert choose_group(state, 2, novelty_weight=0.0).members == (1, 2)
    group = choose_group(state, 2, novelty_weight=0.5)
    assert set(group.members) == {1, 3}
    assert max(group.novelty) > 0.8


def test_each_member_is_expanded_with_the_others_as_its_group():
    state = state_with({0: "100000", 1: "111000", 2: "000110"})
    strategy = GEAStrategy(np.random.default_rng(0), group_size=2)
    first, second = strategy.next_action(state), strategy.next_action(state)
    assert {first, second} == {Expand(1, (2,)), Expand(2, (1,))}
    state.add_node(3, 1)
    assert strategy.next_action(state) == Evaluate(3, "a")  # children evaluated first


def test_group_experience_says_what_each_member_changed_fixed_and_broke():
    record = member_record(
        5, "Add a search tool", {"a": True, "b": False, "c": True}, {"a": False, "b": True}
    )
    assert record.fixed == ("a",) and record.broke == ("b",)
    text = group_experience([record])
    assert "agent 5: Add a search tool" in text
    assert "fixed (solved where its parent failed): a" in text
    assert "broke (failed where its parent solved): b" in text
