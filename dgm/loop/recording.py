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

from dgm.errors import DgmError, InfrastructureFailure
from dgm.executors import (
    Evaluated,
    Expanded,
    ExpansionFailed,
    InfraFailed,
    JobCrashed,
    Outcome,
)
from dgm.jobs.diagnose import ImprovementTarget
from dgm.loop.failures import disk_full
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
            self._raise_if_disk_full(exc)
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
            self._raise_if_disk_full(exc)
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

    def infrastructure(
        self, job_id: str, failure: InfrastructureFailure, lost_usd: float
    ) -> Outcome:
        """The job met an outage: nothing against the agent; the job goes back to `queued`
        with the reason (a resume runs it too), an event keeps why and what it cost."""
        reason = f"infrastructure ({failure.dependency}): {failure.message}"[:1000]
        if self.cancelled.is_set():
            return JobCrashed("cancelled")
        log.warning("job %s met an outage, re-queued: %s", job_id, reason)
        self._quietly(lambda: self.run.requeue_job(job_id, reason))
        data = {"job": job_id, "dependency": failure.dependency, "reason": reason[:500],
                "lost_usd": round(lost_usd, 6)}  # fmt: skip
        self._quietly(lambda: self.run.event("job_infra", **data))
        return InfraFailed(failure.dependency, reason)

    def disk_full_failure(self, exc: BaseException) -> InfrastructureFailure | None:
        """A write the store refused because the host's disk under the run is full is an
        outage: the job runs again once there is space (the caller re-queues it), instead
        of counting towards the stop rule."""
        text = str(exc).lower()
        if "disk is full" in text or "no space left" in text or isinstance(exc, OSError):
            full = disk_full(self.run.path)
            if full:
                return InfrastructureFailure("disk", f"the host disk is full: {full}")
        return None

    def _raise_if_disk_full(self, exc: BaseException) -> None:
        full = self.disk_full_failure(exc)
        if full is not None:
            raise full from exc

    def gave_up(self, job_id: str, failure: InfrastructureFailure) -> Outcome:
        """An expansion re-queued for outages too often: a failed expansion, with why."""
        outcome = {"status": "infrastructure", "reason": f"{failure.dependency}: {failure}"}
        try:
            self.run.finish_job(job_id, outcome)
        except Exception as exc:
            return self.unrecorded(job_id, exc)
        self.rules.job_finished()
        return ExpansionFailed(f"infrastructure: {failure}")

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
