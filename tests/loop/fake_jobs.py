"""A JobFactory without Docker: deterministic results, real store, optional real gateway.

A node at depth d solves the first 2 + d tasks: the seed 2/6, children better.
Expansions add a file `gen_<job>.txt` to the parent's code (a real diff); every fourth
expansion of the same parent comes back empty, so failed expansions occur too.
"""

from __future__ import annotations

import hashlib
import random
import time
from pathlib import Path
from typing import Any

from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.expand import ExpandResult
from dgm.loop.meta_loop import JobFactory
from dgm.store import Evaluation, Run
from dgm.strategies import TaskPlan

TASKS = tuple(f"task-{i}" for i in range(6))


def _h(text: str) -> int:
    return int(hashlib.sha256(text.encode()).hexdigest(), 16)


class FakeJobs(JobFactory):
    def __init__(
        self,
        run: Run,
        delay: tuple[float, float] = (0.0, 0.0),
        gateway: Any = None,
        crash_on: str | None = None,
    ) -> None:
        self.run = run
        self.delay = delay
        self.gateway = gateway
        self.crash_on = crash_on
        self.calls: list[tuple[str, Any]] = []

    def task_plan(self) -> TaskPlan:
        return TaskPlan(TASKS)

    def _sleep(self, key: str) -> None:
        low, high = self.delay
        if high:
            time.sleep(random.Random(key).uniform(low, high))

    def run_budget_exhausted(self) -> bool:
        return self.gateway is not None and self.gateway.run_budget_exhausted()

    def _llm(self, job_id: str, node: int, task: str | None, role: str) -> None:
        if self.gateway is None:
            return
        from dgm.gateway import JobBinding

        request = {"messages": [{"role": "user", "content": f"{role} {task}"}], "max_tokens": 50}
        self.gateway.complete(JobBinding("t", job_id, str(node), task, role), request)

    def evaluate(self, job_id: str, node: int, code: Path, task: str, log_dir: Path) -> Evaluation:
        self.calls.append(("eval", (node, task)))
        if self.crash_on == "eval":
            raise RuntimeError("docker engine went away")
        self._sleep(job_id)
        self._llm(job_id, node, task, "solve")
        depth = self.run.node(node).depth
        solved = TASKS.index(task) < 2 + depth
        assert (code / "agent.toml").is_file()  # the node's code was checked out
        return Evaluation(node_id=node, task_id=task, benchmark="fake", resolved=solved,
                          job_id=job_id, log_dir=self.run.relative(log_dir))  # fmt: skip

    def expand(
        self, job_id: str, parent: int, code: Path, target: ImprovementTarget, log_dir: Path
    ) -> ExpandResult:
        self.calls.append(("expand", (parent, target.kind)))
        self._sleep(job_id)
        self._llm(job_id, parent, None, "diagnose")
        if job_id.endswith("-3"):
            return ExpandResult("empty_patch", "do something", reason="the agent changed nothing")
        name = f"gen_{job_id}.txt"
        diff = (
            f"diff --git a/{name} b/{name}\nnew file mode 100644\n--- /dev/null\n"
            f"+++ b/{name}\n@@ -0,0 +1 @@\n+{job_id}\n"
        )
        return ExpandResult("ok", f"improve {target.kind}", diff)
