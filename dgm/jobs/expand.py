"""The expand job: one self-improvement step of a parent agent.

    diagnose  evidence about the parent (see diagnose.py) and its structured history
              (history.py) -> problem statement, through the gateway as role `diagnose`
    solve     the PARENT's own agent runs `solve` in a sandbox on a writable git copy of
              its own source, with that problem statement (role `self_improve`)
    diff      the harness, not the agent, takes the diff of that copy
    smoke     the child's own `smoke` command, in a fresh sandbox, must pass

In hyperagent mode (`[self_improve] mode = "agent"`) the parent's own `improve` command
replaces diagnose and solve (improve_agent.py); diff and smoke stay the harness's
(`make_child`).

`run_expand(job)` takes an `ExpandJob`, plain data that round-trips through JSON: the
parent's code by path and commit, the target, the settings, and the two endpoint
descriptions (diagnose, self_improve) the caller bound on its gateway. The job never
touches the store: it returns the diff and the problem statement, and the loop commits
the child. Empty diffs and children that fail their smoke test come back
with their reason, to be recorded, never silently dropped.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

from dgm.errors import DgmError
from dgm.gateway import BudgetRefused, LLMCallError
from dgm.jobs.agent_env_change import environment_change, spec_of
from dgm.jobs.agent_run import AgentRunRequest, AgentRunResult, run_agent
from dgm.jobs.diagnose import (
    SPECIAL_STATEMENTS,
    ImprovementTarget,
    diagnosis_request,
    parse_diagnosis,
    problem_statement,
)
from dgm.jobs.history import RENDER_LIMIT, HistoryError, render_history
from dgm.jobs.llm_access import LLMAccess, chat
from dgm.jobs.tamper_scan import scan_diff
from dgm.safefs import escaping_links
from dgm.sandbox import ResourceLimits
from dgm.sandbox.orphans import LABEL_JOB, LABEL_RUN
from dgm.workspace_git import git_apply, git_init

SELF_IMPROVE_PREAMBLE = (
    "The repository in your working directory is the source code of the coding agent "
    "that you are (its entry points are named in agent.toml). Improve the agent as "
    "follows.\n\n"
)
SELF_IMPROVE_FOOTER = (
    "\n\nKeep the agent working: its own tests (the `smoke` command in agent.toml) must "
    "still pass, and add a test for what you change."
)
SMOKE_TIMEOUT_S = 300
log = logging.getLogger(__name__)


@dataclass(frozen=True)
class ExpandSettings:
    run: str
    image: str = "runtime"
    max_steps: int = 80
    timeout_s: int = 1800
    smoke_test: bool = True
    limits: ResourceLimits = ResourceLimits()
    backend: str = "docker"
    mode: str = "dgm"
    """`[self_improve] mode`: `agent` runs the parent's own `improve` command (improve_agent.py)."""
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
    """The parent's structured history (dgm/jobs/history.py), written by the loop; not
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
    """A harvest expansion (harvest.py): the runtime tools the child keeps."""
    procedure: str = "dgm"
    """Who made the child: `dgm` (built-in), `agent` (the parent's `improve` command),
    `dgm (fallback: ...)` when agent mode found no `improve` command, or `harvest`."""
    improve_changed: bool = False
    """The diff changes the improvement procedure (an `[improve] paths` file, or the
    `improve` command line): the meta level evolved (improve_agent.improve_changed)."""
    environment_change: str | None = None
    """The child's agent environment differs from its parent's: how (agent_env_change.py)."""

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> ExpandResult:
        return cls(**data)


def run_expand(job: ExpandJob) -> ExpandResult:
    if job.target.kind == "harvest":  # no diagnosis, no agent run, no LLM call
        from dgm.jobs.harvest import run_harvest

        return run_harvest(job)
    from dgm.jobs.improve_agent import procedure_for, run_improve

    started = time.monotonic()
    job_id, target, settings = job.job_id, job.target, job.settings
    parent_code, log_dir = Path(job.parent_code), Path(job.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "target.json").write_text(json.dumps(target.to_dict(), indent=2))
    procedure = procedure_for(settings.mode, parent_code, log_dir)
    if procedure == "agent":
        return run_improve(job, started)
    diagnosis: dict[str, str] | None = None
    if job.needs_diagnosis():
        try:
            diagnosis = _diagnose(job)
        except (LLMCallError, BudgetRefused, ValueError) as exc:
            return _finish(log_dir, started, "diagnosis_failed", "", reason=str(exc),
                           procedure=procedure)  # fmt: skip
    statement = problem_statement(target, diagnosis)
    (log_dir / "problem_statement.md").write_text(statement)

    with tempfile.TemporaryDirectory(prefix="dgm-expand-") as tmp:
        workspace = Path(tmp) / "work"
        shutil.copytree(parent_code, workspace, symlinks=True)
        base = git_init(workspace)
        request = self_edit_request(
            job, workspace, base, f"self-improve/{job_id}",
            SELF_IMPROVE_PREAMBLE + statement + SELF_IMPROVE_FOOTER,
        )  # fmt: skip
        agent = run_agent(request, log_dir / "out", job.self_improve_llm, settings.backend)
        return make_child(job, workspace, agent, statement, started, diagnosis, procedure)


def make_child(
    job: ExpandJob,
    workspace: Path,
    agent: AgentRunResult,
    statement: str,
    started: float,
    diagnosis: dict[str, str] | None = None,
    procedure: str = "dgm",
) -> ExpandResult:
    """The harness's half of every procedure: the agent's diff -> the child -> its smoke."""
    from dgm.jobs.improve_agent import improve_changed

    log_dir, settings = Path(job.log_dir), job.settings
    labels = {LABEL_RUN: settings.run, LABEL_JOB: job.job_id}
    done = partial(_finish, log_dir, started, statement=statement, diagnosis=diagnosis,
                   procedure=procedure)  # fmt: skip
    (log_dir / "patch.diff").write_text(agent.patch)
    (log_dir / "agent_output.txt").write_text(agent.output)
    if agent.trajectory is not None:
        shutil.copyfile(agent.trajectory, log_dir / "trajectory.json")
    if agent.error:
        return done("agent_error", reason=agent.error)
    if not agent.patch.strip():
        why = "the agent changed nothing" + (" (timed out)" if agent.timed_out else "")
        return done("empty_patch", reason=why)
    # Our own pristine copy and our own .git: no agent hook or config runs on the host.
    git_apply(workspace, agent.patch)
    child = workspace
    changed = improve_changed(Path(job.parent_code), child, agent.patch)
    env_change = None if settings.environment else environment_change(Path(job.parent_code), child)
    links = escaping_links(child)
    if links:  # refused, never committed: checking the node out would point outside
        shown = ", ".join(f"{p} -> {t}" for p, t in links[:5])
        return done("unsafe_link", reason=f"the child has symlinks that leave its tree: {shown}")
    if settings.smoke_test:
        passed, output = _smoke(child, log_dir, labels, settings)
        if not passed:
            return done("smoke_failed", diff=agent.patch, improve_changed=changed,
                        reason=f"the child's smoke test failed: {output[-1500:]}",
                        environment_change=env_change)  # fmt: skip
    return done("ok", diff=agent.patch, improve_changed=changed, environment_change=env_change)


def _diagnose(job: ExpandJob) -> dict[str, str]:
    if job.diagnose_llm is None:
        raise ValueError("the diagnosis has no LLM endpoint")
    answer = chat(job.diagnose_llm, job_diagnosis_request(job))
    log_dir = Path(job.log_dir)
    text = answer["choices"][0]["message"].get("content") or ""
    diagnosis = parse_diagnosis(text)
    (log_dir / "diagnosis.json").write_text(json.dumps(diagnosis, indent=2))
    return diagnosis


def job_diagnosis_request(job: ExpandJob) -> dict[str, Any]:
    """The diagnosis request of an expand job: its target, the parent's source and its
    rendered history (a missing or broken history is only left out)."""
    history = None
    if job.history_dir:
        try:
            history = render_history(Path(job.history_dir), RENDER_LIMIT)
        except HistoryError as exc:
            log.warning("expand %s: the history is left out: %s", job.job_id, exc)
    return diagnosis_request(job.target, Path(job.parent_code), history)


def self_edit_request(
    job: ExpandJob, workspace: Path, base: str, task_id: str, statement: str, **extra: Any
) -> AgentRunRequest:
    """The parent's agent on a writable copy of its own source (`solve` for the built-in
    procedure; `improve` in hyperagent mode, via `extra`)."""
    settings = job.settings
    return AgentRunRequest(
        agent_dir=Path(job.parent_code),
        image=settings.image,
        task_file={
            "id": task_id,
            "problem_statement": statement,
            "language": "python",
            "max_steps": settings.max_steps,
            "time_limit_s": settings.timeout_s,
        },
        base_commit=base,
        timeout_s=settings.timeout_s + 60,
        limits=settings.limits,
        workspace=workspace,
        labels={LABEL_RUN: settings.run, LABEL_JOB: job.job_id},
        environment=spec_of(settings.environment),
        **extra,
    )


def _smoke(
    child: Path, log_dir: Path, labels: dict[str, str], settings: ExpandSettings
) -> tuple[bool, str]:
    """The child's own `smoke` command, run as the child's agent in a fresh sandbox."""
    request = AgentRunRequest(
        agent_dir=child,
        image=settings.image,
        task_file={"id": "smoke", "problem_statement": "", "language": "python"},
        base_commit="HEAD",
        timeout_s=SMOKE_TIMEOUT_S,
        limits=settings.limits,
        workspace=child,
        command="smoke",
        labels=labels,
        environment=spec_of(settings.environment),
    )
    try:
        result = run_agent(request, log_dir / "smoke-out", None, settings.backend)
    except DgmError as exc:  # the child named requirements that cannot be had
        return False, f"the child's agent environment cannot be built: {exc.message} ({exc.hint})"
    (log_dir / "smoke_output.txt").write_text(result.output)
    if result.environment is not None:  # the child's environment: requirements, wheel hashes
        (log_dir / "environment.json").write_text(json.dumps(result.environment, indent=2))
    return result.exit_code == 0 and not result.timed_out, result.output


def _finish(
    log_dir: Path,
    started: float,
    status: str,
    statement: str,
    diff: str = "",
    reason: str = "",
    diagnosis: dict[str, str] | None = None,
    procedure: str = "dgm",
    improve_changed: bool = False,
    harvested: list[str] | None = None,
    environment_change: str | None = None,
) -> ExpandResult:
    result = ExpandResult(
        status, statement, diff, reason, diagnosis, round(time.monotonic() - started, 3),
        scan_diff(diff, role="agent"), procedure=procedure, improve_changed=improve_changed,
        harvested_tools=list(harvested or []), environment_change=environment_change,
    )  # fmt: skip
    (log_dir / "result.json").write_text(json.dumps(result.to_dict(), indent=2))
    return result
