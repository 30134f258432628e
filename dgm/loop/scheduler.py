"""The worker-pool scheduler: keeps every worker busy with the strategy's next action.

The same code drives `dgm run` (thread-pool executor, real jobs) and `dgm simulate`
(virtual-clock executor, simulated jobs). The loop:

    fill: while a worker is free, ask the strategy; submit Expand/Evaluate, stop asking on
          Wait (ask again after the next completion) or Stop (start nothing more);
    then: wait for the next completion, record it in the state, call the hook, fill again.

A worker is never idle while the strategy has an action to give. DGM's generation barrier
is the dgm strategy answering Wait, not a scheduler feature.

Limits are checked before each submission, counting jobs in flight, so a run never
overshoots: when the next action does not fit, nothing more starts and the running jobs
finish. Spending includes everything already in the state, so a resumed run continues
against the same budget.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from dgm.executors import (
    Completion,
    Evaluated,
    Executor,
    Expanded,
    ExpansionFailed,
    InfraFailed,
    JobCrashed,
    Ticket,
)
from dgm.loop.stop_rules import (
    EVAL_BUDGET_REACHED,
    EXPANSION_LIMIT_REACHED,
    IDLE,
    NODE_LIMIT_REACHED,
    StopReason,
    strategy_stop,
)
from dgm.strategies.actions import Evaluate, Expand, Job, Stop, Wait
from dgm.strategies.base import Strategy
from dgm.strategies.state import NodeId, SearchState


@dataclass(frozen=True)
class SearchBudget:
    """How much search a run may do, in evaluations and nodes (the scheduler's limits;
    not the sandbox's resource limits, not run.toml's `[limits]` section as a whole)."""

    max_evals: float | None = None
    """Budget in evaluation-equivalents: evaluations plus `expansion_cost` per expansion."""
    max_nodes: int | None = None
    """Most nodes in the tree, the seed included."""
    max_expansions: int | None = None
    """Most expansion attempts (valid, failed or crashed; history included): expansions
    are not free, and a strategy whose expansions keep failing never reaches `max_evals`."""
    expansion_cost: float = 0.0
    """What one expansion (valid or failed) costs against `max_evals`."""


@dataclass
class RunSummary:
    stop_reason: StopReason
    workers: int
    started_at: float
    finished_at: float
    busy_time: float
    jobs: int

    @property
    def utilisation(self) -> float:
        """Fraction of worker time spent running jobs, start to finish."""
        span = self.finished_at - self.started_at
        return self.busy_time / (self.workers * span) if span > 0 else 1.0


class Scheduler:
    def __init__(
        self,
        strategy: Strategy,
        state: SearchState,
        executor: Executor,
        workers: int,
        limits: SearchBudget | None = None,
        make_job: Callable[[Job], Any] | None = None,
        on_complete: Callable[[Completion, SearchState], None] | None = None,
        should_stop: Callable[[], StopReason | None] | None = None,
        expansions_before: int = 0,
        code_of: Callable[[NodeId], str | None] | None = None,
        breakers: Any = None,
    ) -> None:
        """`make_job` turns an action into the executor's payload (default: the action);
        `on_complete` runs after each result is in the state (the production loop records
        to the store there); `should_stop` returns a reason to stop (dollars, hours, an
        external request) or None, and is asked before each submission.
        `expansions_before` counts the attempts of earlier sessions; `code_of(child)`
        names a new child's codebase, so that twins count as nothing new (state.py).
        `breakers` (breakers.py) hold new jobs back while a dependency is down; a job
        that met an outage (`InfraFailed`) runs again, unchanged, before anything new."""
        if workers < 1:
            raise ValueError("workers must be at least 1")
        self.strategy = strategy
        self.state = state
        self.executor = executor
        self.workers = workers
        self.limits = limits or SearchBudget()
        self.make_job = make_job or (lambda action: action)
        self.on_complete = on_complete
        self.should_stop = should_stop
        self.code_of = code_of or (lambda child: None)
        self.expansions = expansions_before
        """Expansion attempts started, earlier sessions included."""
        self.breakers = breakers
        self.stop_reason: StopReason | None = None
        self._requeued: deque[Job] = deque()
        """Jobs that met an outage: still pending in the state, run again first."""
        self._next_ticket = 0
        self._running = 0
        self._busy_time = 0.0
        self._jobs = 0

    # -- budget ---------------------------------------------------------------------------
    @property
    def spent(self) -> float:
        """Evaluation-equivalents recorded so far (history included)."""
        s = self.state
        expansions = (s.size - 1) + s.total_failed_expansions
        return s.total_evals + self.limits.expansion_cost * expansions

    @property
    def committed(self) -> float:
        """`spent` plus what the jobs in flight will cost."""
        s = self.state
        return (
            self.spent
            + s.total_pending_evals
            + self.limits.expansion_cost * s.total_pending_expansions
        )

    def _refusal(self, action: Job) -> StopReason | None:
        """Why `action` may not start under the limits, or None if it may."""
        limits = self.limits
        cost = limits.expansion_cost if isinstance(action, Expand) else 1.0
        if limits.max_evals is not None and self.committed + cost > limits.max_evals + 1e-9:
            return EVAL_BUDGET_REACHED
        if (
            isinstance(action, Expand)
            and limits.max_expansions is not None
            and self.expansions >= limits.max_expansions
        ):
            return EXPANSION_LIMIT_REACHED
        if (
            isinstance(action, Expand)
            and limits.max_nodes is not None
            and self.state.size + self.state.total_pending_expansions >= limits.max_nodes
        ):
            return NODE_LIMIT_REACHED
        return None

    # -- the loop -------------------------------------------------------------------------
    def submit(self, action: Job) -> None:
        """Start one job now. `run` calls this; the meta loop also calls it on resume to
        re-submit jobs that were in flight when the previous process died."""
        if isinstance(action, Expand):
            self.state.expansion_started(action.parent)
            self.expansions += 1
        else:
            self.state.evaluation_started(action.node, action.task)
        ticket = Ticket(self._next_ticket, action, self.make_job(action))
        self._next_ticket += 1
        self._running += 1
        self.executor.submit(ticket)

    def _resubmit(self, action: Job) -> None:
        """Run a job that met an outage again: the state already counts it as pending."""
        ticket = Ticket(self._next_ticket, action, self.make_job(action))
        self._next_ticket += 1
        self._running += 1
        self.executor.submit(ticket)

    def _held(self) -> bool:
        return self.breakers is not None and self.breakers.held()

    def _stop_requested(self) -> bool:
        external = self.should_stop() if self.should_stop else None
        if external and self.stop_reason is None:
            self.stop_reason = external
        return self.stop_reason is not None

    def run(self) -> RunSummary:
        started = self.executor.now()
        self._fill()
        while self._running or (self.stop_reason is None and self._held()):
            if not self._running:  # paused with nothing in flight: probe, then go on
                self.breakers.wait(self._stop_requested)
                self._fill()
                continue
            completion = self.executor.next_completion()
            self._running -= 1
            self._jobs += 1
            self._busy_time += completion.duration
            self._record(completion)
            if self.on_complete is not None:
                self.on_complete(completion, self.state)
            self._fill()
        if self.stop_reason is None:
            self.stop_reason = IDLE
        return RunSummary(
            self.stop_reason,
            self.workers,
            started,
            self.executor.now(),
            self._busy_time,
            self._jobs,
        )

    def _fill(self) -> None:
        while self.stop_reason is None and self._running < self.workers:
            external = self.should_stop() if self.should_stop else None
            if external:
                self.stop_reason = external
                return
            if self._held():
                return
            if self._requeued:
                self._resubmit(self._requeued.popleft())
                continue
            action = self.strategy.next_action(self.state)
            if isinstance(action, Wait):
                return
            if isinstance(action, Stop):
                self.stop_reason = strategy_stop(action.reason)
                return
            refusal = self._refusal(action)
            if refusal:
                self.stop_reason = refusal
                return
            self.submit(action)

    def _record(self, completion: Completion) -> None:
        action, outcome, state = completion.ticket.action, completion.outcome, self.state
        if isinstance(outcome, InfraFailed):
            self._requeued.append(action)
            return
        if isinstance(action, Expand):
            if isinstance(outcome, Expanded):
                state.expansion_finished(action.parent, outcome.child, self.code_of(outcome.child))
            elif isinstance(outcome, ExpansionFailed):
                state.expansion_finished(action.parent, None)
            elif isinstance(outcome, JobCrashed):
                state.expansion_abandoned(action.parent)
            else:
                raise TypeError(f"an expand job returned {outcome!r}")
        elif isinstance(action, Evaluate):
            if isinstance(outcome, Evaluated):
                state.evaluation_finished(action.node, action.task, outcome.solved)
            elif isinstance(outcome, JobCrashed):
                state.evaluation_abandoned(action.node, action.task)
            else:
                raise TypeError(f"an eval job returned {outcome!r}")
