"""Polyglot judge cost (issues 12, 24): the judge beside a plain test run, and beside
another checkout's judge (`--baseline`, e.g. the main branch before round two).

    python perf/bench_judge.py [--data ../shared/polyglot-benchmark] [--tasks 10]
                               [--language python] [--baseline /work/main]

Per task, on the reference solution: the plain run (a fresh container, the exercise with
its tests un-skipped, the toolchain's own test command, verdict = exit status, as the
judge worked before) and the judge (`judge_polyglot`: allowlist, canaries, report,
parsing). Printed: both wall times, their difference, and the judge's host-side work
alone (drawing and writing the canaries, parsing and grading the report), which is the
part that does not vary with the machine's load. Goal: < 0.5 s extra per task.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from dgm.benchmarks.polyglot import judge as judge_module
from dgm.benchmarks.polyglot import loader as polyglot
from dgm.benchmarks.polyglot import toolchains as chains
from dgm.benchmarks.polyglot.judge import judge_polyglot, prepare_judge_tree, verdict_from
from dgm.benchmarks.task import Verdict
from dgm.sandbox import Mount, ResourceLimits, SandboxSpec, run_command
from dgm.sandbox.spec import ExecResult

GOAL_S = 0.5
LIMITS = ResourceLimits(memory="3g", pids=1024)


def plain_run(task: polyglot.Task) -> tuple[float, ExecResult]:
    with tempfile.TemporaryDirectory(prefix="dgm-plain-") as tmp:
        folder = Path(tmp) / Path(task.source).name
        polyglot.reference_workspace(task, folder)
        chains.copy_exercise(Path(task.source), Path(tmp) / "pristine")
        for name in task.hidden_files:
            source = Path(tmp) / "pristine" / name
            if source.is_file():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_bytes(source.read_bytes())
        chains.unskip_tests(task.language, folder, list(task.hidden_files))
        for path in [Path(tmp), *Path(tmp).rglob("*")]:
            path.chmod(path.stat().st_mode | (0o755 if path.is_dir() else 0o644))
        command = chains.toolchain(task.language).test_command
        name = folder.name
        script = f"cp -r /stage/{name} /work/ && cd /work/{name} && {command}"
        spec = SandboxSpec(image=task.judge_image, mounts=(Mount(tmp, "/stage"),), limits=LIMITS)
        started = time.perf_counter()
        result = run_command(spec, ["/bin/sh", "-c", script], task.test_timeout_s)
        return time.perf_counter() - started, result


def judged(task: polyglot.Task) -> tuple[float, Verdict, ExecResult]:
    """judge_polyglot on the reference, keeping the container's raw result."""
    seen: list[ExecResult] = []

    def recording(*args: object, **kwargs: object) -> ExecResult:
        seen.append(run_command(*args, **kwargs))  # type: ignore[arg-type]
        return seen[-1]

    patch = polyglot.reference_patch(task)
    judge_module.run_command = recording  # type: ignore[assignment]
    try:
        started = time.perf_counter()
        verdict, _log = judge_polyglot(task, patch, LIMITS)
        return time.perf_counter() - started, verdict, seen[-1]
    finally:
        judge_module.run_command = run_command


def host_side(task: polyglot.Task, output: ExecResult) -> float:
    """Canaries drawn and written, then the report parsed and graded: host CPU only."""
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dgm-bench-") as tmp:
        plan = prepare_judge_tree(task, Path(tmp) / "judge")
    verdict_from(output, task, plan)
    return time.perf_counter() - started


BASELINE = """
import json, sys, tempfile, time
from pathlib import Path
try:
    from dgm.benchmarks.polyglot import judge as J
    from dgm.benchmarks.polyglot import loader as P
except ImportError:
    from dgm.benchmarks import judge as J
    from dgm.benchmarks import polyglot as P
from dgm.sandbox import ResourceLimits
bench = getattr(P, "PolyglotTasks", None) or P.PolyglotBenchmark
task = bench(sys.argv[1]).task(sys.argv[2])
patch = P.reference_patch(task)
started = time.perf_counter()
verdict, _ = J.judge_polyglot(task, patch, ResourceLimits(memory="3g", pids=1024))
wall = time.perf_counter() - started
started = time.perf_counter()
with tempfile.TemporaryDirectory() as tmp:
    J.prepare_judge_tree(task, Path(tmp) / "judge")
print(json.dumps({"wall": wall, "prep": time.perf_counter() - started,
                  "resolved": verdict.resolved}))
"""


