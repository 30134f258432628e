"""adaptive's `lineage` option: a child of a lineage that measured well races sooner."""

import numpy as np

from dgm.config import StrategyConfig
from dgm.simulate.variants import variant
from dgm.strategies import AdaptiveStrategy, FinalRule, SearchState, TaskPlan, make_strategy

TASKS = tuple(f"t{i:02d}" for i in range(20))


def tree() -> SearchState:
    """Node 1 ships (7/10, mean 0.67). Node 2's children: 3 at 5/5, and 4 at 1/2. Node 6's
    children: 7 at 0/5, 5 at 1/2 and 8 at 3/3 (mean 0.8, a challenger on its own)."""
    state = SearchState(TaskPlan(TASKS))
    parents = {1: 0, 2: 0, 3: 2, 4: 2, 6: 0, 7: 6, 5: 6, 8: 6}
    marks = {0: "1000000000", 1: "1110101101", 2: "11", 3: "11111", 4: "10",
             6: "00", 7: "00000", 5: "10", 8: "111"}  # fmt: skip
    for node, parent in parents.items():
        state.add_node(node, parent)
    for node, results in marks.items():
        for task, mark in zip(TASKS, results, strict=False):
            state.record_evaluation(node, task, mark == "1")
    return state


def challengers(state: SearchState, lineage: float) -> dict[int, bool]:
    strategy = AdaptiveStrategy(np.random.default_rng(0), race=True, lineage=lineage)
    strategy.final = FinalRule(min_evals=10, prior_strength=0)
    nodes = [4, 5, 8]
    racing, incumbent = strategy.challengers(state, np.array([state.index(n) for n in nodes]))
    assert incumbent == 1
    return dict(zip(nodes, racing.tolist(), strict=True))


def test_a_child_of_a_lineage_that_measured_well_races_the_incumbent_at_once():
    state = tree()
    assert challengers(state, lineage=0.0) == {4: False, 5: False, 8: True}
    # Node 4's sibling went 5/5 (prior ~0.93, 4 pseudo-results: mean 0.71 > 0.67).
    assert challengers(state, lineage=4.0) == {4: True, 5: False, 8: True}


def test_the_lineage_prior_only_promotes_never_demotes():
    # Node 6's lineage is barren (sibling 0/5): node 8 at 3/3 keeps its own mean.
    state = tree()
    strategy = AdaptiveStrategy(np.random.default_rng(0), lineage=4.0)
    ps, pf = strategy.lineage_prior(state, np.array([state.index(n) for n in (0, 4, 5, 8)]))
    assert ps.tolist()[0] == pf.tolist()[0] == 0.0  # the root has no lineage
    assert ps[1] > 3.5 and ps[1] + pf[1] == 4.0
    assert ps.tolist()[2:] == pf.tolist()[2:] == [0.0, 0.0]


def test_lineage_is_off_by_default_and_on_in_its_variant():
    assert make_strategy(StrategyConfig(name="adaptive")).lineage == 0.0
    strategy = make_strategy(variant("lineage-prior").config())
    assert isinstance(strategy, AdaptiveStrategy) and strategy.lineage == 4.0


def test_the_race_uses_the_shipping_rules_parent_prior():
    # Node 1 ships (7/10). Node 4 at 1/2 is a child of node 2 at 2/2 (mean 0.75): under
    # the default rule (4 pseudo-results at the parent's mean) its mean is 5/8 = 0.625,
    # above node 1's 8.67/16 = 0.54, so it races without any lineage option; under the
    # flat rule (0.5 < 0.67) it does not. Node 5, a child of node 6 at 0/2, races neither.
    state = SearchState(TaskPlan(TASKS))
    marks = {0: "1000000000", 1: "1110101101", 2: "11", 6: "00", 4: "10", 5: "10"}
    for node, parent in {1: 0, 2: 0, 6: 0, 4: 2, 5: 6}.items():
        state.add_node(node, parent)
    for node, results in marks.items():
        for task, mark in zip(TASKS, results, strict=False):
            state.record_evaluation(node, task, mark == "1")
    nodes = np.array([state.index(4), state.index(5)])
    for rule, expected in (
        (FinalRule(), [True, False]),
        (FinalRule(prior_strength=0), [False, False]),
    ):
        strategy = AdaptiveStrategy(np.random.default_rng(0), race=True)
        strategy.final = rule
        racing, incumbent = strategy.challengers(state, nodes)
        assert incumbent == 1 and racing.tolist() == expected
