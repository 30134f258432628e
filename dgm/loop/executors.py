"""Where jobs run: the executor protocol, job outcomes, and the local thread-pool executor.

The scheduler only ever calls `submit`, `next_completion` and `now`, so the production
thread pool (wall clock) and the simulator's event heap (virtual clock) are
interchangeable; a Ray executor can follow by implementing the same three methods.

A job is what the meta loop builds from an action (`Scheduler(make_job=...)`): for the
local executor a zero-argument callable returning an `Outcome`. Production jobs are pure
functions of serialisable input, so a callable dataclass wrapping one travels to Ray as is.
"""

from __future__ import annotations

import queue
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, Protocol

from dgm.strategies.actions import Job


@dataclass(frozen=True)
class Expanded:
    """The expansion produced a valid child, recorded under id `child`."""

    child: str


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


Outcome = Expanded | ExpansionFailed | Evaluated | JobCrashed


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


class LocalExecutor:
    """Runs jobs on a pool of threads, measured in wall-clock seconds.

    Threads suit the real jobs: they spend their time waiting on Docker and the LLM
    gateway, not in Python.
    """

    def __init__(self, workers: int) -> None:
        self._pool = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="dgm-job")
        self._done: queue.Queue[Completion] = queue.Queue()
        self._t0 = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self._t0

    def submit(self, ticket: Ticket) -> None:
        job: Callable[[], Outcome] = ticket.job
        self._pool.submit(self._run, ticket, job)

    def _run(self, ticket: Ticket, job: Callable[[], Outcome]) -> None:
        started = self.now()
        try:
            outcome = job()
        except Exception as exc:  # a crashed job must not take the loop down with it
            outcome = JobCrashed(f"{type(exc).__name__}: {exc}")
        self._done.put(Completion(ticket, outcome, started, self.now()))

    def next_completion(self) -> Completion:
        return self._done.get()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True)

    def __enter__(self) -> LocalExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()
