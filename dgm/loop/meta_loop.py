"""The meta loop: a long-running, resumable self-improvement run.

    MetaLoop(run).run()

It rebuilds the search state from the store, asks the strategy for actions through the
scheduler, turns each action into a job (expand: make a child; evaluate: node x task),
records every finished job in the store in one transaction, and stops on the strategy's
word, a limit (evaluations, nodes, dollars, hours), or Ctrl-C / SIGTERM.

Every job is a row before it starts (`queued` -> `running` -> `done`), keyed by a job id
derived from its inputs; on resume, jobs that were in flight run again under the same id,
and the store refuses to record a job twice. Results are recorded from the worker thread
before the scheduler hears of them, so a kill -9 at any moment loses no finished result.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from dgm.errors import DgmError
from dgm.jobs.diagnose import ImprovementTarget, choose_target
from dgm.loop.executors import (
    Completion,
    Evaluated,
    Expanded,
    ExpansionFailed,
    JobCrashed,
    LocalExecutor,
    Outcome,
)
from dgm.loop.scheduler import Limits, RunSummary, Scheduler
from dgm.store import Run
from dgm.strategies import Evaluate, Expand, SearchState, Strategy, TaskPlan, make_strategy

MAX_CONSECUTIVE_CRASHES = 5
"""Stop the run when this many jobs in a row break outside the agent (a missing image,
a dead Docker engine): retrying would only burn time."""

GRACE_PERIOD_S = 600.0
"""After the first Ctrl-C, running jobs get this long to finish before they are cancelled."""


@dataclass
class LoopSummary:
    stop_reason: str
    best_node: str | None
    best_passed: int
    best_total: int
    nodes: int
    evaluations: int
    spend_usd: float
    elapsed_s: float
    utilisation: float | None = None

    def lines(self) -> list[str]:
        best = (
            f"node {self.best_node}: {self.best_passed}/{self.best_total}"
            if self.best_node is not None
            else "none yet"
        )
        return [
            f"stopped: {self.stop_reason}",
            f"best:    {best}",
            f"nodes:   {self.nodes}   evaluations: {self.evaluations}",
            f"spend:   ${self.spend_usd:.2f}   time: {self.elapsed_s / 60:.1f} min",
        ]


class MetaLoop:
    """Drives one run until it stops; `run()` may be called again after a resume."""

    def __init__(
        self,
        run: Run,
        *,
        jobs: JobFactory,
        on_progress: Callable[[MetaLoop, Completion | None], None] | None = None,
    ) -> None:
        self.run_store = run
        self.config = run.config
        self.jobs = jobs
        self.on_progress = on_progress
        self.state: SearchState | None = None
        self.scheduler: Scheduler | None = None
        self.strategy: Strategy | None = None
        self.started_at = time.monotonic()
        self._earlier_sessions_s = sum(
            e.get("elapsed_s", 0.0) for e in run.events(limit=10_000) if e["kind"] == "run_stopped"
        )
        self._stop_request: str | None = None
        self._cancelled = threading.Event()
        self._crashes = 0
        self._last_crash = ""
        self._resume_ids: dict[Any, list[str]] = {}
        self._node_code_lock = threading.Lock()

    # -- the run -----------------------------------------------------------------------
    def run(self) -> LoopSummary:
        run, config = self.run_store, self.config
        plan = self.jobs.task_plan()
        self.state = rebuild_state(run, plan)
        done_jobs = len(run.jobs(["done", "failed"]))
        # Seeded by the config's seed and the history, so a resumed run does not replay
        # the random choices it already made.
        seed = np.random.SeedSequence([config.seed, done_jobs])
        strategy = self.strategy = make_strategy(config.strategy, seed=seed)
        limits = Limits(max_evals=config.limits.max_evals, max_nodes=config.limits.max_nodes)
        run.event("run_started", strategy=config.strategy.name, resumed=done_jobs > 0)
        with LocalExecutor(config.workers) as executor:
            self.scheduler = Scheduler(
                strategy,
                self.state,
                executor,
                config.workers,
                limits=limits,
                make_job=self._make_job,
                on_complete=self._on_complete,
                should_stop=self._should_stop,
            )
            self._resubmit_in_flight()
            with _signals(self._interrupt):
                summary = self.scheduler.run()
        final = strategy.final_choice(self.state)
        return self._summary(summary, final)

    def best(self) -> str:
        """The strategy's current choice with its score, for progress displays."""
        if self.state is None or self.strategy is None:
            return "-"
        node = self.strategy.final_choice(self.state)
        passed, failed = self.state.own_counts(node)
        return f"node {node} {passed}/{passed + failed}"

    def request_stop(self, reason: str) -> None:
        self._stop_request = self._stop_request or reason

    # -- jobs --------------------------------------------------------------------------
    def _make_job(self, action: Expand | Evaluate) -> Callable[[], Outcome]:
        run = self.run_store
        resumed = self._resume_ids.get(action)
        if isinstance(action, Evaluate):
            job_id = resumed.pop(0) if resumed else eval_job_id(action.node, action.task)
            inputs = {"node": action.node, "task": action.task}
            run.queue_job(job_id, "eval", inputs)
            run.start_job(job_id)
            return lambda: self._evaluate(job_id, action)
        if resumed:
            job_id = resumed.pop(0)
            inputs = run.job(job_id).inputs
        else:
            ordinal = len(
                run.db.query(
                    "SELECT 1 FROM jobs WHERE kind='expand' AND json_extract(inputs, '$.parent')=?",
                    (action.parent,),
                )
            )
            job_id = f"expand-{action.parent}-{ordinal}"
            target = self._choose_target(action.parent, job_id)
            inputs = {"parent": action.parent, "ordinal": ordinal, "target": target.to_dict()}
        run.queue_job(job_id, "expand", inputs)
        run.start_job(job_id)
        return lambda: self._expand(job_id, action, ImprovementTarget(**inputs["target"]))

    def _evaluate(self, job_id: str, action: Evaluate) -> Outcome:
        run = self.run_store
        try:
            code = self._node_code(action.node)
            log_dir = run.log_dir("eval", job_id)
            evaluation = self.jobs.evaluate(job_id, int(action.node), code, action.task, log_dir)
        except Exception as exc:  # the harness broke, not the agent
            return self._crashed(job_id, exc)
        if self._cancelled.is_set():
            return JobCrashed("cancelled")  # a killed judge proves nothing: re-run on resume
        recorded = run.record_evaluation(evaluation)
        self._crashes = 0
        return Evaluated(recorded.resolved)

    def _expand(self, job_id: str, action: Expand, target: ImprovementTarget) -> Outcome:
        run = self.run_store
        try:
            code = self._node_code(action.parent)
            log_dir = run.log_dir("expand", job_id)
            result = self.jobs.expand(job_id, int(action.parent), code, target, log_dir)
        except Exception as exc:
            return self._crashed(job_id, exc)
        if self._cancelled.is_set():
            return JobCrashed("cancelled")
        self._crashes = 0
        meta = {
            "job": job_id,
            "target": target.kind + (f" {target.task_id}" if target.task_id else ""),
            "log_dir": run.relative(log_dir),
        }
        if result.status == "ok":
            node = run.add_node(
                int(action.parent), diff=result.diff, origin=result.problem_statement,
                job_id=job_id, meta=meta,
            )  # fmt: skip
            run.event("node_added", node=node.id, parent=node.parent_id)
            return Expanded(str(node.id))
        if result.diff:  # a child that broke its own smoke test: kept for the record
            node = run.add_node(
                int(action.parent), diff=result.diff, origin=result.problem_statement,
                status="rejected", job_id=job_id, meta={**meta, "reason": result.reason},
            )  # fmt: skip
            outcome = {"node_id": node.id, "status": result.status, "reason": result.reason}
        else:
            outcome = {"status": result.status, "reason": result.reason}
        run.finish_job(job_id, outcome)
        run.event("expansion_rejected", parent=int(action.parent), **outcome)
        return ExpansionFailed(f"{result.status}: {result.reason}")

    def _crashed(self, job_id: str, exc: Exception) -> Outcome:
        message = str(exc) if isinstance(exc, DgmError) else f"{type(exc).__name__}: {exc}"
        if not self._cancelled.is_set():
            self.run_store.fail_job(job_id, message)
            self.run_store.event("job_crashed", job=job_id, error=message)
        self._crashes += 1
        self._last_crash = message
        return JobCrashed(message)

    def _choose_target(self, parent: str, job_id: str) -> ImprovementTarget:
        rng = random.Random(f"{self.config.seed}:{job_id}")
        sees_tests = self.config.expand.diagnosis_sees_tests
        return choose_target(
            self.run_store.evaluations(int(parent)),
            self.run_store.path,
            rng,
            task_statement=self.jobs.task_statement,
            hidden_tests=self.jobs.hidden_tests if sees_tests else None,
        )

    def _node_code(self, node: str) -> Path:
        """The node's codebase, checked out once per run into work/nodes/<id>."""
        dest = self.run_store.path / "work" / "nodes" / node
        with self._node_code_lock:
            if not (dest / ".complete").exists():
                if dest.exists():
                    shutil.rmtree(dest)
                self.run_store.checkout(int(node), dest)
                (dest / ".complete").touch()
        return dest

    def _resubmit_in_flight(self) -> None:
        """Jobs that were running when the last process died run again, same ids."""
        assert self.scheduler is not None and self.state is not None
        for job in self.run_store.jobs(["queued", "running"]):
            if job.kind == "eval":
                action: Expand | Evaluate = Evaluate(job.inputs["node"], job.inputs["task"])
                if action.node not in self.state.node_ids or action.task in self.state.results(
                    action.node
                ):
                    self.run_store.fail_job(job.id, "obsolete after resume", state="cancelled")
                    continue
            else:
                action = Expand(job.inputs["parent"])
            self._resume_ids.setdefault(action, []).append(job.id)
            self.run_store.event("job_resumed", job=job.id)
            self.scheduler.submit(action)

    # -- stopping ----------------------------------------------------------------------
    def _should_stop(self) -> str | None:
        if self._stop_request:
            return self._stop_request
        if self._crashes >= MAX_CONSECUTIVE_CRASHES:
            return f"{self._crashes} jobs in a row crashed; last: {self._last_crash}"
        limits = self.config.limits
        if limits.budget_usd is not None and (
            self.jobs.run_budget_exhausted() or self.run_store.spend_usd() >= limits.budget_usd
        ):
            return f"dollar budget reached (${limits.budget_usd:.2f})"
        if limits.max_hours is not None and self.elapsed_s() >= limits.max_hours * 3600:
            return f"time limit reached ({limits.max_hours} h)"
        return None

    def elapsed_s(self) -> float:
        """Wall-clock time of this run across all its sessions."""
        return self._earlier_sessions_s + time.monotonic() - self.started_at

    def _interrupt(self, first: bool) -> None:
        if first:
            self.request_stop("interrupted")
            timer = threading.Timer(GRACE_PERIOD_S, lambda: os.kill(os.getpid(), signal.SIGINT))
            timer.daemon = True
            timer.start()
            return
        self._cancelled.set()
        raise KeyboardInterrupt

    def cancel_running(self) -> int:
        """Remove this process's containers; their jobs stay `running` and re-run on resume."""
        self._cancelled.set()
        return self.jobs.cancel()

    def _on_complete(self, completion: Completion, state: SearchState) -> None:
        if self.on_progress is not None:
            self.on_progress(self, completion)

    def _summary(self, summary: RunSummary, final: str) -> LoopSummary:
        run = self.run_store
        score = run.score(int(final))
        total = self.elapsed_s()
        elapsed = time.monotonic() - self.started_at
        run.event("run_stopped", reason=summary.stop_reason, best=final, elapsed_s=elapsed)
        return LoopSummary(
            stop_reason=summary.stop_reason,
            best_node=final,
            best_passed=score.passed,
            best_total=score.total,
            nodes=len(run.nodes()),
            evaluations=len(run.evaluations()),
            spend_usd=run.spend_usd(),
            elapsed_s=total,
            utilisation=summary.utilisation,
        )


