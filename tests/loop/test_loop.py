"""The meta loop with fake jobs (no Docker): limits, recording, resume, crash guard."""

from __future__ import annotations

import pytest

from dgm.loop.meta_loop import MetaLoop, rebuild_state
from dgm.store import Run
from tests.loop.fake_jobs import TASKS, FakeJobs


def _check_consistent(run: Run) -> None:
    """No duplicate node or evaluation; archive and store agree."""
    nodes = run.nodes()
    assert len({n.job_id for n in nodes if n.job_id}) == len([n for n in nodes if n.job_id])
    pairs = [(e.node_id, e.task_id) for e in run.evaluations()]
    assert len(pairs) == len(set(pairs))
    assert run.archive.refs() == {n.id: n.commit for n in nodes}


@pytest.mark.parametrize("strategy", ["hgm", "dgm", "greedy", "random"])
def test_run_stops_at_max_evals_and_records_everything(make_run, strategy: str) -> None:
    run = make_run(**{"strategy.name": strategy, "limits.max_evals": 30, "workers": 3})
    summary = MetaLoop(run, jobs=FakeJobs(run)).run()
    assert summary.stop_reason == "evaluation budget reached"
    assert summary.evaluations == len(run.evaluations()) <= 30
    assert len(run.nodes()) > 1  # children were made
    _check_consistent(run)
    assert all(j.state in ("done", "cancelled") for j in run.jobs())
    best = run.score(int(summary.best_node))
    assert (summary.best_passed, summary.best_total) == (best.passed, best.total)
    assert any(e["kind"] == "run_stopped" for e in run.events())


def test_children_beat_the_seed_and_are_chosen(make_run) -> None:
    run = make_run(**{"strategy.name": "dgm", "limits.max_evals": 30})
    summary = MetaLoop(run, jobs=FakeJobs(run)).run()
    seed = run.score(0)
    assert summary.best_node != 0
    assert summary.best_passed / summary.best_total > seed.rate


def test_max_nodes_stops_expansion(make_run) -> None:
    run = make_run(**{"strategy.name": "hgm", "limits.max_nodes": 3, "limits.max_evals": 200})
    # Every expansion makes a child: an empty one still in flight when the limit refuses
    # the next would leave 2 nodes, depending on the jobs' timing.
    summary = MetaLoop(run, jobs=FakeJobs(run, empty_from_depth=99)).run()
    assert summary.stop_reason == "node limit reached"
    assert len([n for n in run.nodes() if n.status == "active"]) == 3


def test_time_limit_stops_the_run(make_run) -> None:
    run = make_run(**{"limits.max_hours": 1.0 / 3600})  # one second
    summary = MetaLoop(run, jobs=FakeJobs(run, delay=(0.1, 0.2))).run()
    assert summary.stop_reason.startswith("time limit reached")
    assert summary.elapsed_s < 5


def test_failed_expansions_are_recorded_with_reason(make_run) -> None:
    # Greedy expands the same best node until a better child is evaluated, so some parent
    # reaches the fourth expansion, which FakeJobs makes empty.
    run = make_run(**{"strategy.name": "greedy", "limits.max_evals": 60, "workers": 4})
    MetaLoop(run, jobs=FakeJobs(run)).run()
    empty = [j for j in run.jobs(["done"]) if j.kind == "expand" and j.result.get("status")]
    assert empty and all(j.result["status"] == "empty_patch" for j in empty)
    assert all("changed nothing" in j.result["reason"] for j in empty)


def test_repeated_crashes_stop_the_run_with_the_cause(make_run) -> None:
    run = make_run(**{"limits.max_evals": 50})
    summary = MetaLoop(run, jobs=FakeJobs(run, crash_on="eval")).run()
    assert "jobs in a row crashed" in summary.stop_reason
    assert "docker engine went away" in summary.stop_reason
    assert run.evaluations() == []  # nothing recorded against the agent
    # hgm's start-up expansions of the root (the reference's) come first and succeed
    assert {j.state for j in run.jobs() if j.kind == "eval"} == {"failed"}


def test_resume_continues_and_reruns_in_flight_jobs(make_run) -> None:
    run = make_run(**{"strategy.name": "hgm", "limits.max_evals": 12})
    MetaLoop(run, jobs=FakeJobs(run)).run()
    first = len(run.evaluations())
    # a job that was running when the process died
    node = run.nodes()[-1]
    missing = next(t for t in TASKS if (node.id, t) not in
                   {(e.node_id, e.task_id) for e in run.evaluations()})  # fmt: skip
    from dgm.loop.job_making.from_actions import eval_job_id

    job_id = eval_job_id(node.id, missing)
    run.queue_job(job_id, "eval", {"node": node.id, "task": missing})
    run.start_job(job_id)
    run.update_config(run.config.with_overrides({"limits.max_evals": 24}))
    reopened = Run.open(run.path)
    jobs = FakeJobs(reopened)
    MetaLoop(reopened, jobs=jobs).run()
    # the in-flight job was submitted before anything new (workers start them in parallel)
    assert ("eval", (node.id, missing)) in jobs.calls[: reopened.config.workers]
    assert first < len(reopened.evaluations()) <= 24
    assert reopened.job(job_id).state == "done"
    _check_consistent(reopened)


def test_rebuild_state_matches_the_store(make_run) -> None:
    run = make_run(**{"strategy.name": "dgm", "limits.max_evals": 25})
    MetaLoop(run, jobs=FakeJobs(run)).run()
    state = rebuild_state(run, FakeJobs(run).task_plan())
    active = [n for n in run.nodes() if n.status == "active"]
    assert state.size == len(active)
    for node in active:
        score = run.score(node.id)
        passed, failed = state.own_counts(node.id)
        assert (passed, passed + failed) == (score.passed, score.total)


def test_dollar_budget_through_the_gateway(make_run) -> None:
    from dgm.gateway import Gateway, register_script

    register_script("fake-priced", lambda request, ctx: "ok")
    run = make_run(**{
        "llm.model": "scripted/fake-priced",
        "llm.prices": {"scripted/fake-priced": {"input": 2000.0, "output": 2000.0}},
        "limits.budget_usd": 1.0,
        "limits.max_evals": 500,
    })  # fmt: skip
    gateway = Gateway.from_config(
        run.config, run="t", log_dir=run.path / "logs", on_usage=run.record_usage
    ).start()
    try:
        summary = MetaLoop(run, jobs=FakeJobs(run, gateway=gateway)).run()
    finally:
        gateway.stop()
    per_call_max = max(u["cost_usd"] / u["calls"] for u in run.usage_by("job_id").values())
    assert summary.stop_reason.startswith("dollar budget reached")
    assert run.spend_usd() <= 1.0 + per_call_max
    assert run.spend_usd() > 0.5
