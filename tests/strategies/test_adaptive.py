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
    rule = FinalRule(min_evals=10, prior_strength=0)
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
    strategy.final = FinalRule(min_evals=1, prior_strength=0)
    action = strategy.choose_evaluation(state)
    assert action == Evaluate(action.node, "t02") or action.node != 4
    evaluations = [strategy.choose_evaluation(state) for _ in range(100)]
    assert all(a.task == "t02" for a in evaluations if a.node == 4)
    assert any(a.node == 4 for a in evaluations)


def racer(**kwargs) -> AdaptiveStrategy:
    strategy = AdaptiveStrategy(np.random.default_rng(0), race=True, **{"stay": 1.0, **kwargs})
    strategy.final = FinalRule(min_evals=10, prior_strength=0)
    return strategy


def test_a_newcomer_races_the_incumbent_on_its_tasks_until_it_ships():
    # Node 1 ships now (7/14 on t00-t13); node 2 is 5/10, not yet above node 1's bound:
    # it is raced past the fixed window (it has its 10), on tasks node 1 has results on.
    state = state_with({0: "1000000000", 1: "11101010100100", 2: "1110110000", 3: "000"})
    assert FinalRule(min_evals=10, prior_strength=0).choose(state) == 1
    picks = [racer().choose_evaluation(state) for _ in range(30)]
    assert {a.node for a in picks} == {2}
    assert all(a.task in ("t10", "t11", "t12", "t13") for a in picks)  # paired with node 1
    window = AdaptiveStrategy(np.random.default_rng(0), fast_track=True)
    window.final = FinalRule(min_evals=10, prior_strength=0)
    assert {window.choose_evaluation(state).node for _ in range(200)} != {2}


def test_a_race_ends_when_the_bounds_separate():
    # Node 2 at 1/12 is far below node 1: not raced, though a fresh node 3 is.
    state = state_with({0: "1000000000", 1: "11101010100100", 2: "100000000000"})
    state.add_node(3, 0)
    racing, incumbent = racer().challengers(state, np.array([0, 2, 3]))
    assert incumbent == 1 and racing.tolist() == [False, False, True]


def test_endgame_stops_expanding_when_a_child_could_not_be_recognised_in_time():
    state = state_with({0: "1111111111"})  # 10 evaluations: 10^0.6 >= 0, expand
    assert racer(eval_budget=100).wants_expansion(state)
    assert not racer(eval_budget=100, endgame=9.5).wants_expansion(state)  # 90 left < 95
    assert racer(endgame=9.5).wants_expansion(state)  # no budget known: no endgame


def closest(**kwargs) -> AdaptiveStrategy:
    return racer(race_order="lower", **kwargs)


def test_closest_race_screens_each_newcomer_then_evaluates_the_challenger_nearest_to_shipping():
    # Node 1 ships now (6/14). Challengers: node 2 at 6/8 (nearest to shipping), node 3 at
    # 3/4 (behind it), node 4 fresh. With screen 1 the fresh node goes first; once it has
    # a result, every evaluation goes to node 2, none to node 3 (the Thompson race shares).
    state = state_with({0: "1000000000", 1: "11101010100000", 2: "11101101", 3: "1101", 4: ""})
    assert FinalRule(min_evals=10, prior_strength=0).choose(state) == 1
    strategy = closest(stay=0.0, screen=1)
    assert {strategy.choose_evaluation(state).node for _ in range(30)} == {4}
    state.record_evaluation(4, "t00", True)
    picks = [strategy.choose_evaluation(state) for _ in range(30)]
    assert {a.node for a in picks} == {2}
    assert all(a.task in ("t08", "t09", "t10", "t11", "t12", "t13") for a in picks)
    thompson = racer(stay=0.0)
    shared = {thompson.choose_evaluation(state).node for _ in range(200)}
    assert {2, 3} <= shared
    # Without screening the fresh node waits behind the two with evidence.
    state.add_node(5, 0)
    assert {closest(stay=0.0).choose_evaluation(state).node for _ in range(30)} == {2}


def test_closest_race_is_deterministic_per_seed_and_differs_from_adaptive():
    from dgm.simulate.experiment import run_one
    from dgm.simulate.presets import PRESETS

    runs = [run_one(name, PRESETS["mismatch"], 3, 120, 4, 0.5) for name in
            ("race-closest", "race-closest", "adaptive")]  # fmt: skip
    assert runs[0].curve == runs[1].curve
    assert runs[0].curve != runs[2].curve


def test_probe_looks_at_every_newcomer_once_even_behind_a_strong_incumbent():
    # Node 1 ships now at 12/14 (mean 0.81): a fresh node 4 (mean 0.5) is no challenger,
    # so the race never looks at it first; with probe 1 it gets one result before anyone.
    state = state_with({0: "1000000000", 1: "11111111110111", 2: "1101", 3: "0", 4: ""})
    assert FinalRule(min_evals=10, prior_strength=0).choose(state) == 1
    racing, _ = closest(stay=0.0).challengers(state, np.array([2, 3, 4]))
    assert not racing[2]
    plain = closest(stay=0.0, screen=1)
    assert {plain.choose_evaluation(state).node for _ in range(200)} != {4}
    probing = closest(stay=0.0, screen=1, probe=1)
    picks = [probing.choose_evaluation(state) for _ in range(30)]
    assert {a.node for a in picks} == {4}
    assert all(a.task in state.results(1) for a in picks)  # paired with the incumbent
    # A running evaluation counts: the probe is not sent twice at once.
    state.evaluation_started(4, picks[0].task)
    assert {probing.choose_evaluation(state).node for _ in range(200)} != {4}


def test_the_default_policy_probes_and_races_closest_to_shipping_first():
    from dgm.config import StrategyConfig
    from dgm.strategies import make_strategy

    strategy = make_strategy(StrategyConfig(name="adaptive"))
    assert isinstance(strategy, AdaptiveStrategy)
    settings = (strategy.probe, strategy.race_order, strategy.screen, strategy.stay)
    assert settings == (1, "lower", 1, 0.0) and strategy.retry == 2


def test_retry_probes_a_node_again_after_a_failure_but_not_after_a_success():
    # Behind a strong incumbent, node 3 failed its one probe and node 4 passed its own:
    # with retry 2 node 3 gets a second look first; without, a Thompson draw among all.
    state = state_with({0: "1000000000", 1: "11111111110111", 2: "1101", 3: "0", 4: "1"})
    retrying = closest(stay=0.0, screen=1, probe=1, retry=2)
    assert {retrying.choose_evaluation(state).node for _ in range(30)} == {3}
    once = closest(stay=0.0, screen=1, probe=1)
    assert {once.choose_evaluation(state).node for _ in range(100)} != {3}  # Thompson
    state.record_evaluation(3, "t05", False)  # 0/2: done probing
    assert 3 not in {retrying.choose_evaluation(state).node for _ in range(30)}
