import numpy as np
import pytest

from dgm.strategies import Evaluate, Expand, HGMStrategy, Stop, Wait
from tests.strategies.helpers import evaluate, tree


def hgm(seed: int = 0, **kwargs) -> HGMStrategy:
    return HGMStrategy(np.random.default_rng(seed), **kwargs)


def test_expand_rule_by_hand():
    # started evals^0.6 >= (valid nodes - 1) + pending expansions; failures count nowhere
    state = tree((1, 0), (2, 0))
    evaluate(state, 0, "11111")
    evaluate(state, 1, "000")  # 8 evals: 8^0.6 = 3.48
    strategy = hgm()
    assert strategy.wants_expansion(state)  # 2 + 0 = 2
    state.expansion_started(0)
    assert strategy.wants_expansion(state)  # 3
    state.expansion_started(0)
    assert not strategy.wants_expansion(state)  # 4
    state.expansion_finished(0, None)  # a failed attempt is not counted: 2 + 1 = 3
    assert strategy.wants_expansion(state)
    assert not hgm(count_failed_expansions=True).wants_expansion(state)  # 2 + 1 + 1 = 4
    state.expansion_started(0)
    assert not strategy.wants_expansion(state)  # 2 + 2 = 4 > 3.48
    state.evaluation_started(2, "a")  # running evaluations count: 9^0.6 = 3.74
    state.evaluation_started(2, "b")  # 10^0.6 = 3.98
    state.evaluation_started(2, "c")  # 11^0.6 = 4.21
    assert strategy.wants_expansion(state)
    assert not hgm(count_pending_evals=False).wants_expansion(state)


def test_expansion_posterior_uses_clade_counts_over_nodes_with_an_own_success():
    state = tree((1, 0), (2, 1), (3, 0))
    evaluate(state, 0, "10")
    evaluate(state, 1, "000")  # no own success: not a candidate, though its clade has one
    evaluate(state, 2, "11")
    evaluate(state, 3, "0001")
    idx, a, b = hgm().expansion_posterior(state)
    assert [state.node_id(i) for i in idx] == [0, 2, 3]
    # Beta(1 + clade successes, 1 + clade failures)
    assert a.tolist() == [1 + 4, 1 + 2, 1 + 1]
    assert b.tolist() == [1 + 7, 1 + 0, 1 + 3]
    assert state.own_counts(0) == (1, 1)  # a clade query never adds to own counts


def test_sharpen_scales_the_posterior_with_evaluations():
    state = tree()
    evaluate(state, 0, "1100")
    _, a, b = hgm(sharpen=0.5).expansion_posterior(state)
    tau = 1 + 0.5 * 4
    assert a.tolist() == [tau * 3] and b.tolist() == [tau * 3]


def test_expansion_follows_the_clade_not_the_node_score():
    # Node 1 scores better itself; node 2's clade is far better: HGM expands inside 2's clade.
    state = tree((1, 0), (2, 0), (3, 2), (4, 2))
    evaluate(state, 0, "10000")
    evaluate(state, 1, "11110")
    evaluate(state, 2, "10000")
    for child in (3, 4):
        evaluate(state, child, "11111")
        evaluate(state, child, "111")
    picks = [hgm(seed).choose_expansion(state).parent for seed in range(200)]
    # Node 1 wins only when Beta(5, 2) out-draws Beta(18, 5) and two Beta(9, 1): ~6%.
    assert picks.count(1) < 25
    assert picks.count(2) + picks.count(3) + picks.count(4) > 175


def test_evaluation_draws_nodes_with_open_tasks_and_a_uniform_task():
    state = tree((1, 0), (2, 0))
    evaluate(state, 0, "11111")
    evaluate(state, 0, "111")  # node 0 has nothing open any more
    evaluate(state, 1, "0000")  # one task left
    # node 2: five tasks open, no results
    strategy = hgm(3)
    seen_tasks = {t: 0 for t in "abcde"}
    nodes = {0: 0, 1: 0, 2: 0}
    for _ in range(3000):
        action = strategy.choose_evaluation(state)
        nodes[action.node] += 1
        if action.node == 2:
            seen_tasks[action.task] += 1
        else:
            assert action == Evaluate(1, "e")
    assert nodes[0] == 0
    # P(Beta(1,1) > Beta(1,5)) = 5/6
    assert nodes[2] / 3000 == pytest.approx(5 / 6, abs=0.03)
    for count in seen_tasks.values():
        assert count / nodes[2] == pytest.approx(0.2, abs=0.04)


def test_start_evaluates_the_seed_because_no_node_has_a_success():
    # The reference's seed arrives evaluated; ours has no result yet, and with nothing in
    # flight a Wait would never end: the other kind of action.
    state = tree()
    strategy = hgm(startup=False)
    assert strategy.wants_expansion(state)  # 0^0.6 >= 0
    action = strategy.next_action(state)
    assert isinstance(action, Evaluate) and action.node == 0
    for task in "abcde":
        state.evaluation_started(0, task)
    assert strategy.next_action(state) == Wait()
    for task in "abcde":
        state.evaluation_finished(0, task, False)
    assert strategy.next_action(state) == Stop("no node can be expanded or evaluated")


def test_expands_once_the_seed_has_a_success():
    state = tree()
    evaluate(state, 0, "1", ("a",))
    assert hgm(startup=False).next_action(state) == Expand(0)  # 1^0.6 >= 0


def test_no_stage_gate_by_default_and_staging_on_request():
    from dgm.config import StrategyConfig
    from dgm.strategies import split_plan
    from tests.strategies.helpers import PLAN

    flat, held = split_plan(PLAN, StrategyConfig(name="hgm"))
    assert flat.stage1 == PLAN.stage1 + PLAN.stage2 and flat.stage2 == () and held == ()
    staged, _ = split_plan(
        PLAN, StrategyConfig.model_validate({"name": "hgm", "hgm": {"staged": True}})
    )
    assert staged == PLAN
    assert split_plan(PLAN, StrategyConfig(name="dgm"))[0] == PLAN
