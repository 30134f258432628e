"""What every executor speaks: a submitted job (`Ticket`, its `Work`), how it ended
(`Outcome`) and when (`Completion`), and the `Executor` protocol.

The scheduler only ever calls `submit`, `next_completion` and `now`, so the thread pool
and the process pool (wall clock, local.py), the Ray cluster (distributed/ray_executor.py)
and the simulator's event heap (virtual clock) are interchangeable.

A job is what the meta loop builds from an action (`Scheduler(make_job=...)`): a `Work`
(plain data, the module-level function that runs it, and the step that records its
result in the loop's process), or, for the thread executor, any zero-argument callable
returning an `Outcome`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

from dgm.strategies.actions import Job
from dgm.strategies.state import NodeId


@dataclass(frozen=True)
class Expanded:
    """The expansion produced a valid child, recorded under id `child`."""

    child: NodeId


@dataclass(frozen=True)
class ExpansionFailed:
    """The expansion ran but produced no valid child (no diff, broken code, ...)."""

    reason: str = ""


@dataclass(frozen=True)
class Evaluated:
    solved: bool


@dataclass(frozen=True)
class JobCrashed:
    """The job broke for reasons outside the agent (infrastructure, a bug in the harness).
    Nothing is recorded against the agent; the strategy may ask for the same job again."""

    error: str


@dataclass(frozen=True)
class InfraFailed:
    """The job met an outage (the provider, Docker, the disk, a node: `dependency`). Nothing
    is recorded against the agent and the scheduler runs the same job again, unchanged, once
    the dependency's circuit breaker lets jobs through (loop/breakers.py)."""

    dependency: str
    reason: str


Outcome = Expanded | ExpansionFailed | Evaluated | JobCrashed | InfraFailed


@dataclass(frozen=True)
class Ticket:
    """One submitted job: its sequence number, the action it carries out, and the payload
    the executor runs (the action itself for the simulator)."""

    id: int
    action: Job
    job: Any


@dataclass(frozen=True)
class Completion:
    ticket: Ticket
    outcome: Outcome
    started_at: float
    finished_at: float

    @property
    def duration(self) -> float:
        return self.finished_at - self.started_at


@dataclass(frozen=True)
class Work:
    """One job as an executor runs it. `run(payload)` computes the result anywhere (a
    thread, a worker process); `finish(result, error)` runs in the loop's process with the
    result or the exception and returns the `Outcome` (the loop records to the store
    there, before the scheduler hears of it)."""

    run: Callable[[Any], Any]
    payload: Any
    finish: Callable[[Any, BaseException | None], Outcome]

    def run_here(self) -> Outcome:
        try:
            result, error = self.run(self.payload), None
        except Exception as exc:  # the job broke: `finish` decides what that means
            result, error = None, exc
        return self.finish(result, error)


class Executor(Protocol):
    def now(self) -> float:
        """Seconds (or simulated hours) since the executor started."""
        ...

    def submit(self, ticket: Ticket) -> None:
        """Start the job; the scheduler submits at most one per free worker."""
        ...

    def next_completion(self) -> Completion:
        """Block until a submitted job finishes and return it (called only while some job
        is in flight)."""
        ...
