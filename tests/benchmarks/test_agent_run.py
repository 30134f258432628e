"""An agent that calls the LLM through the gateway socket, evaluated by the eval job."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dgm.benchmarks.swebench.loader import SweTasks
from dgm.evaluation.evaluate_agent import evaluate_agent
from dgm.gateway import Gateway, GatewaySettings, register_script
from dgm.jobs.evaluate import AgentRef

pytestmark = pytest.mark.docker

AGENT = r"""
import http.client, json, os, socket, sys

class UnixConnection(http.client.HTTPConnection):
    def __init__(self, path):
        super().__init__("localhost")
        self.unix_path = path
    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.connect(self.unix_path)

task = json.load(open(sys.argv[1]))
conn = UnixConnection(os.environ["DGM_LLM_URL"][len("unix://"):])
body = {"model": os.environ["DGM_LLM_MODEL"],
        "messages": [{"role": "user", "content": task["id"]}]}
conn.request("POST", "/v1/chat/completions", json.dumps(body),
             {"Content-Type": "application/json",
              "Authorization": "Bearer " + os.environ["DGM_LLM_TOKEN"]})
answer = json.loads(conn.getresponse().read())["choices"][0]["message"]["content"]
open("/work/tinyutil/answer.txt", "w").write(answer + "\n")
json.dump({"task": task["id"], "steps": [answer]}, open("/out/trajectory.json", "w"))
"""


def test_agent_reaches_the_gateway_and_its_artefacts_are_logged(
    suite_image: str, tmp_path: Path
) -> None:
    register_script("eval-test", lambda request, ctx: f"answer for {ctx.binding.task_id}")
    agent = tmp_path / "agent"
    agent.mkdir()
    (agent / "agent.py").write_text(AGENT)
    (agent / "agent.toml").write_text(
        '[commands]\nsolve = "python3 {agent_dir}/agent.py {task_file}"\n'
    )
    task = SweTasks().task("dgm__tinyutil-1")
    log = tmp_path / "out" / "logs" / task.id
    with Gateway(
        GatewaySettings("scripted/eval-test", run="t", log_dir=tmp_path / "gw", port=None)
    ) as gateway:
        # The job reaches the gateway through the socket bound for it (an endpoint
        # description), in a worker process: nothing of this process's memory is used.
        [outcome] = evaluate_agent(AgentRef(str(agent)), [task], tmp_path / "out",
                                   model="scripted/eval-test", gateway=gateway,
                                   executor="process")  # fmt: skip
    assert outcome.details["agent_exit_code"] == 0, (log / "agent_output.txt").read_text()
    assert "+answer for dgm__tinyutil-1" in (log / "patch.diff").read_text()
    assert not outcome.empty_patch and not outcome.resolved  # no fix, tests still fail
    assert json.loads((log / "trajectory.json").read_text())["task"] == task.id
    [exchange] = [json.loads(line) for line in (log / "llm.jsonl").read_text().splitlines()]
    assert exchange["job_id"] == outcome.job_id and exchange["task_id"] == task.id
    assert outcome.usage["calls"] == 1
    saved = json.loads((log / "result.json").read_text())
    assert saved == json.loads(json.dumps(outcome.to_dict()))
    assert (outcome.tests_passed, outcome.tests_total) == (4, 5)


PLANTER = r"""
import json, os
json.dump({"steps": ["done"]}, open("/out/trajectory.json", "w"))
os.symlink("/etc/passwd", "/out/passwd")
os.mkfifo("/out/pipe")
"""


def test_a_link_or_special_file_in_out_is_left_out_by_name_and_the_trajectory_kept(
    runtime_image: str, tmp_path: Path
) -> None:
    import subprocess

    from dgm.jobs.agent_run import AgentRunRequest, run_agent

    agent, work = tmp_path / "agent", tmp_path / "work"
    agent.mkdir()
    work.mkdir()
    (agent / "agent.py").write_text(PLANTER)
    (agent / "agent.toml").write_text('[commands]\nsolve = "python3 {agent_dir}/agent.py"\n')
    (work / "a.txt").write_text("a\n")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@t"]
    subprocess.run(["git", "init", "-q"], cwd=work, check=True)
    subprocess.run([*git, "add", "-A"], cwd=work, check=True)
    subprocess.run([*git, "commit", "-qm", "base"], cwd=work, check=True)
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=work, capture_output=True,
                          text=True, check=True).stdout.strip()  # fmt: skip
    request = AgentRunRequest(agent_dir=agent, image=runtime_image, task_file={"id": "t"},
                              base_commit=head, timeout_s=60, workspace=work)  # fmt: skip
    result = run_agent(request, tmp_path / "out")
    assert result.trajectory is not None and json.loads(result.trajectory.read_text())
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["trajectory.json"]
    assert any("'out/passwd'" in n and "symbolic link" in n for n in result.out_skipped)
    assert any("'out/pipe'" in n and "FIFO" in n for n in result.out_skipped)
    assert "[dgm] /out: refused unsafe entry 'out/passwd'" in result.output
