"""The order jobs start and finish in: kept by every run, followed by a replay.

`OrderedExecutor` wraps any executor. Workers only compute a job's result; its `finish`
(recording in the store) runs here, in the loop's thread, when the scheduler takes the
completion. So what the store holds at each decision (evaluations a diagnosis reads, node
ids) is exactly what the scheduler has heard, never a result a worker happened to record a
moment earlier. Each start and finish is an event (`job_started`, `job_finished`).

A replay (`llm.model = "replay/<run dir>"`) reads the recorded run's events and
- hands completions to the scheduler in the recorded order (a job that finishes early
  waits in a buffer), whatever the replay's worker count;
- plans with the recorded run's worker count (the meta loop's scheduler slots): it fills the
  same number of slots at the same moments, so the strategy is asked the same questions
  and draws the same random numbers; the executor may run more or fewer jobs at once;
- stops starting jobs where the recording does (a wall-clock or dollar stop included);
- stops the run, naming the job, when a job asks the model something the recording lacks
  (that job fails with the reason) or the run starts a job the recording did not.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dgm.errors import DgmError
from dgm.executors import Completion, Executor, JobCrashed, Outcome, Ticket, Work
from dgm.loop.stop_rules import StopKind, StopReason
from dgm.store import Run
from dgm.store.queries import JOB_ORDER_EVENTS, recorded_events


class ReplayMissing(DgmError):
    """A replayed job asked the model something its recording holds no answer for."""


@dataclass(frozen=True)
class Deferred:
    """What a worker hands back: the job's raw result, recorded later in the loop thread."""

    result: Any
    error: BaseException | None


def defer(result: Any, error: BaseException | None) -> Any:
    return Deferred(result, error)


@dataclass
class RecordedOrder:
    """A recorded run's job starts and finishes, and how many workers it planned with."""

    starts: list[str]
    finishes: list[str]
    workers: int | None
    stopped: str

    @classmethod
    def of_model(cls, model: str) -> RecordedOrder | None:
        """The order recorded by the run a `replay/<run dir>` model replays, or None (not
        a replay, a folder of logs without the run's database, or an older run)."""
        if not model.startswith("replay/"):
            return None
        kinds = (*JOB_ORDER_EVENTS, "run_started", "run_stopped")
        events = recorded_events(Path(model.removeprefix("replay/")), kinds)
        if not events or not any(e["kind"] == "job_started" for e in events):
            return None  # recorded before runs kept their job order: answers only
        started = [e for e in events if e["kind"] == "run_started"]
        stopped = [e for e in events if e["kind"] == "run_stopped"]
        return cls(
            starts=[e["job"] for e in events if e["kind"] == "job_started"],
            finishes=[e["job"] for e in events if e["kind"] == "job_finished"],
            workers=started[0].get("workers") if started else None,
            stopped=str(stopped[-1].get("reason", "")) if stopped else "",
        )


class OrderedExecutor:
    def __init__(
        self,
        inner: Executor,
        run: Run,
        job_id: Callable[[], str],
        recorded: RecordedOrder | None = None,
        replay_miss: Callable[[str], str | None] = lambda job_id: None,
    ) -> None:
        """`job_id()` names the job `make_job` built last (the ticket being submitted);
        `replay_miss(job_id)` says why a replayed job went unanswered, or None."""
        self.inner = inner
        self.run = run
        self.job_id = job_id
        self.recorded = recorded
        self.replay_miss = replay_miss
        self.stop: StopReason | None = None
        self._tickets: dict[int, tuple[Ticket, str, Any]] = {}  # ticket id -> ticket, job, finish
        self._buffer: dict[int, Completion] = {}
        self._started = 0
        self._finished = 0

    def check(self) -> StopReason | None:
        """A reason to start nothing more: a failed replay, or the recording's end."""
        if self.stop is None and self.recorded and self._started >= len(self.recorded.starts):
            stopped = f" (it stopped: {self.recorded.stopped})" if self.recorded.stopped else ""
            return StopReason(
                StopKind.STRATEGY, f"replay: the recorded run started no more jobs{stopped}"
            )
        return self.stop

    # -- the executor protocol ------------------------------------------------------------
    def now(self) -> float:
        return self.inner.now()

    def submit(self, ticket: Ticket) -> None:
        job_id = self.job_id()
        self._note("job_started", job_id)
        if self.recorded and self.stop is None:
            starts = self.recorded.starts
            expected = starts[self._started] if self._started < len(starts) else None
            if job_id != expected:
                self._fail(
                    f"replay diverged: started job {job_id} where the recording started {expected}"
                )
        self._started += 1
        work = ticket.job
        finish = work.finish if isinstance(work, Work) else None
        self._tickets[ticket.id] = (ticket, job_id, finish)
        if isinstance(work, Work):
            ticket = replace(ticket, job=Work(work.run, work.payload, defer))
        self.inner.submit(ticket)

    def next_completion(self) -> Completion:
        completion = self._take()
        ticket, job_id, finish = self._tickets.pop(completion.ticket.id)
        outcome = completion.outcome
        if isinstance(outcome, Deferred) and finish is not None:
            outcome = self._finish(job_id, finish, outcome)
        self._note("job_finished", job_id)
        return Completion(ticket, outcome, completion.started_at, completion.finished_at)

    # -- inside ---------------------------------------------------------------------------
    def _take(self) -> Completion:
        """The next completion: the recorded next one in a replay, else the first to arrive."""
        expected = self._expected_finish()
        if expected is not None:
            while expected not in self._buffer:
                completion = self.inner.next_completion()
                self._buffer[completion.ticket.id] = completion
            self._finished += 1
            return self._buffer.pop(expected)
        if self._buffer:
            return self._buffer.pop(next(iter(self._buffer)))
        return self.inner.next_completion()

    def _expected_finish(self) -> int | None:
        """The ticket the recording finished next, or None (not a replay, or it diverged)."""
        if not self.recorded or self.stop is not None:
            return None
        finishes = self.recorded.finishes
        if self._finished >= len(finishes):  # past the recording's end: as they come
            return None
        job = finishes[self._finished]
        tickets = [t for t, (_, j, _) in self._tickets.items() if j == job]
        if not tickets:
            running = ", ".join(j for _, j, _ in self._tickets.values())
            self._fail(
                f"replay diverged: the recording finished job {job} next, running: {running}"
            )
            return None
        return tickets[0]

    def _finish(
        self, job_id: str, finish: Callable[[Any, BaseException | None], Outcome], raw: Deferred
    ) -> Outcome:
        result, error = raw.result, raw.error
        missing = self.replay_miss(job_id)
        if missing:  # no evidence about the agent: the job fails with the reason
            result, error = (
                None,
                ReplayMissing(missing, "replay with the recorded run's config and seed"),
            )
            self._fail(missing)
        try:
            return finish(result, error)
        except Exception as exc:  # recording failed: the job crashed, the loop goes on
            return JobCrashed(f"{type(exc).__name__}: {exc}")

    def _note(self, kind: str, job_id: str) -> None:
        """Record a start or finish; a store that cannot take it (locked, full) is the
        recorder's to report, and only this run's replay loses its order."""
        try:
            self.run.event(kind, job=job_id)
        except Exception:
            pass

    def _fail(self, message: str) -> None:
        if self.stop is None:
            self.stop = StopReason(StopKind.CRASHES, message)
            try:
                self.run.event("replay_failed", reason=message)
            except Exception:  # the stop reason says it anyway
                pass
