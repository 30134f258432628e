"""The built-in self-improvement procedure (`[self_improve] mode = "dgm"`):

    diagnose  evidence about the parent (dgm/jobs/diagnose.py) and its structured history
              (dgm/jobs/history_format.py) -> problem statement, through the gateway as
              role `diagnose`
    solve     the PARENT's own agent runs `solve` in a sandbox on a writable git copy of
              its own source, with that problem statement (role `self_improve`)

then the harness's half (child.make_child): diff -> child -> smoke.
"""

from __future__ import annotations

import json
import logging
import shutil
import tempfile
from pathlib import Path
from typing import Any

from dgm.gateway import BudgetRefused, LLMCallError
from dgm.jobs import agent_run
from dgm.jobs.diagnose import diagnosis_request, parse_diagnosis, problem_statement
from dgm.jobs.expand.child import finish, make_child, self_edit_request
from dgm.jobs.expand.job import ExpandJob, ExpandResult
from dgm.jobs.history_format import RENDER_LIMIT, HistoryError, render_history
from dgm.jobs.llm_access import chat
from dgm.workspace_git import git_init

SELF_IMPROVE_PREAMBLE = (
    "The repository in your working directory is the source code of the coding agent "
    "that you are (its entry points are named in agent.toml). Improve the agent as "
    "follows.\n\n"
)
SELF_IMPROVE_FOOTER = (
    "\n\nKeep the agent working: its own tests (the `smoke` command in agent.toml) must "
    "still pass, and add a test for what you change."
)
log = logging.getLogger(__name__)


def run_builtin(job: ExpandJob, started: float, procedure: str = "dgm") -> ExpandResult:
    """Diagnose (unless the target needs none), then the parent's `solve` on its own code."""
    target, settings, log_dir = job.target, job.settings, Path(job.log_dir)
    diagnosis: dict[str, str] | None = None
    if job.needs_diagnosis():
        try:
            diagnosis = diagnose(job)
        except (LLMCallError, BudgetRefused, ValueError) as exc:
            return finish(log_dir, started, "diagnosis_failed", "", reason=str(exc),
                          procedure=procedure)  # fmt: skip
    statement = problem_statement(target, diagnosis)
    (log_dir / "problem_statement.md").write_text(statement)

    with tempfile.TemporaryDirectory(prefix="dgm-expand-") as tmp:
        workspace = Path(tmp) / "work"
        shutil.copytree(Path(job.parent_code), workspace, symlinks=True)
        base = git_init(workspace)
        request = self_edit_request(
            job, workspace, base, f"self-improve/{job.job_id}",
            SELF_IMPROVE_PREAMBLE + statement + SELF_IMPROVE_FOOTER,
        )  # fmt: skip
        agent = agent_run.run_agent(
            request, log_dir / "out", job.self_improve_llm, settings.backend
        )
        return make_child(job, workspace, agent, statement, started, diagnosis, procedure)


def diagnose(job: ExpandJob) -> dict[str, str]:
    """The diagnosis call (role `diagnose`), kept in `<log dir>/diagnosis.json`."""
    if job.diagnose_llm is None:
        raise ValueError("the diagnosis has no LLM endpoint")
    answer = chat(job.diagnose_llm, job_diagnosis_request(job))
    text = answer["choices"][0]["message"].get("content") or ""
    diagnosis = parse_diagnosis(text)
    (Path(job.log_dir) / "diagnosis.json").write_text(json.dumps(diagnosis, indent=2))
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
