"""SWE-bench judge cost of copies of real tests (issue 24), side by side with the judge
before them (two appended canaries per test file), on gold patches.

    python perf/bench_swe_judge.py [--data ../shared/swe-bench] [--ids @eval/subsets/swe_ci.txt]
                                   [--baseline /work/wt/baseline]

Per instance, alternating so machine load falls on both alike: the judge as it was
(`_plan` returning None: the fallback canaries, one container exec after the prepare
step) and the judge with copies (the prepare step's copy-out, the host's planning and
the extra tests). Printed: both wall times, the difference, how many copies ran, and
that both verdicts resolved. With `--baseline DIR`, the other checkout's judge (e.g. main
before round two) instead of the fallback, run in a child process from that checkout.
The instances' images must be built (for the baseline too: its recipe may differ).
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

from dgm.benchmarks.subsets import read_id_file
from dgm.benchmarks.swebench import judge as judge_module
from dgm.benchmarks.swebench.loader import SweTasks
from dgm.sandbox import ResourceLimits

BASELINE = """
import json, sys, time
from dgm.benchmarks.swebench.judge import judge_swebench  # the benchmarks-by-kind layout
from dgm.benchmarks.swebench.loader import SweTasks
from dgm.sandbox import ResourceLimits
task = SweTasks(sys.argv[1]).task(sys.argv[2])
started = time.monotonic()
verdict, _ = judge_swebench(task, task.meta["patch"], ResourceLimits())
print(json.dumps({"wall": time.monotonic() - started, "resolved": verdict.resolved}))
"""


def baseline_run(checkout: str, data: str, iid: str) -> tuple[float, bool]:
    """The other checkout's judge on the gold patch: wall time, resolved."""
    env = dict(os.environ, PYTHONPATH=checkout)
    proc = subprocess.run([sys.executable, "-c", BASELINE, str(Path(data).resolve()), iid],
                          env=env, capture_output=True, text=True, cwd=checkout)  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"the baseline judge failed on {iid}:\n{proc.stderr[-2000:]}")
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    return float(out["wall"]), bool(out["resolved"])


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/swe-bench")
    parser.add_argument("--ids", default="@eval/subsets/swe_ci.txt")
    parser.add_argument("--baseline", help="another checkout whose judge to time beside")
    args = parser.parse_args()
    ids = read_id_file(Path(args.ids[1:])) if args.ids.startswith("@") else args.ids.split(",")
    tasks = SweTasks(args.data)
    extra: list[float] = []
    before, after = ("baseline s", "this s") if args.baseline else ("before s", "copies s")
    print(f"{'instance':<40} {before:>10} {after:>9} {'extra s':>8}  copies  resolved")
    for iid in ids:
        task = tasks.task(iid)
        started = time.monotonic()
        if args.baseline:
            old_s, old_resolved = baseline_run(args.baseline, args.data, iid)
            started = time.monotonic() - old_s
        else:
            with mock.patch.object(judge_module, "_plan", lambda *a, **k: None):
                old, _ = judge_module.judge_swebench(task, task.meta["patch"], ResourceLimits())
            old_resolved = old.resolved
        mid = time.monotonic()
        after, _ = judge_module.judge_swebench(task, task.meta["patch"], ResourceLimits())
        end = time.monotonic()
        copies = after.details.get("copies") or {}
        count = len(copies.get("must_fail", {})) + len(copies.get("must_pass", {}))
        extra.append((end - mid) - (mid - started))
        print(f"{iid:<40} {mid - started:>10.1f} {end - mid:>9.1f} {extra[-1]:>8.1f}  "
              f"{count:>6}  {old_resolved}/{after.resolved}")  # fmt: skip
    print(f"median extra per task: {statistics.median(extra):.1f} s over {len(extra)} instances")


if __name__ == "__main__":
    main()
