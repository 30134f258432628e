"""What a Ray task does on a worker node: one parcel in, one `Returned` out.

    images   the job's sandbox images present on this node (present / loaded / built)
    envs     agent environments this node lacks are received from the head (node_envs.py)
    sweep    containers of jobs lost on this node (their worker died) removed, once per
             worker process
    relay    one per endpoint of the job: a unix socket here, forwarding to the head's
             gateway with the job's token (relay.py)
    run      the job's own module-level function, on the unpacked job
    return   the result, the log folder as a tarball, the node that ran it

Nothing here writes anywhere but a scratch folder of this node, removed afterwards.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dgm.executors.distributed.node_envs import head_source
from dgm.executors.distributed.node_images import ensure_images
from dgm.executors.distributed.parcel import Parcel, Returned, pack_logs, scratch_root, unpack
from dgm.executors.distributed.relay import JobRelay
from dgm.sandbox.agent_env import set_remote_source

_swept = threading.Event()


def node_identity() -> dict[str, str]:
    """This node's Ray id, address and name (`DGM_NODE_NAME`, else host/short id)."""
    import ray

    node_id = ray.get_runtime_context().get_node_id()
    name = os.environ.get("DGM_NODE_NAME") or f"{socket.gethostname()}/{node_id[:8]}"
    return {"id": node_id, "ip": ray.util.get_node_ip_address(), "name": name}


def warm() -> str:
    """Start a worker process and load what a job needs, before the first job: a Ray
    worker's first start (a Python process, dgm's imports) costs seconds."""
    import dgm.jobs.evaluate  # noqa: F401
    import dgm.jobs.expand  # noqa: F401

    return node_identity()["name"]


def run_parcel(
    parcel: Parcel,
    run: Callable[[Any], Any],
    gateway_url: str | None,
    head_node: str | None,
) -> Returned:
    started = time.monotonic()
    node = node_identity()
    fetch = _fetch_from(head_node) if head_node and head_node != node["id"] else None
    images = ensure_images(parcel.images, fetch)
    environments: dict[str, str] = {}
    set_remote_source(head_source(head_node, environments) if fetch is not None else None)
    if parcel.images and not _swept.is_set():
        _sweep_lost_containers()
    relays: list[JobRelay] = []

    def relay_socket(field: str, access: Any) -> str:
        if gateway_url is None:
            raise RuntimeError("the head's gateway serves no TCP port for remote jobs")
        from dgm.gateway import short_socket_path

        path = short_socket_path(f"{parcel.job_id}-{field}-{uuid.uuid4().hex}")
        relays.append(JobRelay(path, gateway_url, access.token).start())
        return str(path)

    with tempfile.TemporaryDirectory(prefix="dgm-ray-job-", dir=scratch_root()) as tmp:
        try:
            job, log_dir = unpack(parcel, Path(tmp), relay_socket)
            ran = time.monotonic()
            result = run(job)
            run_seconds = time.monotonic() - ran
        finally:
            for relay in relays:
                relay.stop()
        logs = pack_logs(log_dir)
    seconds = time.monotonic() - started
    return Returned(result, logs, str(log_dir), node, images, seconds, run_seconds, environments)


def _fetch_from(head_node: str) -> Callable[[str], bytes]:
    def fetch(tag: str) -> bytes:
        import ray
        from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

        from dgm.executors.distributed.node_images import save_image

        on_head = NodeAffinitySchedulingStrategy(node_id=head_node, soft=False)
        remote = ray.remote(save_image).options(num_cpus=0, scheduling_strategy=on_head)
        return ray.get(remote.remote(tag))

    return fetch


def _sweep_lost_containers() -> None:
    """Containers whose worker process died (a node lost mid-job, then back) go first."""
    _swept.set()
    try:
        from dgm.sandbox.orphans import sweep

        sweep()
    except Exception:  # noqa: BLE001 - no engine: the job's own sandbox says so
        pass
