"""Own benchmark data with the defaults: `--data DIR` and no `--subset` means every
instance that data holds (said so), for `dgm eval` and for runs; the shipped subsets
name the shipped data's instances, which own data need not have."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dgm.config import RunConfig
from dgm.loop.session import new_run_config
from tests.conftest import POLYGLOT_DIR
from tests.needs import image_or_missing


def test_a_run_on_own_data_uses_all_of_it(tmp_path):
    cfg, _ = new_run_config(RunConfig(), tmp_path / "r", {"benchmark.data": "/data/mine"})
    assert cfg.benchmark.subset == "full"
    dry, _ = new_run_config(RunConfig(), tmp_path / "d", {"benchmark.data": "/x"}, dry_run=True)
    assert dry.benchmark.subset == "full"
    named, _ = new_run_config(RunConfig(), tmp_path / "n", {"benchmark.data": "/x",
                              "benchmark.subset": "python"}, subset_given=True)  # fmt: skip
    assert named.benchmark.subset == "python"
    assert new_run_config(RunConfig(), tmp_path / "s", {})[0].benchmark.subset == "small"


@pytest.mark.docker
def test_eval_on_own_polyglot_data_without_subset(tmp_path):
    image_or_missing("runtime")
    source = POLYGLOT_DIR / "python" / "exercises" / "practice"
    if not source.is_dir():
        pytest.skip("no polyglot checkout")
    mine = tmp_path / "mine" / "python" / "exercises" / "practice"
    for name in ("beer-song", "proverb"):
        shutil.copytree(source / name, mine / name)
    done = subprocess.run(
        [sys.executable, "-m", "dgm", "eval", "oracle", "--data", str(tmp_path / "mine"),
         "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=900,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    assert "--data without --subset: every instance" in done.stdout
    assert "total        2/2" in done.stdout


def test_a_dry_run_keeps_its_tasks_where_the_data_holds_them():
    from tests.conftest import SHARED

    data = SHARED / "swe-bench"
    if not (data / "instances.jsonl").is_file():
        pytest.skip("no SWE-bench data")
    cfg, _ = new_run_config(RunConfig(), Path("/tmp/x"), {"benchmark.name": "swebench",
                            "benchmark.data": str(data)}, dry_run=True)  # fmt: skip
    assert cfg.benchmark.subset.endswith("swe_dry_run.txt")
