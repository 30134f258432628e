"""SWE-bench judge cost of copies of real tests (issue 24), side by side with the judge
before them (two appended canaries per test file), on gold patches.

    python perf/bench_swe_judge.py [--data ../shared/swe-bench] [--ids @eval/subsets/swe_ci.txt]

Per instance, alternating so machine load falls on both alike: the judge as it was
(`_plan` returning None: the fallback canaries, one container exec after the prepare
step) and the judge with copies (the prepare step's copy-out, the host's planning and
the extra tests). Printed: both wall times, the difference, how many copies ran, and
that both verdicts resolved. The instances' images must be built.
"""

from __future__ import annotations

import argparse
import statistics
import time
from pathlib import Path
from unittest import mock

from dgm.benchmarks.subsets import read_id_file
from dgm.benchmarks.swebench import judge as judge_module
from dgm.benchmarks.swebench.loader import SweTasks
from dgm.sandbox import ResourceLimits


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--data", default="../shared/swe-bench")
    parser.add_argument("--ids", default="@eval/subsets/swe_ci.txt")
    args = parser.parse_args()
    ids = read_id_file(Path(args.ids[1:])) if args.ids.startswith("@") else args.ids.split(",")
    tasks = SweTasks(args.data)
    extra: list[float] = []
    print(f"{'instance':<40} {'before s':>9} {'copies s':>9} {'extra s':>8}  copies  resolved")
    for iid in ids:
        task = tasks.task(iid)
        started = time.monotonic()
        with mock.patch.object(judge_module, "_plan", lambda *a, **k: None):
            before, _ = judge_module.judge_swebench(task, task.meta["patch"], ResourceLimits())
        mid = time.monotonic()
        after, _ = judge_module.judge_swebench(task, task.meta["patch"], ResourceLimits())
        end = time.monotonic()
        copies = after.details.get("copies") or {}
        count = len(copies.get("must_fail", {})) + len(copies.get("must_pass", {}))
        extra.append((end - mid) - (mid - started))
        print(f"{iid:<40} {mid - started:>9.1f} {end - mid:>9.1f} {extra[-1]:>8.1f}  "
              f"{count:>6}  {before.resolved}/{after.resolved}")  # fmt: skip
    print(f"median extra per task: {statistics.median(extra):.1f} s over {len(extra)} instances")


if __name__ == "__main__":
    main()
