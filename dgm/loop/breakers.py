"""Circuit breakers: the run pauses instead of burning through its frontier.

One breaker per dependency (`llm:<provider>`, `docker`, `disk`, `ray`). After
`trip_after` infrastructure outcomes in a row of a dependency, its breaker opens: the
scheduler dispatches no new job (every job needs the LLM, Docker and disk) and the
breaker probes the dependency itself with exponential backoff (`first_probe_s`, doubling
to `max_probe_s`); when a probe succeeds the breaker closes and the run goes on by itself.
A job whose result is recorded closes the streak of its dependencies.

Each opening and closing is an event in the store (`paused`, `resumed`), so `dgm status`
says what is down, since when and when the next probe is, and the clock knows how long
the run stood still (not counted against `--max-hours` unless `[limits] count_pauses`).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from dataclasses import dataclass, field

log = logging.getLogger(__name__)

Probe = Callable[[], str | None]
"""None when the dependency answers, else why not."""


@dataclass
class Breaker:
    dependency: str
    trip_after: int = 3
    first_probe_s: float = 5.0
    max_probe_s: float = 300.0
    streak: int = 0
    reason: str = ""
    opened_at: float | None = None
    next_probe_at: float = 0.0
    probes: int = 0

    @property
    def open(self) -> bool:
        return self.opened_at is not None

    def backoff_s(self) -> float:
        return min(self.max_probe_s, self.first_probe_s * 2 ** max(0, self.probes - 1))


@dataclass
class Breakers:
    probes: dict[str, Probe]
    """How to ask each dependency whether it is back (a dependency without one is
    asked nothing: its breaker closes at its first backoff)."""
    on_event: Callable[..., None] = lambda kind, **data: None
    trip_after: int = 3
    first_probe_s: float = 5.0
    max_probe_s: float = 300.0
    clock: Callable[[], float] = time.time
    sleep: Callable[[float], None] = time.sleep
    paused_s: float = 0.0
    """Seconds the run stood still with a breaker open (this session)."""
    _breakers: dict[str, Breaker] = field(default_factory=dict)
    _pause_started: float | None = None

    def _of(self, dependency: str) -> Breaker:
        if dependency not in self._breakers:
            self._breakers[dependency] = Breaker(
                dependency, self.trip_after, self.first_probe_s, self.max_probe_s
            )
        return self._breakers[dependency]

    # -- what the loop tells it -----------------------------------------------------------
    def failed(self, dependency: str, reason: str) -> None:
        breaker = self._of(dependency)
        breaker.streak += 1
        breaker.reason = reason
        if not breaker.open and breaker.streak >= breaker.trip_after:
            now = self.clock()
            breaker.opened_at, breaker.probes = now, 1
            breaker.next_probe_at = now + breaker.backoff_s()
            if self._pause_started is None:
                self._pause_started = now
            log.warning("%s is down (%s): the run pauses", dependency, reason)
            self.on_event("paused", dependency=dependency, reason=reason[:500],
                          next_probe_at=breaker.next_probe_at)  # fmt: skip

    def succeeded(self) -> None:
        """A job's result was recorded: every streak of outages in a row ends."""
        for breaker in self._breakers.values():
            if not breaker.open:
                breaker.streak = 0

    # -- what the scheduler asks ----------------------------------------------------------
    def down(self) -> list[Breaker]:
        return [b for b in self._breakers.values() if b.open]

    def held(self) -> bool:
        return bool(self.down())

    def wait(self, stop_requested: Callable[[], bool], tick_s: float = 0.2) -> None:
        """While paused: sleep until the next probe is due (waking for a stop request),
        then probe each open breaker that is due; close the ones that answer."""
        down = self.down()
        if not down:
            return
        due = min(b.next_probe_at for b in down)
        while self.clock() < due and not stop_requested():
            self.sleep(min(tick_s, max(0.0, due - self.clock())))
        if stop_requested():
            return
        for breaker in down:
            if self.clock() >= breaker.next_probe_at:
                self._probe(breaker)
        if not self.held():
            self._pause_ended()

    def _probe(self, breaker: Breaker) -> None:
        probe = self.probes.get(breaker.dependency)
        try:
            still = probe() if probe is not None else None
        except Exception as exc:  # a probe that breaks says the dependency is not back
            still = f"{type(exc).__name__}: {exc}"
        now = self.clock()
        if still is None:
            log.warning("%s answers again: the run goes on", breaker.dependency)
            self.on_event("resumed", dependency=breaker.dependency,
                          down_s=round(now - (breaker.opened_at or now), 3))  # fmt: skip
            breaker.opened_at, breaker.streak, breaker.probes = None, 0, 0
            return
        breaker.reason = still
        breaker.probes += 1
        breaker.next_probe_at = now + breaker.backoff_s()
        self.on_event("probe_failed", dependency=breaker.dependency, reason=still[:500],
                      next_probe_at=breaker.next_probe_at)  # fmt: skip

    def _pause_ended(self) -> None:
        if self._pause_started is not None:
            self.paused_s += self.clock() - self._pause_started
            self._pause_started = None

    def paused_now_s(self) -> float:
        """Seconds paused this session, the pause in progress included."""
        ongoing = self.clock() - self._pause_started if self._pause_started is not None else 0.0
        return self.paused_s + ongoing

    def describe(self) -> list[str]:
        """One line per dependency that is down: what, since when, next probe."""
        now = self.clock()
        return [
            f"PAUSED: {b.dependency} down since "
            f"{time.strftime('%H:%M:%S', time.localtime(b.opened_at or now))} "
            f"({b.reason[:160]}); next probe in {max(0.0, b.next_probe_at - now):.0f}s"
            for b in self.down()
        ]
