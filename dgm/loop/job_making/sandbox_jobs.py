"""The meta loop's link to the world: benchmark tasks and the real eval and expand jobs.

    jobs = SandboxJobs(run, gateway)     # after preflight(run.config)
    MetaLoop(run, jobs=jobs).run()

Jobs leave here as plain data (`EvalJob`, `ExpandJob`) bound to the gateway by endpoint
descriptions; the gateway, its keys and the store stay in this process.
"""

from __future__ import annotations

import os
import tempfile
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

from dgm.benchmarks import load_benchmark
from dgm.benchmarks.stages import stages_for
from dgm.errors import BudgetExceeded
from dgm.jobs import run_job
from dgm.jobs.diagnose import ImprovementTarget
from dgm.jobs.evaluate import AgentRef, EvalJob, usage_of, with_usage
from dgm.jobs.expand import ExpandJob, ExpandResult, ExpandSettings
from dgm.jobs.expand.improve import procedure_for
from dgm.jobs.expand.job import EXPAND_IMAGE
from dgm.jobs.hidden_redaction import hidden_texts
from dgm.jobs.llm_access import LLMAccess
from dgm.loop.job_making.factory import JobFactory
from dgm.sandbox import ResourceLimits
from dgm.sandbox.orphans import LABEL_PID
from dgm.sandbox.session import choose_backend
from dgm.store import Evaluation, Run
from dgm.strategies import TaskPlan


def llm_outage_of(gateway: Any, job_id: str) -> tuple[str, str] | None:
    """The gateway's word on whether `job_id` met a provider outage; the job's record is
    then forgotten, so that its re-run starts clean."""
    if gateway is None:
        return None
    found = gateway.outage_of(job_id)
    gateway.outages.forget(job_id)
    return found


def llm_probes(gateway: Any) -> dict[str, Any]:
    """One probe per provider the run's models use (`llm:<provider>`)."""
    if gateway is None:
        return {}
    from dgm.gateway.backends import provider_of

    models = {gateway.model, gateway.diagnose_model}
    return {f"llm:{provider_of(m)[0]}": (lambda m=m: gateway.probe(m)) for m in models}


