"""Hyperagent mode: the parent improves itself with its OWN improvement procedure.

With `[self_improve] mode = "agent"` the expand job runs the parent's `improve` command
(agent.toml) in a sandbox: its code read-only at /agent, a writable git copy of that same
code at /work, the history of its lineage read-only at /history (dgm-history/1, written
by the loop: dgm/loop/history_writer.py), /out for its record, and one LLM endpoint (role
`improve`) for every call it makes, diagnosis and self-edit alike. What it chooses to
improve and how is the agent's code, which the child may rewrite: the meta level evolves
with the agent. The harness then does what it does for the built-in procedure
(child.make_child): diff -> child -> smoke.

An agent without an `improve` command falls back to the built-in procedure and says so.
"""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

from dgm import safefs
from dgm.errors import DgmError
from dgm.jobs import agent_run
from dgm.jobs.agent_run import load_manifest
from dgm.jobs.expand.child import finish, make_child, self_edit_request
from dgm.jobs.expand.job import ExpandJob, ExpandResult
from dgm.workspace_git import git_init

log = logging.getLogger(__name__)

AGENT = "agent"
FALLBACK = "dgm (fallback: the agent has no improve command)"
IMPROVE_STATEMENT = (
    "Improve this coding agent with its own `improve` command: read the history at "
    "/history, change the agent's source at /work."
)


def has_improve_command(agent_dir: Path) -> bool:
    try:
        return "improve" in load_manifest(agent_dir).commands
    except DgmError:
        return False


def procedure_for(mode: str, parent_code: Path, log_dir: Path | None = None) -> str:
    """Which procedure makes this child: `dgm`, `agent`, or the fallback (said in the
    job's log folder and the process log when agent mode finds no `improve` command)."""
    if mode != AGENT:
        return "dgm"
    if has_improve_command(parent_code):
        return AGENT
    log.warning("agent %s has no improve command: the built-in procedure runs", parent_code)
    if log_dir is not None:
        (log_dir / "procedure.txt").write_text(FALLBACK + "\n")
    return FALLBACK


def run_improve(job: ExpandJob, started: float) -> ExpandResult:
    """The parent's `improve` command on a writable copy of its own source."""
    settings, parent_code, log_dir = job.settings, Path(job.parent_code), Path(job.log_dir)
    (log_dir / "procedure.txt").write_text(AGENT + "\n")
    if job.history_dir is None or not Path(job.history_dir).is_dir():
        return finish(log_dir, started, "agent_error", IMPROVE_STATEMENT,
                      reason="no history folder was written for this expansion",
                      procedure=AGENT)  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="dgm-improve-") as tmp:
        workspace = Path(tmp) / "work"
        shutil.copytree(parent_code, workspace, symlinks=True)
        base = git_init(workspace)
        request = self_edit_request(
            job, workspace, base, f"improve/{job.job_id}", IMPROVE_STATEMENT,
            command="improve", history=Path(job.history_dir),
        )  # fmt: skip
        agent = agent_run.run_agent(request, log_dir / "out", job.improve_llm, settings.backend)
        statement = statement_of(log_dir / "out") or IMPROVE_STATEMENT
        (log_dir / "problem_statement.md").write_text(statement)
        return make_child(job, workspace, agent, statement, started, procedure=AGENT)


def statement_of(out_dir: Path) -> str | None:
    """The problem statement the agent's procedure chose, if it left one in /out
    (`problem_statement.md`, as the seed's does): the child's origin in the lineage."""
    text = safefs.read_text_or_none(out_dir / "problem_statement.md")
    return text.strip()[:20_000] or None if text else None
