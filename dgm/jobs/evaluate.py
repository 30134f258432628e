"""The eval job: node N on task T (see ../../../shared/ARCHITECTURE.md, "Evaluate").

    container 1 (agent)  N's code read-only, the workspace without hidden tests or
                         reference, the gateway socket; runs `solve`; harness diffs.
    container 2 (judge)  fresh: workspace + patch + hidden tests; test command with a
                         hard timeout; parsed into a Verdict.

`evaluate_task(job)` is pure in the sense the executors need: `EvalJob` is plain data
(JSON round-trips; it reaches the LLM through `job.llm`, an endpoint description the
caller bound on its gateway), and its result is the store's `Evaluation`, plain data
again and recorded as it is. The LLM usage is the gateway's to count: the caller adds it
with `with_usage` once it released the job.
The job id is a hash of the inputs that decide the result, so a re-run after a crash is
the same job.

Artefacts in the job's log dir: patch.diff, test_output.txt, agent_output.txt,
trajectory.json (if the agent wrote one), llm.jsonl (the gateway's exchanges), result.json.
"""

from __future__ import annotations

import hashlib
import json
import shutil
import tempfile
import time
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path
from typing import Any

from dgm.benchmarks.registry import benchmark_of
from dgm.benchmarks.task import Task, Verdict
from dgm.jobs.agent_env_change import spec_of
from dgm.jobs.agent_run import AgentRunRequest, run_agent
from dgm.jobs.llm_access import LLMAccess
from dgm.jobs.tamper_scan import scan_diff
from dgm.paths import builtin_agents_dir
from dgm.sandbox import ResourceLimits
from dgm.sandbox.orphans import LABEL_JOB, LABEL_RUN
from dgm.store.records import Evaluation

BUILTINS = ("oracle", "null")


@dataclass(frozen=True)
class AgentRef:
    """Where the agent's code is. `commit` (an archive commit) makes the job id independent
    of the folder the code was checked out into; `builtin` names a reference agent."""

    path: str
    commit: str | None = None
    builtin: str | None = None

    @classmethod
    def reference(cls, name: str) -> AgentRef:
        return cls(path=str(builtin_agents_dir() / name), builtin=name)


@dataclass(frozen=True)
class EvalJob:
    agent: AgentRef
    task: Task
    log_dir: str
    model: str | None = None
    limits: dict[str, Any] = field(default_factory=dict)
    """Sandbox limits: memory, cpus, pids, disk (dgm.sandbox.ResourceLimits fields)."""
    agent_timeout_s: int = 600
    max_steps: int = 50
    node_id: int | None = None
    stage: int = 1
    run: str = ""
    llm: LLMAccess | None = None
    """How the agent reaches the LLM (bound by the caller); None for agents that call none."""
    environment: dict[str, Any] | None = None
    """A frozen run's seed environment (`[environment] frozen`); None: the agent's own."""
    backend: str = "docker"
    rejudge: bool = False
    """The node's own diff carries a tamper-scan warning: every pass is judged a second
    time with extra mutated copies before it counts (as for a warned solution patch)."""

    @property
    def id(self) -> str:
        """Hash of what decides the result; the log dir, checkout folder, the endpoint and
        where the sandbox runs do not count."""
        agent = asdict(self.agent)
        if self.agent.commit or self.agent.builtin:
            agent.pop("path")
        inputs = {**self.to_dict(), "agent": agent}
        for key in ("log_dir", "llm", "backend"):
            inputs.pop(key)
        if not self.rejudge:  # job ids (hashed from this) stay what they were before
            inputs.pop("rejudge")
        if inputs["environment"] is None:  # ids of runs from before environments stay
            inputs.pop("environment")
        digest = hashlib.sha256(json.dumps(inputs, sort_keys=True).encode()).hexdigest()
        return f"eval-{digest[:20]}"

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["task"] = self.task.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> EvalJob:
        agent, task = AgentRef(**data["agent"]), Task.from_dict(data["task"])
        llm = LLMAccess.from_dict(data.get("llm"))
        return cls(**{**data, "agent": agent, "task": task, "llm": llm})


