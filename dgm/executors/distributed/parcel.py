"""A job packed for a node that shares no filesystem with the head, and its results back.

    parcel = pack(payload)               # head: the folders the job reads, as tarballs
    job, place = unpack(parcel, scratch)  # worker: the same job, its paths on this node
    returned = Returned(result, pack_logs(place), ...)
    result = receive(parcel, returned)   # head: the logs into the job's own log folder

A job names its inputs by path (plain data): the agent's code (the archive's checkout of
its commit), the task's source and, for an expansion, the parent's code. Those folders
travel as tarballs; the log folder comes back as one, and the head extracts it (plain
files only) into the log folder it chose for the job, where it records the result.
Endpoint descriptions (`LLMAccess`) are rewritten by the worker to its relay's socket.
"""

from __future__ import annotations

import dataclasses
import io
import os
import tarfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from dgm.jobs.evaluate import EvalJob
from dgm.jobs.expand import ExpandJob
from dgm.jobs.llm_access import LLMAccess
from dgm.sandbox import tarsafe
from dgm.store.records import Evaluation

SHIPPED_PATHS: dict[type, tuple[str, ...]] = {
    EvalJob: ("agent.path", "task.source"),
    ExpandJob: ("parent_code", "history_dir"),
}
"""Dotted fields naming a folder (or file) the job reads (None: nothing to ship); other
job types name theirs in a class attribute `ship_paths`."""
MAX_LOG_BYTES = 512 * 1024**2


@dataclass(frozen=True)
class Parcel:
    job_id: str
    """The loop's job id (the job's log folder's name)."""
    payload: Any
    trees: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    """Dotted field -> (the file's name, or "" for a folder; a tar of it)."""
    images: tuple[str, ...] = ()
    """Docker images (full tags) the job's sandboxes use."""


@dataclass(frozen=True)
class Returned:
    """What a worker sends back: the job's result, its log folder, and where it ran."""

    result: Any
    logs: bytes
    worker_log_dir: str
    node: dict[str, str]
    images: dict[str, str] = field(default_factory=dict)
    """Image tag -> how this node had it: present, loaded (from the head), built."""
    seconds: float = 0.0
    """The task's whole time on the node: images, unpacking, relays, the job, packing."""
    run_seconds: float = 0.0
    """The job's own time (its `run`), the part any executor spends."""
    environments: dict[str, str] = field(default_factory=dict)
    """Agent environment key -> `loaded` (from the head) for each this node lacked."""


def job_id_of(payload: Any) -> str:
    log_dir = getattr(payload, "log_dir", None)
    return Path(log_dir).name if log_dir else str(getattr(payload, "id", "job"))


def shipped_paths(payload: Any) -> tuple[str, ...]:
    return SHIPPED_PATHS.get(type(payload)) or tuple(getattr(type(payload), "ship_paths", ()))


def images_of(payload: Any) -> tuple[str, ...]:
    if isinstance(payload, EvalJob) and payload.backend == "docker":
        return tuple(dict.fromkeys((payload.task.image, payload.task.judge_image)))
    if isinstance(payload, ExpandJob) and payload.settings.backend == "docker":
        return (payload.settings.image,)
    return ()


def pack(payload: Any) -> Parcel:
    trees = {}
    for name in shipped_paths(payload):
        value = _get(payload, name)
        if value is None:  # an optional input the job goes without (an expansion's history)
            continue
        path = Path(value)
        trees[name] = ("" if path.is_dir() else path.name, _tar(path))
    return Parcel(job_id_of(payload), payload, trees, images_of(payload))


def unpack(parcel: Parcel, scratch: Path, relay_socket: Any) -> tuple[Any, Path]:
    """The job with its folders under `scratch` and a fresh log folder; `relay_socket(field,
    access)` serves an endpoint on this node and returns its socket path."""
    payload = parcel.payload
    for index, (name, (file_name, data)) in enumerate(sorted(parcel.trees.items())):
        dest = scratch / f"in{index}"
        dest.mkdir(parents=True)
        with tarfile.open(fileobj=io.BytesIO(data)) as tar:
            tar.extractall(dest, filter="data")  # no absolute paths, no links leaving dest
        payload = _set(payload, name, str(dest / file_name if file_name else dest))
    log_dir = scratch / "log" / parcel.job_id
    log_dir.mkdir(parents=True)
    changes: dict[str, Any] = {"log_dir": str(log_dir)}
    for f in dataclasses.fields(payload):
        access = getattr(payload, f.name)
        if isinstance(access, LLMAccess):
            changes[f.name] = _relayed(access, relay_socket(f.name, access))
    return dataclasses.replace(payload, **changes), log_dir


def pack_logs(log_dir: Path) -> bytes:
    """The log folder's contents (no entry for the folder itself: names stay relative)."""
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        for child in sorted(log_dir.iterdir()):
            tar.add(str(child), arcname=child.name)
    return buf.getvalue()


def receive(parcel: Parcel, returned: Returned) -> Any:
    """Extract the returned logs into the job's log folder on the head (plain files only)
    and point the result at them."""
    log_dir = Path(parcel.payload.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    tarsafe.safe_extract(io.BytesIO(returned.logs), log_dir, max_bytes=MAX_LOG_BYTES)
    result = returned.result
    if isinstance(result, Evaluation):  # its artefacts, with the gateway's llm.jsonl, are here
        result = dataclasses.replace(result, log_dir=str(log_dir))
    return result


def _relayed(access: LLMAccess, socket_path: str) -> LLMAccess:
    """The job's endpoint served by the relay: the sandbox mounts the relay's socket where
    it mounted the gateway's; a call from the job itself goes to the relay's socket."""
    url = f"unix://{access.container_socket_path or socket_path}"
    env = {**access.env, "DGM_LLM_URL": url}
    return dataclasses.replace(access, url=url, env=env, socket_path=socket_path)


def _tar(path: Path) -> bytes:
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w") as tar:
        tar.add(str(path), arcname="." if path.is_dir() else path.name)
    return buf.getvalue()


def _get(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = getattr(obj, part)
    return obj


def _set(obj: Any, dotted: str, value: Any) -> Any:
    head, _, rest = dotted.partition(".")
    if not rest:
        return dataclasses.replace(obj, **{head: value})
    return dataclasses.replace(obj, **{head: _set(getattr(obj, head), rest, value)})


def scratch_root() -> Path:
    return Path(os.environ.get("DGM_WORKER_SCRATCH", "/tmp"))
