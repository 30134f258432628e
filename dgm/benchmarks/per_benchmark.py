"""Per-benchmark operations on a Task, chosen by `task.benchmark` (tasks stay plain data)."""

from __future__ import annotations

from pathlib import Path

from dgm.benchmarks.task import Task, Verdict
from dgm.errors import DgmError
from dgm.sandbox import ResourceLimits

BENCHMARKS = ("polyglot", "swebench")


def _check(task: Task) -> None:
    if task.benchmark not in BENCHMARKS:
        raise DgmError(f"task {task.id} has unknown benchmark {task.benchmark!r}")


def prepare_workspace(task: Task, dest: Path) -> str | None:
    """Build the agent's workspace on the host and return its base commit; None when the
    workspace is a repository inside the task's image (SWE-bench)."""
    _check(task)
    if task.benchmark == "polyglot":
        from dgm.benchmarks import polyglot

        return polyglot.prepare_workspace(task, dest)
    return None


def reference_patch(task: Task) -> str:
    """The reference (Polyglot) or gold (SWE-bench) solution as a patch of the workspace."""
    _check(task)
    if task.benchmark == "polyglot":
        from dgm.benchmarks import polyglot

        return polyglot.reference_patch(task)
    return str(task.meta["patch"])


def judge(
    task: Task, patch: str, limits: ResourceLimits, backend: str, labels: dict[str, str],
    extra_copies: bool = False,
) -> tuple[Verdict, str]:  # fmt: skip
    """Judge `patch` in a fresh container: (verdict, the full test output). A re-judge
    (`extra_copies`) adds more mutated copies of real tests where the judge makes them;
    every judge draws its canaries afresh."""
    _check(task)
    if task.benchmark == "polyglot":
        from dgm.benchmarks.judge import judge_polyglot

        return judge_polyglot(task, patch, limits, backend, labels)
    from dgm.benchmarks.swe_judge import judge_swebench

    return judge_swebench(task, patch, limits, backend, labels, extra_copies)
