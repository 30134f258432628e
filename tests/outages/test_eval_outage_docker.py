"""`dgm eval` under a total provider outage (a stand-in provider on 127.0.0.1 answering
503 to everything): every task is "not scored (LLM upstream unavailable ...)", apart from
passed/total, and the command exits non-zero. The seed agent runs in real sandboxes."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dgm.paths import seed_agent_dir
from tests.conftest import POLYGLOT_DIR
from tests.outages.shell_agents import eval_shell_agent
from tests.outages.standin import StandIn

pytestmark = pytest.mark.docker


def test_eval_under_a_total_outage_scores_nothing_and_fails(
    tmp_path: Path, standin: StandIn
) -> None:
    standin.down = True
    ids = tmp_path / "ids.txt"
    ids.write_text("python__beer-song\npython__grade-school\n")
    out = tmp_path / "out"
    proc = subprocess.run(
        [sys.executable, "-m", "dgm", "eval", str(seed_agent_dir()), "--llm", standin.model,
         "--price", "0,0", "--subset", f"@{ids}", "--workers", "2", "--out", str(out),
         "--llm-retries", "0", "--agent-timeout", "120"],
        capture_output=True, text=True, timeout=600,
        env={**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR)},
    )  # fmt: skip
    said = proc.stdout + proc.stderr
    assert proc.returncode != 0, said
    assert said.count("not scored (LLM upstream unavailable") == 2, said
    assert "2 of 2 task(s) not scored" in said
    assert "total        0/0" in said  # nothing scored: no 0/2 to mislead anyone
    summary = json.loads((out / "results.json").read_text())["summary"]
    assert summary["not_scored"] == 2 and summary["total"] == {"passed": 0, "total": 0}
    assert standin.failed > 0


def test_an_agent_that_exhausts_its_memory_is_scored_as_its_own_failure(tmp_path: Path) -> None:
    code, said = eval_shell_agent(
        tmp_path, "hog", "python3 -c 'b = [bytearray(2**20) for _ in range(10**6)]'", "128m"
    )
    assert code == 0, said  # scored: the memory was its own to exhaust
    assert "total        0/1" in said and "not scored" not in said
