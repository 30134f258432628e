import pytest

from dgm.strategies import SearchState, TaskPlan
from tests.strategies.helpers import PLAN, evaluate, tree


def test_clade_counts_pool_descendants_but_own_counts_stay_own():
    state = tree((1, 0), (2, 1), (3, 0))
    evaluate(state, 0, "10")  # 1 success, 1 failure
    evaluate(state, 1, "110")
    evaluate(state, 2, "1")
    evaluate(state, 3, "000")
    assert state.own_counts(0) == (1, 1)
    assert state.own_counts(1) == (2, 1)
    assert state.clade_counts(2) == (1, 0)
    assert state.clade_counts(1) == (3, 1)
    assert state.clade_counts(3) == (0, 3)
    assert state.clade_counts(0) == (4, 5)
    assert state.results(0) == {"a": True, "b": False}


def test_replay_builds_the_same_state_as_live_events():
    live = tree((1, 0), (2, 1))
    evaluate(live, 0, "10101")
    evaluate(live, 2, "11")
    live.record_failed_expansion(1)
    replayed = SearchState.replay(
        PLAN,
        nodes=[(0, None), (1, 0), (2, 1)],
        evaluations=[(n, t, s) for n in live.node_ids for t, s in live.results(n).items()],
        failed_expansions=[1],
    )
    for node in live.node_ids:
        assert replayed.own_counts(node) == live.own_counts(node)
        assert replayed.clade_counts(node) == live.clade_counts(node)
        assert replayed.unevaluated_tasks(node) == live.unevaluated_tasks(node)
        assert replayed.stage(node) == live.stage(node)
    assert replayed.total_failed_expansions == 1
    assert replayed.total_evals == live.total_evals == 7


def test_stage_two_opens_only_at_the_threshold():
    state = tree((1, 0))
    evaluate(state, 0, "11000")  # 2/5 = 0.4: opens
    evaluate(state, 1, "10000")  # 1/5: stays in stage 1
    assert state.stage(0) == 2
    assert state.unevaluated_tasks(0) == ["f", "g", "h"]
    assert state.stage(1) == 1
    assert state.unevaluated_tasks(1) == []
    assert state.settled_column().tolist() == [False, True]


def test_running_evaluations_are_not_offered_again_and_come_back_if_abandoned():
    state = tree()
    state.evaluation_started(0, "a")
    state.evaluation_started(0, "b")
    assert state.unevaluated_tasks(0) == ["c", "d", "e"]
    assert state.in_flight == 2
    state.evaluation_finished(0, "a", True)
    state.evaluation_abandoned(0, "b")
    assert state.unevaluated_tasks(0) == ["b", "c", "d", "e"]
    assert state.in_flight == 0
    assert state.own_counts(0) == (1, 0)


def test_expansions_in_flight_and_their_outcomes():
    state = tree()
    state.expansion_started(0)
    state.expansion_started(0)
    assert state.total_pending_expansions == 2
    state.expansion_finished(0, 1)
    state.expansion_finished(0, None)
    assert state.children(0) == [1]
    assert state.parent(1) == 0
    assert state.total_failed_expansions == 1
    assert state.in_flight == 0


def test_mistakes_in_events_are_refused():
    state = tree()
    evaluate(state, 0, "1", ("a",))
    with pytest.raises(ValueError, match="already has a result"):
        state.record_evaluation(0, "a", False)
    with pytest.raises(ValueError, match="not open"):
        state.record_evaluation(0, "f", True)  # stage 2 not open yet
    with pytest.raises(ValueError, match="already exists"):
        state.add_node(0, None)
    with pytest.raises(KeyError, match="no node"):
        state.add_node(5, 4)
    with pytest.raises(ValueError, match="no expansion"):
        state.expansion_finished(0, 1)
    with pytest.raises(ValueError, match="unique"):
        TaskPlan(stage1=("a", "b"), stage2=("b",))


def test_columns_grow_past_their_initial_capacity():
    state = SearchState(PLAN, capacity=2)
    for i in range(1, 40):
        state.add_node(i, i - 1)
    evaluate(state, 39, "1")
    assert state.clade_counts(0) == (1, 0)
    assert state.size == 40
