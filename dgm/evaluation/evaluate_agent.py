"""Evaluate one agent on many tasks (what `dgm eval` runs), through the same scheduler and
executors as `dgm run`: a fixed list of Evaluate actions, one eval job each.

Each task is an independent eval job; a job that fails for any reason becomes a failed
outcome with the reason, and the run continues. Scores are counts per language.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from dgm.executors import Evaluated, Outcome, Work, make_executor
from dgm.jobs import run_job
from dgm.jobs.evaluate import AgentRef, EvalJob, usage_of, with_usage
from dgm.jobs.llm_access import LLMAccess
from dgm.loop.scheduler import Scheduler
from dgm.store.records import Evaluation, Score
from dgm.strategies import ROOT, Evaluate, NodeId, SearchState, TaskPlan
from dgm.strategies.actions import Action, Stop

OnDone = Callable[[Evaluation], None]
AGENT = ROOT
"""The agent is the one node of the search state."""


class TaskList:
    """A strategy that evaluates the one agent on each task in order, then stops."""

    def __init__(self, task_ids: list[str]) -> None:
        self.todo = list(task_ids)

    def next_action(self, state: SearchState) -> Action:
        return Evaluate(AGENT, self.todo.pop(0)) if self.todo else Stop("every task evaluated")

    def final_choice(self, state: SearchState) -> NodeId:
        return AGENT


def evaluate_agent(
    agent: AgentRef,
    tasks: list[Any],
    out_dir: Path,
    *,
    workers: int = 1,
    model: str | None = None,
    limits: dict[str, Any] | None = None,
    agent_timeout_s: int = 600,
    max_steps: int = 50,
    gateway: Any = None,
    on_done: OnDone | None = None,
    executor: str = "thread",
    backend: str = "docker",
) -> list[Evaluation]:
    """Run every task's eval job; outcomes come back in task order. `gateway` (started) is
    how an agent that calls an LLM reaches it; each job gets its own bound endpoint."""
    by_id = {t.id: t for t in tasks}
    results: dict[str, Evaluation] = {}

    def make_job(action: Evaluate) -> Work:
        task = by_id[action.task]
        job = EvalJob(
            agent=agent,
            task=task,
            log_dir=str(Path(out_dir) / "logs" / task.id),
            model=model,
            limits=limits or {},
            agent_timeout_s=agent_timeout_s,
            max_steps=max_steps,
            backend=backend,
        )
        endpoint = None
        if gateway is not None and agent.builtin is None:
            endpoint = bind_eval_job(gateway, job)
            job = replace(job, llm=LLMAccess.of(endpoint))

        def finish(outcome: Evaluation | None, error: BaseException | None) -> Outcome:
            if endpoint is not None:
                gateway.unbind(endpoint)
            outage = outage_of(gateway, job.id, error, Path(out_dir))
            if error is not None or outcome is None:
                message = getattr(error, "message", None) or f"{type(error).__name__}: {error}"
                outcome = failed_outcome(job, f"the evaluation failed: {message}")
            elif gateway is not None:
                outcome = with_usage(outcome, usage_of(gateway, job.id))
            if outage is not None:  # the world's failure, not the agent's: not scored
                outcome = not_scored(outcome, outage)
            results[task.id] = outcome
            if on_done is not None:
                on_done(outcome)
            return Evaluated(outcome.resolved)

        return Work(run_job, job, finish)

    state = SearchState(TaskPlan(tuple(by_id)))
    workers = max(1, workers)
    with make_executor(executor, workers) as pool:
        Scheduler(TaskList(list(by_id)), state, pool, workers, make_job=make_job).run()
    return [results[t.id] for t in tasks]


def bind_eval_job(gateway: Any, job: EvalJob) -> Any:
    """Bind `job` on `gateway` (a socket for it alone); the endpoint, to unbind later."""
    from dgm.gateway import JobBinding, short_socket_path

    binding = JobBinding(job.run or "eval", job.id, job.node_id, job.task.id, "solve")
    log = Path(job.log_dir) / "llm.jsonl"
    return gateway.bind_job(
        binding, socket_path=short_socket_path(job.id), model=job.model, log_path=log
    )


def outage_of(gateway: Any, job_id: str, error: BaseException | None, out_dir: Path) -> str | None:
    """Why the task met an outage (the provider, Docker, the disk), or None."""
    from dgm.loop.failures import infrastructure_of
    from dgm.loop.job_making.sandbox_jobs import llm_outage_of

    found = infrastructure_of(error, out_dir) if error is not None else None
    if found is not None:
        return found.message
    llm = llm_outage_of(gateway, job_id)
    return llm[1] if llm is not None else None


def not_scored(outcome: Evaluation, reason: str) -> Evaluation:
    """An outcome the outage decided: kept for the record, never counted in passed/total."""
    details = {**outcome.details, "not_scored": reason}
    return replace(outcome, resolved=False, error=f"not scored ({reason})", details=details)


def is_scored(outcome: Evaluation) -> bool:
    return not outcome.details.get("not_scored")


def failed_outcome(job: EvalJob, error: str) -> Evaluation:
    Path(job.log_dir).mkdir(parents=True, exist_ok=True)
    outcome = Evaluation(
        node_id=job.node_id, task_id=job.task.id, benchmark=job.task.benchmark,
        resolved=False, stage=job.stage, empty_patch=True, agent_seconds=0.0,
        judge_seconds=0.0, error=error, log_dir=job.log_dir, job_id=job.id,
        details={"tests": {}, "usage": {}, "language": job.task.language},
    )  # fmt: skip
    (Path(job.log_dir) / "result.json").write_text(json.dumps(outcome.to_dict(), indent=2))
    return outcome


@dataclass(frozen=True)
class Summary:
    by_language: dict[str, Score]
    total: Score
    by_benchmark: dict[str, Score] = field(default_factory=dict)

    not_scored: int = 0
    """Tasks that met an outage (the provider, Docker, the disk): apart from passed/total."""

    @classmethod
    def of(cls, outcomes: list[Evaluation]) -> Summary:
        skipped = len(outcomes)
        outcomes = [o for o in outcomes if is_scored(o)]
        skipped -= len(outcomes)
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
        return cls(by_language, Score(passed, len(outcomes)), by_benchmark, skipped)

    def to_dict(self) -> dict[str, Any]:
        return {
            "by_language": {
                k: {"passed": s.passed, "total": s.total} for k, s in self.by_language.items()
            },
            "total": {"passed": self.total.passed, "total": self.total.total},
            "not_scored": self.not_scored,
            "by_benchmark": {
                k: {"passed": s.passed, "total": s.total} for k, s in self.by_benchmark.items()
            },
        }


def write_results(out_dir: Path, header: dict[str, Any], outcomes: list[Evaluation]) -> Path:
    path = Path(out_dir) / "results.json"
    data = {
        **header,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S"),
        "summary": Summary.of(outcomes).to_dict(),
        "outcomes": [o.to_dict() for o in outcomes],
    }
    path.write_text(json.dumps(data, indent=2))
    return path
