"""One process per run directory, with real processes: a second `dgm run`/`dgm resume` on
a live run names the holder and exits 2; a holder killed with -9 leaves a lock that the
next process takes over, and of two racing for it exactly one wins."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from dgm.store.run_lock import LOCK_FILE, RunLock

REPO = Path(__file__).resolve().parents[2]
HOLD = """
import sys, time
from dgm.store.run_lock import RunLock, RunLocked
try:
    lock = RunLock(sys.argv[1]).acquire()
except RunLocked:
    print("lost", flush=True)
    sys.exit(3)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _holder(run_dir: Path, seconds: float = 60) -> subprocess.Popen[str]:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(run_dir), str(seconds)],
                            stdout=subprocess.PIPE, text=True, env=_env())  # fmt: skip
    assert proc.stdout is not None and proc.stdout.readline().strip() == "held"
    return proc


def _dgm(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dgm", *args], capture_output=True, text=True,
                          timeout=120, env=_env())  # fmt: skip


def test_a_second_process_on_a_live_run_is_told_who_holds_it(make_run) -> None:
    run = make_run()
    run.close()
    holder = _holder(run.path)
    try:
        for args in (["resume", str(run.path)], ["run", str(run.path), "--dry-run"]):
            result = _dgm(*args)
            assert result.returncode == 2, result.stdout + result.stderr
            lines = result.stderr.strip().splitlines()
            assert len(lines) == 1 and "Traceback" not in result.stderr, result.stderr
            assert f"pid {holder.pid} on host {socket.gethostname()} since " in lines[0]
            assert "is in use by" in lines[0] and f"kill {holder.pid}" in lines[0]
    finally:
        holder.kill()
        holder.wait()


def test_a_killed_holders_lock_is_taken_over_and_names_the_dead(make_run) -> None:
    run = make_run()
    run.close()
    holder = _holder(run.path)
    holder.send_signal(signal.SIGKILL)
    holder.wait()
    record = json.loads((run.path / LOCK_FILE).read_text())
    assert record["pid"] == holder.pid  # the dead holder's record is still there
    with RunLock(run.path) as lock:
        assert lock.took_over is not None and lock.took_over.pid == holder.pid
        assert json.loads((run.path / LOCK_FILE).read_text())["pid"] == os.getpid()
    assert (run.path / LOCK_FILE).read_text() == ""  # released: no holder named


def test_of_two_processes_racing_for_a_stale_lock_one_wins(tmp_path: Path) -> None:
    (tmp_path / LOCK_FILE).write_text(
        json.dumps({"pid": 2**22 + 17, "host": socket.gethostname(), "since": time.time()})
    )
    racers = [
        subprocess.Popen(
            [sys.executable, "-c", HOLD, str(tmp_path), "3"],
            stdout=subprocess.PIPE,
            text=True,
            env=_env(),
        )  # fmt: skip
        for _ in range(2)
    ]
    outcomes = sorted(p.communicate(timeout=60)[0].strip() for p in racers)
    assert outcomes == ["held", "lost"]
