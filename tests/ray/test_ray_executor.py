"""The Ray executor on a real two-node cluster on this machine: jobs run on both nodes,
reach the head's gateway through a relay on their node, come back with their logs and are
recorded by the head with the node that ran them; a node killed mid-run loses nothing."""

from __future__ import annotations

import threading
import time
from collections import Counter

import pytest

from dgm.config import RunConfig
from dgm.loop.meta_loop import MetaLoop
from dgm.store import Run
from tests.ray.shipped_jobs import ShippedFakeJobs

pytestmark = [pytest.mark.ray, pytest.mark.timeout(600)]


def _make_run(tmp_path, tiny_seed, name: str, max_evals: int) -> Run:
    overrides = {"workers": 2, "limits.max_evals": max_evals, "executor.kind": "ray",
                 "llm.model": "scripted/ray-echo"}  # fmt: skip
    return Run.create(tmp_path / name, RunConfig(name="t").with_overrides(overrides), tiny_seed)


def _gateway(run: Run):
    from dgm.gateway import Gateway, register_script

    register_script("ray-echo", lambda request, ctx: "ok")
    return Gateway.from_config(run.config, run="t", log_dir=run.path / "logs",
                               on_usage=run.record_usage).start()  # fmt: skip


def _placements(run: Run) -> list[dict]:
    return run.events_of("job_placed")


def _check_recorded_once(run: Run, max_evals: int) -> None:
    placed = Counter(p["job_id"] for p in _placements(run))
    assert placed and max(placed.values()) == 1  # each job recorded once
    done = {j.id for j in run.jobs(["done"])}
    assert done == set(placed)  # every finished job came back from a node
    assert not run.jobs(["failed", "running", "queued"])
    evals = run.evaluations()
    assert len(evals) == max_evals == len({e.job_id for e in evals})  # none lost, none twice


def test_a_run_spreads_over_both_nodes_and_the_head_records_it(cluster, tmp_path, tiny_seed):
    run = _make_run(tmp_path, tiny_seed, "spread", 8)
    gateway = _gateway(run)
    try:
        jobs = ShippedFakeJobs(run, delay=(0.3, 0.6), gateway=gateway)
        summary = MetaLoop(run, jobs=jobs).run()
        gateway.flush()
    finally:
        gateway.stop()
    assert summary.stop_reason == "evaluation budget reached"
    _check_recorded_once(run, 8)
    nodes = {p["node"] for p in _placements(run)}
    assert nodes == {"head", "node-b"}
    # Each job called the LLM once, through its node's relay, counted at the head's gateway.
    calls = run.usage_by("job_id")
    assert all(calls[j.id]["calls"] == 1 for j in run.jobs(["done"]))
    # Each job's log folder is on the head (extracted from what the node sent back).
    assert all((run.path / e.log_dir).is_dir() for e in run.evaluations())


def test_a_node_killed_mid_run_loses_nothing(cluster, tmp_path, tiny_seed):
    import ray

    run = _make_run(tmp_path, tiny_seed, "kill", 8)
    gateway = _gateway(run)
    kill: dict[str, float] = {}

    def kill_node_b() -> None:
        kill["free_slots"] = ray.available_resources().get("dgm_slot", 0.0)
        kill["at"] = time.time()
        cluster.kill("node-b")

    def kill_node_b_while_busy(loop, completion) -> None:
        # Both slots are busy from the start (2 workers, one slot per node), so node-b
        # is running a job a moment after the second completion.
        if completion is not None and "armed" not in kill and len(_placements(run)) >= 2:
            kill["armed"] = 1
            threading.Timer(0.5, kill_node_b).start()

    try:
        jobs = ShippedFakeJobs(run, delay=(1.5, 2.0), gateway=gateway)
        summary = MetaLoop(run, jobs=jobs, on_progress=kill_node_b_while_busy).run()
    finally:
        gateway.stop()
    assert kill["free_slots"] == 0  # node-b was running a job when it died
    assert summary.stop_reason == "evaluation budget reached"
    _check_recorded_once(run, 8)
    assert len([n for n in ray.nodes() if n["Alive"]]) == 1
    placed = _placements(run)
    # Which node finished jobs before the kill depends on the strategy's first moves
    # (reference hgm expands the root first); that node-b was busy when it died is
    # asserted above through its free slots.
    assert {p["node"] for p in placed if p["ts"] > kill["at"]} == {"head"}
