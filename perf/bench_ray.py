"""Ray executor benchmark (issue 14): the same dry run with the local (thread) executor and
with Ray on the same number of sandbox slots, side by side, and Ray's per-job overhead.

    python perf/bench_ray.py [--max-evals 6] [--slots 2]

Needs Docker, the runtime and polyglot images, the Polyglot checkout and the ray extra.
Ray runs on a real cluster of `--slots` nodes on this machine (separate `ray start`
process groups, one sandbox slot each; tests/ray/cluster.py). Per-job overhead = the
job's time as the head sees it (submit to recorded result) minus the job's own run on
its node: scheduling, shipping the parcel (agent code, task), the relay, images check,
the logs back and their extraction. Goal: under 10% of a job and under 1 s.
"""

from __future__ import annotations

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from dgm.store import Run  # noqa: E402
from tests.conftest import POLYGLOT_DIR  # noqa: E402
from tests.ray.cluster import LocalCluster  # noqa: E402


def dry_run(run_dir: Path, max_evals: int, slots: int, *extra: str) -> float:
    env = {**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR)}
    args = [sys.executable, "-m", "dgm", "run", str(run_dir), "--dry-run", "--strategy", "greedy",
            "--workers", str(slots), "--max-evals", str(max_evals), *extra]  # fmt: skip
    started = time.perf_counter()
    result = subprocess.run(args, capture_output=True, text=True, env=env, timeout=1800)
    if result.returncode != 0:
        raise SystemExit(f"dry run failed:\n{result.stdout}\n{result.stderr}")
    return time.perf_counter() - started


def job_seconds(run_dir: Path) -> list[float]:
    with Run.open(run_dir) as run:
        return [j.finished_at - j.started_at for j in run.jobs(["done"]) if j.started_at]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--max-evals", type=int, default=6)
    parser.add_argument("--slots", type=int, default=2)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench-ray-"))

    local_wall = dry_run(tmp / "local", args.max_evals, args.slots)
    cluster = LocalCluster()
    try:
        for i in range(args.slots):
            cluster.add("head" if i == 0 else f"node-{i}", 1)
            cluster.wait_alive(i + 1)
        ray_wall = dry_run(tmp / "ray", args.max_evals, args.slots, "--executor", "ray",
                           "--ray-address", cluster.address)  # fmt: skip
    finally:
        cluster.shutdown()
    with Run.open(tmp / "ray") as run:
        placed = run.events_of("job_placed")
    overhead = [p["head_s"] - p["run_s"] for p in placed]
    share = [(p["head_s"] - p["run_s"]) / p["head_s"] for p in placed if p["head_s"]]
    nodes = sorted({p["node"] for p in placed})
    local_jobs, ray_jobs = job_seconds(tmp / "local"), job_seconds(tmp / "ray")
    print(f"dry run, {args.max_evals} evaluations, {args.slots} slots (greedy strategy)")
    print(f"{'':28}{'local (threads)':>18}{'ray':>18}")
    print(f"{'wall clock, s':28}{local_wall:>18.1f}{ray_wall:>18.1f}")
    print(f"{'jobs':28}{len(local_jobs):>18}{len(ray_jobs):>18}")
    print(f"{'mean job, s':28}{statistics.mean(local_jobs):>18.2f}"
          f"{statistics.mean(ray_jobs):>18.2f}")  # fmt: skip
    print(f"ray nodes used: {', '.join(nodes)}")
    print(f"ray per-job overhead: mean {statistics.mean(overhead):.3f} s, "
          f"max {max(overhead):.3f} s, mean {100 * statistics.mean(share):.1f}% of a job "
          f"(goal: < 1 s, < 10%)")  # fmt: skip


if __name__ == "__main__":
    main()