def baseline_run(checkout: str, data: str, task_id: str) -> dict:
    """The other checkout's judge on the same task: wall time, its tree preparation."""
    env = dict(os.environ, PYTHONPATH=checkout)
    own = Path(checkout) / ".venv" / "bin" / "python"  # its own install, else ours
    python = str(own) if own.is_file() else sys.executable
    proc = subprocess.run([python, "-c", BASELINE, data, task_id], env=env,
                          capture_output=True, text=True, cwd=checkout)  # fmt: skip
    if proc.returncode != 0:
        raise SystemExit(f"the baseline judge failed on {task_id}:\n{proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def prep_only(task: polyglot.Task) -> float:
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="dgm-bench-") as tmp:
        prepare_judge_tree(task, Path(tmp) / "judge")
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--data", default=str(Path(__file__).parents[2] / "shared/polyglot-benchmark")
    )
    parser.add_argument("--tasks", type=int, default=10)
    parser.add_argument("--language", default="python")
    parser.add_argument("--baseline", help="another checkout whose judge to time beside")
    args = parser.parse_args()
    tasks = polyglot.PolyglotTasks(args.data).tasks(args.language)[: args.tasks]
    if args.baseline:
        compare(tasks, args.baseline, args.data)
        return
    rows = []
    print(f"{'task':40} {'plain s':>8} {'judge s':>8} {'extra s':>8} {'host ms':>8}  verdict")
    for task in tasks:
        plain_s, plain = plain_run(task)
        judge_s, verdict, raw = judged(task)
        host_s = host_side(task, raw)
        rows.append((plain_s, judge_s, host_s))
        state = "resolved" if verdict.resolved else f"NOT resolved: {verdict.error}"
        print(f"{task.id:40} {plain_s:8.2f} {judge_s:8.2f} {judge_s - plain_s:8.2f}"
              f" {host_s * 1000:8.1f}  {state} (plain exit {plain.exit_code})")  # fmt: skip
    extra = [j - p for p, j, _ in rows]
    host = [h for _, _, h in rows]
    print(f"\nmedian over {len(rows)} tasks: plain {statistics.median(r[0] for r in rows):.2f} s,"
          f" judge {statistics.median(r[1] for r in rows):.2f} s, extra"
          f" {statistics.median(extra):.2f} s (wall, includes load noise);"
          f" host-side canaries + parsing {statistics.median(host) * 1000:.1f} ms"
          f" (max {max(host) * 1000:.1f} ms); goal < {GOAL_S} s extra per task")  # fmt: skip


def compare(tasks: list[polyglot.Task], baseline: str, data: str) -> None:
    print(f"{'task':34} {'old s':>7} {'new s':>7} {'extra s':>7} {'old prep ms':>11}"
          f" {'new prep ms':>11}  verdicts (old/new)")  # fmt: skip
    rows = []
    for task in tasks:
        old = baseline_run(baseline, data, task.id)
        new_s, verdict, _raw = judged(task)
        prep_s = prep_only(task)
        rows.append((old["wall"], new_s, old["prep"], prep_s))
        print(f"{task.id:34} {old['wall']:7.2f} {new_s:7.2f} {new_s - old['wall']:7.2f}"
              f" {old['prep'] * 1000:11.1f} {prep_s * 1000:11.1f}"
              f"  {old['resolved']}/{verdict.resolved}")  # fmt: skip
    med = [statistics.median(r[i] for r in rows) for i in range(4)]
    print(f"\nmedian over {len(rows)} tasks: old judge {med[0]:.2f} s, new judge {med[1]:.2f} s,"
          f" extra {statistics.median(r[1] - r[0] for r in rows):.2f} s (wall);"
          f" host-side tree preparation old {med[2] * 1000:.1f} ms,"
          f" new {med[3] * 1000:.1f} ms")  # fmt: skip


if __name__ == "__main__":
    main()