class JobFactory:
    """What the loop needs from the outside world: the task plan and the two jobs.

    The production implementation (`dgm.loop.adapters.RunJobs`) runs real sandboxes through the
    gateway; tests may substitute their own.
    """

    def task_plan(self) -> TaskPlan:
        raise NotImplementedError

    def evaluate(self, job_id: str, node: int, code: Path, task: str, log_dir: Path) -> Any:
        """Run node `node` (code at `code`) on `task`; return a store `Evaluation`."""
        raise NotImplementedError

    def expand(
        self, job_id: str, parent: int, code: Path, target: ImprovementTarget, log_dir: Path
    ) -> Any:
        """Run one self-improvement step; return an `ExpandResult`."""
        raise NotImplementedError

    def task_statement(self, task_id: str) -> str | None:
        return None

    def hidden_tests(self, task_id: str) -> str | None:
        return None

    def cancel(self) -> int:
        return 0

    def run_budget_exhausted(self) -> bool:
        """Whether the LLM gateway refused a call for the run's dollar cap."""
        return False


# -- state from the store -------------------------------------------------------------
def rebuild_state(run: Run, plan: TaskPlan) -> SearchState:
    """The search state from recorded history: active nodes, evaluations on planned
    tasks, and failed expansions (rejected children and jobs that made no child)."""
    nodes = [(str(n.id), None if n.parent_id is None else str(n.parent_id))
             for n in run.nodes() if n.status == "active"]  # fmt: skip
    rejected = {n.id: n.parent_id for n in run.nodes() if n.status != "active"}
    failed: list[str] = [str(parent) for parent in rejected.values()]
    for job in run.jobs(["done"]):
        if job.kind == "expand" and job.result and "node_id" not in job.result:
            failed.append(str(job.inputs["parent"]))
    planned = set(plan.stage1) | set(plan.stage2)
    active = {node for node, _ in nodes}
    evaluations = [(str(e.node_id), e.task_id, e.resolved) for e in run.evaluations()
                   if e.task_id in planned and str(e.node_id) in active]  # fmt: skip
    return SearchState.replay(plan, nodes, _stage_order(evaluations, plan), failed)


def _stage_order(evaluations: list[tuple[str, str, bool]], plan: TaskPlan) -> list:
    """Stage-1 results before stage-2 ones, so replay opens stage 2 as the run did."""
    stage1 = set(plan.stage1)
    return [e for e in evaluations if e[1] in stage1] + [
        e for e in evaluations if e[1] not in stage1
    ]


def eval_job_id(node: str, task: str) -> str:
    """Job id = hash of its inputs, readable prefix first."""
    digest = hashlib.sha256(json.dumps([node, task]).encode()).hexdigest()[:10]
    return f"eval-{node}-{digest}"


class _signals:
    """SIGINT/SIGTERM -> `handler(first)`; restores the previous handlers on exit."""

    def __init__(self, handler: Callable[[bool], None]) -> None:
        self.handler = handler
        self.count = 0

    def __enter__(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            self.previous = None
            return
        self.previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        for sig in self.previous:
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.count += 1
        self.handler(self.count == 1)

    def __exit__(self, *exc: object) -> None:
        if self.previous:
            for sig, previous in self.previous.items():
                signal.signal(sig, previous)