class SandboxJobs(JobFactory):
    run_job = staticmethod(run_job)

    def __init__(self, run: Run, gateway: Any) -> None:
        self.run = run
        self.config = run.config
        self.gateway = gateway
        self._endpoints: dict[str, list[Any]] = {}
        bench = self.config.benchmark
        self.benchmark = load_benchmark(bench.name, bench.data, bench.test_timeout_s)
        self.stages = stages_for(bench, self.benchmark)
        self.stage_of = {t: s.index for s in self.stages for t in s.task_ids}
        self.backend = choose_backend(self.config.sandbox.backend)
        self.limits = ResourceLimits.from_config(self.config.sandbox)
        tasks = [self.benchmark.task(t) for s in self.stages for t in s.task_ids]
        self.expand_image = EXPAND_IMAGE
        if self.backend == "docker":
            # Pin image tags for this session: a recipe rebuilt mid-run changes nothing here.
            from dgm.benchmarks.task_images import pin_images
            from dgm.sandbox import images

            tasks = pin_images(tasks)
            self.expand_image = images.resolve(EXPAND_IMAGE)
        self.tasks = {t.id: t for t in tasks}
        self.frozen_env = frozen_environment(run) if self.config.environment.frozen else None

    def task_plan(self) -> TaskPlan:
        stage2 = self.stages[1].task_ids if len(self.stages) > 1 else ()
        return TaskPlan(self.stages[0].task_ids, stage2, self.config.benchmark.stage2_threshold)

    # -- jobs as data, bound to the gateway ------------------------------------------------
    def eval_job(self, job_id: str, node: int, code: Path, task: str, log_dir: Path) -> EvalJob:
        bench = self.config.benchmark
        record = self.run.node(node)
        job = EvalJob(
            agent=AgentRef(str(code), commit=record.commit),
            task=self.tasks[task],
            log_dir=str(log_dir),
            limits=asdict(self.limits),
            agent_timeout_s=bench.task_timeout_s,
            max_steps=bench.max_steps,
            node_id=node,
            stage=self.stage_of.get(task, 1),
            run=self.config.name,
            backend=self.backend,
            # a tamper-scan warning on the node's own diff: its passes are re-judged
            rejudge=bool(record.meta.get("tamper_warnings")),
            environment=self.frozen_env,
        )
        llm = self._bind(job_id, node, task, "solve", log_dir, "llm.jsonl")
        return replace(job, llm=llm)

    def expand_job(
        self,
        job_id: str,
        parent: int,
        code: Path,
        target: ImprovementTarget,
        log_dir: Path,
        history_dir: Path | None = None,
    ) -> ExpandJob:
        expand = self.config.expand
        settings = ExpandSettings(
            run=self.config.name,
            image=self.expand_image,
            max_steps=expand.max_steps,
            timeout_s=expand.timeout_s,
            smoke_test=expand.smoke_test,
            limits=self.limits,
            backend=self.backend,
            mode=self.config.self_improve.mode,
            environment=self.frozen_env,
        )
        history = str(history_dir) if history_dir is not None else None
        job = ExpandJob(
            job_id, parent, str(code), target, str(log_dir), settings, history_dir=history
        )
        if target.kind == "harvest":  # makes no LLM call: no endpoint at all
            return job
        if procedure_for(settings.mode, code) == "agent":  # the parent's own `improve`
            own = self._bind(job_id, parent, None, "improve", log_dir, "llm-improve.jsonl")
            return replace(job, improve_llm=own)
        diagnose = None
        if job.needs_diagnosis():
            diagnose = self._bind(
                job_id, parent, target.task_id, "diagnose", log_dir, "llm-diagnose.jsonl", True
            )
        improve = self._bind(
            job_id, parent, None, "self_improve", log_dir, "llm-self_improve.jsonl"
        )
        return replace(job, diagnose_llm=diagnose, self_improve_llm=improve)

    def _bind(
        self, job_id: str, node: int, task: str | None, role: str, log_dir: Path, log: str,
        on_host: bool = False,
    ) -> LLMAccess | None:  # fmt: skip
        """One endpoint for one role of a job: a unix socket served for that job alone (in
        the container, or on the host for a call the job makes itself)."""
        if self.gateway is None:
            return None
        from dgm.gateway import JobBinding, short_socket_path

        binding = JobBinding(self.config.name, job_id, node, task, role)
        suffix = {"solve": "", "self_improve": "-si", "diagnose": "-dg", "improve": "-im"}[role]
        extra: dict[str, Any] = {"container_socket_path": None} if on_host else {}
        endpoint = self.gateway.bind_job(
            binding, socket_path=short_socket_path(f"{job_id}{suffix}"), log_path=log_dir / log,
            **extra,
        )  # fmt: skip
        # Keyed by the job's log folder: one per job of this loop, and part of the job.
        self._endpoints.setdefault(str(log_dir), []).append(endpoint)
        return LLMAccess.of(endpoint)

    def release(self, job: Any) -> None:
        for endpoint in self._endpoints.pop(job.log_dir, []):
            self.gateway.unbind(endpoint)

    def settle(self, job: Any, result: Any) -> Evaluation | ExpandResult:
        if isinstance(result, Evaluation):
            job_id = Path(job.log_dir).name  # the loop's job id names the job's log folder
            outcome = with_usage(result, usage_of(self.gateway, job_id))
            if not outcome.resolved and self.run_budget_exhausted():
                # Cut short by the run's dollar cap: no evidence against the agent. The job
                # is not recorded and runs again on a resume with a higher cap.
                raise BudgetExceeded("the run's dollar budget was reached during this task")
            where = self.run.relative(Path(job.log_dir))
            return replace(outcome, node_id=job.node_id, log_dir=where, job_id=job_id)
        if result.status != "ok" and self.run_budget_exhausted():
            raise BudgetExceeded("the run's dollar budget was reached during this expansion")
        return result

    def run_budget_exhausted(self) -> bool:
        return self.gateway is not None and self.gateway.run_budget_exhausted()

    def outage_of(self, job: Any) -> tuple[str, str] | None:
        return llm_outage_of(self.gateway, Path(job.log_dir).name)

    def spent_usd(self, job: Any) -> float:
        return float(usage_of(self.gateway, Path(job.log_dir).name).get("cost_usd", 0.0))

    def new_attempt(self, job: Any) -> None:
        if self.gateway is not None:
            self.gateway.new_attempt(Path(job.log_dir).name)

    def probes(self) -> dict[str, Any]:
        return llm_probes(self.gateway)

    def replay_miss(self, job_id: str) -> str | None:
        return None if self.gateway is None else self.gateway.replay_miss(job_id)

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

    def hidden_sources(self, task_id: str) -> list[str] | None:
        """The pristine hidden test sources, to redact them from what a diagnosis sees."""
        task = self.tasks.get(task_id)
        return hidden_texts(task) if task is not None else None

    def cancel(self) -> int:
        """Remove this process's containers (a second Ctrl-C)."""
        if self.backend != "docker":
            return 0
        import docker

        from dgm.sandbox.orphans import list_containers, remove_containers

        client = docker.from_env()
        return len(remove_containers(client, list_containers(client, f"{LABEL_PID}={os.getpid()}")))


def frozen_environment(run: Run) -> dict[str, Any]:
    """The seed's `[environment]`, as job data: a frozen run keeps it for every node."""
    from dgm.jobs.agent_env_change import spec_data
    from dgm.sandbox.env_requirements import environment_of

    with tempfile.TemporaryDirectory(prefix="dgm-seed-env-") as tmp:
        return spec_data(environment_of(run.checkout(0, Path(tmp) / "seed")))
