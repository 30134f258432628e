"""Stops and chaos, for real: `dgm run --dry-run` in real Docker sandboxes, stopped by
Ctrl-C (once: running jobs finish; twice: their containers go, the jobs re-run on
resume), killed with -9 at random moments, starved of disk space, its database locked by
another program; every time the run ends with no evaluation twice, no job left
`running`, every node's commit in the archive and no container left behind."""

from __future__ import annotations

import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from dgm.store import Run
from tests.conftest import POLYGLOT_DIR

pytestmark = [pytest.mark.docker, pytest.mark.slow]

ARGS = ["--dry-run", "--strategy", "hgm", "--max-evals", "8", "--workers", "2"]
EVALS = 8


def _env() -> dict[str, str]:
    return {**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR)}


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "dgm", *args], stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=_env())  # fmt: skip


def _containers(run_name: str) -> list[str]:
    import docker

    from dgm.sandbox.orphans import list_containers

    return [e["Id"] for e in list_containers(docker.from_env(), f"dgm.run={run_name}")]


def _wait_for_container(run_name: str, proc: subprocess.Popen[str], limit: float = 300) -> None:
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline and proc.poll() is None:
        if _containers(run_name):
            return
        time.sleep(0.2)
    raise AssertionError(f"no container of {run_name} appeared (exit {proc.poll()})")


def _finish(run_dir: Path, timeout: float = 600) -> str:
    """Resume until the run ends by its budget; the output."""
    proc = _start("resume", str(run_dir))
    out, _ = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, out
    return out


def _check_whole(run_dir: Path, evaluations: int) -> None:
    with Run.open(run_dir) as run:
        pairs = [(e.node_id, e.task_id) for e in run.evaluations()]
        assert len(pairs) == len(set(pairs)) == evaluations  # no evaluation twice
        assert not run.jobs(["queued", "running"])  # no job left running
        nodes = run.nodes()
        assert run.archive.refs() == {n.id: n.commit for n in nodes}
        assert all(run.archive.has_commit(n.commit) for n in nodes)
        job_ids = [n.job_id for n in nodes if n.job_id]
        assert len(job_ids) == len(set(job_ids))  # no node twice
    assert _containers(run_dir.name) == []  # no container left behind


def _snapshot(run_dir: Path) -> dict[int, tuple]:
    with Run.open(run_dir) as run:
        return {e.id: (e.node_id, e.task_id, e.resolved) for e in run.evaluations()}


def test_ctrl_c_once_lets_jobs_finish_twice_cancels_them(tmp_path: Path) -> None:
    run_dir = tmp_path / "chaos-ctrl-c"
    proc = _start("run", str(run_dir), *ARGS)
    _wait_for_container(run_dir.name, proc)
    proc.send_signal(signal.SIGINT)  # once: start nothing new, let the running jobs finish
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    assert "stopped: interrupted" in out and "best:" in out, out  # the summary
    with Run.open(run_dir) as run:
        assert not run.jobs(["queued", "running"]), out  # every running job finished
        assert len(run.evaluations()) < EVALS
    assert _containers(run_dir.name) == []

    proc = _start("resume", str(run_dir))
    _wait_for_container(run_dir.name, proc)
    proc.send_signal(signal.SIGINT)
    time.sleep(1)
    proc.send_signal(signal.SIGINT)  # twice: cancel now
    out, _ = proc.communicate(timeout=120)
    assert proc.returncode == 130, out
    assert "cancelled: removed" in out, out
    assert _containers(run_dir.name) == []  # the containers are gone at once
    with Run.open(run_dir) as run:
        cancelled = [j.id for j in run.jobs(["running"])]
    assert cancelled, "the second Ctrl-C cancelled nothing"

    _finish(run_dir)
    with Run.open(run_dir) as run:
        assert all(run.job(job).state in ("done", "cancelled") for job in cancelled)
    _check_whole(run_dir, EVALS)


