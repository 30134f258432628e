"""The benchmarks dgm knows, by name, and the `Benchmark` protocol each implements.

Tasks stay plain data (they cross processes and Ray workers as JSON); `task.benchmark`
names the implementation that loads, prepares, references and judges them. Each lives in
its own package (`dgm/benchmarks/<name>/`); nothing outside a package asks which
benchmark a task is. Adding a benchmark: a new package whose `__init__` implements
`Benchmark`, and one line in `BENCHMARKS`.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from dgm.benchmarks.polyglot import Polyglot
from dgm.benchmarks.swebench import SweBench
from dgm.benchmarks.task import Task, TaskSource, Verdict
from dgm.errors import DgmError
from dgm.sandbox import ResourceLimits


class Benchmark(Protocol):
    """One kind of benchmark: where its tasks come from and how one is run and judged."""

    name: str
    dry_run_subset: str
    """The `--subset` of `dgm run --dry-run` on this benchmark (an `@FILE` of ids)."""

    def load(self, arg: str | None, data: str | None, test_timeout_s: int) -> TaskSource:
        """The tasks: `arg` from `--benchmark NAME:ARG`, `data` from `--data`."""
        ...

    def claims_data(self, path: str) -> bool:
        """Whether `--data PATH` has this benchmark's layout (one path, several benchmarks)."""
        ...

    def prepare_workspace(self, task: Task, dest: Path) -> str | None:
        """Build the agent's workspace in `dest` on the host and return its base commit;
        None when the workspace is a repository inside the task's image."""
        ...

    def reference_patch(self, task: Task) -> str:
        """The reference solution as a patch of the workspace (the `oracle` agent's)."""
        ...

    def reference_files(self, task: Task) -> dict[str, str]:
        """The files the reference solution changes, as it leaves them (the dry run's answers)."""
        ...

    def statement_names_reference(self, task: Task) -> bool:
        """Whether the problem statement names a file the reference changes (if not, an
        agent must search the workspace to find where to work)."""
        ...

    def judge(
        self, task: Task, patch: str, limits: ResourceLimits, backend: str,
        labels: dict[str, str], extra_copies: bool = False,
    ) -> tuple[Verdict, str]:  # fmt: skip
        """Judge `patch` in a fresh container: (verdict, the full test output). A re-judge
        (`extra_copies`, after a tamper-scan warning) adds more mutated copies of real
        tests where the judge makes them; every judge draws its canaries afresh."""
        ...

    def build_images(
        self, data: str | None, ids: list[str] | None, force: bool, log: Callable[[str], None],
        timeout_s: float,
    ) -> list[str]:  # fmt: skip
        """`dgm sandbox build NAME`: build the images its tasks need; a line per image."""
        ...


BENCHMARKS: dict[str, Benchmark] = {
    "polyglot": Polyglot(),
    "swebench": SweBench(),
}


def benchmark_named(name: str) -> Benchmark:
    found = BENCHMARKS.get(name)
    if found is None:
        raise DgmError(f"unknown benchmark {name!r}", f"use one of: {', '.join(BENCHMARKS)}")
    return found


def benchmark_of(task: Task) -> Benchmark:
    """The implementation that prepares, references and judges `task`."""
    if task.benchmark not in BENCHMARKS:
        raise DgmError(f"task {task.id} has unknown benchmark {task.benchmark!r}",
                       f"dgm knows {', '.join(BENCHMARKS)}")  # fmt: skip
    return BENCHMARKS[task.benchmark]
