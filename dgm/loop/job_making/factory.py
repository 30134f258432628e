"""What the meta loop needs from the outside world: the task plan and the two kinds of job.

A job is plain data (`payload`) plus a module-level function that runs it (`run_job`), so
an executor may run it in a thread, in a worker process or, later, on another machine.
Everything live (the gateway, the store) stays in the loop's process: the factory binds a
job to the gateway before it starts (the job carries only an endpoint description) and
`settle` turns the job's result into what the store records, after it ends.

The production implementation is `SandboxJobs` (sandbox_jobs.py); tests substitute their own.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

from dgm.jobs.diagnose import ImprovementTarget
from dgm.strategies import TaskPlan


class JobFactory:
    run_job: Callable[[Any], Any]
    """Runs a payload to its result; module-level (picklable) for the process executor."""

    def task_plan(self) -> TaskPlan:
        raise NotImplementedError

    def eval_job(self, job_id: str, node: int, code: Path, task: str, log_dir: Path) -> Any:
        """The payload that runs node `node` (code at `code`) on `task`."""
        raise NotImplementedError

    def expand_job(
        self,
        job_id: str,
        parent: int,
        code: Path,
        target: ImprovementTarget,
        log_dir: Path,
        history_dir: Path | None = None,
    ) -> Any:
        """The payload of one self-improvement step of `parent`; `history_dir` holds its
        structured history (dgm/jobs/history_format.py), or None when it could not be written."""
        raise NotImplementedError

    def release(self, job: Any) -> None:
        """The job ended (or broke): close its gateway bindings."""

    def settle(self, job: Any, result: Any) -> Any:
        """The job's result as the loop records it: a store `Evaluation` for an eval job,
        an `ExpandResult` for an expand job. Raises when the result is no evidence about
        the agent (the run's dollar cap cut it short), so nothing is recorded."""
        return result

    def outage_of(self, job: Any) -> tuple[str, str] | None:
        """(dependency, why) when the job met an LLM outage no agent could cause (the
        gateway's judgement: dgm/gateway/outages.py), else None. Forgets the job's record,
        so a re-run starts clean."""
        return None

    def spent_usd(self, job: Any) -> float:
        """LLM dollars the job has spent so far (all its attempts in this process)."""
        return 0.0

    def new_attempt(self, job: Any) -> None:
        """The job is re-queued after an outage: its next attempt gets its own per-job
        LLM budget (the earlier attempts' spend stays in the run's)."""

    def probes(self) -> dict[str, Callable[[], str | None]]:
        """How the circuit breakers ask each dependency whether it is back."""
        return {}

    def task_statement(self, task_id: str) -> str | None:
        return None

    def hidden_tests(self, task_id: str) -> str | None:
        return None

    def hidden_sources(self, task_id: str) -> list[str] | None:
        """The pristine hidden test sources, to redact them from what a diagnosis sees."""
        return None

    def cancel(self) -> int:
        return 0

    def run_budget_exhausted(self) -> bool:
        """Whether the LLM gateway refused a call for the run's dollar cap."""
        return False

    def set_run_budget(self, usd: float | None) -> None:
        """A person changed the run's dollar cap: tell the gateway, which enforces it."""
        gateway = getattr(self, "gateway", None)
        if gateway is not None:
            gateway.set_run_budget(usd)

    def replay_miss(self, job_id: str) -> str | None:
        """Why a replayed job went unanswered (a call its recording lacks), or None."""
        return None
