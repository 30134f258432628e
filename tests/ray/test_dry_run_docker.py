"""`dgm run --dry-run --executor ray` on a real two-node cluster: real Docker sandboxes,
real Polyglot tasks, the scripted model behind the head's gateway (reached from each
node through the job's relay). The head is killed mid-run and resumed; evaluations are
recorded once, as run on both nodes, and `dgm status` shows the work per node."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections import Counter

import pytest

from dgm.errors import RunDirError
from dgm.scripted.dry_run import HARD_TASKS
from dgm.store import Run
from tests.conftest import POLYGLOT_DIR
from tests.needs import image_or_missing

pytestmark = [pytest.mark.ray, pytest.mark.docker, pytest.mark.timeout(900)]


def dgm(*args: str, timeout: int = 800) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR)}
    return subprocess.run([sys.executable, "-m", "dgm", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)  # fmt: skip


def test_a_dry_run_over_both_nodes_survives_its_head(cluster, tmp_path) -> None:
    """The head is killed with jobs in flight on the nodes; `dgm resume` against the same
    cluster finishes the run: every evaluation recorded once, by one of both nodes."""
    for name in ("runtime", "polyglot"):
        image_or_missing(name)
    run_dir = tmp_path / "ray-dry"
    env = {**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR)}
    args = [sys.executable, "-m", "dgm", "run", str(run_dir), "--dry-run", "--executor", "ray",
            "--ray-address", cluster.address, "--workers", "2", "--max-evals", "6"]  # fmt: skip
    head = subprocess.Popen(args, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                            start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 400
    placed = 0
    while time.monotonic() < deadline and head.poll() is None and placed < 2:
        time.sleep(2)
        try:
            with Run.open(run_dir) as run:
                placed = len(run.events_of("job_placed"))
        except RunDirError:
            continue  # `dgm run` is still making the folder
    assert head.poll() is None and placed >= 2, "the run ended before it could be killed"
    os.killpg(head.pid, signal.SIGKILL)  # the head dies with jobs in flight on the nodes
    head.wait(timeout=30)
    result = dgm("resume", str(run_dir), "--executor", "ray", "--ray-address", cluster.address)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "stopped: evaluation budget reached" in result.stdout, result.stdout
    with Run.open(run_dir) as run:
        placed_by = {p["job_id"]: p for p in run.events_of("job_placed")}
        evals = run.evaluations()
        assert len(evals) == 6 and len({(e.node_id, e.task_id) for e in evals}) == 6
        assert len({e.job_id for e in evals}) == 6 and all(e.job_id in placed_by for e in evals)
        assert not run.jobs(["running", "queued"])
        by_node = Counter(placed_by[e.job_id]["node"] for e in evals)
        assert set(by_node) == {"head", "node-b"}, by_node
        assert all(placed_by[e.job_id]["images"] for e in evals)  # each node said how
        for e in run.evaluations(0):  # the real hidden tests, judged on the nodes
            assert e.resolved == (e.task_id not in HARD_TASKS), (e.task_id, e.error)
        for e in evals:  # the agent reached the model through its node's relay
            assert e.details["usage"]["calls"] >= 1, e.job_id
            # the artefacts came back to the head
            assert (run.path / e.log_dir / "test_output.txt").is_file()
            assert (run.path / e.log_dir / "patch.diff").is_file()
    status = dgm("status", str(run_dir))
    assert "on nodes  head: " in status.stdout and "node-b: " in status.stdout, status.stdout


def test_doctor_checks_every_node(cluster) -> None:
    result = dgm("sandbox", "doctor", "--executor", "ray", "--ray-address", cluster.address)
    out = result.stdout
    for name in ("head", "node-b"):
        assert f"ok   node {name} (" in out and "docker: reachable" in out, out
        assert f"node {name} (" in out and "slots: 1 dgm_slot" in out, out
    lines = [line for line in out.splitlines() if " images: " in line]
    assert len(lines) == 2, out
