"""Benchmarks: Polyglot and SWE-bench-format tasks with hidden tests. See README.md.

The core here is benchmark-neutral (`Task`, `Verdict`, subsets, stages, several
benchmarks as one); each benchmark is a package registered in `registry.BENCHMARKS`."""

from __future__ import annotations

from dgm.benchmarks.registry import BENCHMARKS, Benchmark, benchmark_named, benchmark_of
from dgm.benchmarks.task import Task, TaskSource, Verdict
from dgm.errors import DgmError

__all__ = [
    "BENCHMARKS", "Benchmark", "Task", "TaskSource", "Verdict", "benchmark_named",
    "benchmark_of", "load_benchmark",
]  # fmt: skip


def load_benchmark(spec: str, data: str | None = None, test_timeout_s: int = 300) -> TaskSource:
    """`polyglot` (checkout from `data`, $DGM_POLYGLOT_DIR, or `dgm bench fetch`), or
    `swebench[:FILE]` (a local JSON/JSONL file or instances folder, `data`, or a Hugging Face
    dataset name), or several, comma-separated (`polyglot,swebench`)."""
    if "," in spec:
        from dgm.benchmarks.mixed import MixedTasks, split_data

        names = [n.strip() for n in spec.split(",") if n.strip()]
        data_for = split_data([n.partition(":")[0] for n in names], data)
        parts = [load_benchmark(n, data_for[n.partition(":")[0]], test_timeout_s) for n in names]
        return MixedTasks(parts)
    name, _, arg = spec.partition(":")
    if name not in BENCHMARKS:
        raise DgmError(
            f"unknown benchmark {spec!r}",
            "use polyglot, swebench:FILE.json(l), or swebench (the suite in eval/swe-dgm-suite)",
        )
    return BENCHMARKS[name].load(arg or None, data, test_timeout_s)
