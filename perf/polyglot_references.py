"""Validate the toolchain images: run every Polyglot reference solution's tests offline.

Each exercise is copied to a temp folder, its reference solution installed over the
stub, its skipped tests un-skipped, and its tests run in a fresh hardened sandbox.
Prints passed/total per language and the reason for each failure.

    python perf/polyglot_references.py [--languages python go] [--limit N] [--jobs 2]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dgm.benchmarks.polyglot import toolchains as tc

DEFAULT_DATA = Path(__file__).resolve().parents[2] / "shared" / "polyglot-benchmark"


def check_exercise(exercise_dir: Path, language: str, timeout: float) -> tuple[bool, str, float]:
    with tempfile.TemporaryDirectory(prefix="dgm-ref-") as tmp:
        workspace = tc.copy_exercise(exercise_dir, Path(tmp) / exercise_dir.name)
        tc.install_reference(exercise_dir, workspace)
        files = tc.exercise_files(exercise_dir)
        result = tc.run_tests(workspace, language, timeout=timeout, test_files=files.test)
    reason = ""
    if not result.ok:
        lines = [ln for ln in result.output.splitlines() if ln.strip()]
        reason = "timed out" if result.timed_out else " | ".join(lines[-4:])[:300]
    return result.ok, reason, result.duration_s


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DEFAULT_DATA)
    parser.add_argument("--languages", nargs="*", default=list(tc.LANGUAGES))
    parser.add_argument("--exercises", nargs="*", help="only these exercise names")
    parser.add_argument("--limit", type=int, help="at most N exercises per language")
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--timeout", type=float, default=600)
    args = parser.parse_args()

    summary = []
    for language in args.languages:
        root = args.data / language / "exercises" / "practice"
        exercises = sorted(p for p in root.iterdir() if p.is_dir())
        if args.exercises:
            exercises = [p for p in exercises if p.name in args.exercises]
        exercises = exercises[: args.limit] if args.limit else exercises
        started = time.monotonic()
        with ThreadPoolExecutor(args.jobs) as pool:
            jobs = [pool.submit(check_exercise, p, language, args.timeout) for p in exercises]
            results = [job.result() for job in jobs]
        passed = sum(ok for ok, _, _ in results)
        elapsed = time.monotonic() - started
        print(f"{language}: {passed}/{len(exercises)} reference solutions pass ({elapsed:.0f} s)")
        for exercise, (ok, reason, duration) in zip(exercises, results, strict=True):
            if not ok:
                print(f"  FAIL {exercise.name} ({duration:.0f} s): {reason}")
        summary.append(f"{language} {passed}/{len(exercises)}")
    print("summary: " + ", ".join(summary))


if __name__ == "__main__":
    main()
