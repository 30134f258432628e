"""Ownership labels on containers, and removal of the ones whose owner died.

Every container carries the owning process id, that process's start time and the
host's boot id. A container is an orphan when that exact process no longer runs
(pid gone, pid reused by another process, or the host rebooted). Containers of a
live process, and containers made on another host, are left alone.
"""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass
from functools import cache
from pathlib import Path

LABEL_SANDBOX = "dgm.sandbox"
LABEL_RUN = "dgm.run"
LABEL_JOB = "dgm.job"
LABEL_PID = "dgm.pid"
LABEL_PID_START = "dgm.pid_start"
LABEL_BOOT = "dgm.boot"
LABEL_HOST = "dgm.host"


@cache
def boot_id() -> str:
    try:
        return Path("/proc/sys/kernel/random/boot_id").read_text().strip()
    except OSError:
        return "unknown"


def process_start(pid: int) -> str | None:
    """The process's start time in clock ticks since boot, or None if it is gone."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    # Field 22; the command name (field 2) may contain spaces, so split after its ')'.
    return stat.rsplit(")", 1)[1].split()[19]


def owner_labels() -> dict[str, str]:
    """Labels that tie a container to this process."""
    pid = os.getpid()
    return {
        LABEL_SANDBOX: "1",
        LABEL_PID: str(pid),
        LABEL_PID_START: process_start(pid) or "",
        LABEL_BOOT: boot_id(),
        LABEL_HOST: socket.gethostname(),
    }


def is_orphan(labels: dict[str, str]) -> bool:
    if labels.get(LABEL_HOST) != socket.gethostname():
        return False  # another host's container: we cannot tell whether its owner lives
    if labels.get(LABEL_BOOT) != boot_id():
        return True
    try:
        pid = int(labels.get(LABEL_PID, ""))
    except ValueError:
        return True
    return process_start(pid) != labels.get(LABEL_PID_START)


@dataclass(frozen=True)
class SweepResult:
    removed: list[str]
    kept: list[str]


def list_containers(client: object, label: str) -> list[dict]:
    """Containers with `label` (`key` or `key=value`), as the engine's list entries.

    The low-level list call, not `containers.list()`: that one inspects each container
    after listing, and fails when another process removes one in between."""
    return client.api.containers(all=True, filters={"label": label})  # type: ignore[attr-defined]


def remove_containers(client: object, entries: list[dict]) -> list[str]:
    """Force-remove listed containers; ones already gone are fine. Returns their names."""
    import docker

    names = []
    for entry in entries:
        try:
            client.api.remove_container(entry["Id"], force=True)  # type: ignore[attr-defined]
        except docker.errors.NotFound:
            pass
        names.append(_name(entry))
    return names


def sweep(client: object | None = None, everything: bool = False) -> SweepResult:
    """Remove dgm containers whose owning process is gone (all of them if `everything`)."""
    import docker

    client = client or docker.from_env()
    entries = list_containers(client, LABEL_SANDBOX)
    doomed = [e for e in entries if everything or is_orphan(e.get("Labels") or {})]
    kept = [_name(e) for e in entries if e not in doomed]
    return SweepResult(remove_containers(client, doomed), kept)


def _name(entry: dict) -> str:
    names = entry.get("Names") or [entry["Id"][:12]]
    return names[0].lstrip("/")
