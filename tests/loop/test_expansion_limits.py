"""Expansions are not free: every attempt counts against `max_expansions`, and a parent
whose last few expansions made nothing new is left alone until its code gets a result on
a new task, so a run whose expansions keep failing ends instead of spinning."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from dgm.commands.app import app
from dgm.config import RunConfig
from dgm.loop.meta_loop import MetaLoop, rebuild_state
from dgm.loop.session import new_run_config
from dgm.loop.stop_rules import StopKind
from dgm.strategies import SearchState, TaskPlan
from dgm.strategies.state import DEFAULT_BARREN_AFTER as BARREN_AFTER
from tests.loop.fake_jobs import FakeJobs


def test_a_parent_turns_barren_after_k_failures_and_a_new_result_revives_it() -> None:
    state = SearchState(TaskPlan(("a", "b")))
    state.record_evaluation(0, "a", True)
    for _ in range(BARREN_AFTER - 1):
        state.expansion_started(0)
        state.expansion_finished(0, None)
    assert state.expandable_column().tolist() == [True]
    state.expansion_started(0)
    state.expansion_finished(0, None)
    assert state.expandable_column().tolist() == [False]
    state.record_evaluation(0, "b", False)  # a result on a new task: new material
    assert state.expandable_column().tolist() == [True]


def test_twins_share_one_count_and_a_twin_child_is_nothing_new() -> None:
    state = SearchState(TaskPlan(("a",)), root_code="seed")
    for child in (1, 2, 3):
        state.expansion_started(0)
        state.expansion_finished(0, child, code="x")  # all children the same code
    # the first child was new, the next two were not
    assert state.barren_streak(0) == 2
    state.record_evaluation(1, "a", True)
    state.record_evaluation(2, "a", True)  # the same task again: no news for code x
    for parent in (1, 2, 3):
        state.expansion_started(parent)
        state.expansion_finished(parent, None)
    assert state.expandable_column().tolist() == [True, False, False, False]


# The scripted dry run in miniature: the seed's children all get the same change and
# make nothing themselves. Before expansions counted, dgm spun on empty patches forever.
@pytest.mark.parametrize("strategy", ["dgm", "hgm", "greedy", "random", "gea", "adaptive"])
def test_a_world_of_failing_expansions_ends_after_a_handful(make_run, strategy: str) -> None:
    settings = {"strategy.name": strategy, "limits.max_evals": 60, "workers": 2}
    if strategy == "hgm":  # the reference has no barren filter: a deviation, on request
        settings["strategy.hgm.skip_barren"] = True
    run = make_run(**settings)
    jobs = FakeJobs(run, empty_from_depth=1, twins=True)
    summary = MetaLoop(run, jobs=jobs).run()
    assert summary.stop_kind in (StopKind.STRATEGY, StopKind.EVAL_BUDGET), summary.stop_reason
    # Each code may fail K times, and K more after each result on a task new to it (the
    # progressive strategies evaluate a node task by task); twins share one count.
    assert summary.failed_expansions <= 4 * BARREN_AFTER, summary
    if strategy == "dgm":  # evaluates each node fully first: K failures, one worker's overshoot
        assert summary.failed_expansions <= BARREN_AFTER + 1, summary
    assert (
        summary.expansions
        == run.expansion_attempts()
        == len(run.nodes()) - 1 + (summary.failed_expansions)
    )
    assert all(j.state in ("done", "cancelled") for j in run.jobs())


def test_reference_hgm_re_expands_barren_parents_until_a_limit_stops_it(make_run) -> None:
    # As the reference: a failed expansion is counted nowhere, so in a world where every
    # expansion fails hgm keeps trying; `limits.max_expansions` (or dollars) stops it.
    run = make_run(**{"strategy.name": "hgm", "limits.max_expansions": 30, "workers": 2})
    summary = MetaLoop(run, jobs=FakeJobs(run, empty_from_depth=1, twins=True)).run()
    assert summary.stop_reason == "expansion limit reached"
    assert summary.failed_expansions > 4 * BARREN_AFTER


def test_max_expansions_counts_every_attempt_and_survives_resume(make_run) -> None:
    run = make_run(**{"strategy.name": "hgm", "limits.max_expansions": 4, "limits.max_evals": 500})
    summary = MetaLoop(run, jobs=FakeJobs(run)).run()
    assert summary.stop_reason == "expansion limit reached"
    assert summary.expansions == run.expansion_attempts() == 4
    assert "expansions: 4" in "\n".join(summary.lines())
    again = MetaLoop(run, jobs=FakeJobs(run)).run()  # a resume spends nothing more
    assert again.stop_reason == "expansion limit reached" and again.expansions == 4
    status = CliRunner().invoke(app, ["status", str(run.path)])
    assert status.exit_code == 0 and "expansions 4 / 4 (" in status.output, status.output


def test_resume_rebuilds_the_barren_counts_the_live_run_had(make_run) -> None:
    run = make_run(**{"strategy.name": "dgm", "limits.max_evals": 60, "workers": 1})
    loop = MetaLoop(run, jobs=FakeJobs(run, empty_from_depth=1, twins=True))
    loop.run()
    live = loop.state
    assert live is not None
    rebuilt = rebuild_state(run, live.plan)
    assert rebuilt.expandable_column().tolist() == live.expandable_column().tolist()
    assert not rebuilt.expandable_column().any()
    # and a resumed run does not expand them again
    before = run.expansion_attempts()
    MetaLoop(run, jobs=FakeJobs(run, empty_from_depth=1, twins=True)).run()
    assert run.expansion_attempts() == before


def test_the_default_dry_run_reaches_its_evaluation_limit(make_run, tmp_path) -> None:
    # `dgm run X --dry-run` (hgm, no limit given): the scripted world's children make
    # nothing, and the reference hgm alone would re-expand them for ever at 4 evaluations.
    config, _ = new_run_config(RunConfig(), tmp_path / "x", {}, dry_run=True)
    settings = {"strategy.hgm.skip_barren": config.strategy.hgm.skip_barren, "workers": 2}
    run = make_run(**settings, **{"limits.max_evals": config.limits.max_evals})
    summary = MetaLoop(run, jobs=FakeJobs(run, empty_from_depth=1, twins=True)).run()
    assert config.strategy.name == "hgm"
    assert summary.stop_kind in (StopKind.STRATEGY, StopKind.EVAL_BUDGET), summary.stop_reason
    assert summary.failed_expansions <= 4 * BARREN_AFTER, summary
    # a config the user gives keeps its own choice
    given, _ = new_run_config(RunConfig(), tmp_path / "y", {}, dry_run=True, config_given=True)
    assert given.strategy.hgm.skip_barren is False
