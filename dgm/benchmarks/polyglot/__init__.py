"""The Aider polyglot benchmark (Exercism exercises in six languages) as a `Benchmark`:
`loader.py` makes the tasks, `judge.py` judges a patch. See ../README.md."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dgm.benchmarks.task import Task, TaskSource, Verdict
from dgm.paths import subset_file
from dgm.sandbox import ResourceLimits


class Polyglot:
    name = "polyglot"
    dry_run_subset = "@" + str(subset_file("polyglot_dry_run.txt"))

    def load(self, arg: str | None, data: str | None, test_timeout_s: int) -> TaskSource:
        from dgm.benchmarks.polyglot.loader import PolyglotTasks

        return PolyglotTasks(data or arg or None, test_timeout_s)

    def claims_data(self, path: str) -> bool:
        from dgm.benchmarks.polyglot.loader import is_checkout

        return is_checkout(Path(path))

    def prepare_workspace(self, task: Task, dest: Path) -> str | None:
        from dgm.benchmarks.polyglot.loader import prepare_workspace

        return prepare_workspace(task, dest)

    def reference_patch(self, task: Task) -> str:
        from dgm.benchmarks.polyglot.loader import reference_patch

        return reference_patch(task)

    def reference_files(self, task: Task) -> dict[str, str]:
        from dgm.benchmarks.polyglot.loader import reference_files

        return reference_files(task)

    def statement_names_reference(self, task: Task) -> bool:
        return True  # the statement lists the solution files to edit

    def judge(
        self, task: Task, patch: str, limits: ResourceLimits, backend: str,
        labels: dict[str, str], extra_copies: bool = False,
    ) -> tuple[Verdict, str]:  # fmt: skip
        from dgm.benchmarks.polyglot.judge import judge_polyglot

        return judge_polyglot(task, patch, limits, backend, labels)  # canaries drawn afresh

    def build_images(
        self, data: str | None, ids: list[str] | None, force: bool, log: Callable[[str], None],
        timeout_s: float,
    ) -> list[str]:  # fmt: skip
        from dgm.sandbox import images

        return [images.build("polyglot", log=log, force=force, timeout_s=timeout_s)]
