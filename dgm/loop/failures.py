"""Whose failure is it, on the sandbox side: what a job's exception says about the world.

Infrastructure only from what an agent cannot cause: the harness's own call to the Docker
engine failing to connect (an agent in its sandbox has no way to the engine), an image
missing, the host measuring its own disk full, a Ray node lost, an OOM killer outside the
sandbox's own limit (raised by the sandbox itself: dgm/sandbox/oom.py). A container the agent
crashed, memory it exhausted inside its limit, its own disk quota filled, its timeout:
those come back as results (or harness errors that are not outages) and stay the agent's.
"""

from __future__ import annotations

import errno
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from dgm.errors import InfrastructureFailure

MIN_FREE_BYTES = int(os.environ.get("DGM_MIN_FREE_DISK_MB", "256")) * 2**20
MIN_FREE_SHARE = 0.02
"""Below this much free space on the run's file system (or 2% of a smaller one) the host
counts as out of disk."""
RAY_LOST = ("NodeDiedError", "WorkerCrashedError", "ObjectLostError", "OwnerDiedError",
            "ActorDiedError", "RayActorError", "ObjectReconstructionFailedError")  # fmt: skip
DOCKER_DOWN = ("connection refused", "connection aborted", "no such file or directory",
               "cannot reach the docker engine", "error while fetching server api version",
               "broken pipe", "remotedisconnected", "connection reset")  # fmt: skip


def _chain(exc: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def disk_usage(path: Path) -> tuple[int, int]:
    """(free, total) bytes of the file system holding `path`."""
    usage = shutil.disk_usage(path)
    return usage.free, usage.total


def disk_full(path: Path) -> str | None:
    """Why the host's disk under `path` counts as full, or None."""
    free, total = disk_usage(path)
    if free < min(MIN_FREE_BYTES, MIN_FREE_SHARE * total):
        return f"the host disk holding {path} has {free / 2**20:.0f} MiB free"
    return None


MIN_AVAILABLE_MEMORY = int(os.environ.get("DGM_MIN_FREE_MEMORY_MB", "256")) * 2**20


def memory_low(meminfo: Path = Path("/proc/meminfo")) -> str | None:
    """Why the host counts as out of memory now (MemAvailable below 256 MiB,
    `DGM_MIN_FREE_MEMORY_MB`), or None (also where there is no /proc/meminfo)."""
    try:
        fields = dict(line.split(":", 1) for line in meminfo.read_text().splitlines())
        available = int(fields["MemAvailable"].split()[0]) * 1024
    except (OSError, KeyError, ValueError):
        return None
    if available < MIN_AVAILABLE_MEMORY:
        return f"the host has {available / 2**20:.0f} MiB of memory available"
    return None


def docker_down() -> str | None:
    """None when the Docker engine answers the harness now (a fresh client, DOCKER_HOST
    honoured), else why not."""
    try:
        import docker

        client = docker.from_env(timeout=10)
        try:
            client.ping()
        finally:
            client.close()
    except Exception as exc:
        return f"the Docker engine does not answer: {type(exc).__name__}: {exc}"[:300]
    return None


def infrastructure_of(exc: BaseException, run_dir: Path) -> InfrastructureFailure | None:
    """The outage behind a job's exception, or None when it is not one."""
    for error in _chain(exc):
        if isinstance(error, InfrastructureFailure):
            return error
        name, module = type(error).__name__, type(error).__module__
        text = f"{name}: {error}"
        if module.startswith("ray") and name in RAY_LOST:
            return InfrastructureFailure("ray", f"a Ray node was lost: {text}"[:500])
        if name == "ImageNotFound" or "image not found" in text.lower():
            return InfrastructureFailure("docker", f"a sandbox image is missing: {text}"[:500])
        if isinstance(error, OSError) and error.errno == errno.ENOSPC:
            full = disk_full(run_dir)
            if full:  # the agent's own disk quota fills inside its container, not here
                return InfrastructureFailure("disk", f"the host disk is full: {full}")
        lowered = text.lower()
        talking_to_docker = module.startswith(("docker", "requests", "urllib3")) or (
            name == "SandboxError"
        )
        if talking_to_docker and any(marker in lowered for marker in DOCKER_DOWN):
            down = docker_down()
            why = down or "the harness lost its connection to the Docker engine mid-job"
            return InfrastructureFailure("docker", f"{why} ({text})"[:500])
    if "docker" in str(exc).lower() or "sandbox" in str(exc).lower():
        down = docker_down()  # the harness cannot reach the engine now: no agent did that
        if down:
            return InfrastructureFailure("docker", f"{down} ({exc})"[:500])
    return None
