"""Jobs are plain data: each kind round-trips through JSON and runs to the same result in a
worker process as in this one (real Docker, the built-in scripted model behind a real
gateway, one small Python task). The jobs come from the loop's own `SandboxJobs`, bound to the
gateway by endpoint descriptions; nothing else of this process reaches the worker."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dgm.config import RunConfig
from dgm.executors import ProcessExecutor, Ticket, Work
from dgm.jobs import job_from_dict, job_to_dict, run_job
from dgm.jobs.diagnose import ImprovementTarget
from dgm.loop.history_writer import write_history
from dgm.paths import seed_agent_dir
from dgm.store import Run
from dgm.strategies import Evaluate
from tests.conftest import POLYGLOT_DIR
from tests.needs import image_or_missing, missing

pytestmark = pytest.mark.docker
TASK = "python__wordy"  # needs the search tool the seed lacks: the expansion adds it


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory):
    from dgm.benchmarks import load_benchmark
    from dgm.gateway import Gateway
    from dgm.loop.job_making.sandbox_jobs import SandboxJobs
    from dgm.scripted.dry_run import DRY_RUN_SUBSET, register

    if not POLYGLOT_DIR.is_dir():
        missing("polyglot", f"polyglot benchmark checkout not found at {POLYGLOT_DIR}")
    for name in ("runtime", "polyglot"):
        image_or_missing(name)
    config = RunConfig(name="jobs-as-data").with_overrides({
        "llm.model": "scripted/capability", "llm.diagnose_model": "scripted/capability",
        "benchmark.data": str(POLYGLOT_DIR), "benchmark.subset": DRY_RUN_SUBSET,
        "expand.max_steps": 30,
    })  # fmt: skip
    run = Run.create(tmp_path_factory.mktemp("jobs") / "run", config, seed_agent_dir())
    register(load_benchmark("polyglot", str(POLYGLOT_DIR)).task)
    gateway = Gateway.from_config(config, run=config.name, log_dir=run.path / "logs",
                                  on_usage=run.record_usage, port=None).start()  # fmt: skip
    jobs = SandboxJobs(run, gateway)
    code = run.checkout(0, run.path / "work" / "seed")
    yield run, jobs, code
    gateway.stop()


def _in_a_worker_process(job):
    with ProcessExecutor(1) as pool:
        got: list = []
        work = Work(run_job, job, lambda r, e: got.append((r, e)))
        pool.submit(Ticket(0, Evaluate(0, TASK), work))
        pool.next_completion()
    result, error = got[0]
    assert error is None, error
    return result


def _both_ways(jobs, make_job):
    """(result here, result in a worker process), each from a freshly bound job."""
    results = []
    for where in ("here", "worker"):
        job = make_job(where)
        data = json.loads(json.dumps(job_to_dict(job)))
        assert job_from_dict(data) == job  # JSON in, the same job out
        job = job_from_dict(data)
        try:
            results.append(run_job(job) if where == "here" else _in_a_worker_process(job))
        finally:
            jobs.release(job)
        results[-1] = (job, results[-1])
    return results


def test_eval_job_runs_the_same_in_a_worker_process(world) -> None:
    run, jobs, code = world

    def make(where: str):
        log = run.log_dir("eval", f"eval-{where}")
        return jobs.eval_job(f"eval-{where}", 0, code, TASK, log)

    (job_a, a), (job_b, b) = _both_ways(jobs, make)
    assert job_a.llm is not None and job_a.llm.socket_path  # an endpoint, not a gateway
    assert a.error is None and b.error is None, (a.error, b.error)
    assert (a.resolved, a.tests, a.empty_patch) == (b.resolved, b.tests, b.empty_patch)
    assert a.tests_total and not a.resolved  # the seed lacks the tool: the tests ran, failed
    patch = [Path(j.log_dir, "patch.diff").read_text() for j in (job_a, job_b)]
    assert patch[0] == patch[1]
    for job, outcome in ((job_a, a), (job_b, b)):
        evaluation = jobs.settle(job, outcome)  # usage as the gateway counted it
        assert evaluation.details["usage"]["calls"] >= 1


def test_expand_job_runs_the_same_in_a_worker_process(world) -> None:
    run, jobs, code = world
    target = ImprovementTarget("task", TASK, jobs.task_statement(TASK), test_output="failed")

    def make(where: str):
        log = run.log_dir("expand", f"expand-{where}")
        history = write_history(run, 0, 0, log / "history")
        return jobs.expand_job(f"expand-{where}", 0, code, target, log, history_dir=history)

    (job_a, a), (job_b, b) = _both_ways(jobs, make)
    assert job_a.diagnose_llm is not None and job_a.self_improve_llm is not None
    for job in (job_a, job_b):  # the diagnosis read the parent's history, in both places
        assert job.history_dir == str(Path(job.log_dir) / "history")
        assert "History of node 0" in Path(job.log_dir, "llm-diagnose.jsonl").read_text()
    assert a.status == b.status == "ok", (a.reason, b.reason)
    assert a.diff == b.diff and "search_files" in a.diff
    assert a.problem_statement == b.problem_statement
