"""Where jobs run. Every executor speaks protocol.py (`submit`, `next_completion`, `now`);
local.py has the thread and process pools, distributed/ the Ray executor and what it
needs on the other machines (parcels, relays, node images, the cluster). Imports no loop
code: the loop builds its jobs (`Work`) and hands them here.
"""

from __future__ import annotations

from typing import Any

from dgm.errors import ConfigError
from dgm.executors.local import ProcessExecutor, ThreadExecutor
from dgm.executors.protocol import (
    Completion,
    Evaluated,
    Executor,
    Expanded,
    ExpansionFailed,
    InfraFailed,
    JobCrashed,
    Outcome,
    Ticket,
    Work,
)

__all__ = [
    "EXECUTORS",
    "Completion",
    "Evaluated",
    "Executor",
    "Expanded",
    "ExpansionFailed",
    "InfraFailed",
    "JobCrashed",
    "Outcome",
    "ProcessExecutor",
    "ThreadExecutor",
    "Ticket",
    "Work",
    "make_executor",
]

EXECUTORS = {"thread": ThreadExecutor, "process": ProcessExecutor}


def make_executor(kind: str, workers: int, run: Any = None, jobs: Any = None) -> Any:
    """`thread` (the default: jobs wait on Docker and the LLM, not on Python), `process`,
    or, given the run and its job factory, `ray`."""
    if kind == "ray" and run is not None:
        from dgm.executors.distributed.ray_executor import ray_executor_for  # Ray is optional

        return ray_executor_for(workers, run, jobs)
    if kind not in EXECUTORS:
        raise ConfigError(f"unknown executor {kind!r}", f"use one of: {', '.join(EXECUTORS)}")
    return EXECUTORS[kind](workers)
