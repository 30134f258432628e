"""Without the ray extra, `--executor ray` (or `[executor] kind = "ray"` in run.toml) says
how to install it in one line and exits 2, before a run directory is made."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.fixture
def no_ray_env(tmp_path: Path) -> dict[str, str]:
    hide = tmp_path / "hide"
    (hide / "ray").mkdir(parents=True)
    (hide / "ray" / "__init__.py").write_text("raise ImportError('ray is hidden by this test')\n")
    return {**os.environ, "PYTHONPATH": str(hide)}


@pytest.mark.parametrize("how", ["option", "run.toml"])
def test_the_ray_executor_without_ray_says_how_to_install_it(tmp_path, no_ray_env, how) -> None:
    args = ["--executor", "ray"]
    if how == "run.toml":
        toml = tmp_path / "run.toml"
        toml.write_text('[executor]\nkind = "ray"\naddress = "10.0.0.1:6379"\n')
        args = ["--config", str(toml)]
    run_dir = tmp_path / "run"
    command = [sys.executable, "-m", "dgm", "run", str(run_dir), "--dry-run", *args]
    result = subprocess.run(command, capture_output=True, text=True, env=no_ray_env, timeout=120)
    assert result.returncode == 2, result.stdout + result.stderr
    lines = result.stderr.strip().splitlines()
    assert lines == ["error: the ray executor needs Ray: pip install 'dgm[ray]'"], result.stderr
    assert not run_dir.exists()
