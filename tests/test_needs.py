"""DGM_REQUIRE turns a skip for something missing into a failure that names it and its fix,
so a CI run on a machine without Docker (or without the benchmark data) cannot pass."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
DOCKER_TESTS = "tests/sandbox/test_docker_sandbox.py"
POLYGLOT_TEST = "tests/benchmarks/test_cli.py::test_bench_list_and_bad_input"


def _pytest(target: str, tmp_path: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if k != "DGM_REQUIRE"}
    return subprocess.run(
        [sys.executable, "-m", "pytest", target, "-x", "-q", "-rs", "-p", "no:cacheprovider"],
        cwd=ROOT, env={**clean, **env}, capture_output=True, text=True, timeout=300,
    )  # fmt: skip


def test_without_docker_the_docker_tests_skip_and_fail_when_required(tmp_path: Path) -> None:
    dead = {"DOCKER_HOST": f"unix://{tmp_path}/no-engine.sock"}
    skipped = _pytest(DOCKER_TESTS, tmp_path, **dead)
    assert skipped.returncode == 0 and "skipped" in skipped.stdout, skipped.stdout[-2000:]
    assert "DGM_REQUIRE=docker makes this a failure" in skipped.stdout
    failed = _pytest(DOCKER_TESTS, tmp_path, DGM_REQUIRE="docker,polyglot", **dead)
    assert failed.returncode == 1, failed.stdout[-2000:]
    assert "DGM_REQUIRE names docker, which is missing: no Docker engine reachable" in failed.stdout
    assert "Fix: start a Docker engine" in failed.stdout


def test_missing_benchmark_data_fails_when_required(tmp_path: Path) -> None:
    nowhere = {"DGM_SHARED_DIR": str(tmp_path / "no-shared")}
    assert _pytest(POLYGLOT_TEST, tmp_path, **nowhere).returncode == 0
    failed = _pytest(POLYGLOT_TEST, tmp_path, DGM_REQUIRE="polyglot", **nowhere)
    assert failed.returncode == 1, failed.stdout[-2000:]
    assert "DGM_REQUIRE names polyglot, which is missing: polyglot benchmark" in failed.stdout


def test_an_unknown_need_stops_the_run(tmp_path: Path) -> None:
    result = _pytest(POLYGLOT_TEST, tmp_path, DGM_REQUIRE="dokcer")
    assert result.returncode == pytest.ExitCode.USAGE_ERROR
    assert "DGM_REQUIRE names dokcer" in result.stderr and "known: docker," in result.stderr
