"""The seed agent inside the runtime sandbox (no network, gateway socket mounted, its
code read-only at /agent) solves a Polyglot Python exercise: a scripted model writes the
reference solution through the agent's `create` tool, and the hidden tests, run in a
fresh judge container, pass."""

from __future__ import annotations

import json

import pytest

from dgm.sandbox.session import open_sandbox
from dgm.sandbox.spec import Mount, SandboxSpec
from dgm.scripted.agent_drivers import WriteFilesScript, reference_files
from tests.needs import image_or_missing

EXERCISE = "affine-cipher"


@pytest.mark.docker
def test_agent_in_sandbox_solves_a_polyglot_exercise(
    tmp_path, polyglot_dir, scripted_gateway, seed_agent_dir, manifest
):
    image_or_missing("runtime")
    exercise = polyglot_dir / "python" / "exercises" / "practice" / EXERCISE
    config = json.loads((exercise / ".meta" / "config.json").read_text())
    stub, test_file = config["files"]["solution"][0], config["files"]["test"][0]
    endpoint = scripted_gateway(WriteFilesScript(reference_files(exercise)), in_container=True)
    workspace = tmp_path / "workspace"  # the stub, writable (the checkout is read-only)
    workspace.mkdir()
    (workspace / stub).write_text((exercise / stub).read_text())
    task_dir = tmp_path / "task"
    task_dir.mkdir()
    instructions = (exercise / ".docs" / "instructions.md").read_text()
    task = {"id": f"python/{EXERCISE}", "problem_statement": instructions, "language": "python",
            "max_steps": 10, "time_limit_s": 120}  # fmt: skip
    (task_dir / "task.json").write_text(json.dumps(task))

    agent_spec = SandboxSpec(
        image="runtime",
        mounts=(
            Mount(seed_agent_dir, "/agent"),
            Mount(task_dir, "/task"),
            Mount(endpoint.socket_path, endpoint.container_socket_path, read_only=False),
        ),
        env=endpoint.env,
        writable_dirs=("/tmp", "/home/agent", "/out"),
    )
    solve = manifest(seed_agent_dir, "solve", agent_dir_as="/agent", workdir="/work",
                     task_file="/task/task.json", output_dir="/out")  # fmt: skip
    with open_sandbox(agent_spec) as box:
        box.copy_in(workspace / stub, "/work")
        assert box.exec(["git", "init", "-q"], timeout=30).ok
        offline = box.exec(
            ["python3", "-c", "import socket; socket.create_connection(('1.1.1.1', 53), 3)"],
            timeout=30,
        )
        assert not offline.ok  # network none: the gateway socket is the only way out
        result = box.exec(solve, timeout=180)
        assert result.ok, result.output
        box.copy_out("/out/trajectory.json", tmp_path)
        box.copy_out("/work", tmp_path / "result")
    trajectory = json.loads((tmp_path / "trajectory.json").read_text())
    assert trajectory["exit_status"] == "finished", trajectory["exit_message"]
    assert trajectory["exit_message"] == f"wrote {stub}", trajectory["messages"]
    assert ["create"] == [
        c["name"] for s in trajectory["steps"] for c in s["tool_calls"] if c["name"] == "create"
    ]

    with open_sandbox(SandboxSpec(image="runtime")) as judge:  # fresh: never saw the agent
        judge.copy_in(tmp_path / "result" / "work" / stub, "/work")
        judge.copy_in(exercise / test_file, "/work")
        verdict = judge.exec(["python3", "-m", "pytest", "-q", test_file], timeout=120)
    assert verdict.ok, verdict.output
    assert " passed" in verdict.output
