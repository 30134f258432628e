"""A child whose agent environment differs from its parent's is said so in its record,
and a frozen run hands every job the seed's environment as plain data."""

from __future__ import annotations

from pathlib import Path

from dgm.config import RunConfig
from dgm.jobs.agent_env_change import environment_change, spec_data, spec_of
from dgm.jobs.expand import ExpandSettings
from dgm.sandbox.env_requirements import EnvironmentSpec


def _agent(root: Path, requirements: str | None) -> Path:
    root.mkdir()
    toml = '[commands]\nsolve = "true"\n'
    if requirements is not None:
        toml += '[environment]\nrequirements = "requirements.txt"\n'
        (root / "requirements.txt").write_text(requirements)
    (root / "agent.toml").write_text(toml)
    return root


def test_a_changed_environment_is_named_in_one_line(tmp_path):
    parent = _agent(tmp_path / "p", "litellm==1.0\nrich==13.0\n")
    same = _agent(tmp_path / "s", "rich==13.0\nlitellm==1.0  # same set\n")
    child = _agent(tmp_path / "c", "litellm==1.1\nrich==13.0\n")
    hostile = _agent(tmp_path / "h", "git+https://evil.example/x\n")
    assert environment_change(parent, same) is None
    line = environment_change(parent, child)
    assert line is not None and line.startswith("CHANGED: +litellm==1.1 -litellm==1.0")
    assert "refused" in (environment_change(parent, hostile) or "")
    assert environment_change(_agent(tmp_path / "n", None), child).startswith("CHANGED: +")


def test_frozen_environment_travels_as_job_data():
    assert RunConfig.from_dict({"environment": {"frozen": True}}).environment.frozen
    spec = EnvironmentSpec(("a==1",), ("ripgrep",))
    settings = ExpandSettings(run="r", environment=spec_data(spec))
    again = ExpandSettings.from_dict(settings.to_dict())
    assert spec_of(again.environment) == spec and spec_of(None) is None
