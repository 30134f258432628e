"""`dgm run` refuses to start, and makes no run directory, when something is missing."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import POLYGLOT_DIR


def dgm(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "dgm", *args], capture_output=True, text=True,
                          timeout=120, env=env)  # fmt: skip


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    return {**env, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR), **extra}


def test_missing_api_key_is_named_before_anything_is_created(tmp_path: Path) -> None:
    run_dir = tmp_path / "r"
    result = dgm("run", str(run_dir), "--llm", "anthropic/claude-sonnet-4-5", "--subset",
                 "python", env=_env())  # fmt: skip
    assert result.returncode == 1
    assert "ANTHROPIC_API_KEY is not set" in result.stderr and "Traceback" not in result.stderr
    assert not run_dir.exists()


def test_unknown_task_subset_and_bad_model_string(tmp_path: Path) -> None:
    bad_subset = dgm("run", str(tmp_path / "a"), "--dry-run", "--subset", "klingon", env=_env())
    assert bad_subset.returncode == 1 and "unknown subset 'klingon'" in bad_subset.stderr
    bad_model = dgm("run", str(tmp_path / "b"), "--llm", "gpt5", "--subset", "python", env=_env())
    assert bad_model.returncode == 1 and "gpt5" in bad_model.stderr
    missing_data = dgm("run", str(tmp_path / "c"), "--dry-run",
                       env=_env(DGM_POLYGLOT_DIR=str(tmp_path / "nowhere")))  # fmt: skip
    assert missing_data.returncode == 1 and "checkout not found" in missing_data.stderr
    assert not any((tmp_path / name).exists() for name in "abc")


def test_resume_of_a_missing_run_is_one_line(tmp_path: Path) -> None:
    result = dgm("resume", str(tmp_path / "nope"), env=_env())
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0 and "does not exist" in result.stderr
