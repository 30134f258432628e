"""A JobFactory without Docker: deterministic results, real store, optional real gateway.

A node at depth d solves the first 2 + d tasks: the seed 2/6, children better.
Expansions add a file `gen_<job>.txt` to the parent's code (a real diff); about one
expansion in four comes back empty, so failed expansions occur too.

Jobs are plain data run by the module-level `run_fake_job`, so they run the same in a
thread or in a worker process; with a gateway, each job calls the LLM through the unix
socket the gateway serves for it (an endpoint description, as the real jobs do).
"""

from __future__ import annotations

import hashlib
import random
import time
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.evaluate import usage_of
from dgm.jobs.expand import ExpandResult
from dgm.jobs.llm_access import LLMAccess, chat
from dgm.loop.job_making.factory import JobFactory
from dgm.loop.job_making.sandbox_jobs import llm_outage_of, llm_probes
from dgm.store import Evaluation, Run
from dgm.strategies import TaskPlan

TASKS = tuple(f"task-{i}" for i in range(6))


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


@dataclass(frozen=True)
class FakeJob:
    kind: str
    job_id: str
    node: int
    depth: int
    code: str
    log_dir: str
    task: str | None = None
    target_kind: str = ""
    delay: tuple[float, float] = (0.0, 0.0)
    crash: bool = False
    llm: LLMAccess | None = None
    empty_from_depth: int | None = None
    twins: bool = False
    gives_up: bool = False
    """On a failed LLM call the agent gives up (as the seed does) instead of crashing."""
    calls: int = 1
    """LLM calls the agent makes (a flooding agent makes many, as fast as it can)."""

    @property
    def id(self) -> str:
        return self.job_id


def run_fake_job(job: FakeJob) -> dict[str, Any]:
    low, high = job.delay
    if high:
        time.sleep(random.Random(job.job_id).uniform(low, high))
    if job.crash:
        raise RuntimeError("docker engine went away")
    assert (Path(job.code) / "agent.toml").is_file()  # the node's code was checked out
    if job.llm is not None:
        role = "solve" if job.kind == "eval" else "diagnose"
        try:
            for _ in range(job.calls):
                chat(job.llm, {"messages": [{"role": "user", "content": f"{role} {job.task}"}],
                               "max_tokens": 50})  # fmt: skip
        except Exception:
            if not job.gives_up:
                raise
            if job.kind == "eval":
                return {"resolved": False}
            return {"status": "empty_patch", "reason": "the agent gave up: the LLM failed"}
    if job.kind == "eval":
        return {"resolved": TASKS.index(job.task) < 2 + job.depth}
    barren = job.empty_from_depth is not None and job.depth >= job.empty_from_depth
    if barren or (job.empty_from_depth is None and _h(job.job_id) % 4 == 3):
        return {"status": "empty_patch", "reason": "the agent changed nothing"}
    # twins: every child of a parent gets the same change (the scripted dry run's way)
    mark = f"child-of-{job.node}" if job.twins else job.job_id
    name = f"gen_{mark}.txt"
    diff = (
        f"diff --git a/{name} b/{name}\nnew file mode 100644\n--- /dev/null\n"
        f"+++ b/{name}\n@@ -0,0 +1 @@\n+{mark}\n"
    )
    return {"status": "ok", "diff": diff, "statement": f"improve {job.target_kind}"}


class FakeJobs(JobFactory):
    run_job = staticmethod(run_fake_job)

    def __init__(
        self,
        run: Run,
        delay: tuple[float, float] = (0.0, 0.0),
        gateway: Any = None,
        crash_on: str | None = None,
        empty_from_depth: int | None = None,
        twins: bool = False,
        gives_up: bool = False,
        calls: int = 1,
    ) -> None:
        """`empty_from_depth`: nodes this deep make only empty patches (no node: one
        expansion in four is empty); `twins`: a parent's children all get the same code."""
        self.run = run
        self.delay = delay
        self.gateway = gateway
        self.crash_on = crash_on
        self.empty_from_depth = empty_from_depth
        self.twins = twins
        self.gives_up = gives_up
        self.llm_calls = calls
        self.calls: list[tuple[str, Any]] = []
        self.histories: list[Path | None] = []
        """The history folder each expand job got, in order."""
        self._endpoints: dict[str, Any] = {}

    def task_plan(self) -> TaskPlan:
        return TaskPlan(TASKS)

    def run_budget_exhausted(self) -> bool:
        return self.gateway is not None and self.gateway.run_budget_exhausted()

    def replay_miss(self, job_id: str) -> str | None:
        return None if self.gateway is None else self.gateway.replay_miss(job_id)

    def outage_of(self, job: FakeJob) -> tuple[str, str] | None:
        return llm_outage_of(self.gateway, job.job_id)

    def probes(self) -> dict[str, Any]:
        return llm_probes(self.gateway)

    def new_attempt(self, job: FakeJob) -> None:
        if self.gateway is not None:
            self.gateway.new_attempt(job.job_id)

    def spent_usd(self, job: FakeJob) -> float:
        return float(usage_of(self.gateway, job.job_id)["cost_usd"]) if self.gateway else 0.0

    def _job(self, kind: str, job_id: str, node: int, code: Path, log_dir: Path, **kw: Any):
        job = FakeJob(kind, job_id, node, self.run.node(node).depth, str(code), str(log_dir),
                      delay=self.delay, crash=self.crash_on == kind,
                      empty_from_depth=self.empty_from_depth, twins=self.twins,
                      gives_up=self.gives_up, calls=self.llm_calls, **kw)  # fmt: skip
        if self.gateway is None:
            return job
        from dgm.gateway import JobBinding, short_socket_path

        role = "solve" if kind == "eval" else "diagnose"
        binding = JobBinding("t", job_id, node, kw.get("task"), role)
        endpoint = self.gateway.bind_job(
            binding, socket_path=short_socket_path(job_id), container_socket_path=None
        )
        self._endpoints[job_id] = endpoint
        return replace(job, llm=LLMAccess.of(endpoint))

    def eval_job(self, job_id: str, node: int, code: Path, task: str, log_dir: Path) -> FakeJob:
        self.calls.append(("eval", (node, task)))
        return self._job("eval", job_id, node, code, log_dir, task=task)

    def expand_job(
        self, job_id: str, parent: int, code: Path, target: ImprovementTarget, log_dir: Path,
        history_dir: Path | None = None,
    ) -> FakeJob:  # fmt: skip
        self.calls.append(("expand", (parent, target.kind)))
        self.histories.append(history_dir)
        return self._job("expand", job_id, parent, code, log_dir, target_kind=target.kind)

    def release(self, job: FakeJob) -> None:
        endpoint = self._endpoints.pop(job.job_id, None)
        if endpoint is not None:
            self.gateway.unbind(endpoint)

    def settle(self, job: FakeJob, result: dict[str, Any]) -> Any:
        if job.kind == "eval":
            return Evaluation(node_id=job.node, task_id=job.task, benchmark="fake",
                              resolved=result["resolved"], job_id=job.job_id,
                              log_dir=self.run.relative(Path(job.log_dir)))  # fmt: skip
        if result["status"] != "ok":
            return ExpandResult(result["status"], "do something", reason=result["reason"])
        return ExpandResult("ok", result["statement"], result["diff"])
