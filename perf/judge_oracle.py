"""The Polyglot judge's oracle check, in Docker (one judge run at a time): each exercise's
reference solution must resolve (and not be tampered), its stub (the empty patch) must
not resolve; an optional attack file (written over the solution file) must not resolve.

    python perf/judge_oracle.py javascript__poker python__book-store ... [--empty]
    (attack paths are relative to the working directory, e.g. tests/benchmarks/)
    python perf/judge_oracle.py javascript__house --attack attacks_round4/house.js.txt

Prints one line per run: the task, what was judged, resolved, tampered, must-fail copies,
canaries, seconds and the error or tamper evidence. Needs the dgm/polyglot image.
"""

from __future__ import annotations

import argparse
import dataclasses
import subprocess
import tempfile
import time
from pathlib import Path

from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot import toolchains as chains
from dgm.benchmarks.polyglot.judge import judge_polyglot
from dgm.sandbox import ResourceLimits

DATA = Path(__file__).resolve().parents[2] / "shared" / "polyglot-benchmark"
LIMITS = ResourceLimits(memory="3g", pids=1024)


def attack_patch(task: polyglot.Task, attack: Path) -> str:
    """The attack file written over the workspace's solution file, as a git diff."""
    with tempfile.TemporaryDirectory(prefix="dgm-oracle-") as tmp:
        work = Path(tmp) / "work"
        polyglot.prepare_workspace(task, work)
        solution = chains.exercise_files(Path(task.source)).solution[0]
        (work / solution).write_text(attack.read_text())
        diff = ["git", "diff", "--binary"]
        return subprocess.run(diff, cwd=work, check=True, capture_output=True, text=True).stdout


def judge(task: polyglot.Task, what: str, patch: str) -> None:
    started = time.monotonic()
    verdict, log = judge_polyglot(task, patch, LIMITS)
    copies = (verdict.details or {}).get("copy_counts", {}).get("must_fail", 0)
    canaries = (verdict.details or {}).get("canary_counts", {}).get("must_fail", 0)
    why = (verdict.details or {}).get("tamper_evidence") or verdict.error or ""
    print(f"{task.id:45s} {what:9s} resolved={verdict.resolved!s:5s} "
          f"tampered={verdict.tampered!s:5s} must_fail_copies={copies} canaries={canaries} "
          f"{time.monotonic() - started:.0f}s {why[:160]}", flush=True)  # fmt: skip
    if what == "reference" and not verdict.resolved:
        failed = [k for k, v in verdict.tests.items() if v != "PASSED"]
        print(f"  not passed: {failed[:10]}\n  log tail:\n{log[-2500:]}", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("tasks", nargs="+")
    parser.add_argument("--empty", action="store_true", help="judge the empty patch too")
    parser.add_argument("--attack", type=Path, help="judge this file as the solution instead")
    args = parser.parse_args()
    bench = polyglot.PolyglotTasks(DATA)
    for task_id in args.tasks:
        task = dataclasses.replace(bench.task(task_id), test_timeout_s=1200)
        if args.attack:
            judge(task, "attack", attack_patch(task, args.attack))
            continue
        judge(task, "reference", polyglot.reference_patch(task))
        if args.empty:
            judge(task, "empty", "")


if __name__ == "__main__":
    main()