@dataclass
class EvalContext:
    """Overrides for where the sandbox runs (tests); a job needs no live resource."""

    backend: str | None = None


def evaluate_task(job: EvalJob, ctx: EvalContext | None = None) -> Evaluation:
    """Run the agent on the task, judge its patch, write the artefacts, return the outcome.

    Agent and test failures (crash, timeout, a patch that does not apply) are outcomes;
    infrastructure failures (no Docker, a missing image) raise `DgmError`.
    """
    started = time.monotonic()
    task, job_id = job.task, job.id
    backend = (ctx.backend if ctx else None) or job.backend
    log_dir = Path(job.log_dir)
    log_dir.mkdir(parents=True, exist_ok=True)
    limits = ResourceLimits(**job.limits)
    labels = {LABEL_RUN: job.run or "eval", LABEL_JOB: job_id}
    benchmark = benchmark_of(task)
    with tempfile.TemporaryDirectory(prefix="dgm-eval-") as tmp:
        workspace = Path(tmp) / "work"
        base = benchmark.prepare_workspace(task, workspace)
        extras = {}
        if job.agent.builtin == "oracle":
            extras["reference.diff"] = benchmark.reference_patch(task)
        request = AgentRunRequest(
            agent_dir=Path(job.agent.path),
            image=task.image,
            task_file=task.agent_view(job.max_steps, job.agent_timeout_s),
            base_commit=base or str(task.base_commit),
            timeout_s=job.agent_timeout_s,
            limits=limits,
            workspace=workspace if base else None,
            workspace_in_image=None if base else task.workspace_in_image,
            task_extras=extras,
            labels=labels,
            environment=spec_of(job.environment),
        )
        endpoint = job.llm if job.agent.builtin is None else None
        agent = run_agent(request, log_dir / "out", endpoint, backend)
    (log_dir / "patch.diff").write_text(agent.patch)
    (log_dir / "agent_output.txt").write_text(agent.output)
    if agent.environment is not None:  # what the agent ran with: requirements, wheel hashes
        (log_dir / "environment.json").write_text(json.dumps(agent.environment, indent=2))
    if agent.trajectory is not None:
        shutil.copyfile(agent.trajectory, log_dir / "trajectory.json")
    verdict, test_output = benchmark.judge(task, agent.patch, limits, backend, labels)
    (log_dir / "test_output.txt").write_text(test_output)
    warnings = scan_diff(agent.patch, role="solution")  # static: warnings, not a verdict
    rejudged = None
    if (warnings or job.rejudge) and verdict.resolved and not verdict.tampered:
        # A warning costs the agent: its pass counts only if a second judge, with fresh
        # and extra mutated copies of the real tests, agrees.
        again, again_output = benchmark.judge(task, agent.patch, limits, backend, labels,
                                              extra_copies=True)  # fmt: skip
        (log_dir / "rejudge_output.txt").write_text(again_output)
        rejudged = rejudge_record(again, warnings, job.rejudge)
        verdict = merge_rejudge(verdict, again)
    error = agent.error or verdict.error
    empty = not agent.patch.strip()
    if empty and verdict.resolved and not error:
        # A few Exercism refactoring stubs already pass their tests: doing nothing is
        # never a solution (as in the SWE-bench harness).
        error = "the agent changed nothing: an empty patch is never resolved"
    if agent.timed_out and not error:
        error = f"the agent was stopped at its {job.agent_timeout_s} s limit"
    total = time.monotonic() - started
    canaries = _canaries(verdict)  # recorded so that no prompt ever shows them (diagnose.py)
    outcome = Evaluation(
        node_id=job.node_id,
        task_id=task.id,
        benchmark=task.benchmark,
        resolved=verdict.resolved and not verdict.tampered and agent.error is None and not empty,
        stage=job.stage,
        empty_patch=empty,
        tests_passed=verdict.tests_passed,
        tests_total=verdict.tests_total,
        agent_seconds=round(agent.seconds, 3),
        judge_seconds=round(verdict.seconds, 3),
        error=error,
        log_dir=str(log_dir),
        job_id=job_id,
        details={
            "tests": verdict.tests,
            "usage": dict(NO_USAGE),
            "language": task.language,
            "test_seconds": round(verdict.test_seconds, 3),
            **({"out_skipped": list(agent.out_skipped)} if agent.out_skipped else {}),
            "harness_seconds": round(max(0.0, total - agent.seconds - verdict.test_seconds), 3),
            "agent_exit_code": agent.exit_code,
            "agent_timed_out": agent.timed_out,
            "judge_exit_code": verdict.exit_code,
        }
        | ({"tamper_warnings": warnings} if warnings else {})
        | ({"rejudge": rejudged} if rejudged else {})
        | ({"tamper_evidence": _evidence(verdict)} if verdict.tampered else {})
        | ({"canaries": canaries} if canaries else {}),
        tampered=verdict.tampered,
    )
    (log_dir / "result.json").write_text(json.dumps(outcome.to_dict(), indent=2))
    return outcome


