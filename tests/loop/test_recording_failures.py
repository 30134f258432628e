"""When finished jobs cannot be recorded, the run stops with the cause and loses nothing:
real processes and a real SQLite database held by another connection (the Docker
versions with the real dry run are in test_chaos_docker.py)."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from dgm.loop.meta_loop import MetaLoop
from dgm.loop.stop_rules import MAX_RECORDING_FAILURES, StopKind, remedy
from dgm.store import Run
from tests.loop.fake_jobs import FakeJobs

DRIVER = Path(__file__).with_name("driver.py")
REPO = Path(__file__).resolve().parents[2]


def _driver(run_dir: Path) -> subprocess.Popen[str]:
    env = {**os.environ, "PYTHONPATH": str(REPO), "DGM_DB_BUSY_TIMEOUT_S": "0.3"}
    return subprocess.Popen([sys.executable, str(DRIVER), str(run_dir)], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env)  # fmt: skip


def _evaluations(run_dir: Path) -> dict[int, tuple]:
    with Run.open(run_dir) as run:
        return {e.id: (e.node_id, e.task_id, e.resolved) for e in run.evaluations()}


def test_a_locked_database_stops_the_run_with_the_cause_and_loses_nothing(make_run) -> None:
    run = make_run(**{"strategy.name": "hgm", "limits.max_evals": 30, "workers": 2})
    run_dir = run.path
    run.close()
    proc = _driver(run_dir)
    deadline = time.monotonic() + 60
    while len(_evaluations(run_dir)) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    blocker = sqlite3.connect(run_dir / "run.sqlite", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # another program holds the write lock
    try:
        before = _evaluations(run_dir)
        out, _ = proc.communicate(timeout=120)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert proc.returncode == 0, out
    reason = out.strip().splitlines()[-1]
    assert reason.startswith(f"{MAX_RECORDING_FAILURES} jobs in a row could not be recorded"), out
    assert "database is locked" in reason
    assert "close it, then `dgm resume" in remedy(reason, run_dir)
    after = _evaluations(run_dir)
    assert all(after[k] == v for k, v in before.items())  # nothing recorded was lost

    proc = _driver(run_dir)  # the lock is gone: resume finishes the run
    out, _ = proc.communicate(timeout=120)
    assert "evaluation budget reached" in out, out
    with Run.open(run_dir) as final:
        pairs = [(e.node_id, e.task_id) for e in final.evaluations()]
        assert len(pairs) == len(set(pairs)) == 30
        assert not final.jobs(["queued", "running"])
        assert final.archive.refs() == {n.id: n.commit for n in final.nodes()}
    assert all(_evaluations(run_dir)[k] == v for k, v in after.items())


class _RefusingRun:
    """A store whose writes of results fail (as on a full disk) while reads work."""

    def __init__(self, run: Run, error: Exception) -> None:
        self._run, self._error = run, error

    def __getattr__(self, name: str):
        if name in ("record_evaluation", "add_node", "finish_job", "event"):
            raise self._error
        return getattr(self._run, name)


def test_unrecordable_results_mark_jobs_failed_and_stop_after_a_few(make_run) -> None:
    run = make_run(**{"strategy.name": "hgm", "limits.max_evals": 30})
    loop = MetaLoop(run, jobs=FakeJobs(run))
    refusal = sqlite3.OperationalError("database or disk is full")
    loop.recorder.run = _RefusingRun(run, refusal)  # type: ignore[assignment]
    summary = loop.run()
    assert summary.stop_kind is StopKind.RECORDING and summary.failed
    assert "database or disk is full" in summary.stop_reason
    assert "free disk space" in remedy(summary.stop_reason, run.path)
    failed = run.jobs(["failed"])
    assert len(failed) >= MAX_RECORDING_FAILURES
    assert all("could not record the job's result" in (j.error or "") for j in failed)
    assert not run.jobs(["running"])  # marked failed with the reason, not left running
    assert not run.evaluations()
