"""mini-swe-agent, the pinned PyPI release, unmodified, as a dgm seed in real Docker: its
environment (litellm and the rest) built from binary wheels, its litellm calls reaching
the gateway through OPENAI_BASE_URL on the container's loopback, the `scripted/shell`
world playing its bash tool and its `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` ending.
It resolves a Polyglot task (`dgm eval`, judged by the hidden tests) and grows a child
whose diff edits its own prompt (`dgm run --agent ... --dry-run`)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dgm.store import Run
from tests.conftest import POLYGLOT_DIR
from tests.needs import image_or_missing

pytestmark = [pytest.mark.docker, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
TASK = "python__beer-song"


def dgm(*args: str, timeout: int = 1500) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR)}
    return subprocess.run([sys.executable, "-m", "dgm", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)  # fmt: skip


@pytest.fixture(scope="module")
def mini_agent(tmp_path_factory) -> Path:
    image_or_missing("runtime")
    dest = tmp_path_factory.mktemp("agents") / "mini-swe-agent"
    fetch = [sys.executable, str(ROOT / "examples/agents/fetch.py"), "mini-swe-agent", str(dest)]
    fetched = subprocess.run(fetch, capture_output=True, text=True)
    if fetched.returncode != 0:
        pytest.skip(f"mini-swe-agent could not be fetched from PyPI: {fetched.stderr[-300:]}")
    return dest


def test_mini_swe_agent_resolves_a_polyglot_task(mini_agent, tmp_path):
    out = tmp_path / "eval"
    result = dgm("eval", str(mini_agent), "--subset", TASK, "--llm", "scripted/shell",
                 "--out", str(out), "--agent-timeout", "600")  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "total        1/1" in result.stdout, result.stdout[-3000:]
    assert "agent environment" in result.stdout  # said what it builds or reuses
    log = out / "logs" / TASK / "llm.jsonl"  # the gateway's log of this job's calls
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 4  # look, write, check, submit: litellm through the gateway
    assert calls[0]["request"]["tools"][0]["function"]["name"] == "bash"
    assert all(c["error"] is None and c["task_id"] == TASK for c in calls)
    traj = next(out.rglob("mini.traj.json"))  # the agent's own trajectory came back
    assert "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT" in traj.read_text()


def test_mini_swe_agent_grows_a_child_that_edits_its_own_prompt(mini_agent, tmp_path):
    run_dir = tmp_path / "run"
    result = dgm("run", str(run_dir), "--agent", str(mini_agent), "--dry-run",
                 "--subset", TASK, "--max-expansions", "1", "--workers", "1")  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with Run.open(run_dir) as run:
        assert run.config.llm.model == "scripted/shell"
        children = [n for n in run.nodes() if n.parent_id == 0 and n.status == "active"]
        assert children, result.stdout[-3000:]
        files = run.archive.files(children[0].commit)
    diff = dgm("diff", str(run_dir), "0", str(children[0].id)).stdout
    assert "minisweagent/config/mini.yaml" in diff, diff[:3000]
    assert "+" in diff and "run the tests that cover your change" in diff
    assert "minisweagent/run/mini.py" in files
