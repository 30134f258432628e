"""The executors of one machine: a pool of threads (the default) and a pool of spawned
worker processes, both measured in wall-clock seconds."""

from __future__ import annotations

import multiprocessing
import queue
import signal
import time
from collections.abc import Callable
from concurrent.futures import Future, ProcessPoolExecutor, ThreadPoolExecutor

from dgm.executors.protocol import Completion, JobCrashed, Outcome, Ticket, Work


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
