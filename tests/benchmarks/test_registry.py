"""The benchmark registry: one implementation per `task.benchmark`, no dispatch on a
benchmark's name outside its package, several benchmarks as one."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from dgm.benchmarks import BENCHMARKS, Task, benchmark_of, load_benchmark
from dgm.errors import DgmError
from tests.conftest import SHARED

DGM = Path(__file__).resolve().parents[2] / "dgm"
SWE_DATA = SHARED / "swe-bench"


def test_no_code_outside_a_benchmark_package_asks_which_benchmark_a_task_is() -> None:
    packages = {DGM / "benchmarks" / name for name in BENCHMARKS}
    found = []
    for path in DGM.rglob("*.py"):
        if any(path.is_relative_to(p) for p in packages):
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            sides = (node.left, *node.comparators) if isinstance(node, ast.Compare) else ()
            if any(isinstance(s, ast.Attribute) and s.attr == "benchmark" for s in sides) and any(
                isinstance(s, ast.Constant) and isinstance(s.value, str) for s in sides
            ):
                found.append(f"{path.relative_to(DGM)}:{node.lineno}")
    assert not found, f"dispatch on task.benchmark outside dgm/benchmarks/<name>/: {found}"


def test_each_task_finds_the_implementation_that_judges_it(polyglot_dir: Path) -> None:
    if not (SWE_DATA / "instances.jsonl").is_file():
        pytest.skip(f"no SWE-bench data at {SWE_DATA}")
    mixed = load_benchmark("polyglot,swebench", f"polyglot={polyglot_dir},swebench={SWE_DATA}")
    tasks = mixed.tasks("python__beer-song,pallets__flask-4992")
    assert [benchmark_of(t).name for t in tasks] == ["polyglot", "swebench"]
    assert "def recite" in benchmark_of(tasks[0]).reference_patch(tasks[0])
    assert benchmark_of(tasks[1]).reference_patch(tasks[1]) == tasks[1].meta["patch"]


def test_one_data_path_goes_to_the_benchmark_whose_layout_it_has(
    polyglot_dir: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DGM_POLYGLOT_DIR", str(polyglot_dir))
    if (SWE_DATA / "instances.jsonl").is_file():
        mixed = load_benchmark("polyglot,swebench", str(SWE_DATA))
        assert "pallets__flask-4992" in mixed.task_ids() and "python__beer-song" in mixed.task_ids()
    with pytest.raises(DgmError) as caught:
        load_benchmark("polyglot,swebench", str(tmp_path))
    assert "is the data of none of polyglot, swebench" in caught.value.message
    assert "NAME=PATH" in (caught.value.hint or "")


def test_an_unknown_benchmark_is_a_clear_error() -> None:
    task = Task("x__y", "nosuch", "python", "", "", "", "", 60, "/nowhere")
    with pytest.raises(DgmError, match="unknown benchmark 'nosuch'"):
        benchmark_of(task)
    with pytest.raises(DgmError, match="unknown benchmark 'nosuch'"):
        load_benchmark("nosuch")
