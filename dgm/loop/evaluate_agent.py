"""Evaluate one agent on many tasks with a pool of workers (what `dgm eval` runs).

Each task is an independent eval job; a job that fails for any reason becomes a failed
outcome with the reason, and the run continues. Scores are counts per language.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor, as_completed
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dgm.benchmarks.task import Task
from dgm.errors import DgmError
from dgm.jobs.evaluate import AgentRef, EvalContext, EvalJob, EvalOutcome, evaluate_task
from dgm.store.records import Score

OnDone = Callable[[EvalOutcome], None]


def evaluate_agent(
    agent: AgentRef,
    tasks: list[Task],
    out_dir: Path,
    *,
    workers: int = 1,
    model: str | None = None,
    limits: dict[str, Any] | None = None,
    agent_timeout_s: int = 600,
    max_steps: int = 50,
    ctx: EvalContext | None = None,
    on_done: OnDone | None = None,
) -> list[EvalOutcome]:
    """Run every task's eval job; outcomes come back in task order."""
    ctx = ctx or EvalContext()
    jobs = [
        EvalJob(
            agent=agent,
            task=task,
            log_dir=str(Path(out_dir) / "logs" / task.id),
            model=model,
            limits=limits or {},
            agent_timeout_s=agent_timeout_s,
            max_steps=max_steps,
        )
        for task in tasks
    ]
    results: dict[str, EvalOutcome] = {}
    with ThreadPoolExecutor(max(1, workers), thread_name_prefix="dgm-eval") as pool:
        futures = {pool.submit(_safe_evaluate, job, ctx): job for job in jobs}
        for future in as_completed(futures):
            outcome = future.result()
            results[outcome.task_id] = outcome
            if on_done is not None:
                on_done(outcome)
    return [results[t.id] for t in tasks]


def _safe_evaluate(job: EvalJob, ctx: EvalContext) -> EvalOutcome:
    try:
        return evaluate_task(job, ctx)
    except Exception as exc:  # noqa: BLE001 - one broken task must not end the run
        message = exc.message if isinstance(exc, DgmError) else f"{type(exc).__name__}: {exc}"
        return failed_outcome(job, f"the evaluation failed: {message}")


def failed_outcome(job: EvalJob, error: str) -> EvalOutcome:
    Path(job.log_dir).mkdir(parents=True, exist_ok=True)
    outcome = EvalOutcome(
        job_id=job.id, task_id=job.task.id, benchmark=job.task.benchmark,
        language=job.task.language, resolved=False, empty_patch=True, tests={},
        tests_passed=None, tests_total=None, agent_seconds=0.0, judge_seconds=0.0,
        test_seconds=0.0, harness_seconds=0.0, agent_exit_code=None, agent_timed_out=False,
        judge_exit_code=None, error=error, usage={}, logs={}, node_id=job.node_id,
        stage=job.stage,
    )  # fmt: skip
    (Path(job.log_dir) / "result.json").write_text(json.dumps(outcome.to_dict(), indent=2))
    return outcome


@dataclass(frozen=True)
class Summary:
    by_language: dict[str, Score]
    total: Score
    by_benchmark: dict[str, Score] = field(default_factory=dict)

    @classmethod
    def of(cls, outcomes: list[EvalOutcome]) -> Summary:
        counts: dict[str, list[int]] = {}
        for o in outcomes:
            passed_total = counts.setdefault(o.language, [0, 0])
            passed_total[0] += o.resolved
            passed_total[1] += 1
        by_language = {k: Score(*v) for k, v in sorted(counts.items())}
        passed = sum(s.passed for s in by_language.values())
        benchmarks: dict[str, list[int]] = {}
        for o in outcomes:
            benchmarks.setdefault(o.benchmark, [0, 0])[0] += o.resolved
            benchmarks[o.benchmark][1] += 1
        by_benchmark = {k: Score(*v) for k, v in sorted(benchmarks.items())}
        return cls(by_language, Score(passed, len(outcomes)), by_benchmark)

    def to_dict(self) -> dict[str, Any]:
        return {
            "by_language": {
                k: {"passed": s.passed, "total": s.total} for k, s in self.by_language.items()
            },
            "total": {"passed": self.total.passed, "total": self.total.total},
            "by_benchmark": {
                k: {"passed": s.passed, "total": s.total} for k, s in self.by_benchmark.items()
            },
        }


def write_results(out_dir: Path, header: dict[str, Any], outcomes: list[EvalOutcome]) -> Path:
    path = Path(out_dir) / "results.json"
    data = {
        **header,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "summary": Summary.of(outcomes).to_dict(),
        "outcomes": [o.to_dict() for o in outcomes],
    }
    path.write_text(json.dumps(data, indent=2))
    return path