def test_kill_9_at_random_moments_then_resume(tmp_path: Path) -> None:
    run_dir = tmp_path / "chaos-kill-9"
    rng = random.Random(int(os.environ.get("DGM_CHAOS_SEED", "15")))
    proc = _start("run", str(run_dir), *ARGS)
    seen: dict[int, tuple] = {}
    kills = 0
    for _kill in range(3):
        try:
            _wait_for_container(run_dir.name, proc)
        except AssertionError:
            break  # the run ended before another job started
        time.sleep(rng.uniform(0.0, 8.0))
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        kills += 1
        now = _snapshot(run_dir)
        assert all(now.get(k) == v for k, v in seen.items())  # nothing recorded is lost
        seen = now
        proc = _start("resume", str(run_dir))
    assert kills >= 2, "the run ended before it could be killed twice"
    out, _ = proc.communicate(timeout=600)
    assert proc.returncode == 0, out
    assert "stopped:" in out
    _check_whole(run_dir, EVALS)
    final = _snapshot(run_dir)
    assert all(final[k] == v for k, v in seen.items())


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 64 MiB tmpfs for the run directory (we run as root in CI)."""
    mount = tmp_path / "disk"
    mount.mkdir()
    result = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=64m", "tmpfs", str(mount)],
                            capture_output=True, text=True)  # fmt: skip
    if result.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here (needs root): {result.stderr.strip()}")
    try:
        yield mount
    finally:
        subprocess.run(["umount", "-l", str(mount)], check=False)


def _fill(mount: Path) -> Path:
    """Fill the file system to the last block; the filler, to delete later."""
    filler = mount / "filler"
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (1 << 20, 4096, 1):  # unbuffered: nothing left to flush on close
            try:
                while os.write(fd, b"\0" * size):
                    pass
            except OSError:
                pass
    finally:
        os.close(fd)
    return filler


def test_a_full_disk_pauses_or_stops_the_run_with_the_cause_and_loses_nothing(
    small_disk: Path,
) -> None:
    """Jobs that meet the full disk are re-queued and the run pauses until there is space
    again (then goes on by itself); if the store itself can take no result first, the run
    stops naming the cause. Either way nothing recorded is lost."""
    run_dir = small_disk / "chaos-full-disk"
    proc = _start("run", str(run_dir), *ARGS)
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if (run_dir / "run.toml").exists() and len(_snapshot(run_dir)) >= 2:
            break
        time.sleep(0.5)
    before = _snapshot(run_dir)
    filler = _fill(small_disk)
    try:  # the store may not even take the `paused` event: give it time, then free space
        deadline = time.monotonic() + 90
        while time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.5)
    finally:
        filler.unlink()
    out, _ = proc.communicate(timeout=600)
    if proc.returncode == 0:  # paused, then went on by itself once space was back
        assert proc.returncode == 0, out
        assert "PAUSED: disk down since" in out, out
    else:
        assert proc.returncode == 1, out
        error = [line for line in out.splitlines() if line.startswith("error:")]
        print(error)  # shown with `pytest -rP`
        assert len(error) == 1 and out.rstrip().endswith(error[0]), out  # one line, last
        assert "the run stopped because" in error[0], out
        assert "No space left on device" in error[0] or "disk is full" in error[0], out
        assert "free disk space" in error[0], out
        _finish(run_dir)  # space again: the run finishes
    after = _snapshot(run_dir)
    assert all(after[k] == v for k, v in before.items())  # nothing recorded was lost
    _check_whole(run_dir, EVALS)
    assert all(_snapshot(run_dir)[k] == v for k, v in after.items())


def test_a_locked_database_stops_the_run_with_the_cause_and_loses_nothing(
    tmp_path: Path,
) -> None:
    run_dir = tmp_path / "chaos-locked-db"
    env = {**_env(), "DGM_DB_BUSY_TIMEOUT_S": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "dgm", "run", str(run_dir), *ARGS],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                            env=env)  # fmt: skip
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline and proc.poll() is None:
        if (run_dir / "run.toml").exists() and len(_snapshot(run_dir)) >= 2:
            break
        time.sleep(0.5)
    blocker = sqlite3.connect(run_dir / "run.sqlite", isolation_level=None)
    blocker.execute("BEGIN EXCLUSIVE")  # another program holds the write lock
    try:
        before = _snapshot(run_dir)
        out, _ = proc.communicate(timeout=600)
    finally:
        blocker.execute("ROLLBACK")
        blocker.close()
    assert proc.returncode == 1, out
    error = [line for line in out.splitlines() if line.startswith("error:")]
    print(error)  # shown with `pytest -rP`
    assert len(error) == 1 and out.rstrip().endswith(error[0]), out
    assert "jobs in a row could not be recorded" in error[0], out
    assert "database is locked" in error[0] and "close it, then `dgm resume" in error[0], out
    after = _snapshot(run_dir)
    assert all(after[k] == v for k, v in before.items())  # nothing recorded was lost

    _finish(run_dir)  # the lock is gone: the run finishes
    _check_whole(run_dir, EVALS)
    assert all(_snapshot(run_dir)[k] == v for k, v in after.items())
