"""Recording finished jobs in the store, in the loop's process, before the scheduler hears
of them: a kill -9 at any moment loses no finished result."""

from __future__ import annotations

from typing import Any

from dgm.errors import DgmError
from dgm.jobs.diagnose import ImprovementTarget
from dgm.loop.executors import Evaluated, Expanded, ExpansionFailed, JobCrashed, Outcome
from dgm.loop.stop_rules import StopRules
from dgm.store import Run


class Recorder:
    def __init__(self, run: Run, rules: StopRules, cancelled: Any) -> None:
        self.run = run
        self.rules = rules
        self.cancelled = cancelled
        """A threading.Event: set once running jobs are being cancelled."""

    def evaluation(self, job_id: str, evaluation: Any) -> Outcome:
        if self.cancelled.is_set():
            return JobCrashed("cancelled")  # a killed judge proves nothing: re-run on resume
        recorded = self.run.record_evaluation(evaluation)
        if recorded.tampered:  # in the run's events too: `dgm status` lists the latest
            self.run.event("tampered", node=recorded.node_id, task=recorded.task_id,
                           evidence=" ".join(recorded.tamper_evidence.split())[:200])  # fmt: skip
        self.rules.job_finished()
        return Evaluated(recorded.resolved)

    def expansion(
        self, job_id: str, parent: int, target: ImprovementTarget, log_dir: str, result: Any
    ) -> Outcome:
        if self.cancelled.is_set():
            return JobCrashed("cancelled")
        self.rules.job_finished()
        run = self.run
        meta = {
            "job": job_id,
            "target": target.kind + (f" {target.task_id}" if target.task_id else ""),
            "log_dir": log_dir,
        } | ({"tamper_warnings": w} if (w := getattr(result, "tamper_warnings", None)) else {})
        if result.status == "ok":
            node = run.add_node(
                parent, diff=result.diff, origin=result.problem_statement, job_id=job_id, meta=meta
            )
            run.event("node_added", node=node.id, parent=node.parent_id)
            return Expanded(str(node.id))
        if result.diff:  # a child that broke its own smoke test: kept for the record
            node = run.add_node(
                parent, diff=result.diff, origin=result.problem_statement,
                status="rejected", job_id=job_id, meta={**meta, "reason": result.reason},
            )  # fmt: skip
            outcome = {"node_id": node.id, "status": result.status, "reason": result.reason}
        else:
            outcome = {"status": result.status, "reason": result.reason}
        run.finish_job(job_id, outcome)
        run.event("expansion_rejected", parent=parent, **outcome)
        return ExpansionFailed(f"{result.status}: {result.reason}")

    def crash(self, job_id: str, exc: BaseException) -> Outcome:
        message = str(exc) if isinstance(exc, DgmError) else f"{type(exc).__name__}: {exc}"
        if not self.cancelled.is_set():
            self.run.fail_job(job_id, message)
            self.run.event("job_crashed", job=job_id, error=message)
        self.rules.job_crashed(message)
        return JobCrashed(message)
