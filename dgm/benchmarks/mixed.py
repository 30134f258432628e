"""Several benchmarks as one: `--benchmark polyglot,swebench`.

Task ids are unique across benchmarks (`python__x` vs `owner__repo-123`), so a subset
is resolved per benchmark: a named subset (small, medium, full) names each benchmark's
own list; task ids go to the benchmark that knows them. `--data` is `NAME=PATH,...`, or
one path given to the benchmark whose layout it has.
"""

from __future__ import annotations

from pathlib import Path

from dgm.benchmarks.subsets import read_id_file
from dgm.benchmarks.task import Task, TaskSource
from dgm.errors import DgmError, NotFoundError


def split_data(names: list[str], data: str | None) -> dict[str, str | None]:
    if not data:
        return dict.fromkeys(names)
    if "=" in data:
        pairs = dict(p.split("=", 1) for p in data.split(",") if "=" in p)
        unknown = set(pairs) - set(names)
        if unknown:
            raise DgmError(f"--data names {', '.join(sorted(unknown))}, not in --benchmark",
                           "use NAME=PATH for the benchmarks you run")  # fmt: skip
        return {n: pairs.get(n) for n in names}
    from dgm.benchmarks.registry import benchmark_named

    owners = [n for n in names if benchmark_named(n).claims_data(data)]
    if not owners:
        raise DgmError(
            f"--data {data} is the data of none of {', '.join(names)}",
            "use NAME=PATH for each benchmark, e.g. polyglot=DIR,swebench=DIR",
        )
    return {n: (data if n == owners[0] else None) for n in names}


class MixedTasks:
    def __init__(self, parts: list[TaskSource]) -> None:
        self.parts = parts
        self.name = ",".join(p.name for p in parts)

    def task_ids(self) -> list[str]:
        return [t for p in self.parts for t in p.task_ids()]

    def task(self, task_id: str) -> Task:
        for part in self.parts:
            if task_id in set(part.task_ids()):
                return part.task(task_id)
        raise NotFoundError(f"unknown task id {task_id!r} in {self.name}", "see `dgm bench list`")

    def tasks(self, subset: str) -> list[Task]:
        if not (subset.startswith("@") or "__" in subset):
            return [t for p in self.parts for t in p.tasks(subset)]
        ids = read_id_file(Path(subset[1:])) if subset.startswith("@") else subset.split(",")
        return [self.task(i) for i in dict.fromkeys(ids)]
