"""Why a run stops, as a type, and the rules the meta loop checks before each new job.

Stop reasons used to be strings that callers parsed by their leading digit; a `StopReason`
says what kind of stop it is, so `dgm run` can tell "the jobs kept crashing" (exit 1)
from an orderly stop (exit 0) without reading the message.
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from enum import Enum
from typing import Any

MAX_CONSECUTIVE_CRASHES = 5
"""Stop the run when this many jobs in a row break outside the agent (a missing image,
a dead Docker engine): retrying would only burn time."""

MAX_RECORDING_FAILURES = 3
"""Stop the run when this many finished jobs in a row could not be recorded (disk full, a
database locked by another program, an archive refusing commits): the work would be paid
for and lost."""

GRACE_PERIOD_S = 600.0
"""After the first Ctrl-C, running jobs get this long to finish before they are cancelled."""


class StopKind(Enum):
    STRATEGY = "strategy"
    """The strategy said Stop (or waited with nothing running)."""
    EVAL_BUDGET = "eval_budget"
    NODE_LIMIT = "node_limit"
    EXPANSION_LIMIT = "expansion_limit"
    DOLLAR_BUDGET = "dollar_budget"
    TIME_LIMIT = "time_limit"
    INTERRUPTED = "interrupted"
    CRASHES = "crashes"
    """Jobs kept breaking outside the agent: the run cannot make progress."""
    RECORDING = "recording"
    """Finished jobs could not be recorded in the run directory."""


@dataclass(frozen=True)
class StopReason:
    kind: StopKind
    message: str

    def __str__(self) -> str:
        return self.message

    def __eq__(self, other: object) -> bool:
        # Compares equal to its message too: reports and the simulator print it as text.
        if isinstance(other, str):
            return self.message == other
        return isinstance(other, StopReason) and (self.kind, self.message) == (
            other.kind,
            other.message,
        )

    def __hash__(self) -> int:
        return hash(self.message)


def strategy_stop(message: str) -> StopReason:
    return StopReason(StopKind.STRATEGY, message)


EVAL_BUDGET_REACHED = StopReason(StopKind.EVAL_BUDGET, "evaluation budget reached")
NODE_LIMIT_REACHED = StopReason(StopKind.NODE_LIMIT, "node limit reached")
EXPANSION_LIMIT_REACHED = StopReason(StopKind.EXPANSION_LIMIT, "expansion limit reached")
IDLE = StopReason(StopKind.STRATEGY, "strategy waited with nothing running")
INTERRUPTED = StopReason(StopKind.INTERRUPTED, "interrupted")


class StopRules:
    """The loop's own reasons to start nothing more: a request (Ctrl-C), crashes in a row,
    the dollar cap, the wall-clock limit. Asked by the scheduler before each submission."""

    def __init__(
        self,
        limits: Any,
        spend_usd: Callable[[], float],
        budget_exhausted: Callable[[], bool],
        elapsed_s: Callable[[], float],
    ) -> None:
        self.limits = limits
        self.spend_usd = spend_usd
        self.budget_exhausted = budget_exhausted
        self.elapsed_s = elapsed_s
        self.requested: StopReason | None = None
        self.crashes = 0
        self.last_crash = ""
        self.unrecorded = 0
        self.last_unrecorded = ""

    def request(self, reason: StopReason) -> None:
        self.requested = self.requested or reason

    def job_crashed(self, message: str) -> None:
        self.crashes += 1
        self.last_crash = message

    def recording_failed(self, message: str) -> None:
        self.unrecorded += 1
        self.last_unrecorded = message

    def job_finished(self) -> None:
        """A job's result is recorded: the streaks of crashes and refused writes end."""
        self.crashes = 0
        self.unrecorded = 0

    def check(self) -> StopReason | None:
        if self.requested:
            return self.requested
        if self.unrecorded >= MAX_RECORDING_FAILURES:
            return StopReason(
                StopKind.RECORDING,
                f"{self.unrecorded} jobs in a row could not be recorded in the run directory;"
                f" last: {self.last_unrecorded}",
            )
        if self.crashes >= MAX_CONSECUTIVE_CRASHES:
            return StopReason(
                StopKind.CRASHES, f"{self.crashes} jobs in a row crashed; last: {self.last_crash}"
            )
        limits = self.limits
        if limits.budget_usd is not None and (
            self.budget_exhausted() or self.spend_usd() >= limits.budget_usd
        ):
            return StopReason(
                StopKind.DOLLAR_BUDGET, f"dollar budget reached (${limits.budget_usd:.2f})"
            )
        if limits.max_hours is not None and self.elapsed_s() >= limits.max_hours * 3600:
            return StopReason(StopKind.TIME_LIMIT, f"time limit reached ({limits.max_hours} h)")
        return None


def remedy(message: str, run_dir: Any) -> str:
    """The fix to print for a run stopped by failures, from what the failures said."""
    resume = f"then `dgm resume {run_dir}`"
    text = message.lower()
    if "no space left" in text or "disk is full" in text or "quota" in text:
        return f"free disk space on the file system of {run_dir}, {resume}"
    if "database is locked" in text or "database table is locked" in text:
        return (
            f"another program holds {run_dir}/run.sqlite locked (an open sqlite3 shell or a "
            f"backup tool?): close it, {resume}"
        )
    return f"fix the cause, {resume}"


class Clock:
    """Wall-clock time of a run across all its sessions."""

    def __init__(self, earlier_sessions_s: float) -> None:
        self.earlier_s = earlier_sessions_s
        self.started_at = time.monotonic()

    def session_s(self) -> float:
        return time.monotonic() - self.started_at

    def total_s(self) -> float:
        return self.earlier_s + self.session_s()


class Interrupts:
    """SIGINT/SIGTERM: the first asks for an orderly stop and arms a grace timer; the second
    (or the timer) cancels running jobs. Restores the previous handlers on exit."""

    def __init__(self, on_first: Callable[[], None], on_second: Callable[[], None]) -> None:
        self.on_first = on_first
        self.on_second = on_second
        self.count = 0
        self.previous: dict[int, Any] | None = None

    def __enter__(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        self.previous = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
        for sig in self.previous:
            signal.signal(sig, self._on_signal)

    def _on_signal(self, signum: int, frame: Any) -> None:
        self.count += 1
        if self.count == 1:
            self.on_first()
            timer = threading.Timer(GRACE_PERIOD_S, lambda: os.kill(os.getpid(), signal.SIGINT))
            timer.daemon = True
            timer.start()
            return
        self.on_second()
        raise KeyboardInterrupt

    def __exit__(self, *exc: object) -> None:
        if self.previous:
            for sig, previous in self.previous.items():
                signal.signal(sig, previous)
