"""An expand job as data: what it asks (`ExpandJob`, its `ExpandSettings`) and what it
returns (`ExpandResult`). Plain data that round-trips through JSON, so a job runs in a
thread, a worker process or on another machine alike."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

from dgm.jobs.diagnose import SPECIAL_STATEMENTS, ImprovementTarget
from dgm.jobs.llm_access import LLMAccess
from dgm.sandbox import ResourceLimits

EXPAND_IMAGE = "runtime"
"""The sandbox image self-edits and smoke tests run in (the loop pins its tag per session)."""


@dataclass(frozen=True)
class ExpandSettings:
    run: str
    image: str = EXPAND_IMAGE
    max_steps: int = 80
    timeout_s: int = 1800
    smoke_test: bool = True
    limits: ResourceLimits = ResourceLimits()
    backend: str = "docker"
    mode: str = "dgm"
    """`[self_improve] mode`: `agent` runs the parent's own `improve` command (improve.py)."""
    environment: dict[str, Any] | None = None
    """A frozen run's seed environment (`[environment] frozen`), used by every agent run."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExpandSettings:
        return cls(**{**data, "limits": ResourceLimits(**data["limits"])})


@dataclass(frozen=True)
class ExpandJob:
    job_id: str
    """Chosen by the loop from the job's inputs (parent, ordinal, target)."""
    parent: int
    parent_code: str
    """A folder holding the parent's codebase (read, never written)."""
    target: ImprovementTarget
    log_dir: str
    settings: ExpandSettings
    diagnose_llm: LLMAccess | None = None
    """Endpoint for the diagnosis call; None when the target needs no diagnosis."""
    self_improve_llm: LLMAccess | None = None
    """Endpoint the parent's agent uses while it edits its own code."""
    history_dir: str | None = None
    """The parent's structured history (dgm/jobs/history_format.py), written by the loop; not
    part of the job id."""
    improve_llm: LLMAccess | None = None
    """Hyperagent mode: the one endpoint of the parent's `improve` command (role `improve`)."""

    @property
    def id(self) -> str:
        return self.job_id

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "target": self.target.to_dict()}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExpandJob:
        return cls(
            **{
                **data,
                "target": ImprovementTarget(**data["target"]),
                "settings": ExpandSettings.from_dict(data["settings"]),
                "diagnose_llm": LLMAccess.from_dict(data.get("diagnose_llm")),
                "self_improve_llm": LLMAccess.from_dict(data.get("self_improve_llm")),
                "improve_llm": LLMAccess.from_dict(data.get("improve_llm")),
            }
        )

    def needs_diagnosis(self) -> bool:
        return self.target.kind not in SPECIAL_STATEMENTS and self.target.kind != "harvest"


@dataclass(frozen=True)
class ExpandResult:
    status: str
    """`ok`, `empty_patch`, `smoke_failed`, `agent_error`, `diagnosis_failed` or
    `unsafe_link` (a symlink leaving the tree: refused, the diff kept only in the log)."""
    problem_statement: str
    diff: str = ""
    reason: str = ""
    diagnosis: dict[str, str] | None = None
    seconds: float = 0.0
    tamper_warnings: list[dict[str, Any]] = field(default_factory=list)
    """The static tamper scan of the child's diff (tamper_scan.py, role `agent`)."""
    harvested_tools: list[str] = field(default_factory=list)
    """A harvest expansion (expand/harvest.py): the runtime tools the child keeps."""
    procedure: str = "dgm"
    """Who made the child: `dgm` (built-in), `agent` (the parent's `improve` command),
    `dgm (fallback: ...)` when agent mode found no `improve` command, or `harvest`."""
    improve_changed: bool = False
    """The diff changes the improvement procedure (an `[improve] paths` file, or the
    `improve` command line): the meta level evolved (child.improve_changed)."""
    environment_change: str | None = None
    """The child's agent environment differs from its parent's: how (agent_env_change.py)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExpandResult:
        return cls(**data)
