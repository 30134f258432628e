"""Recording finished jobs in the store, in the loop's process, before the scheduler hears
of them: a kill -9 at any moment loses no finished result.

When the run directory refuses a write (disk full, database locked by another program,
the archive refusing a commit), the job is marked failed with the reason where the store
still takes that much, and otherwise stays `running` and re-runs on resume; either way
the scheduler hears "crashed", never "done", and `StopRules` stops the run after a few
such failures in a row, naming the cause. Each transaction is all-or-nothing, so nothing
recorded before is lost.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from dgm.errors import DgmError
from dgm.executors import Evaluated, Expanded, ExpansionFailed, JobCrashed, Outcome
from dgm.jobs.diagnose import ImprovementTarget
from dgm.loop.stop_rules import StopRules
from dgm.store import Run

log = logging.getLogger(__name__)


def describe_error(exc: BaseException) -> str:
    return str(exc) if isinstance(exc, DgmError) else f"{type(exc).__name__}: {exc}"


def _harvested(result: Any) -> dict[str, Any]:
    """A harvest expansion's child names the runtime tools it kept (the lineage marks it)."""
    tools = getattr(result, "harvested_tools", None)
    return {"harvested_tools": list(tools)} if tools else {}


class Recorder:
    def __init__(self, run: Run, rules: StopRules, cancelled: Any) -> None:
        self.run = run
        self.rules = rules
        self.cancelled = cancelled
        """A threading.Event: set once running jobs are being cancelled."""
        self.codes: dict[int, str] = {}
        """New children's codebase ids (git trees), for the search state's twin rule."""

    def evaluation(self, job_id: str, evaluation: Any) -> Outcome:
        if self.cancelled.is_set():
            return JobCrashed("cancelled")  # a killed judge proves nothing: re-run on resume
        try:
            recorded = self.run.record_evaluation(evaluation)
        except Exception as exc:
            return self.unrecorded(job_id, exc)
        if recorded.tampered:  # in the run's events too: `dgm status` lists the latest
            data = {"node": recorded.node_id, "task": recorded.task_id,
                    "evidence": " ".join(recorded.tamper_evidence.split())[:200]}  # fmt: skip
            self._quietly(lambda: self.run.event("tampered", **data))
        self.rules.job_finished()
        return Evaluated(recorded.resolved)

    def expansion(
        self, job_id: str, parent: int, target: ImprovementTarget, log_dir: str, result: Any
    ) -> Outcome:
        if self.cancelled.is_set():
            return JobCrashed("cancelled")
        try:
            outcome = self._record_expansion(job_id, parent, target, log_dir, result)
        except Exception as exc:
            return self.unrecorded(job_id, exc)
        self.rules.job_finished()
        return outcome

    def _record_expansion(
        self, job_id: str, parent: int, target: ImprovementTarget, log_dir: str, result: Any
    ) -> Outcome:
        run = self.run
        meta = {
            "job": job_id,
            "target": target.kind + (f" {target.task_id}" if target.task_id else ""),
            "log_dir": log_dir,
        } | ({"tamper_warnings": w} if (w := getattr(result, "tamper_warnings", None)) else {})
        meta |= {"procedure": getattr(result, "procedure", "dgm"),
                 "improve_changed": bool(getattr(result, "improve_changed", False))}  # fmt: skip
        if getattr(result, "environment_change", None):  # new code that runs: say so
            meta["environment"] = result.environment_change
        if meta["procedure"] == "agent":  # the loop's target only named the job
            meta["target"] = "the agent's own choice (its improve command)"
        if result.status == "ok":
            node = run.add_node(
                parent,
                diff=result.diff,
                origin=result.problem_statement,
                job_id=job_id,
                meta=meta | _harvested(result),
            )
            self._quietly(lambda: self.codes.__setitem__(node.id, run.code_id(node.id)))
            self._quietly(lambda: run.event("node_added", node=node.id, parent=node.parent_id))
            return Expanded(node.id)
        if result.diff:  # a child that broke its own smoke test: kept for the record
            node = run.add_node(
                parent, diff=result.diff, origin=result.problem_statement,
                status="rejected", job_id=job_id, meta={**meta, "reason": result.reason},
            )  # fmt: skip
            outcome = {"node_id": node.id, "status": result.status, "reason": result.reason}
        else:
            outcome = {"status": result.status, "reason": result.reason}
        run.finish_job(job_id, outcome)
        self._quietly(lambda: run.event("expansion_rejected", parent=parent, **outcome))
        return ExpansionFailed(f"{result.status}: {result.reason}")

    def crash(self, job_id: str, exc: BaseException) -> Outcome:
        message = describe_error(exc)
        if not self.cancelled.is_set():
            try:
                self.run.fail_job(job_id, message)
            except Exception as write_error:  # left `running`: re-run on resume
                self.rules.recording_failed(describe_error(write_error))
            self._quietly(lambda: self.run.event("job_crashed", job=job_id, error=message))
        self.rules.job_crashed(message)
        return JobCrashed(message)

    def unrecorded(self, job_id: str, exc: BaseException, what: str = "result") -> JobCrashed:
        """The store refused the job's `what`: the job is marked failed with the reason if
        the store still takes that (else it stays `running` and re-runs on resume), and
        counts towards the stop rule's recording failures in a row."""
        reason = describe_error(exc)
        message = f"could not record the job's {what}: {reason}"
        log.warning("job %s: %s", job_id, message)
        self._quietly(lambda: self.run.fail_job(job_id, message))
        self.rules.recording_failed(reason)
        return JobCrashed(message)

    @staticmethod
    def _quietly(write: Callable[[], Any]) -> None:
        """A write that adds information but is not the record itself (an event line)."""
        try:
            write()
        except Exception as exc:
            log.warning("not recorded: %s", describe_error(exc))
