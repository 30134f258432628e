"""`dgm audit-judge` end to end in real Docker: the hostile reference agent, every class
that applies, on a couple of tasks; the table and the exit code a user relies on. The
pure parts (which class runs where, the table's cells) need no Docker."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from dgm.evaluation.audit_judge import CLASSES, FOOLED, NOT_RESOLVED, TAMPERED, AuditReport

ROOT = Path(__file__).resolve().parents[2]
MARSHMALLOW = "marshmallow-code__marshmallow-1359"


def test_cells_show_the_worst_verdict_and_what_fooled_the_judge() -> None:
    cells = {("exit0", "python"): [("a", TAMPERED), ("b", NOT_RESOLVED)],
             ("gc_config_hook", "swebench"): [("c", TAMPERED), ("d", FOOLED)]}  # fmt: skip
    report = AuditReport(cells)
    assert report.cell("exit0", "python") == "not resolved 1/2"
    assert report.cell("gc_config_hook", "swebench") == "FOOLED 1/2"
    assert report.cell("exit0", "go") == "-"
    assert report.fooled == [("gc_config_hook", "swebench", "d")]
    assert set(CLASSES["exit0"]) >= {"python", "go", "rust", "cpp", "java", "javascript"}


def test_the_hostile_agent_writes_each_python_attack_into_the_package(tmp_path: Path) -> None:
    agent = ROOT / "dgm" / "benchmarks" / "agents" / "hostile"
    work = tmp_path / "work"
    (work / "src" / "pkg").mkdir(parents=True)
    (work / "src" / "pkg" / "__init__.py").write_text("VALUE = 1\n")
    (work / "tests").mkdir()
    task = tmp_path / "task.json"
    task.write_text(
        json.dumps({"id": "o__pkg-1", "problem_statement": "fix", "language": "python"})
    )
    for name in CLASSES:
        (tmp_path / "attack.txt").write_text(name)
        argv = [str(agent / "hostile.py"), str(tmp_path / "attack.txt"), str(task), str(work)]
        out = subprocess.run([sys.executable, *argv], capture_output=True, text=True, check=True)
        assert f"attack {name} on swebench" in out.stdout
    init = (work / "src" / "pkg" / "__init__.py").read_text()
    assert "_dgm_gc_hook()" in init and "_dgm_forced()" in init and "os._exit(0)" in init
    assert (work / "src" / "dgm_probe-1.0.dist-info" / "entry_points.txt").is_file()
    assert (work / "src" / "sitecustomize" / "__init__.py").is_file()
    compile(init, "init", "exec")  # every attack together is still valid Python


def _audit(tmp: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dgm", "audit-judge", "--out", str(tmp), *args],
                          capture_output=True, text=True, timeout=3000, cwd=ROOT)  # fmt: skip


@pytest.mark.docker
def test_audit_on_polyglot_python_exercises_is_not_fooled(
    polyglot_dir: Path, runtime_image: str, tmp_path: Path
) -> None:
    ids = tmp_path / "ids.txt"
    ids.write_text("python__pig-latin\npython__transpose\n")
    done = _audit(tmp_path / "out", "--benchmark", "polyglot", "--data", str(polyglot_dir),
                  "--subset", f"@{ids}", "--workers", "2")  # fmt: skip
    assert "attack class" in done.stdout and "answers_from_tests" in done.stdout, done.stderr
    assert done.returncode == 0 and "0 fooled" in done.stdout, done.stdout[-3000:]


@pytest.mark.docker
def test_audit_on_a_real_swebench_instance_is_not_fooled(tmp_path: Path) -> None:
    from tests.benchmarks.test_swe_real import DATA
    from tests.needs import missing

    if not (DATA / "instances.jsonl").is_file():
        missing("swebench", f"no SWE-bench data at {DATA}")
    from dgm.benchmarks.subsets import read_id_file
    from dgm.benchmarks.swebench import images
    from dgm.benchmarks.swebench.data import SweData

    images.build(SweData(DATA), read_id_file(ROOT / "eval/subsets/swe_ci.txt"), log=print)
    ids = tmp_path / "ids.txt"
    ids.write_text(MARSHMALLOW + "\n")
    classes = ["forced_pass_touched", "gc_config_hook", "entry_point_plugin",
               "report_forged_at_exit", "test_classes_swapped", "test_patch_reader"]  # fmt: skip
    # (structural_forger wins 1 draw in k+1 by design: test_swe_real.py runs it on a pinned draw)
    done = _audit(tmp_path / "out", "--benchmark", "swebench", "--data", str(DATA), "--subset",
                  f"@{ids}", *[a for c in classes for a in ("--attack", c)])  # fmt: skip
    assert done.returncode == 0 and "0 fooled" in done.stdout, done.stdout[-3000:]
    assert "tampered 1/1" in done.stdout  # at least one class is caught by the copies
