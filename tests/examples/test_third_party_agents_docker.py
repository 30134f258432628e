"""Two agents dgm did not write, as seeds in real Docker, their code unmodified but for
the model name a user sets (examples/agents/):
- mini-swe-agent, the pinned PyPI release: litellm reaches the gateway through
  OPENAI_BASE_URL on the container's loopback; the `scripted/shell` world plays its bash
  tool and its `echo COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT` ending;
- DGM's initial coding agent: the official `anthropic` SDK through ANTHROPIC_BASE_URL
  (the Messages API); the world plays its `bash` tool and ends with a plain reply.
Each gets its environment from binary wheels, resolves a Polyglot task and a SWE-bench CI
instance (`dgm eval --dry-run`, judged by the hidden tests) and grows a child whose diff
edits its own prompt (`dgm run --agent ... --dry-run`); the gateway's log holds each job's
calls."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dgm.store import Run
from tests.conftest import POLYGLOT_DIR, SHARED
from tests.needs import image_or_missing, missing

pytestmark = [pytest.mark.docker, pytest.mark.slow]
ROOT = Path(__file__).resolve().parents[2]
TASK = "python__beer-song"
SWE_TASK = "marshmallow-code__marshmallow-1359"  # eval/subsets/swe_ci.txt


def dgm(*args: str, timeout: int = 1500) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "DGM_POLYGLOT_DIR": str(POLYGLOT_DIR)}
    return subprocess.run([sys.executable, "-m", "dgm", *args], capture_output=True, text=True,
                          timeout=timeout, env=env)  # fmt: skip


AGENTS = {  # name: (its own trajectory file, a file of its prompt the child edits)
    "mini-swe-agent": ("mini.traj.json", "minisweagent/config/mini.yaml"),
    "dgm-initial": ("chat_history.md", "coding_agent.py"),
}


@pytest.fixture(scope="module", params=sorted(AGENTS))
def agent(request, tmp_path_factory) -> tuple[str, Path]:
    image_or_missing("runtime")
    dest = tmp_path_factory.mktemp("agents") / request.param
    fetch = [sys.executable, str(ROOT / "examples/agents/fetch.py"), request.param, str(dest)]
    fetched = subprocess.run(fetch, capture_output=True, text=True)
    if fetched.returncode != 0:
        pytest.skip(f"{request.param} could not be fetched: {fetched.stderr[-300:]}")
    return request.param, dest


def test_resolves_a_polyglot_task_through_its_own_client(agent, tmp_path):
    name, folder = agent
    out = tmp_path / "eval"
    result = dgm("eval", str(folder), "--subset", TASK, "--dry-run",
                 "--out", str(out), "--agent-timeout", "600")  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "total        1/1" in result.stdout, result.stdout[-3000:]
    assert "agent environment" in result.stdout  # said what it builds or reuses
    assert "dry run: scripted/shell plays the model" in result.stdout
    log = out / "logs" / TASK / "llm.jsonl"  # the gateway's log of this job's calls
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    assert len(calls) == 4  # look, write, check, then submit or a plain reply
    assert calls[0]["request"]["tools"][0]["function"]["name"] == "bash"
    assert all(c["error"] is None and c["task_id"] == TASK for c in calls)
    trajectory = (out / "logs" / TASK / "out" / AGENTS[name][0]).read_text()  # its own record
    assert "beer_song.py" in trajectory
    environment = json.loads((out / "logs" / TASK / "environment.json").read_text())
    assert all(len(wheel["sha256"]) == 64 for wheel in environment["resolved"])


def test_resolves_a_swebench_ci_instance(agent, tmp_path):
    name, folder = agent
    data = SHARED / "swe-bench"
    if not (data / "instances.jsonl").is_file():
        missing("swebench", f"no SWE-bench data at {data}")
    result = dgm("eval", str(folder), "--benchmark", "swebench", "--data", str(data),
                 "--subset", SWE_TASK, "--dry-run", "--out", str(tmp_path / "eval"))  # fmt: skip
    if "images missing" in result.stderr:
        missing("swebench", result.stderr.strip()[-300:])
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    assert "total        1/1" in result.stdout, result.stdout[-3000:]
    log = tmp_path / "eval" / "logs" / SWE_TASK / "llm.jsonl"
    assert len(log.read_text().splitlines()) >= 3


def test_grows_a_child_that_edits_its_own_prompt(agent, tmp_path):
    name, folder = agent
    run_dir = tmp_path / "run"
    result = dgm("run", str(run_dir), "--agent", str(folder), "--dry-run",
                 "--subset", TASK, "--max-expansions", "1", "--workers", "1")  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    with Run.open(run_dir) as run:
        assert run.config.llm.model == "scripted/shell"
        children = [n for n in run.nodes() if n.parent_id == 0 and n.status == "active"]
        assert children, result.stdout[-3000:]
        files = run.archive.files(children[0].commit)
    diff = dgm("diff", str(run_dir), "0", str(children[0].id)).stdout
    assert f"+++ b/{AGENTS[name][1]}" in diff, diff[:3000]
    assert "run the tests that cover your change" in diff
    assert AGENTS[name][1] in files
