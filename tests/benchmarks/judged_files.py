"""The judge's test files in a judge tree (C++ and Rust ones are under fresh names)."""

from __future__ import annotations

from pathlib import Path

from dgm.benchmarks.task import Task


def judged_files(task: Task, dest: Path) -> list[Path]:
    if task.language == "cpp":
        return sorted(dest.glob("*_test.cpp"))
    if task.language == "rust":
        return sorted(dest.glob("tests/*.rs"))
    return [dest / name for name in task.hidden_files if (dest / name).is_file()]
