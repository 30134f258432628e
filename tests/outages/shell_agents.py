"""`dgm eval` of a one-line shell agent on one Polyglot task, as a user runs it: what the
outage tests need to see how a memory failure is scored."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import POLYGLOT_DIR


def eval_shell_agent(tmp_path: Path, name: str, solve: str, memory: str) -> tuple[int, str]:
    """(exit code, what dgm printed) of `dgm eval` on python__beer-song with `--memory`."""
    agent = tmp_path / name
    agent.mkdir()
    (agent / "agent.toml").write_text(f'[agent]\nname = "{name}"\n[commands]\nsolve = "{solve}"\n')
    ids = tmp_path / "ids.txt"
    ids.write_text("python__beer-song\n")
    proc = subprocess.run(
        [sys.executable, "-m", "dgm", "eval", str(agent), "--llm", "scripted/capability",
         "--subset", f"@{ids}", "--memory", memory, "--out", str(tmp_path / "out")],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR)},
    )  # fmt: skip
    return proc.returncode, proc.stdout + proc.stderr
