"""`dgm run --dry-run --strategy gea` for real (Docker, git, Polyglot hidden tests): groups
form, their pooled experience reaches the improvement step, a better child ships."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from dgm.store import Run
from tests.loop.test_e2e_docker import _check_better_child, _our_containers, dgm

pytestmark = [pytest.mark.docker, pytest.mark.slow]


def test_gea_dry_run_shares_group_experience_and_grows_a_better_child(tmp_path: Path) -> None:
    run_dir = tmp_path / "gea-run"
    result = dgm("run", str(run_dir), "--dry-run", "--strategy", "gea", "--max-evals", "16")
    assert result.returncode == 0, result.stdout + result.stderr
    _check_better_child(run_dir, result.stdout)
    with Run.open(run_dir) as run:
        grouped = [j for j in run.jobs() if j.kind == "expand" and j.inputs.get("group")]
        assert grouped, [j.inputs for j in run.jobs() if j.kind == "expand"]
        job = grouped[0]
        experience = job.inputs["target"]["group_experience"]
        for member in [job.inputs["parent"], *job.inputs["group"]]:
            assert f"agent {member}:" in experience
        # The expand job's own record of its input, and the task the agent was given.
        log = run.path / "logs" / "expand" / job.id
        assert json.loads((log / "target.json").read_text())["group_experience"] == experience
        assert (
            "Experience of the agents improved alongside"
            in (log / "problem_statement.md").read_text()
        )
    assert _our_containers(run_dir.name) == []
