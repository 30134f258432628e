"""A job that runs an agent with an environment in a real sandbox, shipped to a Ray node
with its agent folder (`ship_paths`), as evaluations and expansions are."""

from __future__ import annotations

import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar


@dataclass(frozen=True)
class AgentEnvJob:
    agent_dir: str
    image: str
    log_dir: str
    ship_paths: ClassVar[tuple[str, ...]] = ("agent_dir",)


def run_agent_env_job(job: AgentEnvJob) -> dict[str, Any]:
    """The agent's solve command on an empty workspace; what it wrote and its environment."""
    from dgm.jobs.agent_run import AgentRunRequest, run_agent
    from dgm.workspace_git import git_init

    out = Path(job.log_dir) / "out"
    with tempfile.TemporaryDirectory() as work:
        base = git_init(Path(work))
        request = AgentRunRequest(Path(job.agent_dir), job.image, {"id": "t"}, base, 120,
                                  workspace=Path(work))  # fmt: skip
        result = run_agent(request, out)
    said = (out / "said.txt").read_text() if (out / "said.txt").is_file() else result.output
    return {"said": said, "environment": result.environment}
