"""`RayExecutor`: the same jobs, run as Ray tasks on any node of a Ray cluster.

Each job is a task needing one unit of a custom resource (`dgm_slot` by default) that a
node offers per sandbox it may run at once, so the cluster bounds the sandboxes per
machine. The head (this process) stays the only writer: a job leaves as a parcel (the
job's plain data plus tarballs of the folders it reads, parcel.py), and
its result and log folder come back and are recorded here, through the job's own
`finish`, exactly as with the thread executor.

A node that dies mid-job loses nothing: Ray runs the task again on another node (up to
`max_retries` times) under the same job id and log folder, and the head records the one
result that comes back. Each finished job's node is recorded as a `job_placed` event.
"""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import Any

from dgm.errors import DgmError
from dgm.executors.distributed.cluster import SLOT_RESOURCE, connect, require_ray, total_slots
from dgm.executors.distributed.parcel import Parcel, Returned, pack, receive
from dgm.executors.distributed.worker import run_parcel, warm
from dgm.executors.protocol import Completion, JobCrashed, Outcome, Ticket, Work

Placed = Callable[[str, Returned, float], None]
"""(job id, what its node sent back, seconds from submit to its result here)."""


class RayExecutor:
    def __init__(
        self,
        workers: int,
        *,
        address: str | None = None,
        gateway_url: str | None = None,
        slot_resource: str = SLOT_RESOURCE,
        max_retries: int = 3,
        on_placed: Placed | None = None,
    ) -> None:
        ray = require_ray()
        self._owns_ray = connect(address)
        self._ray = ray
        if total_slots(slot_resource) < 1:
            if self._owns_ray:
                ray.shutdown()
            raise DgmError(
                f"no node of the Ray cluster offers sandbox slots (resource {slot_resource})",
                f"start nodes with: ray start ... --resources '{{\"{slot_resource}\": 2}}'",
            )
        self.workers = workers
        self.gateway_url = gateway_url
        self.on_placed = on_placed
        self._task = ray.remote(run_parcel).options(
            num_cpus=0, resources={slot_resource: 1}, max_retries=max_retries,
            retry_exceptions=False,
        )  # fmt: skip
        self._head = ray.get_runtime_context().get_node_id()
        self._warm_up(min(workers, total_slots(slot_resource)), slot_resource)
        self._pending: dict[Any, tuple[Ticket, Work, Parcel, float]] = {}
        self._lock = threading.Lock()
        self._wake = threading.Event()
        self._stopping = threading.Event()
        self._done: queue.Queue[Completion] = queue.Queue()
        self._t0 = time.monotonic()
        self._waiter = threading.Thread(target=self._wait_loop, name="dgm-ray-wait", daemon=True)
        self._waiter.start()

    def _warm_up(self, count: int, slot_resource: str) -> list[str]:
        """One worker process per slot the run will use, started and loaded now, so the
        first jobs do not pay for it; the nodes that answered."""
        task = self._ray.remote(warm).options(num_cpus=0, resources={slot_resource: 1})
        return self._ray.get([task.remote() for _ in range(count)], timeout=300)

    def now(self) -> float:
        return time.monotonic() - self._t0

    def submit(self, ticket: Ticket) -> None:
        work = ticket.job
        if not isinstance(work, Work):
            raise TypeError("the ray executor runs Work (plain data), not closures")
        started = self.now()
        if not hasattr(work.payload, "log_dir"):  # a job that could not be built: fails here
            self._done.put(Completion(ticket, work.run_here(), started, self.now()))
            return
        try:
            parcel = pack(work.payload)
        except Exception as exc:  # its inputs are unreadable: the harness broke
            self._done.put(Completion(ticket, self._finish(work, None, exc), started, self.now()))
            return
        ref = self._task.remote(parcel, work.run, self.gateway_url, self._head)
        with self._lock:
            self._pending[ref] = (ticket, work, parcel, started)
        self._wake.set()

    def next_completion(self) -> Completion:
        return self._done.get()

    def _wait_loop(self) -> None:
        while not self._stopping.is_set():
            with self._lock:
                refs = list(self._pending)
            if not refs:
                self._wake.wait(0.5)
                self._wake.clear()
                continue
            ready, _ = self._ray.wait(refs, num_returns=1, timeout=0.2)
            for ref in ready:
                with self._lock:
                    ticket, work, parcel, started = self._pending.pop(ref)
                outcome = self._collect(ref, work, parcel, started)
                self._done.put(Completion(ticket, outcome, started, self.now()))

    def _collect(self, ref: Any, work: Work, parcel: Parcel, started: float) -> Outcome:
        try:
            returned: Returned = self._ray.get(ref)
        except Exception as exc:  # the job raised, or every node that ran it died
            return self._finish(work, None, getattr(exc, "cause", None) or exc)
        try:
            result = receive(parcel, returned)
            if self.on_placed is not None:
                self.on_placed(parcel.job_id, returned, self.now() - started)
        except Exception as exc:
            return self._finish(work, None, exc)
        return self._finish(work, result, None)

    @staticmethod
    def _finish(work: Work, result: Any, error: BaseException | None) -> Outcome:
        try:
            return work.finish(result, error)
        except Exception as exc:
            return JobCrashed(f"{type(exc).__name__}: {exc}")

    def shutdown(self) -> None:
        self._stopping.set()
        self._wake.set()
        with self._lock:
            lost = list(self._pending)
        for ref in lost:  # their jobs stay `running` in the store and re-run on resume
            self._ray.cancel(ref, force=True)
        self._waiter.join(timeout=10)
        if self._owns_ray:
            self._ray.shutdown()

    def __enter__(self) -> RayExecutor:
        return self

    def __exit__(self, *exc: object) -> None:
        self.shutdown()


def ray_executor_for(workers: int, run: Any, jobs: Any) -> RayExecutor:
    """The executor `[executor] kind = "ray"` asks for: the cluster at `address`, the head's
    gateway as the workers reach it, each finished job's node recorded in the run."""
    config = run.config.executor

    def placed(job_id: str, returned: Returned, head_seconds: float) -> None:
        node = returned.node
        run.event(
            "job_placed", job_id=job_id, node=node["name"], node_id=node["id"], ip=node["ip"],
            images=returned.images, environments=returned.environments,
            run_s=round(returned.run_seconds, 3),
            node_s=round(returned.seconds, 3), head_s=round(head_seconds, 3),
        )  # fmt: skip

    executor = RayExecutor(
        workers, address=config.address, slot_resource=config.slot_resource,
        max_retries=config.max_retries, on_placed=placed,
    )  # fmt: skip
    gateway = getattr(jobs, "gateway", None)
    if gateway is not None and gateway.port is not None:
        host = gateway.host
        if host in ("0.0.0.0", "::", ""):  # listening everywhere: give the nodes our address
            host = require_ray().util.get_node_ip_address()
        executor.gateway_url = f"http://{host}:{gateway.port}/v1"
    return executor