NO_USAGE = {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cost_usd": 0.0}


def usage_of(gateway: Any, job_id: str) -> dict[str, Any]:
    """The job's LLM usage as its gateway counted it (after the job was released)."""
    tally = gateway.totals().by_job.get(job_id) if gateway is not None else None
    if tally is None:
        return dict(NO_USAGE)
    return {
        "calls": tally.calls,
        "input_tokens": tally.input_tokens,
        "cached_tokens": tally.cached_tokens,
        "cache_write_tokens": tally.cache_write_tokens,
        "output_tokens": tally.output_tokens,
        "cost_usd": round(tally.cost_usd, 6),
    }


def with_usage(outcome: Evaluation, usage: dict[str, Any]) -> Evaluation:
    """The outcome with the gateway's usage figures, its result.json rewritten to match."""
    cost = float(usage.get("cost_usd", 0.0))
    outcome = replace(outcome, cost_usd=cost, details={**outcome.details, "usage": usage})
    if outcome.log_dir and Path(outcome.log_dir).is_dir():
        (Path(outcome.log_dir) / "result.json").write_text(json.dumps(outcome.to_dict(), indent=2))
    return outcome


def _evidence(verdict: Verdict) -> str:
    """What the judge saw, never empty for a tampered verdict: for people (`dgm show`, the
    report), never for a prompt."""
    return str(verdict.details.get("tamper_evidence") or "the judge gave no details")[:2_000]


def rejudge_record(again: Verdict, warnings: list[dict[str, Any]], node_warned: bool) -> dict:
    """What `dgm show` and the report say about a re-judge: why, and what it found."""
    why = sorted({str(w.get("kind")) for w in warnings}) + (["node diff"] if node_warned else [])
    outcome = "tampered" if again.tampered else "clean" if again.resolved else "not resolved"
    evidence = str(again.details.get("tamper_evidence") or again.error or "")[:300]
    return {"why": why, "outcome": outcome, "evidence": evidence}


def merge_rejudge(first: Verdict, again: Verdict) -> Verdict:
    """A pass stands only if the re-judge passes too; tampering found by either counts."""
    details = dict(first.details)
    if again.tampered:
        details["tamper_evidence"] = again.details.get("tamper_evidence", "the re-judge")
    canaries = [*(first.details.get("canaries") or []), *(again.details.get("canaries") or [])]
    details["canaries"] = canaries
    error = first.error
    if not again.resolved and not error:
        error = f"the re-judge did not confirm the pass: {again.error or 'a test failed'}"
    resolved = first.resolved and again.resolved
    tampered = first.tampered or again.tampered
    return replace(first, resolved=resolved, tampered=tampered, details=details, error=error)


def _canaries(verdict: Verdict) -> list[str]:
    names = verdict.details.get("canaries")
    return [n for n in names if isinstance(n, str)] if isinstance(names, list) else []
