"""Run real pytest on a folder the judge's copy planning wrote, as the SWE-bench judge
would (plugin autoload off, JUnit XML), and read back each test's status."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from dgm.benchmarks.swebench import stream
from dgm.benchmarks.swebench.junit import parse_junit


def run_pytest(folder: Path) -> dict[str, str]:
    """{test id: status} for `pytest tests` run in `folder` (on its own PYTHONPATH)."""
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "--junitxml=r.xml", "-o", "junit_family=xunit1", "tests"], cwd=folder,
                   env={"PYTHONPATH": str(folder), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
                   capture_output=True)  # fmt: skip
    report = parse_junit((folder / "r.xml").read_bytes())
    assert report is not None
    return report


def stage_plugin(folder: Path) -> str:
    """The judge's stream plugin and its checks, staged as the judge stages them (the
    `mark` that dates the setup step first); the run's nonce."""
    folder.mkdir()
    nonce = stream.new_nonce()
    (folder / "mark").touch()
    for name, source in stream.staged(nonce).items():
        (folder / name).write_text(source)
    return nonce


def run_streamed(folder: Path, tests: str = "tests/test_x.py") -> tuple[str, str]:
    """(pytest's whole output, the nonce) for `pytest -rA <tests>` run in `folder` as the
    judge's tests step runs it: its stream plugin loaded first with -p, autoload off, the
    command's test files named to the plugin."""
    plugin = folder / "_stream"
    nonce = stage_plugin(plugin)
    env = {
        **os.environ,
        "PYTHONPATH": f"{plugin}:{folder}",
        "DGM_STREAM": nonce,
        "DGM_JUDGED": tests,
        "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1",
        "PYTEST_ADDOPTS": f"-p {stream.module(nonce)}",
    }
    command = [sys.executable, "-m", "pytest", "-rA", "-p", "no:cacheprovider", tests]
    proc = subprocess.run(command, cwd=folder, env=env, capture_output=True, text=True,
                          timeout=120)  # fmt: skip
    return proc.stdout + proc.stderr, nonce
