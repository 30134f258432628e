"""Outages as a person reads them: what is down now (since when, next probe), how long the
run stood paused, which jobs met an outage and what it cost (`dgm status`, `dgm show JOB`)."""

from __future__ import annotations

import time
from typing import Any


def _when(ts: float) -> str:
    return time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(ts))


def down_now(events: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Dependency -> its open pause (`since`, `reason`, `next_probe_at`), from the events
    in order; a `resumed` (or a new session) closes it."""
    down: dict[str, dict[str, Any]] = {}
    for event in events:
        kind, dependency = event.get("kind"), event.get("dependency")
        if kind == "run_started":
            down.clear()  # a new session starts with every breaker closed
        elif kind == "paused":
            down[dependency] = {"since": event["ts"], "reason": event.get("reason", ""),
                                "next_probe_at": event.get("next_probe_at")}  # fmt: skip
        elif kind == "probe_failed" and dependency in down:
            down[dependency] |= {"reason": event.get("reason", ""),
                                 "next_probe_at": event.get("next_probe_at")}  # fmt: skip
        elif kind == "resumed":
            down.pop(dependency, None)
    return down


def outage_lines(run: Any) -> list[str]:
    """`dgm status`'s lines about outages; none when the run never met one."""
    events = run.events(limit=None, kinds=["run_started", "paused", "probe_failed", "resumed",
                                           "job_infra", "run_stopped"])  # fmt: skip
    infra = [e for e in events if e["kind"] == "job_infra"]
    if not infra and not any(e["kind"] == "paused" for e in events):
        return []
    lines = []
    for dependency, pause in down_now(events).items():
        probe = pause.get("next_probe_at")
        nxt = f"; next probe {_when(probe)}" if probe else ""
        lines.append(f"PAUSED    {dependency} down since {_when(pause['since'])} "
                     f"({str(pause['reason'])[:200]}){nxt}")  # fmt: skip
    paused = sum(e.get("paused_s", 0.0) for e in events if e["kind"] == "run_stopped")
    pauses = sum(1 for e in events if e["kind"] == "paused")
    by_dependency: dict[str, int] = {}
    for event in infra:
        by_dependency[event["dependency"]] = by_dependency.get(event["dependency"], 0) + 1
    shown = ", ".join(f"{d} {n}" for d, n in sorted(by_dependency.items()))
    lines.append(f"outages   {len(infra)} job(s) re-queued ({shown}); {pauses} pause(s), "
                 f"{paused / 60:.1f} min paused in finished sessions")  # fmt: skip
    lines.append(f"lost      ${run.lost_to_outages_usd():.2f} lost to outages (counted in spend)")
    probes = run.usage_by("role").get("probe")
    if probes:  # the breakers' and the gateway's own calls asking a provider if it is back
        lines.append(f"probes    {int(probes['calls'])} call(s) asking the provider whether it "
                     f"answers: ${probes['cost_usd'] or 0:.4f} (counted in spend)")  # fmt: skip
    if infra:
        last = infra[-1]
        lines.append(f"last      {_when(last['ts'])} {last['job']}: {last['reason'][:200]}")
    return lines


def job_lines(run: Any, job_id: str) -> list[str]:
    """`dgm show RUN JOB`: the job's state and every outage it met."""
    job = run.job(job_id)
    lines = [f"job       {job.id} ({job.kind})", f"state     {job.state}",
             f"attempts  {job.attempts}"]  # fmt: skip
    if job.error:
        lines.append(f"error     {job.error}")
    if job.result:
        lines.append(f"result    {job.result}")
    for event in run.events(limit=None, kinds=["job_infra"]):
        if event.get("job") == job_id:
            lines.append(f"outage    {_when(event['ts'])} {event['dependency']}: "
                         f"{event['reason']} (lost ${event.get('lost_usd', 0):.4f})")  # fmt: skip
    return lines
