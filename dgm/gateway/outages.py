"""Whose failure is it: the gateway's record of upstream failures per job and per provider.

A call that failed for good at the provider (5xx after every retry, no answer in time, the
provider unreachable, 429 beyond the retry budget, a key the provider refuses) is noted
against its job. Whether that makes the job an *outage* (infrastructure, re-run later) or
the agent's own failure is decided only from what an agent cannot cause:

- another job's call to the same provider also failed for good near the same time, or
- the gateway's own probe (a one-token call, sent as soon as a call fails for good, and by
  the loop's circuit breaker) failed near the same time;

and never when the job was flooding the provider itself (more calls in the last minute
than `flood_calls_per_minute`, or a burst of a twelfth of that in any 5 seconds of it): rate limits
and overloads an agent provoked are its own.
A failure of one request alone (a provider answering 500 to one odd request, or timing out
on a huge `max_tokens`) while the probe is answered stays the agent's.
"""

from __future__ import annotations

import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass

OUTAGE_TYPES = ("upstream_timeout", "upstream_unreachable", "rate_limit_exceeded")
OUTAGE_STATUSES = (401, 403, 502, 503, 504)
"""Final errors that may be the provider's: 5xx (sent as 502), timeouts, unreachable, 429,
and a key the provider refuses (no agent can revoke it)."""

WINDOW_S = 120.0
"""Failures (and failed probes) this close in time corroborate each other."""
FLOOD_CALLS_PER_MINUTE = 120
"""A job that made more calls than this in the minute before its failure (or more than a
twelfth of it in the last 5 seconds: a burst) provoked it."""
KEEP = 1000
"""Failures and probes kept per provider (older ones are too old to corroborate)."""


@dataclass(frozen=True)
class UpstreamFailure:
    job_id: str
    provider: str
    ts: float
    message: str
    flooding: bool
    model: str = ""


@dataclass(frozen=True)
class Probe:
    provider: str
    ts: float
    down: str | None
    """Why the probe failed, or None when the provider answered."""


def _densest(times: list[float], span: float) -> int:
    """The most calls in any `span` seconds of `times` (sorted): a burst counts even when
    the failure it provoked is noted later, after the gateway's retries and backoff."""
    most, start = 0, 0
    for end, t in enumerate(times):
        while times[start] < t - span:
            start += 1
        most = max(most, end - start + 1)
    return most


def is_outage_error(error_type: str, status: int) -> bool:
    """Whether a final error (after retries) may be the provider's fault."""
    return error_type in OUTAGE_TYPES or status in OUTAGE_STATUSES


class OutageWatch:
    """Thread-safe: the gateway's loop writes, the meta loop's threads read."""

    def __init__(
        self,
        window_s: float = WINDOW_S,
        flood_calls_per_minute: int = FLOOD_CALLS_PER_MINUTE,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.window_s = window_s
        self.flood_calls_per_minute = flood_calls_per_minute
        self.clock = clock
        self._lock = threading.Lock()
        self._calls: dict[str, deque[float]] = {}
        self._by_job: dict[str, list[UpstreamFailure]] = {}
        self._failures: dict[str, deque[UpstreamFailure]] = {}
        self._probes: dict[str, deque[Probe]] = {}

    # -- what the gateway notes -----------------------------------------------------------
    def called(self, job_id: str) -> None:
        now = self.clock()
        with self._lock:
            calls = self._calls.setdefault(job_id, deque())
            calls.append(now)
            while calls and calls[0] < now - 60.0:
                calls.popleft()

    def failed(self, job_id: str, provider: str, message: str, model: str = "") -> UpstreamFailure:
        now = self.clock()
        with self._lock:
            recent = [t for t in self._calls.get(job_id, ()) if t >= now - 60.0]
            rate = self.flood_calls_per_minute
            flooding = len(recent) > rate or _densest(recent, 5.0) > rate / 12
            failure = UpstreamFailure(job_id, provider, now, message, flooding, model)
            self._by_job.setdefault(job_id, []).append(failure)
            kept = self._failures.setdefault(provider, deque(maxlen=KEEP))
            kept.append(failure)
        return failure

    def probed(self, provider: str, down: str | None) -> Probe:
        probe = Probe(provider, self.clock(), down)
        with self._lock:
            self._probes.setdefault(provider, deque(maxlen=KEEP)).append(probe)
        return probe

    def forget(self, job_id: str) -> None:
        """The job's result was taken: a re-run starts with a clean slate."""
        with self._lock:
            self._by_job.pop(job_id, None)
            self._calls.pop(job_id, None)

    # -- what the loop asks ---------------------------------------------------------------
    def saw_failure(self, job_id: str) -> bool:
        with self._lock:
            return bool(self._by_job.get(job_id))

    def unexplained(self, job_id: str) -> UpstreamFailure | None:
        """A failure of the job (not from its own flood) that nothing corroborates yet."""
        with self._lock:
            for failure in self._by_job.get(job_id, ()):
                if not failure.flooding and self._corroboration(failure) is None:
                    return failure
        return None

    def outage_of(self, job_id: str) -> tuple[str, str] | None:
        """(provider, why) when the job met an outage no agent could cause, else None."""
        with self._lock:
            for failure in self._by_job.get(job_id, ()):
                if failure.flooding:
                    continue
                evidence = self._corroboration(failure)
                if evidence:
                    return failure.provider, (
                        f"LLM upstream unavailable ({failure.provider}: {failure.message}; "
                        f"{evidence})"
                    )
        return None

    def _corroboration(self, failure: UpstreamFailure) -> str | None:
        near = lambda ts: abs(ts - failure.ts) <= self.window_s  # noqa: E731
        others = {
            f.job_id
            for f in self._failures.get(failure.provider, ())
            if f.job_id != failure.job_id and not f.flooding and near(f.ts)
        }
        if others:
            return f"{len(others)} other job(s) failed at the provider at the same time"
        for probe in self._probes.get(failure.provider, ()):
            if probe.down and near(probe.ts):
                return f"dgm's own probe failed too: {probe.down}"
        return None
