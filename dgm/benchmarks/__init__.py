"""Benchmarks: Polyglot and SWE-bench-format tasks with hidden tests. See README.md."""

from __future__ import annotations

from dgm.benchmarks.task import Benchmark, Task, Verdict
from dgm.errors import DgmError

__all__ = ["Benchmark", "Task", "Verdict", "load_benchmark"]


def load_benchmark(spec: str, data: str | None = None, test_timeout_s: int = 300) -> Benchmark:
    """`polyglot` (checkout from `data`, $DGM_POLYGLOT_DIR, or `dgm bench fetch`), or
    `swebench[:FILE]` (a local JSON/JSONL file or instances folder, `data`, or a Hugging Face
    dataset name), or several, comma-separated (`polyglot,swebench`)."""
    if "," in spec:
        from dgm.benchmarks.mixed import MixedBenchmark, split_data

        names = [n.strip() for n in spec.split(",") if n.strip()]
        data_for = split_data([n.partition(":")[0] for n in names], data)
        parts = [load_benchmark(n, data_for[n.partition(":")[0]], test_timeout_s) for n in names]
        return MixedBenchmark(parts)  # type: ignore[return-value]
    name, _, arg = spec.partition(":")
    if name == "polyglot":
        from dgm.benchmarks.polyglot import PolyglotBenchmark

        return PolyglotBenchmark(data or arg or None, test_timeout_s)
    if name == "swebench":
        from dgm.benchmarks.swebench import SweBenchmark

        return SweBenchmark(arg or data or None, test_timeout_s)
    raise DgmError(
        f"unknown benchmark {spec!r}",
        "use polyglot, swebench:FILE.json(l), or swebench (the suite in eval/swe-dgm-suite)",
    )
