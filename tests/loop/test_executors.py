"""The process executor: jobs are plain data, so a run in worker processes makes the same
decisions and records the same results as a run in threads, and its jobs reach the LLM
through the endpoint the loop bound for them."""

from __future__ import annotations

import pytest

from dgm.config import RunConfig
from dgm.errors import ConfigError
from dgm.executors import ProcessExecutor, Ticket, make_executor
from dgm.loop.meta_loop import MetaLoop
from dgm.store import Run
from dgm.strategies import Evaluate
from tests.loop.fake_jobs import FakeJobs


def _history(run: Run) -> tuple[list, list]:
    nodes = [(n.id, n.parent_id, n.origin, n.status) for n in run.nodes()]
    evals = [(e.node_id, e.task_id, e.resolved) for e in run.evaluations()]
    return nodes, evals


def test_process_executor_grows_the_same_tree_as_threads(tmp_path, tiny_seed) -> None:
    histories = []
    for kind in ("thread", "process"):
        overrides = {"workers": 1, "limits.max_evals": 14, "executor.kind": kind}
        config = RunConfig(name="t").with_overrides(overrides)
        run = Run.create(tmp_path / kind, config, tiny_seed)
        summary = MetaLoop(run, jobs=FakeJobs(run)).run()
        assert summary.stop_reason == "evaluation budget reached"
        histories.append((_history(run), summary.best_node))
    assert histories[0] == histories[1]
    (nodes, _), _ = histories[0]
    assert len(nodes) > 1  # children were made, in worker processes too


def test_jobs_in_worker_processes_reach_the_gateway_by_endpoint(make_run) -> None:
    from dgm.gateway import Gateway, register_script

    register_script("fake-echo", lambda request, ctx: "ok")
    run = make_run(**{"llm.model": "scripted/fake-echo", "limits.max_evals": 6})
    gateway = Gateway.from_config(
        run.config, run="t", log_dir=run.path / "logs", on_usage=run.record_usage, port=None
    ).start()  # no TCP port: the sockets bound per job are the only way in
    try:
        MetaLoop(run, jobs=FakeJobs(run, gateway=gateway), executor="process").run()
        gateway.flush()
    finally:
        gateway.stop()
    calls = run.usage_by("job_id")
    done = [j.id for j in run.jobs(["done"])]
    assert done and all(calls[j]["calls"] == 1 for j in done)


def test_the_process_executor_refuses_closures() -> None:
    with ProcessExecutor(1) as executor, pytest.raises(TypeError, match="plain data"):
        executor.submit(Ticket(0, Evaluate(0, "t"), lambda: None))


def test_an_unknown_executor_is_a_clear_error() -> None:
    with pytest.raises(ConfigError, match="thread, process"):
        make_executor("ray", 2)
