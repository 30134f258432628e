"""kill -9 of the loop at random moments, then resume: every finished evaluation kept
exactly once, no duplicate node, the archive consistent with the store."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

from dgm.store import Run

DRIVER = Path(__file__).with_name("driver.py")


def _start(run_dir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(Path.cwd())}
    return subprocess.Popen(
        [sys.executable, str(DRIVER), str(run_dir)], stdout=subprocess.PIPE, text=True, env=env
    )


def _wait_for_running_job(run_dir: Path) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        with Run.open(run_dir) as run:
            if run.jobs(["running"]):
                return
        time.sleep(0.05)
    raise AssertionError("the loop never started a job")


def test_kill_9_then_resume_loses_and_duplicates_nothing(make_run) -> None:
    run = make_run(**{"strategy.name": "hgm", "limits.max_evals": 40, "workers": 3})
    run_dir = run.path
    run.close()
    rng = random.Random(7)
    seen_evaluations: dict[int, tuple] = {}
    for _trial in range(4):
        proc = _start(run_dir)
        _wait_for_running_job(run_dir)
        time.sleep(rng.uniform(0.0, 1.5))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        with Run.open(run_dir) as reopened:
            now = {e.id: (e.node_id, e.task_id, e.resolved) for e in reopened.evaluations()}
        # nothing recorded before a kill is ever lost or changed
        assert all(now.get(k) == v for k, v in seen_evaluations.items())
        seen_evaluations = now
    proc = _start(run_dir)
    out, _ = proc.communicate(timeout=300)
    assert proc.returncode == 0, out
    assert "evaluation budget reached" in out

    with Run.open(run_dir) as final:
        evaluations = final.evaluations()
        pairs = [(e.node_id, e.task_id) for e in evaluations]
        assert len(pairs) == len(set(pairs)) == 40  # each finished evaluation exactly once
        assert all(seen_evaluations[k] == (e.node_id, e.task_id, e.resolved)
                   for e in evaluations for k in [e.id] if k in seen_evaluations)  # fmt: skip
        nodes = final.nodes()
        job_ids = [n.job_id for n in nodes if n.job_id]
        assert len(job_ids) == len(set(job_ids))  # no duplicate node from a re-run job
        assert final.archive.refs() == {n.id: n.commit for n in nodes}
        for node in nodes[1:]:
            assert (
                final.archive.repo.git.rev_parse(f"{node.commit}^")
                == final.node(node.parent_id).commit
            )
        assert not final.jobs(["queued", "running"])  # every in-flight job was re-run
        resumed = [e for e in final.events(limit=10_000) if e["kind"] == "job_resumed"]
        assert resumed, "the kills never hit a job in flight"
