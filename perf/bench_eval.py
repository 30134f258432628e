"""Evaluation harness benchmark (issue 6): overhead per task evaluation, tasks per minute.

    python perf/bench_eval.py [--data ../shared/polyglot-benchmark] [--tasks 34]

Runs the null agent on the Polyglot Python subset through the real harness (agent
container, `git diff`, fresh judge container), with 1 and then 2 workers. Overhead =
a job's wall time minus the agent command's own time and the tests' own time (as the
judge measures them): container creation and removal, staging, copies, the diff.
Printed beside two baselines: the 2 s target, and the floor of two bare container runs
(`true` in a fresh container, twice), which no two-container harness can beat.
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from pathlib import Path

from dgm.benchmarks.polyglot.loader import PolyglotTasks
from dgm.evaluation.evaluate_agent import evaluate_agent
from dgm.jobs.evaluate import AgentRef
from dgm.sandbox import SandboxSpec, run_command

TARGET_S = 2.0


def _p90(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.9 * (len(ordered) - 1))))]


def bare_container_floor(repeat: int = 5) -> float:
    samples = []
    for _ in range(repeat):
        start = time.perf_counter()
        run_command(SandboxSpec(image="runtime"), "true", 60)
        samples.append(time.perf_counter() - start)
    return 2 * statistics.median(samples)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--data", default=str(Path(__file__).parents[2] / "shared/polyglot-benchmark")
    )
    parser.add_argument("--tasks", type=int, default=34)
    args = parser.parse_args()
    tasks = PolyglotTasks(args.data).tasks("python")[: args.tasks]
    floor = bare_container_floor()
    print(f"null agent, Polyglot python, {len(tasks)} tasks; target overhead < {TARGET_S:.1f} s")
    print(f"baseline: two bare container runs = {floor:.2f} s")
    print(
        f"{'workers':>8} {'overhead median':>16} {'p90':>7} {'tests median':>13} {'tasks/min':>10}"
    )
    for workers in (1, 2):
        with tempfile.TemporaryDirectory(prefix="dgm-bench-eval-") as tmp:
            start = time.perf_counter()
            outcomes = evaluate_agent(AgentRef.reference("null"), tasks, Path(tmp), workers=workers)
            wall = time.perf_counter() - start
        assert not any(o.resolved or o.error for o in outcomes), "null must fail cleanly"
        overhead = [o.details["harness_seconds"] for o in outcomes]
        tests = [o.details["test_seconds"] for o in outcomes]
        print(
            f"{workers:>8} {statistics.median(overhead):>14.2f} s {_p90(overhead):>5.2f} s"
            f" {statistics.median(tests):>11.2f} s {60 * len(outcomes) / wall:>10.1f}"
        )


if __name__ == "__main__":
    main()
