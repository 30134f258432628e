"""Replay reproduces a run (no Docker): the model answers at random and jobs take random
times, so only a faithful replay of the recorded answers and order gives the same run;
it does, whatever the worker count, and a call the recording lacks stops it by name."""

from __future__ import annotations

import json
import random
import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from dgm.config import RunConfig
from dgm.gateway import Gateway, register_script
from dgm.jobs.llm_access import chat
from dgm.loop.meta_loop import LoopSummary, MetaLoop
from dgm.store import Run
from tests.loop.fake_jobs import FakeJob, FakeJobs, run_fake_job
from tests.loop.run_decisions import run_decisions

_coin = random.SystemRandom()
register_script("coin", lambda request, ctx: _coin.choice(["yes", "no"]))


def _ask(job: FakeJob, question: str) -> str:
    assert job.llm is not None
    answer = chat(job.llm, {"messages": [{"role": "user", "content": question}]})
    return answer["choices"][0]["message"]["content"]


def run_coin_job(job: FakeJob) -> dict[str, Any]:
    """A job whose result is what the model said: evaluations solve on a "yes", and an
    expansion's second answer decides whether it changed anything."""
    time.sleep(_coin.uniform(0.0, 0.04))  # completion order differs run to run
    if job.kind == "eval":
        return {"resolved": _ask(job, f"solve {job.task}?") == "yes"}
    _ask(job, "diagnose")
    result = run_fake_job(replace(job, llm=None))
    if _ask(job, "did it help?") == "no" and _ask(job, "sure?") == "no":  # 1 in 4 fails
        return {"status": "empty_patch", "reason": "the agent changed nothing"}
    if result["status"] != "ok":  # the fake's own empty quarter: give it a diff anyway
        return run_fake_job(replace(job, llm=None, job_id=job.job_id + "-x"))
    return result


class CoinJobs(FakeJobs):
    run_job = staticmethod(run_coin_job)


def _run(
    path: Path, agent: Path, model: str, workers: int, **overrides: Any
) -> tuple[Run, LoopSummary]:
    config = RunConfig(name="t").with_overrides({
        "llm.model": model, "workers": workers, "strategy.name": "hgm",
        "limits.max_evals": 24, "seed": 7, **overrides,
    })  # fmt: skip
    run = Run.create(path, config, agent)
    gateway = Gateway.from_config(
        config, run="t", log_dir=run.path / "logs", on_usage=run.record_usage
    ).start()
    try:
        return run, MetaLoop(run, jobs=CoinJobs(run, gateway=gateway)).run()
    finally:
        gateway.stop()


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> tuple[Run, LoopSummary, Path]:
    root = tmp_path_factory.mktemp("replay")
    seed = root / "seed"
    seed.mkdir()
    (seed / "agent.toml").write_text('[agent]\nname = "tiny"\n[commands]\nsolve = "true"\n')
    run, summary = _run(root / "recorded", seed, "scripted/coin", workers=3)
    return run, summary, seed


@pytest.mark.parametrize(("workers", "executor"), [(1, "thread"), (4, "thread"), (2, "process")])
def test_replay_makes_the_same_decisions_whatever_the_worker_count(
    recorded, tmp_path: Path, workers: int, executor: str
) -> None:
    run, summary, seed = recorded
    found = run_decisions(run)
    assert len(found["lineage"]) > 2 and any(r[2] for r in found["results"])
    assert not all(r[2] for r in found["results"])  # the answers decide: both kinds occur
    replayed, again = _run(tmp_path / "replayed", seed, f"replay/{run.path}", workers=workers,
                           **{"executor.kind": executor})  # fmt: skip
    assert run_decisions(replayed) == found
    assert again.stop_reason.startswith("replay: the recorded run started no more jobs")
    assert summary.stop_reason in again.stop_reason and not again.failed
    assert (again.best_node, again.best_passed) == (summary.best_node, summary.best_passed)


def test_a_call_the_recording_lacks_fails_that_job_by_name_and_stops_the_run(
    recorded, tmp_path: Path
) -> None:
    run, _, seed = recorded
    source = tmp_path / "recording"
    shutil.copytree(run.path, source, ignore=shutil.ignore_patterns("work"))
    starts = [e["job"] for e in Run.open(source).events(limit=None, kinds=["job_started"])]
    lost = next(j for j in starts[6:] if j.startswith("eval-"))
    log = source / "logs" / lost / "llm-solve.jsonl"
    assert json.loads(log.read_text())["job_id"] == lost
    log.unlink()

    replayed, summary = _run(tmp_path / "replayed", seed, f"replay/{source}", workers=2)
    assert summary.failed
    assert summary.stop_reason.startswith(f"replay: the recording has no answer for job {lost}")
    job = replayed.job(lost)
    assert job.state == "failed" and f"job {lost} (solve) call 0" in job.error
    assert not replayed.jobs(["running", "queued"])  # stopped cleanly
    assert lost not in {e.job_id for e in replayed.evaluations()}


def test_a_replay_with_another_seed_stops_where_it_diverges(recorded, tmp_path: Path) -> None:
    run, _, seed = recorded
    replayed, summary = _run(tmp_path / "replayed", seed, f"replay/{run.path}", workers=2, seed=8)
    assert summary.failed and summary.stop_reason.startswith("replay")
    assert not replayed.jobs(["running", "queued"])


def test_only_a_recorded_run_with_its_job_order_is_followed(recorded, tmp_path: Path) -> None:
    from dgm.loop.job_order import RecordedOrder

    run, summary, _ = recorded
    order = RecordedOrder.of_model(f"replay/{run.path}")
    assert order is not None and order.workers == 3 and order.stopped == summary.stop_reason
    assert len(order.starts) == len(order.finishes) == len(run.jobs())
    assert RecordedOrder.of_model(f"replay/{run.path / 'logs'}") is None  # answers only
    assert RecordedOrder.of_model("scripted/coin") is None
