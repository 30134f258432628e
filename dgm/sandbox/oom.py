"""Whose OOM kill was it: the sandbox's own memory limit (the agent's) or an OOM killer
outside it (the host's, or a cgroup above the container: the world's).

Read from the container's memory cgroup, which the kernel writes and the agent cannot
(mounted read-only, read by the harness after it killed the sandbox user's processes):

- cgroup v2 `memory.events`: `oom` counts the times the container's own `memory.max` was
  reached and an allocation was about to fail; `oom_kill` counts its processes killed by
  any OOM killer. A kill with no own-limit event is from outside.
- cgroup v1 (no `oom` event): `memory.oom_control`'s `oom_kill`, and the peak usage
  (`memory.max_usage_in_bytes`) against the container's own `memory.limit_in_bytes`. A
  kill by its own limit happens only with usage at that limit; a kill while the peak stayed
  clearly below it came from outside.

Doubtful cases (a peak near the limit, counters unreadable) stay the agent's: an agent
must never be able to pass its own failure off as the world's.
"""

from __future__ import annotations

NEAR_LIMIT_BYTES = 8 * 2**20
NEAR_LIMIT_SHARE = 0.03
"""A peak within this much of the own limit (the larger) counts as having hit it."""

PROBE = (
    "cat /sys/fs/cgroup/memory/memory.oom_control /sys/fs/cgroup/memory.events"
    " /sys/fs/cgroup/pids/pids.events /sys/fs/cgroup/pids.events 2>/dev/null;"
    " for f in memory/memory.max_usage_in_bytes memory/memory.limit_in_bytes"
    " memory.peak memory.max; do [ -r /sys/fs/cgroup/$f ] &&"
    ' echo "$f $(cat /sys/fs/cgroup/$f)"; done; true'
)
"""Prints the counters `parse` reads (cgroup v1 paths, then v2)."""

_NAMES = {
    "oom_kill": "oom_kill",
    "oom": "oom",
    "max": "max",  # pids.events (and v2 memory.events): a limit reached
    "memory/memory.max_usage_in_bytes": "peak",
    "memory.peak": "peak",
    "memory/memory.limit_in_bytes": "limit",
    "memory.max": "limit",
}


def parse(output: str) -> dict[str, int]:
    """The counters in `PROBE`'s output; `limit` is absent when there is none ("max")."""
    counters: dict[str, int] = {}
    for line in output.splitlines():
        name, _, value = line.strip().partition(" ")
        key = _NAMES.get(name)
        if key is not None and value.strip().isdigit():
            counters[key] = int(value)
    return counters


def outside_kill(before: dict[str, int], after: dict[str, int]) -> str | None:
    """Why the OOM kills between two readings came from outside the container's own limit,
    or None (no kill, or its own limit's, or not provable)."""
    kills = after.get("oom_kill", 0) - before.get("oom_kill", 0)
    if kills <= 0:
        return None
    if "oom" in after:  # cgroup v2: the own-limit event is counted apart
        if after["oom"] > before.get("oom", 0):
            return None
        return (
            f"{kills} process(es) killed by an OOM killer outside the sandbox's own memory "
            "limit (memory.events: oom_kill rose, oom did not): the host ran out of memory"
        )
    peak, limit = after.get("peak"), after.get("limit")
    if peak is None:
        return None
    if limit is not None and limit < 2**60:
        margin = max(NEAR_LIMIT_BYTES, int(NEAR_LIMIT_SHARE * limit))
        if peak >= limit - margin:
            return None
        own = f"its own limit {limit / 2**20:.0f} MiB"
    else:
        own = "no limit of its own"
    return (
        f"{kills} process(es) killed by an OOM killer outside the sandbox's own memory limit "
        f"(peak {peak / 2**20:.0f} MiB, {own}): the host ran out of memory"
    )


def killed_from_outside(state: dict) -> str | None:
    """Why a sandbox container that died under a command (Docker's `State`) was killed from
    outside it, or None. Its PID 1 runs as root and the agent has no capability to signal
    it: only its own limit's OOM killer (Docker then says `OOMKilled`), the host's, or
    an operator can end it with SIGKILL."""
    if state.get("Running") or state.get("ExitCode") != 137 or state.get("OOMKilled"):
        return None
    return (
        "the sandbox container was killed from outside (exit 137, not by its own memory "
        "limit): the host's OOM killer or an operator"
    )
