"""Where jobs run: the executor protocol, job outcomes, and the thread and process executors.

The scheduler only ever calls `submit`, `next_completion` and `now`, so the thread pool
and the process pool (wall clock) and the simulator's event heap (virtual clock) are
interchangeable; so is the Ray executor (ray_executor.py, `make_executor("ray", ...)`).

A job is what the meta loop builds from an action (`Scheduler(make_job=...)`): a `Work`
(plain data, the module-level function that runs it, and the step that records its
result in the loop's process), or, for the thread executor, any zero-argument callable
returning an `Outcome`.
"""

from __future__ import annotations

import multiprocessing
import queue
import signal
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor
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
    the dependency's circuit breaker lets jobs through (breakers.py)."""

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


class ThreadExecutor:
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
        job = ticket.job
        self._pool.submit(self._run, ticket, job.run_here if isinstance(job, Work) else job)

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

    def __enter__(self) -> ThreadExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


LocalExecutor = ThreadExecutor
"""The name earlier versions used."""


class ProcessExecutor:
    """Runs each job's `run(payload)` in a worker process (spawned: nothing of the parent's
    memory is inherited), and its `finish` back in this process. The proof that jobs are
    plain data: a payload that needs a live object of the parent fails here."""

    def __init__(self, workers: int) -> None:
        context = multiprocessing.get_context("spawn")
        self._pool = ProcessPoolExecutor(
            max_workers=workers, mp_context=context, initializer=_leave_ctrl_c_to_the_loop
        )
        self._done: queue.Queue[Completion] = queue.Queue()
        self._t0 = time.monotonic()

    def now(self) -> float:
        return time.monotonic() - self._t0

    def submit(self, ticket: Ticket) -> None:
        work = ticket.job
        if not isinstance(work, Work):
            raise TypeError("the process executor runs Work (plain data), not closures")
        started = self.now()
        future = self._pool.submit(work.run, work.payload)
        future.add_done_callback(lambda f: self._finish(ticket, work, f, started))

    def _finish(self, ticket: Ticket, work: Work, future: Future, started: float) -> None:
        error = future.exception()
        try:
            outcome = work.finish(None if error else future.result(), error)
        except Exception as exc:
            outcome = JobCrashed(f"{type(exc).__name__}: {exc}")
        self._done.put(Completion(ticket, outcome, started, self.now()))

    def next_completion(self) -> Completion:
        return self._done.get()

    def shutdown(self) -> None:
        self._pool.shutdown(wait=True, cancel_futures=True)

    def __enter__(self) -> ProcessExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def _leave_ctrl_c_to_the_loop() -> None:
    """Workers ignore Ctrl-C: the loop's first one lets running jobs finish, the second
    cancels their containers (which ends the jobs)."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)


EXECUTORS = {"thread": ThreadExecutor, "process": ProcessExecutor}


def make_executor(kind: str, workers: int, run: Any = None, jobs: Any = None) -> Any:
    """`thread` (the default: jobs wait on Docker and the LLM, not on Python), `process`,
    or, given the run and its job factory, `ray`."""
    if kind == "ray" and run is not None:
        from dgm.loop.ray_executor import ray_executor_for

        return ray_executor_for(workers, run, jobs)
    if kind not in EXECUTORS:
        from dgm.errors import ConfigError

        raise ConfigError(f"unknown executor {kind!r}", f"use one of: {', '.join(EXECUTORS)}")
    return EXECUTORS[kind](workers)
