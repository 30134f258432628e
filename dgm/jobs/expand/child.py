"""Making a child, shared by every expansion procedure (built-in, the agent's own
`improve`, harvest): each procedure leaves a changed copy of the parent's code; from there
the harness, never the agent, takes the diff, refuses symlinks that leave the tree, runs the
child's own `smoke` command in a fresh sandbox and writes `result.json` (`finish`).

This module imports no other procedure: builtin.py, improve.py and harvest.py each import it.
Every agent run goes through `agent_run.run_agent` (one place to stand a run in for).
"""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from functools import partial
from pathlib import Path, PurePosixPath
from typing import Any

from dgm.errors import DgmError
from dgm.jobs import agent_run
from dgm.jobs.agent_env_change import environment_change, spec_of
from dgm.jobs.agent_run import AgentRunRequest, AgentRunResult, load_manifest
from dgm.jobs.expand.job import ExpandJob, ExpandResult, ExpandSettings
from dgm.jobs.tamper_scan import scan_diff
from dgm.safefs import escaping_links
from dgm.sandbox.orphans import LABEL_JOB, LABEL_RUN
from dgm.workspace_git import git_apply, git_init

SMOKE_TIMEOUT_S = 300
KEPT = "kept-child.json"
"""A child's diff, kept in the job's log folder before its smoke test: if an outage then
cuts the job short, its re-run (same job, same folder) starts from here, so the LLM calls
that made the diff are not paid twice."""


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
    log_dir = Path(job.log_dir)
    done = partial(finish, log_dir, started, statement=statement, diagnosis=diagnosis,
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
    env_change = child_environment_change(job, child)
    links = escaping_links(child)
    if links:  # refused, never committed: checking the node out would point outside
        shown = ", ".join(f"{p} -> {t}" for p, t in links[:5])
        return done("unsafe_link", reason=f"the child has symlinks that leave its tree: {shown}")
    kept = {"patch": agent.patch, "statement": statement, "diagnosis": diagnosis,
            "procedure": procedure, "improve_changed": changed}  # fmt: skip
    (log_dir / KEPT).write_text(json.dumps(kept))
    return smoke_and_finish(job, child, agent.patch, changed, env_change, done)


def child_environment_change(job: ExpandJob, child: Path) -> str | None:
    if job.settings.environment:
        return None
    return environment_change(Path(job.parent_code), child)


def smoke_and_finish(
    job: ExpandJob, child: Path, patch: str, changed: bool, env_change: str | None, done: Any
) -> ExpandResult:
    settings, log_dir = job.settings, Path(job.log_dir)
    labels = {LABEL_RUN: settings.run, LABEL_JOB: job.job_id}
    if settings.smoke_test:
        passed, output = smoke(child, log_dir, labels, settings)
        if not passed:
            return done("smoke_failed", diff=patch, improve_changed=changed,
                        reason=f"the child's smoke test failed: {output[-1500:]}",
                        environment_change=env_change)  # fmt: skip
    return done("ok", diff=patch, improve_changed=changed, environment_change=env_change)


def resume_kept(job: ExpandJob, started: float) -> ExpandResult | None:
    """The child an earlier attempt of this job made before an outage cut it short: only
    its smoke test runs again (no diagnosis, no agent run, no LLM call). None if none."""
    log_dir = Path(job.log_dir)
    try:
        kept = json.loads((log_dir / KEPT).read_text())
        patch, statement = str(kept["patch"]), str(kept["statement"])
    except (OSError, ValueError, KeyError, TypeError):
        return None
    done = partial(finish, log_dir, started, statement=statement,
                   diagnosis=kept.get("diagnosis"),
                   procedure=kept.get("procedure", "dgm"))  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="dgm-expand-") as tmp:
        child = Path(tmp) / "work"
        shutil.copytree(Path(job.parent_code), child, symlinks=True)
        git_init(child)
        git_apply(child, patch)
        changed = bool(kept.get("improve_changed"))
        env_change = child_environment_change(job, child)
        return smoke_and_finish(job, child, patch, changed, env_change, done)


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


def smoke(
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
        result = agent_run.run_agent(request, log_dir / "smoke-out", None, settings.backend)
    except DgmError as exc:  # the child named requirements that cannot be had
        return False, f"the child's agent environment cannot be built: {exc.message} ({exc.hint})"
    (log_dir / "smoke_output.txt").write_text(result.output)
    if result.environment is not None:  # the child's environment: requirements, wheel hashes
        (log_dir / "environment.json").write_text(json.dumps(result.environment, indent=2))
    return result.exit_code == 0 and not result.timed_out, result.output


def finish(
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
    """The job's result, written to `<log dir>/result.json` (with the diff's tamper scan)."""
    result = ExpandResult(
        status, statement, diff, reason, diagnosis, round(time.monotonic() - started, 3),
        scan_diff(diff, role="agent"), procedure=procedure, improve_changed=improve_changed,
        harvested_tools=list(harvested or []), environment_change=environment_change,
    )  # fmt: skip
    (log_dir / "result.json").write_text(json.dumps(result.to_dict(), indent=2))
    return result


def touched_paths(patch: str) -> set[str]:
    """The files a git diff changes (both sides of a rename)."""
    paths: set[str] = set()
    for match in re.finditer(r"^diff --git a/(\S+) b/(\S+)$", patch, re.M):
        paths.update(match.groups())
    return paths


def improve_changed(parent_code: Path, child_code: Path, patch: str) -> bool:
    """Whether the child changed its improvement procedure: the diff touches a file (or a
    folder) the PARENT's `[improve] paths` name, or the `improve` command line differs."""
    try:
        parent = load_manifest(parent_code)
    except DgmError:
        return False
    try:
        child_command = load_manifest(child_code).commands.get("improve")
    except DgmError:
        child_command = None
    if child_command != parent.commands.get("improve"):
        return True
    declared = [PurePosixPath(p) for p in parent.improve_paths]
    for touched in map(PurePosixPath, touched_paths(patch)):
        if any(touched == d or d in touched.parents for d in declared):
            return True
    return False
