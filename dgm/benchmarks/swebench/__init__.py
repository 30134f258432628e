"""SWE-bench-format tasks (real instances offline, a dataset, or dgm's own suite) as a
`Benchmark`: `loader.py` makes the tasks, `images.py` builds their images, `judge.py`
judges a patch with the official grading. See ../README.md."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dgm.benchmarks.task import Task, TaskSource, Verdict
from dgm.errors import DgmError
from dgm.paths import subset_file
from dgm.sandbox import ResourceLimits


class SweBench:
    name = "swebench"
    dry_run_subset = "@" + str(subset_file("swe_dry_run.txt"))

    def load(self, arg: str | None, data: str | None, test_timeout_s: int) -> TaskSource:
        from dgm.benchmarks.swebench.loader import SweTasks

        return SweTasks(arg or data or None, test_timeout_s)

    def claims_data(self, path: str) -> bool:
        from dgm.benchmarks.swebench.data import is_data_dir

        return is_data_dir(path)

    def prepare_workspace(self, task: Task, dest: Path) -> str | None:
        return None  # the repository at its base commit is inside the task's image

    def reference_patch(self, task: Task) -> str:
        return str(task.meta["patch"])

    def reference_files(self, task: Task) -> dict[str, str]:
        from dgm.benchmarks.swebench.reference import gold_files

        return dict(gold_files(task.source, task.id))

    def statement_names_reference(self, task: Task) -> bool:
        from dgm.benchmarks.swebench.reference import named_in_statement

        return named_in_statement(task.meta["patch"], task.problem_statement)

    def judge(
        self, task: Task, patch: str, limits: ResourceLimits, backend: str,
        labels: dict[str, str], extra_copies: bool = False,
    ) -> tuple[Verdict, str]:  # fmt: skip
        from dgm.benchmarks.swebench.judge import judge_swebench

        return judge_swebench(task, patch, limits, backend, labels, extra_copies)

    def build_images(
        self, data: str | None, ids: list[str] | None, force: bool, log: Callable[[str], None],
        timeout_s: float,
    ) -> list[str]:  # fmt: skip
        from dgm.benchmarks.swebench import images
        from dgm.benchmarks.swebench.data import SweData

        if data is None:
            raise DgmError(
                "`dgm sandbox build swebench` needs --data", "give --data DIR (instances)"
            )
        built = images.build(SweData(data), ids, log=log, force=force)
        return [f"{iid}\t{tag}" for iid, tag in built.items()]
