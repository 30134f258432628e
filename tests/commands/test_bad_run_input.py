"""Bad input a newcomer meets first: each is one line naming the problem and the fix."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def dgm_cli(*args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "dgm", *args], capture_output=True, text=True, timeout=120
    )


def test_a_typo_in_a_config_field_names_the_field_and_the_likely_one(tmp_path: Path):
    config = tmp_path / "bad.toml"
    config.write_text('name = "x"\nworkerz = 3\n')
    result = dgm_cli("init", str(tmp_path / "run"), "--config", str(config))
    assert result.returncode == 1
    line = result.stderr.strip()
    assert "\n" not in line
    assert "unknown field `workerz`" in line
    assert "did you mean `workers`?" in line
    assert "(fix: correct that field" in line
    assert not (tmp_path / "run").exists()


def test_a_corrupt_run_toml_names_the_file_and_the_fix(tmp_path: Path):
    run = tmp_path / "run"
    assert dgm_cli("init", str(run)).returncode == 0
    with (run / "run.toml").open("a") as out:
        out.write("workers = [\n")
    result = dgm_cli("status", str(run))
    assert result.returncode == 1
    line = result.stderr.strip()
    assert "\n" not in line
    assert f"{run / 'run.toml'} is not valid TOML" in line
    assert "(fix: correct the TOML at that place" in line


def test_a_run_dir_that_does_not_exist_is_named(tmp_path: Path):
    result = dgm_cli("tree", str(tmp_path / "nope"))
    assert result.returncode == 1
    assert f"run directory {tmp_path / 'nope'} does not exist" in result.stderr
    assert "(fix: " in result.stderr
