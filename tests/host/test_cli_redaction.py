"""The CLI scrubs the process's API keys from its error lines and `--debug` tracebacks."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

KEY = "plain-looking-secret-0123456789"  # no key shape: only the environment names it


def test_error_lines_and_debug_tracebacks_never_show_a_key(tmp_path: Path) -> None:
    env = {**os.environ, "OPENAI_API_KEY": KEY}
    missing = str(tmp_path / f"run-{KEY}")
    for debug in ([], ["--debug"]):
        out = subprocess.run(
            [sys.executable, "-m", "dgm", *debug, "status", missing],
            capture_output=True, text=True, timeout=120, env=env,
        )  # fmt: skip
        assert out.returncode != 0
        assert KEY not in out.stdout + out.stderr and "[redacted]" in out.stderr
    assert "Traceback" in out.stderr  # the --debug run did show its traceback, scrubbed
