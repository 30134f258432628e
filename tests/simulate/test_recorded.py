"""`dgm simulate --from-run`, ablation variants by name, new landscapes."""

from __future__ import annotations

import numpy as np
import pytest
from typer.testing import CliRunner

from dgm.commands.app import app
from dgm.config import RunConfig
from dgm.loop.meta_loop import MetaLoop
from dgm.simulate.experiment import run_one
from dgm.simulate.landscape import World
from dgm.simulate.presets import PRESETS
from dgm.simulate.recorded import load_recorded
from dgm.simulate.variants import ABLATION
from dgm.store import Run
from tests.loop.fake_jobs import TASKS, FakeJobs

runner = CliRunner()


@pytest.fixture
def recorded_run(tmp_path):
    seed = tmp_path / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "tiny"\n[commands]\nsolve = "true"\n')
    # dgm evaluates every child on every task, so each recorded node's rate is its true one
    # (a progressive strategy may leave a child with only its hardest tasks recorded).
    config = RunConfig(name="rec").with_overrides(
        {"strategy.name": "dgm", "limits.max_evals": 40, "workers": 2}
    )
    run = Run.create(tmp_path / "run", config, seed)
    MetaLoop(run, jobs=FakeJobs(run)).run()
    run.close()
    return tmp_path / "run"


def test_a_recorded_run_becomes_a_landscape(recorded_run):
    land = load_recorded(recorded_run, PRESETS["mismatch"])
    world = land.world(0)
    with Run.open(recorded_run) as run:
        seed_results = {e.task_id: e.resolved for e in run.evaluations(0)}
        kids = {n.id for n in run.nodes() if n.parent_id == 0 and n.status == "active"}
    assert set(world.plan().stage1 + world.plan().stage2) <= set(TASKS)
    for task, solved in seed_results.items():  # recorded results are replayed as recorded
        assert world.evaluate(0, task) == solved
    child = next(c for c in (world.expand(0) for _ in range(20)) if c is not None)
    assert world.recorded[child] in kids
    assert world.true_rate(child) > world.true_rate(0)  # deeper fake agents are better


def test_simulate_from_run_compares_strategies_on_it(recorded_run):
    result = runner.invoke(app, ["simulate", "--from-run", str(recorded_run), "--strategies",
                                 "hgm,dgm,hgm-staged", "--budget", 40, "--seeds", 3])  # fmt: skip
    assert result.exit_code == 0, result.output
    assert "recorded run run" in result.output and "hgm-staged" in result.output


def test_from_a_folder_that_is_not_a_run_is_one_line(tmp_path):
    result = runner.invoke(app, ["simulate", "--from-run", str(tmp_path)])
    assert result.exit_code != 0
    assert "Traceback" not in result.output


@pytest.mark.parametrize("name", list(ABLATION))
def test_every_ablation_variant_runs_within_budget(name):
    result = run_one(name, PRESETS["flat"], 1, 120, 4, 0.5)
    assert result.evals_used <= 120 and result.strategy == name


def test_flaky_judge_reports_coins_and_keeps_true_rates():
    noisy, clean = World(PRESETS["flaky"], 3), World(PRESETS["mismatch"], 3)
    assert noisy.true_rate(0) == pytest.approx(clean.true_rate(0))
    easy = min(noisy.task_ids, key=lambda t: noisy.difficulty[t])
    p = noisy.solve_probability(0, easy)
    results = [noisy.evaluate(0, easy) for _ in range(4000)]
    # 70% of reports are the real result, 30% a fair coin.
    assert np.mean(results) == pytest.approx(0.7 * p + 0.3 * 0.5, abs=0.025)


def test_traits_transfer_only_within_a_group():
    world = World(PRESETS["transfer"], 0)
    donor = None
    for _ in range(200):  # grow an agent with a skill
        child = world.expand(0)
        if child is not None and world.skills[child]:
            donor = child
            break
    assert donor is not None
    alone = [world.expand(0) for _ in range(200)]
    grouped = [world.expand(0, (donor,)) for _ in range(200)]
    skill = next(iter(world.skills[donor]))
    share_alone = np.mean([skill in world.skills[c] for c in alone if c])
    share_grouped = np.mean([skill in world.skills[c] for c in grouped if c])
    assert share_grouped > share_alone + 0.3


def test_parallel_experiments_give_the_same_results_in_the_same_order():
    from dgm.simulate.experiment import run_experiment

    args = (["adaptive", "gea"], PRESETS["transfer"], 3, 100, 4, 0.5)
    assert run_experiment(*args, processes=2) == run_experiment(*args, processes=1)


def test_the_table_measures_a_named_variant_against_hgm_and_dgm():
    import typer

    from dgm.simulate import table

    cli = typer.Typer()
    cli.command()(table.main)
    args = [
        "--landscapes",
        "mismatch",
        "--seeds",
        "2",
        "--other-seeds",
        "0",
        "--ablation-seeds",
        "0",
    ]
    result = runner.invoke(cli, [*args, "--headline", "race-closest,hgm,dgm"])
    assert result.exit_code == 0, result.output
    rows = [line for line in result.output.splitlines() if line.startswith("| mismatch")]
    assert [r.split(" | ")[1] for r in rows] == ["race-closest", "hgm", "dgm"]
    refused = runner.invoke(cli, [*args, "--headline", "race-closest,dgm"])
    assert refused.exit_code != 0 and "hgm" in refused.output
