"""The meta loop on real SWE-bench instances, in real Docker (`dgm run --benchmark swebench
--dry-run`): the scripted model writes the gold files; the instance whose problem
statement names no file to change needs the `search_files` tool the seed lacks. The
child that grows it must really resolve more instances under the official eval scripts."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from dgm.store import Run
from tests.conftest import SHARED
from tests.needs import missing

pytestmark = [pytest.mark.docker, pytest.mark.slow]
DATA = SHARED / "swe-bench"


@pytest.mark.timeout(2400)
def test_dry_run_on_real_swebench_grows_a_child_that_resolves_more(tmp_path: Path) -> None:
    if not (DATA / "instances.jsonl").is_file():
        missing("swebench", f"no SWE-bench data at {DATA}")
    build = [sys.executable, "-m", "dgm", "sandbox", "build", "swebench", "--data", str(DATA),
             "--ids", "@eval/subsets/swe_dry_run.txt"]  # fmt: skip
    root = Path(__file__).resolve().parents[2]
    assert subprocess.run(build, cwd=root, capture_output=True, timeout=1800).returncode == 0
    run_dir = tmp_path / "swe-run"
    args = [sys.executable, "-m", "dgm", "run", str(run_dir), "--benchmark", "swebench",
            "--data", str(DATA), "--dry-run", "--strategy", "dgm", "--max-evals", "9",
            "--workers", "2"]  # fmt: skip
    result = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=1800)
    assert result.returncode == 0, result.stdout + result.stderr
    best = re.search(r"^best:\s+node (\d+): (\d+)/(\d+)", result.stdout, re.M)
    assert best, result.stdout
    node, passed, total = (int(g) for g in best.groups())
    with Run.open(run_dir) as run:
        seed = run.score(0)
        assert (seed.passed, seed.total) == (2, 3)  # the hard instance needs the tool
        assert node != 0 and (passed, total) == (3, 3)
        assert "coder/tools/search_files.py" in run.archive.files(run.node(node).commit)
