"""Whose failure is it: the rules, one by one (no Docker, no network)."""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
import requests

import dgm.loop.failures as failures
from dgm.errors import InfrastructureFailure
from dgm.gateway.outages import OutageWatch
from dgm.loop.breakers import Breakers


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now

    def sleep(self, s: float) -> None:
        self.now += s


def test_one_jobs_failure_alone_is_the_agents() -> None:
    clock = Clock()
    watch = OutageWatch(clock=clock)
    watch.called("a")
    watch.failed("a", "openai", "HTTP 503")
    assert watch.outage_of("a") is None  # the provider may have refused its odd request
    watch.probed("openai", None)  # and it answers dgm's own probe
    assert watch.outage_of("a") is None


def test_other_jobs_failing_at_the_same_time_make_it_an_outage() -> None:
    clock = Clock()
    watch = OutageWatch(clock=clock)
    watch.failed("a", "openai", "HTTP 503")
    clock.now += 30
    watch.failed("b", "openai", "HTTP 503")
    found = watch.outage_of("a")
    assert found is not None and "1 other job(s)" in found[1]
    clock.now += 500  # far apart in time: nothing to do with each other
    watch.failed("c", "openai", "HTTP 503")
    assert watch.outage_of("c") is None


def test_a_failed_probe_near_the_failure_makes_it_an_outage() -> None:
    clock = Clock()
    watch = OutageWatch(clock=clock)
    watch.failed("a", "anthropic", "no answer within 300s")
    clock.now += 5
    watch.probed("anthropic", "connection failed")
    found = watch.outage_of("a")
    assert found is not None and "probe failed too" in found[1]
    assert watch.outage_of("other") is None  # a job that saw no failure is no outage


def test_a_flooding_job_owns_its_failures_even_when_others_fail_too() -> None:
    clock = Clock()
    watch = OutageWatch(clock=clock, flood_calls_per_minute=60)
    for _ in range(30):  # 30 calls in a second: a burst
        watch.called("flood")
    watch.failed("flood", "openai", "HTTP 429")
    watch.failed("victim", "openai", "HTTP 429")
    watch.probed("openai", "HTTP 429")
    assert watch.outage_of("flood") is None
    assert watch.outage_of("victim") is not None  # the flood hurt it: re-run it


def test_a_burst_stays_the_flooders_when_its_failure_comes_after_the_backoff() -> None:
    # Seen under load: the gateway's retries and backoff took longer than the burst window,
    # so the flood's final 429 was noted with no call in the last 5 s, and the probe (429'd
    # by the same flood) "corroborated" it.
    clock = Clock()
    watch = OutageWatch(clock=clock, flood_calls_per_minute=120)
    for _ in range(40):  # 40 calls in 4 s, then retries with backoff
        watch.called("flood")
        clock.now += 0.1
    clock.now += 20
    watch.probed("openai", "HTTP 429")
    watch.failed("flood", "openai", "HTTP 429")
    assert watch.outage_of("flood") is None
    for _ in range(8):  # an ordinary agent: a call every few seconds
        watch.called("calm")
        clock.now += 4
    watch.failed("calm", "openai", "HTTP 429")
    assert watch.outage_of("calm") is not None


def test_breakers_trip_after_three_in_a_row_probe_with_backoff_and_close() -> None:
    clock, events, answers = Clock(), [], ["down", "still down", None]
    breakers = Breakers({"docker": lambda: answers.pop(0)}, on_event=lambda k, **d:
                        events.append(k), clock=clock, sleep=clock.sleep)  # fmt: skip
    breakers.failed("docker", "x")
    breakers.succeeded()  # a recorded result ends the streak
    breakers.failed("docker", "x")
    breakers.failed("docker", "x")
    assert not breakers.held()
    breakers.failed("docker", "engine gone")
    assert breakers.held() and events == ["paused"]
    assert "PAUSED: docker down since" in breakers.describe()[0]
    waits = []
    while breakers.held():
        before = clock.now
        breakers.wait(lambda: False)
        waits.append(round(clock.now - before))
    assert waits == [5, 10, 20]  # exponential backoff between probes
    assert events == ["paused", "probe_failed", "probe_failed", "resumed"]
    assert breakers.paused_s == pytest.approx(35, abs=1)


def test_a_stop_request_ends_the_wait_at_once() -> None:
    clock = Clock()
    breakers = Breakers({}, clock=clock, sleep=clock.sleep, trip_after=1)
    breakers.failed("llm:openai", "down")
    breakers.wait(lambda: True)
    assert breakers.held() and clock.now == 1000.0


