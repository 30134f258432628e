"""The expand job: one self-improvement step of a parent agent.

`run_expand(job)` takes an `ExpandJob` (job.py), plain data that round-trips through JSON:
the parent's code by path and commit, the target, the settings, and the endpoint
descriptions the caller bound on its gateway. It picks the procedure that changes a copy of
the parent's code:

    builtin.py   `[self_improve] mode = "dgm"`: diagnose -> the parent's `solve` on its own code
    improve.py   `mode = "agent"` (hyperagent): the parent's own `improve` command
    harvest.py   a `harvest` target: runtime tools the parent wrote, kept; no LLM call

and each ends in child.py, the harness's half they share: diff -> child -> smoke ->
`result.json`. The job never touches the store: it returns the diff and the problem
statement, and the loop commits the child. Empty diffs and children that fail their smoke
test come back with their reason, to be recorded, never silently dropped.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from dgm.jobs.expand.builtin import run_builtin
from dgm.jobs.expand.child import resume_kept
from dgm.jobs.expand.harvest import run_harvest
from dgm.jobs.expand.improve import AGENT, procedure_for, run_improve
from dgm.jobs.expand.job import ExpandJob, ExpandResult, ExpandSettings

__all__ = ["ExpandJob", "ExpandResult", "ExpandSettings", "run_expand"]


def run_expand(job: ExpandJob) -> ExpandResult:
    if job.target.kind == "harvest":  # no diagnosis, no agent run, no LLM call
        return run_harvest(job)
    started = time.monotonic()
    log_dir = Path(job.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    (log_dir / "target.json").write_text(json.dumps(job.target.to_dict(), indent=2))
    kept = resume_kept(job, started)  # an outage cut an earlier attempt after its diff
    if kept is not None:
        return kept
    procedure = procedure_for(job.settings.mode, Path(job.parent_code), log_dir)
    if procedure == AGENT:
        return run_improve(job, started)
    return run_builtin(job, started, procedure)
