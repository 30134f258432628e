"""One job's oversized request is refused for that job (HTTP 402) and the run goes on
(issue 12: a huge `max_tokens` used to trip the run cap and stop the whole run)."""

from __future__ import annotations

import pytest

from dgm.gateway import Gateway, register_script
from dgm.jobs.llm_access import BudgetRefused, chat
from dgm.loop.meta_loop import MetaLoop
from dgm.store import Evaluation

from .fake_jobs import FakeJob, FakeJobs, run_fake_job

register_script("fake-greedy", lambda request, ctx: "ok")


def run_greedy_job(job: FakeJob) -> dict:
    """Every evaluation of task-0 asks for a billion output tokens and, like an agent that
    got HTTP 402, stops and leaves the task unsolved; everything else is a fake job."""
    if job.kind != "eval" or job.task != "task-0":
        return run_fake_job(job)
    request = {"messages": [{"role": "user", "content": "all of it"}], "max_tokens": 10**9}
    try:
        chat(job.llm, request)
    except BudgetRefused:
        return {"resolved": False, "refused": True}
    return {"resolved": False, "refused": False}


class GreedyOnTask0(FakeJobs):
    run_job = staticmethod(run_greedy_job)
    refused = 0

    def settle(self, job: FakeJob, result: dict) -> Evaluation:
        GreedyOnTask0.refused += bool(result.get("refused"))
        return super().settle(job, result)


@pytest.mark.parametrize("job_usd", [None, 100_000.0], ids=["default-job-budget", "run-cap"])
def test_a_huge_max_tokens_request_fails_its_job_and_the_run_goes_on(make_run, job_usd) -> None:
    job_budget = {} if job_usd is None else {"llm.job_budget": {"max_usd": job_usd}}
    run = make_run(**job_budget, **{
        "llm.model": "scripted/fake-greedy",
        "llm.prices": {"scripted/fake-greedy": {"input": 1.0, "output": 10.0}},
        "limits.budget_usd": 5.0,
        "limits.max_evals": 24,
        "strategy.name": "greedy",
    })  # fmt: skip
    gateway = Gateway.from_config(
        run.config, run="t", log_dir=run.path / "logs", on_usage=run.record_usage
    ).start()
    try:
        summary = MetaLoop(run, jobs=GreedyOnTask0(run, gateway=gateway)).run()
    finally:
        gateway.stop()
    assert GreedyOnTask0.refused >= 1 and gateway.totals().refused >= 1
    assert summary.stop_reason == "evaluation budget reached"
    assert not gateway.run_budget_exhausted()
    evaluations = run.evaluations()
    assert len(evaluations) == 24 and any(e.resolved for e in evaluations)
    assert all(not e.resolved for e in evaluations if e.task_id == "task-0")
