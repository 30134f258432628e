"""The simulated world's statistics match its parameters."""

import math

import numpy as np
import pytest

from dgm.simulate.landscape import LandscapeParams, World
from dgm.simulate.presets import HELD_OUT, LANDSCAPES, PRESETS


def children_of_root(params: LandscapeParams, n: int, seed: int = 0):
    world = World(params, seed)
    kids = [world.expand(0) for _ in range(n)]
    return world, kids


def test_mutation_distribution_matches_its_parameters():
    params = LandscapeParams(metaprod_sd=0.0, coupling=0.0)  # m = 1 for every child
    world, kids = children_of_root(params, 20000)
    valid = [k for k in kids if k is not None]
    n = len(kids)
    assert 1 - len(valid) / n == pytest.approx(
        params.failure_rate, abs=4 * math.sqrt(0.15 * 0.85 / n)
    )
    deltas = np.array([world.theta[k] - world.theta[0] for k in valid])
    up, same, down = deltas[deltas > 0], deltas[deltas == 0], deltas[deltas < 0]
    assert len(up) / len(valid) == pytest.approx(params.p_improve, abs=0.012)
    assert len(same) / len(valid) == pytest.approx(
        (1 - params.p_improve) * params.p_same, abs=0.012
    )
    assert up.mean() == pytest.approx(params.improve_scale, rel=0.06)  # exponential mean
    assert -down.mean() == pytest.approx(params.decline_sd * math.sqrt(2 / math.pi), rel=0.04)
    assert len(up) < len(same) + len(down)  # most children are worse or equal
    assert all(world.metaproductivity(k) == 1.0 for k in valid)


def test_metaproductivity_raises_the_odds_of_improvement():
    params = LandscapeParams(metaprod_sd=0.0, failure_rate=0.0)
    world = World(params, 0)
    world.log_metaprod[0] = math.log(3.0)
    kids = [world.expand(0) for _ in range(5000)]
    improved = np.mean([world.theta[k] > world.theta[0] for k in kids])
    assert improved == pytest.approx(3 * params.p_improve, abs=0.03)


@pytest.mark.parametrize(
    "preset, sign", [("aligned", 1), ("mismatch", 0), ("deceptive", -1), ("flat", 0)]
)
def test_coupling_sets_how_score_changes_relate_to_metaproductivity(preset, sign):
    params = PRESETS[preset]
    world, kids = children_of_root(params, 6000, seed=3)
    valid = [k for k in kids if k is not None]
    d_theta = np.array([world.theta[k] - world.theta[0] for k in valid])
    d_log_m = np.array([world.log_metaprod[k] for k in valid])  # the root's log m is 0
    if params.metaprod_sd == 0 and params.coupling == 0:
        assert np.all(d_log_m == 0)
        return
    corr = np.corrcoef(d_theta, d_log_m)[0, 1]
    if sign == 0:
        assert abs(corr) < 0.05
    else:
        assert corr * sign > 0.2


def test_seed_rate_difficulties_and_bernoulli_evaluations():
    params = LandscapeParams(stage1_tasks=100, stage2_tasks=900, seed_rate=0.3)
    world = World(params, 7)
    assert world.true_rate(0) == pytest.approx(0.3, abs=1e-6)
    difficulties = np.array(list(world.difficulty.values()))
    assert difficulties.std() == pytest.approx(params.difficulty_sd, rel=0.08)
    task = world.task_ids[0]
    p = world.solve_probability(0, task)
    draws = [world.evaluate(0, task) for _ in range(20000)]
    assert np.mean(draws) == pytest.approx(p, abs=4 * math.sqrt(p * (1 - p) / 20000))


def test_same_seed_same_world_and_the_plan_follows_the_stages():
    a, b = World(PRESETS["mismatch"], 11), World(PRESETS["mismatch"], 11)
    assert a.difficulty == b.difficulty
    assert [a.expand(0) for _ in range(20)] == [b.expand(0) for _ in range(20)]
    assert a.theta == b.theta
    plan = a.plan()
    assert len(plan.stage1) == 10 and len(plan.stage2) == 40
    assert plan.stage2_threshold == 0.4


def test_agent_by_task_effects_make_agents_disagree_on_which_tasks_are_hard():
    params = LANDSCAPES["idiosyncratic"]
    world = World(params, 5)
    assert world.true_rate(0) == pytest.approx(params.seed_rate, abs=1e-6)
    kids = [k for k in (world.expand(0) for _ in range(400)) if k is not None]
    redrawn = np.mean([np.mean(world.interaction[k] != world.interaction[0]) for k in kids])
    assert redrawn == pytest.approx(params.interaction_redraw, abs=0.02)

    # Two siblings rank the tasks differently; on mismatch (no effects) they agree exactly.
    def task_order_agreement(world: World, a: int, b: int) -> float:
        pa = [world.solve_probability(a, t) for t in world.task_ids]
        pb = [world.solve_probability(b, t) for t in world.task_ids]
        return float(np.corrcoef(np.argsort(np.argsort(pa)), np.argsort(np.argsort(pb)))[0, 1])

    assert task_order_agreement(world, kids[0], kids[1]) < 0.95
    plain, plain_kids = children_of_root(PRESETS["mismatch"], 5, seed=5)
    valid = [k for k in plain_kids if k is not None]
    assert task_order_agreement(plain, valid[0], valid[1]) == pytest.approx(1.0)


@pytest.mark.parametrize("name", ["idiosyncratic", "costly-children"])
def test_round_four_landscapes_are_held_out_and_deterministic_per_seed(name):
    assert name in HELD_OUT
    a, b = World(LANDSCAPES[name], 3), World(LANDSCAPES[name], 3)
    kids_a, kids_b = [a.expand(0) for _ in range(30)], [b.expand(0) for _ in range(30)]
    assert kids_a == kids_b
    assert [a.true_rate(k) for k in kids_a if k] == [b.true_rate(k) for k in kids_b if k]
    assert [a.evaluate(0, t) for t in a.task_ids] == [b.evaluate(0, t) for t in b.task_ids]
    assert World(LANDSCAPES[name], 4).true_rate(0) == pytest.approx(0.3, abs=1e-6)


def test_costly_children_fail_half_the_time():
    world = World(LANDSCAPES["costly-children"], 0)
    failed = np.mean([world.expand(0) is None for _ in range(4000)])
    assert failed == pytest.approx(0.5, abs=0.03)
