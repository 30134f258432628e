"""The harvest expansion: a child that keeps the runtime tools its parent wrote.

An agent that declares `[tools] dir` in agent.toml may write tools for itself while it
works (the seed: `make_tool`); the eval job keeps them (`<eval log>/out/tools/<name>/`).
The loop picks those from the parent's SUCCESSFUL evaluations that its codebase lacks
(dgm/loop/harvest_target.py) and sends them here as the target's `tools`. This job makes
NO LLM call:

    tools   each tool's own smoke check runs in a sandbox (tool_smoke.py); failing
            tools are dropped
    write   the passing ones go into a copy of the parent's code, `<tools dir>/<name>/`
    smoke   the child's own `smoke` command, in a fresh sandbox, must pass

It returns the diff like any expand job; the loop commits and evaluates the child.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import tempfile
import time
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any

from dgm import safefs
from dgm.jobs import agent_run
from dgm.jobs.agent_run import MANIFEST_LIMIT, AgentRunRequest
from dgm.jobs.expand.child import finish, smoke
from dgm.jobs.expand.job import ExpandJob, ExpandResult, ExpandSettings
from dgm.sandbox.orphans import LABEL_JOB, LABEL_RUN
from dgm.workspace_git import git_diff, git_init

TOOL_SMOKE_TIMEOUT_S = 120
_DIR_PART = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_.-]*$")


def tools_dir_of(agent_dir: Path) -> str | None:
    """The agent's `[tools] dir` (a plain relative folder), or None when it declares none
    (or something that is not a plain relative path: never a place outside its tree)."""
    try:
        data = tomllib.loads(safefs.read_text(Path(agent_dir), "agent.toml", MANIFEST_LIMIT))
    except (safefs.UnsafeFile, tomllib.TOMLDecodeError, OSError):
        return None
    tools = data.get("tools")
    folder = tools.get("dir") if isinstance(tools, dict) else None
    if not isinstance(folder, str):
        return None
    parts = PurePosixPath(folder).parts
    if not parts or folder.startswith("/") or not all(_DIR_PART.match(p) for p in parts):
        return None
    return "/".join(parts)


def content_hash(tool_json: str, tool_py: str) -> str:
    """What makes two tools the same tool, whatever they are called in the lineage."""
    return hashlib.sha256(tool_json.encode() + b"\0" + tool_py.encode()).hexdigest()


def run_harvest(job: ExpandJob) -> ExpandResult:
    started = time.monotonic()
    settings, log_dir = job.settings, Path(job.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "target.json").write_text(json.dumps(job.target.to_dict(), indent=2))
    tools = list(job.target.tools)
    names = [str(t["name"]) for t in tools]
    statement = (
        "Harvest: keep the runtime tools this agent wrote for itself in tasks it solved "
        f"({', '.join(names)}), as tools of its codebase, offered from the first step."
    )
    (log_dir / "problem_statement.md").write_text(statement)
    parent_code = Path(job.parent_code)
    folder = tools_dir_of(parent_code)
    if folder is None:
        return _done(log_dir, started, "empty_patch", statement,
                     reason="the parent declares no [tools] dir in agent.toml")  # fmt: skip
    labels = {LABEL_RUN: settings.run, LABEL_JOB: job.job_id}
    checks = [_tool_smoke(tool, log_dir, labels, settings) for tool in tools]
    (log_dir / "tool_smoke.json").write_text(json.dumps(checks, indent=2))
    kept = [tool for tool, check in zip(tools, checks, strict=True) if check["passed"]]
    if not kept:
        why = "; ".join(f"{c['name']}: {c['output'][-300:]}" for c in checks)
        return _done(log_dir, started, "empty_patch", statement,
                     reason=f"no tool passed its smoke check ({why})")  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="dgm-harvest-") as tmp:
        child = Path(tmp) / "work"
        shutil.copytree(parent_code, child, symlinks=True)
        git_init(child)
        parts = Path(folder).parts
        if any((child.joinpath(*parts[: i + 1])).is_symlink() for i in range(len(parts))):
            why = f"the parent's tools dir {folder!r} is a symbolic link"
            return _done(log_dir, started, "unsafe_link", statement, reason=why)
        for tool in kept:
            dest = child / folder / str(tool["name"])
            if dest.exists() or dest.is_symlink():  # the loop checked; the tree decides
                continue
            dest.mkdir(parents=True)
            (dest / "tool.json").write_text(str(tool["tool_json"]))
            (dest / "tool.py").write_text(str(tool["tool_py"]))
        diff = git_diff(child)
        (log_dir / "patch.diff").write_text(diff)
        added = [str(t["name"]) for t in kept if f"{folder}/{t['name']}/tool.py" in diff]
        if not diff.strip() or not added:
            return _done(log_dir, started, "empty_patch", statement,
                         reason="every tool is in the codebase already")  # fmt: skip
        if settings.smoke_test:
            passed, output = smoke(child, log_dir, labels, settings)
            if not passed:
                return _done(log_dir, started, "smoke_failed", statement, diff,
                             reason=f"the child's smoke test failed: {output[-1500:]}")  # fmt: skip
    return _done(log_dir, started, "ok", statement, diff, harvested=added)


def _tool_smoke(
    tool: dict[str, Any], log_dir: Path, labels: dict[str, str], settings: ExpandSettings
) -> dict[str, Any]:
    """One tool's smoke check in a sandbox of its own: the tool and our runner as the
    `agent`, an empty repository as the workspace."""
    name = str(tool["name"])
    with tempfile.TemporaryDirectory(prefix="dgm-toolsmoke-") as tmp:
        agent, work = Path(tmp) / "agent", Path(tmp) / "work"
        (agent / "tool").mkdir(parents=True)
        work.mkdir()
        (agent / "tool" / "tool.json").write_text(str(tool["tool_json"]))
        (agent / "tool" / "tool.py").write_text(str(tool["tool_py"]))
        shutil.copyfile(Path(__file__).with_name("tool_smoke.py"), agent / "tool_smoke.py")
        (agent / "agent.toml").write_text(
            '[agent]\nname = "tool-smoke"\n[commands]\n'
            'smoke = "python3 -B {agent_dir}/tool_smoke.py {agent_dir}/tool"\n'
        )
        request = AgentRunRequest(
            agent_dir=agent,
            image=settings.image,
            task_file={"id": f"tool-smoke/{name}", "problem_statement": "", "language": ""},
            base_commit=git_init(work),
            timeout_s=TOOL_SMOKE_TIMEOUT_S,
            limits=settings.limits,
            workspace=work,
            command="smoke",
            labels=labels,
        )
        result = agent_run.run_agent(request, log_dir / "tool-smoke" / name, None, settings.backend)
    passed = result.exit_code == 0 and not result.timed_out and result.error is None
    return {"name": name, "passed": passed, "output": result.output[-2000:]}


def _done(
    log_dir: Path,
    started: float,
    status: str,
    statement: str,
    diff: str = "",
    reason: str = "",
    harvested: list[str] | None = None,
) -> ExpandResult:
    # `harvest` in either self-improvement mode: no improvement procedure ran.
    return finish(log_dir, started, status, statement, diff, reason, procedure="harvest",
                  harvested=harvested)  # fmt: skip
