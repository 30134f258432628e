"""Fixtures for driving the real seed agent process: a scripted gateway and a runner."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import tomllib
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from dgm.config import JobBudget
from dgm.gateway import (
    CONTAINER_SOCKET,
    Endpoint,
    Gateway,
    GatewaySettings,
    JobBinding,
    short_socket_path,
)
from dgm.gateway.backends import register_script

SEED_DIR = Path(__file__).resolve().parents[2] / "seed_agent"


@dataclass
class AgentRun:
    returncode: int
    stderr: str
    trajectory: dict[str, Any]

    def tool_outputs(self) -> list[str]:
        return [m["content"] for m in self.trajectory["messages"] if m["role"] == "tool"]


def manifest_command(
    agent_dir: Path, name: str, agent_dir_as: str | None = None, **values: Path | str
) -> list[str]:
    """A command from the agent's agent.toml, placeholders filled; `agent_dir_as` is
    where the agent's code will be seen (e.g. /agent in a sandbox)."""
    commands = tomllib.loads((agent_dir / "agent.toml").read_text())["commands"]
    filled = commands[name].format(agent_dir=agent_dir_as or agent_dir, **values)
    return shlex.split(filled)


def run_solve(
    agent_dir: Path,
    workdir: Path,
    task: dict[str, Any],
    env: dict[str, str],
    tmp: Path,
    timeout: float = 120,
) -> AgentRun:
    """Run the agent's `solve` command as the harness would, and read its trajectory."""
    task_file, out_dir = tmp / "task.json", tmp / "out"
    task_file.write_text(json.dumps({"language": "python", "max_steps": 30, **task}))
    command = manifest_command(
        agent_dir, "solve", workdir=workdir, task_file=task_file, output_dir=out_dir
    )
    proc = subprocess.run(
        command, env={**os.environ, **env}, capture_output=True, text=True, timeout=timeout
    )
    trajectory = json.loads((out_dir / "trajectory.json").read_text())
    return AgentRun(proc.returncode, proc.stderr, trajectory)


@pytest.fixture
def seed_agent_dir() -> Path:
    return SEED_DIR


@pytest.fixture
def solve() -> Callable[..., AgentRun]:
    """`solve(agent_dir, workdir, task, env, tmp)`: run an agent's `solve` command."""
    return run_solve


@pytest.fixture
def manifest() -> Callable[..., list[str]]:
    """`manifest(agent_dir, name, agent_dir_as=None, **placeholders)`: see manifest_command."""
    return manifest_command


@pytest.fixture
def scripted_gateway() -> Iterator[Callable[..., Endpoint]]:
    """`serve(script, max_calls=None, socket=True, in_container=False) -> Endpoint`: the
    real dgm gateway, its `scripted` backend answering with `script`, bound to one job.

    `max_calls=N` is the job's budget: every call after the N-th is refused (HTTP 402).
    `.env` is the agent's environment; with `in_container`, DGM_LLM_URL names the socket
    as mounted in a sandbox and `.socket_path` is the host socket to mount.
    """
    gateways: list[Gateway] = []

    def serve(
        script: Callable[..., Any],
        max_calls: int | None = None,
        socket: bool = True,
        in_container: bool = False,
    ) -> Endpoint:
        name = f"seed-test-{uuid.uuid4().hex[:8]}"
        register_script(name, script)
        gateway = Gateway(GatewaySettings(f"scripted/{name}", run="seed-tests", port=0)).start()
        gateways.append(gateway)
        job_id = f"job-{name}"
        endpoint = gateway.bind_job(
            JobBinding("seed-tests", job_id, role="solve"),
            budget=JobBudget(max_calls=max_calls),
            socket_path=short_socket_path(job_id) if socket else None,
            container_socket_path=CONTAINER_SOCKET if in_container else None,
        )
        return endpoint

    yield serve
    for gateway in gateways:
        gateway.stop()
