"""The meta loop's link to the world: benchmark tasks, real eval and expand jobs, and the
checks that run before any money is spent.

    jobs = RunJobs(run, gateway)     # after preflight(run.config)
    MetaLoop(run, jobs=jobs).run()
"""

from __future__ import annotations

import os
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from dgm.benchmarks import load_benchmark
from dgm.benchmarks.staged import stages_for
from dgm.benchmarks.task_images import missing_images
from dgm.config import RunConfig
from dgm.errors import BudgetExceeded, DgmError, NotFoundError, SandboxError
from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.evaluate import AgentRef, EvalContext, EvalJob, evaluate_task
from dgm.jobs.expand import ExpandResult, ExpandSettings, run_expand
from dgm.loop.meta_loop import JobFactory
from dgm.sandbox import Limits
from dgm.sandbox.orphans import LABEL_PID
from dgm.sandbox.session import choose_backend
from dgm.store import Evaluation, Run
from dgm.strategies import TaskPlan

EXPAND_IMAGE = "runtime"


class RunJobs(JobFactory):
    def __init__(self, run: Run, gateway: Any) -> None:
        self.run = run
        self.config = run.config
        self.gateway = gateway
        bench = self.config.benchmark
        self.benchmark = load_benchmark(bench.name, bench.data, bench.test_timeout_s)
        self.stages = stages_for(bench, self.benchmark)
        self.stage_of = {t: s.index for s in self.stages for t in s.task_ids}
        self.backend = choose_backend(self.config.sandbox.backend)
        self.limits = Limits.from_config(self.config.sandbox)
        tasks = [self.benchmark.task(t) for s in self.stages for t in s.task_ids]
        self.expand_image = EXPAND_IMAGE
        if self.backend == "docker":
            # Pin image tags for this session: a recipe rebuilt mid-run changes nothing here.
            from dgm.benchmarks.task_images import pin_images
            from dgm.sandbox import images

            tasks = pin_images(tasks)
            self.expand_image = images.resolve(EXPAND_IMAGE)
        self.tasks = {t.id: t for t in tasks}

    def task_plan(self) -> TaskPlan:
        stage2 = self.stages[1].task_ids if len(self.stages) > 1 else ()
        return TaskPlan(self.stages[0].task_ids, stage2, self.config.benchmark.stage2_threshold)

    def evaluate(self, job_id: str, node: int, code: Path, task: str, log_dir: Path) -> Evaluation:
        bench = self.config.benchmark
        job = EvalJob(
            agent=AgentRef(str(code), commit=self.run.node(node).commit),
            task=self.tasks[task],
            log_dir=str(log_dir),
            limits=asdict(self.limits),
            agent_timeout_s=bench.task_timeout_s,
            max_steps=bench.max_steps,
            node_id=node,
            stage=self.stage_of.get(task, 1),
            run=self.config.name,
        )
        outcome = evaluate_task(job, EvalContext(self.gateway, self.backend))
        if not outcome.resolved and self.run_budget_exhausted():
            # Cut short by the run's dollar cap: no evidence against the agent. The job
            # is not recorded and runs again on a resume with a higher cap.
            raise BudgetExceeded("the run's dollar budget was reached during this task")
        evaluation = outcome.to_evaluation(node, self.run.relative(log_dir))
        return replace(evaluation, job_id=job_id)

    def expand(
        self, job_id: str, parent: int, code: Path, target: ImprovementTarget, log_dir: Path
    ) -> ExpandResult:
        expand = self.config.expand
        settings = ExpandSettings(
            run=self.config.name,
            image=self.expand_image,
            max_steps=expand.max_steps,
            timeout_s=expand.timeout_s,
            smoke_test=expand.smoke_test,
            limits=self.limits,
            backend=self.backend,
        )
        result = run_expand(job_id, parent, code, target, log_dir, self.gateway, settings)
        if result.status != "ok" and self.run_budget_exhausted():
            raise BudgetExceeded("the run's dollar budget was reached during this expansion")
        return result

    def run_budget_exhausted(self) -> bool:
        return self.gateway is not None and self.gateway.run_budget_exhausted()

    def task_statement(self, task_id: str) -> str | None:
        task = self.tasks.get(task_id)
        return task.problem_statement if task else None

    def hidden_tests(self, task_id: str) -> str | None:
        """The hidden tests' sources, for a diagnosis allowed to see them (DGM's way)."""
        task = self.tasks.get(task_id)
        if task is None:
            return None
        root = Path(task.source)
        parts = []
        for name in task.hidden_files:
            path = root / name
            if path.is_file():
                parts.append(f"## {name}\n{path.read_text(errors='replace')[:20_000]}")
        return "\n".join(parts) or None

    def cancel(self) -> int:
        """Remove this process's containers (a second Ctrl-C)."""
        if self.backend != "docker":
            return 0
        import docker

        from dgm.sandbox.orphans import list_containers, remove_containers

        client = docker.from_env()
        return len(remove_containers(client, list_containers(client, f"{LABEL_PID}={os.getpid()}")))


def preflight(config: RunConfig) -> None:
    """Everything a run needs, checked before the run directory is made and before the
    first LLM call: benchmark data and task ids, the models and their API keys, Docker,
    images. One error lists all the missing images, each with its fix."""
    from dgm.gateway import Gateway

    bench = config.benchmark
    benchmark = load_benchmark(bench.name, bench.data, bench.test_timeout_s)
    if "scripted/capability" in (config.llm.model, config.llm.diagnose_model):
        from dgm.scripted.dry_run import register

        register(benchmark.task)
    # Building the backends checks model strings, API keys and prices; no port is opened.
    Gateway.from_config(
        config, run=config.name, log_dir=None, on_usage=None, port=None
    ).start().stop()
    tasks = [benchmark.task(t) for s in stages_for(bench, benchmark) for t in s.task_ids]
    problems: list[str] = []
    if choose_backend(config.sandbox.backend) == "docker":
        from dgm.sandbox.docker_client import docker_available

        reason = docker_available()
        if reason is not None:
            raise SandboxError(f"Docker is not available: {reason}", "start the Docker engine, "
                               "or set sandbox.backend = 'local' (weaker isolation)")  # fmt: skip
        problems += missing_images(tasks)
        try:
            from dgm.sandbox import images

            images.resolve(EXPAND_IMAGE)
        except NotFoundError as exc:
            problems.append(f"{EXPAND_IMAGE}: {exc.hint}")
    if problems:
        raise DgmError(
            "the run cannot start: " + "; ".join(dict.fromkeys(problems)),
            "build the missing images with `dgm sandbox build`",
        )
