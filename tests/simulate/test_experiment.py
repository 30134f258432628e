"""Simulated runs: budget, shipped agent, determinism, summaries."""

import math

import pytest

import dgm.simulate.experiment as experiment
from dgm.simulate.experiment import mean_ci, run_one, summarise
from dgm.simulate.presets import PRESETS
from dgm.strategies import STRATEGY_NAMES, make_strategy

MISMATCH = PRESETS["mismatch"]


@pytest.mark.parametrize("name", STRATEGY_NAMES)
def test_every_strategy_respects_the_budget(name):
    for seed, budget in [(0, 150), (1, 97.5)]:
        result = run_one(name, MISMATCH, seed, budget, 5, 0.5)
        assert result.evals_used <= budget
        assert result.evals_used > budget - 2  # it used what it was given
        assert result.stop_reason == "evaluation budget reached"
        assert all(point[0] <= budget for point in result.curve)


def test_the_shipped_agent_is_the_strategys_own_final_choice(monkeypatch):
    """A strategy that ships its newest node: the result reports exactly that node, and
    its true rate, not the best agent in the tree."""
    picks = []

    def newest_shipping_strategy(config, seed, workers, budget):
        strategy = make_strategy(config, seed, workers, budget)

        def final_choice(state):
            picks.append(state.node_ids[-1])
            return picks[-1]

        strategy.final_choice = final_choice
        return strategy

    monkeypatch.setattr(experiment, "make_strategy", newest_shipping_strategy)
    worlds = []
    real_world = experiment.World

    def remembered_world(params, seed):
        worlds.append(real_world(params, seed))
        return worlds[-1]

    monkeypatch.setattr(experiment, "World", remembered_world)
    result = run_one("hgm", MISMATCH, 4, 200, 4, 0.99)
    assert result.shipped == picks[-1]
    assert result.shipped_true_rate == worlds[0].true_rate(picks[-1])
    assert result.curve[-1][1] == worlds[0].true_rate(picks[-2])
    assert result.best_true_rate >= result.shipped_true_rate


def test_runs_are_deterministic_per_seed():
    a = run_one("dgm", MISMATCH, 3, 200, 4, 0.4)
    b = run_one("dgm", MISMATCH, 3, 200, 4, 0.4)
    c = run_one("dgm", MISMATCH, 4, 200, 4, 0.4)
    assert a == b
    assert a.curve != c.curve


def test_evals_to_target_is_the_first_point_the_shipped_agent_reaches_it():
    results = (run_one("hgm", PRESETS["aligned"], seed, 400, 8, 0.4) for seed in range(10))
    result = next(r for r in results if r.reached)
    first = next(x for x, shipped, _ in result.curve if shipped >= 0.4)
    assert result.evals_to_target == first
    unreachable = run_one("hgm", PRESETS["aligned"], 0, 100, 8, 0.99)
    assert not unreachable.reached and unreachable.evals_to_target is None


def test_summary_statistics():
    mean, half = mean_ci([0.4, 0.5, 0.6])
    assert mean == pytest.approx(0.5)
    assert half == pytest.approx(4.303 * 0.1 / math.sqrt(3))
    results = [run_one("greedy", MISMATCH, seed, 120, 4, 0.35) for seed in range(4)]
    summary = summarise(results)
    assert summary.seeds == 4
    assert summary.reached_fraction == sum(r.reached for r in results) / 4
    assert summary.shipped_mean == pytest.approx(sum(r.shipped_true_rate for r in results) / 4)


def test_the_simulator_honours_the_runs_barren_after(monkeypatch):
    from dgm.config import StrategyConfig

    states = []
    real = experiment.SearchState

    def recorded(*args, **kwargs):
        states.append(real(*args, **kwargs))
        return states[-1]

    monkeypatch.setattr(experiment, "SearchState", recorded)
    config = StrategyConfig(name="adaptive", barren_after=1)
    experiment.run_one("adaptive", PRESETS["flat"], 0, 30, 2, 0.5, config)
    assert states[0].barren_after == 1