def test_sandbox_side_outages_are_named_by_what_the_harness_saw(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(failures, "docker_down", lambda: "the Docker engine does not answer")
    lost = requests.exceptions.ConnectionError("('Connection aborted.', FileNotFoundError(2))")
    assert failures.infrastructure_of(lost, tmp_path).dependency == "docker"

    monkeypatch.setattr(failures, "disk_usage", lambda path: (10 * 2**20, 100 * 2**30))
    full = OSError(errno.ENOSPC, "No space left on device")
    assert failures.infrastructure_of(full, tmp_path).dependency == "disk"
    monkeypatch.setattr(failures, "disk_usage", lambda path: (90 * 2**30, 100 * 2**30))
    assert failures.infrastructure_of(full, tmp_path) is None  # the agent's own quota

    ray_lost = type("NodeDiedError", (Exception,), {"__module__": "ray.exceptions"})("gone")
    assert failures.infrastructure_of(ray_lost, tmp_path).dependency == "ray"
    wrapped = RuntimeError("job failed")
    wrapped.__cause__ = InfrastructureFailure("disk", "full")
    assert failures.infrastructure_of(wrapped, tmp_path).dependency == "disk"


def test_an_agents_crash_is_never_an_outage_while_docker_answers(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setattr(failures, "docker_down", lambda: None)
    for exc in (RuntimeError("the agent's code raised"), ValueError("bad patch"),
                MemoryError(), TimeoutError("the agent was stopped at its limit")):  # fmt: skip
        assert failures.infrastructure_of(exc, tmp_path) is None


def test_status_says_what_is_down_since_when_and_the_next_probe() -> None:
    from dgm.report.outages import down_now

    events = [
        {"kind": "run_started", "ts": 1.0},
        {"kind": "paused", "ts": 10.0, "dependency": "docker", "reason": "gone",
         "next_probe_at": 15.0},
        {"kind": "paused", "ts": 11.0, "dependency": "llm:openai", "reason": "503",
         "next_probe_at": 16.0},
        {"kind": "probe_failed", "ts": 16.0, "dependency": "llm:openai", "reason": "still 503",
         "next_probe_at": 26.0},
        {"kind": "resumed", "ts": 20.0, "dependency": "docker"},
    ]  # fmt: skip
    assert down_now(events) == {
        "llm:openai": {"since": 11.0, "reason": "still 503", "next_probe_at": 26.0}
    }
    assert down_now([*events, {"kind": "run_started", "ts": 30.0}]) == {}  # a new session


def test_results_the_full_host_disk_refuses_pause_the_run_until_there_is_space(
    tmp_path: Path, tiny_seed: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The store refuses results ("database or disk is full") while the host measures its
    disk full: the jobs are re-queued, the run pauses on the disk breaker instead of
    stopping, and once there is space it ends as an undisturbed run does."""
    import sqlite3

    from dgm.config import RunConfig
    from dgm.loop.meta_loop import MetaLoop
    from dgm.store import Run
    from tests.loop.fake_jobs import FakeJobs

    def fresh(name: str) -> Run:
        config = RunConfig(name="t").with_overrides(
            {"strategy.name": "greedy", "workers": 1, "limits.max_evals": 12}
        )
        return Run.create(tmp_path / name, config, tiny_seed)

    calm = fresh("calm")
    MetaLoop(calm, jobs=FakeJobs(calm)).run()

    run = fresh("full")
    loop = MetaLoop(run, jobs=FakeJobs(run))
    loop.breakers.first_probe_s = 0.05
    refusals = {"left": 4}

    class FullStore:  # refuses 4 results, then the space is back
        def __getattr__(self, name: str):
            if name == "record_evaluation" and refusals["left"] > 0:
                refusals["left"] -= 1
                raise sqlite3.OperationalError("database or disk is full")
            return getattr(run, name)

    space = {"free": False}
    gib = 2**30
    monkeypatch.setattr(failures, "disk_usage",
                        lambda path: ((10 if space["free"] else 0) * gib, 100 * gib))  # fmt: skip
    loop.recorder.run = FullStore()  # type: ignore[assignment]
    loop.breakers.probes["disk"] = lambda: space.update(free=True)  # the space is back: None
    summary = loop.run()

    assert not summary.failed, summary.stop_reason
    kinds = [e["kind"] for e in run.events(limit=None)]
    assert "paused" in kinds and "resumed" in kinds
    pairs = sorted((e.node_id, e.task_id, e.resolved) for e in run.evaluations())
    assert pairs == sorted((e.node_id, e.task_id, e.resolved) for e in calm.evaluations())
