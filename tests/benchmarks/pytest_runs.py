"""Run real pytest on a folder the judge's copy planning wrote, as the SWE-bench judge
would (plugin autoload off, JUnit XML), and read back each test's status."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from dgm.benchmarks.swebench.judge import parse_junit


def run_pytest(folder: Path) -> dict[str, str]:
    """{test id: status} for `pytest tests` run in `folder` (on its own PYTHONPATH)."""
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                    "--junitxml=r.xml", "-o", "junit_family=xunit1", "tests"], cwd=folder,
                   env={"PYTHONPATH": str(folder), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"},
                   capture_output=True)  # fmt: skip
    report = parse_junit((folder / "r.xml").read_bytes())
    assert report is not None
    return report
