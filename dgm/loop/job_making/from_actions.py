"""Actions become jobs: ids hashed from their inputs, a row in the store's job ledger before
each starts, the node's code checked out once, and the `Work` an executor runs.

Job id = hash of its inputs, readable prefix first. An expansion's inputs are the parent,
its ordinal (how many expansions of that parent the search state has seen), what the
improvement target is about (its kind and task, not its evidence) and, for GEA, the
group whose pooled experience is in the target, so a re-run after a crash is the same
job; jobs in flight when a process died are submitted again under their own ids (see
resume.py).
"""

from __future__ import annotations

import hashlib
import json
import logging
import random
import shutil
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from dgm.errors import DgmError, InfrastructureFailure
from dgm.executors import Outcome, Work
from dgm.jobs.diagnose import ImprovementTarget, choose_target
from dgm.loop.failures import infrastructure_of
from dgm.loop.group_experience import group_experience_from_run
from dgm.loop.harvest_target import harvest_target
from dgm.loop.history_writer import budget_left, write_history
from dgm.loop.job_making.factory import JobFactory
from dgm.loop.recording import Recorder, describe_error
from dgm.store import Evaluation, Run
from dgm.strategies import Evaluate, Expand, NodeId, SearchState

log = logging.getLogger(__name__)


def eval_job_id(node: NodeId, task: str) -> str:
    digest = hashlib.sha256(json.dumps([str(node), task]).encode()).hexdigest()[:10]
    return f"eval-{node}-{digest}"


def expand_job_id(
    parent: NodeId, ordinal: int, target: dict[str, Any], group: Sequence[NodeId] = ()
) -> str:
    # What the target is about, not its evidence: trajectories and test output hold
    # timings that differ on every run, and a replay must make the same ids. A GEA group
    # is part of the inputs. Ids hash as text, as they did when nodes had string ids.
    about = {"kind": target.get("kind"), "task_id": target.get("task_id")}
    hashed = [str(parent), ordinal, about] + ([[str(g) for g in group]] if group else [])
    inputs = json.dumps(hashed, sort_keys=True)
    return f"expand-{parent}-{hashlib.sha256(inputs.encode()).hexdigest()[:10]}"


@dataclass(frozen=True)
class Unbuildable:
    """The payload of a job that could not even be built (checkout failed, ...)."""

    error: str


def _fail(payload: Unbuildable) -> None:
    raise DgmError(payload.error)


class ActionJobs:
    def __init__(self, run: Run, factory: JobFactory, recorder: Recorder) -> None:
        self.run = run
        self.factory = factory
        self.recorder = recorder
        self.state: SearchState | None = None
        self._resume_ids: dict[Any, list[str]] = {}
        self._checkout_lock = threading.Lock()
        self.last_job_id = ""
        """The id of the job `make` built last (the job order names it)."""
        self.elapsed_s: Callable[[], float] | None = None
        """The run's wall-clock time so far (all sessions), for the history's budget."""
        self.breakers: Any = None
        """The loop's circuit breakers (breakers.py): told of every outage and recovery."""
        self._spent: dict[str, float] = {}

    def resume(self, action: Expand | Evaluate, job_id: str) -> None:
        """Let the next job for `action` reuse `job_id` (it was in flight at a crash)."""
        self._resume_ids.setdefault(action, []).append(job_id)

    def make(self, action: Expand | Evaluate) -> Work:
        run, factory = self.run, self.factory
        resumed = self._resume_ids.get(action)
        if isinstance(action, Evaluate):
            job_id = resumed.pop(0) if resumed else eval_job_id(action.node, action.task)
            self.last_job_id = job_id
            inputs = {"node": action.node, "task": action.task}
            refused = self._start(job_id, "eval", inputs, action)
            if refused is not None:
                return refused
            try:
                log_dir = run.log_dir("eval", job_id)
                code = self.node_code(action.node)
                job = factory.eval_job(job_id, action.node, code, action.task, log_dir)
            except Exception as exc:  # the harness broke, not the agent
                return self._broken(job_id, exc)
            return Work(
                factory.run_job, job, lambda r, e: self._settle_eval(action, job_id, job, r, e)
            )
        if resumed:
            job_id = resumed.pop(0)
            inputs = run.job(job_id).inputs
        else:
            ordinal = self._ordinal(action.parent)
            target = self._choose_target(action.parent, ordinal)
            group = list(action.group)
            if group:  # GEA: the group's pooled experience reaches the diagnosis
                members = (action.parent, *group)
                target = replace(target, group_experience=group_experience_from_run(run, members))
            job_id = expand_job_id(action.parent, ordinal, target.to_dict(), group)
            inputs = {"parent": action.parent, "ordinal": ordinal, "target": target.to_dict(),
                      "group": group}  # fmt: skip
        self.last_job_id = job_id
        refused = self._start(job_id, "expand", inputs, action)
        if refused is not None:
            return refused
        target = ImprovementTarget(**inputs["target"])
        parent = action.parent
        try:
            log_dir = run.log_dir("expand", job_id)
            code = self.node_code(action.parent)
            history = self._history(parent, int(inputs.get("ordinal") or 0), log_dir)
            job = factory.expand_job(job_id, parent, code, target, log_dir, history_dir=history)
        except Exception as exc:
            return self._broken(job_id, exc)
        where = run.relative(log_dir)

        def settle(result: Any, error: BaseException | None) -> Outcome:
            settled = self._settle(job, result, error)
            # A child already made keeps its diff, outage or not: only its evaluation follows.
            kept = not isinstance(settled, BaseException) and settled.status == "ok"
            outage = None if kept else self._outage(job_id, job, settled)
            if outage is not None:
                if self.run.infra_requeues(job_id) < self.run.config.limits.max_requeues:
                    return self._requeue(action, job_id, job, outage)
                return self.recorder.gave_up(job_id, outage)
            if isinstance(settled, BaseException):
                return self.recorder.crash(job_id, settled)
            try:
                recorded = self.recorder.expansion(job_id, parent, target, where, settled)
            except InfrastructureFailure as full:  # the store refused it: the disk is full
                return self._requeue(action, job_id, job, full)
            self._healthy()
            return recorded

        return Work(factory.run_job, job, settle)

    def _settle_eval(
        self, action: Evaluate, job_id: str, job: Any, result: Any, error: Any
    ) -> Outcome:
        settled = self._settle(job, result, error)
        outage = self._outage(job_id, job, settled)
        if outage is not None:
            if self.run.infra_requeues(job_id) < self.run.config.limits.max_requeues:
                return self._requeue(action, job_id, job, outage)
            settled = self._scored_anyway(action, job_id, job, settled, outage)
        if isinstance(settled, BaseException):
            return self.recorder.crash(job_id, settled)
        try:
            recorded = self.recorder.evaluation(job_id, settled)
        except InfrastructureFailure as full:  # the store refused it: the disk is full
            return self._requeue(action, job_id, job, full)
        self._healthy()
        return recorded

    # -- outages --------------------------------------------------------------------------
    def _outage(self, job_id: str, job: Any, settled: Any) -> InfrastructureFailure | None:
        """The outage this job met, whatever the agent did afterwards, or None."""
        llm = self.factory.outage_of(job)
        if isinstance(settled, BaseException):
            found = infrastructure_of(settled, self.run.path)
            if found is not None:
                return found
        if llm is not None:
            return InfrastructureFailure(*llm)
        return None

    def _requeue(
        self, action: Expand | Evaluate, job_id: str, job: Any, outage: InfrastructureFailure
    ) -> Outcome:
        spent = self.factory.spent_usd(job)
        lost, self._spent[job_id] = spent - self._spent.get(job_id, 0.0), spent
        self.factory.new_attempt(job)  # its own per-job budget again; the run's keeps `lost`
        if self.breakers is not None:
            self.breakers.failed(outage.dependency, outage.message)
        self.resume(action, job_id)  # the same job, same id, when it runs again
        return self.recorder.infrastructure(job_id, outage, lost)

    def _healthy(self) -> None:
        if self.breakers is not None:
            self.breakers.succeeded()

    def _scored_anyway(
        self, action: Evaluate, job_id: str, job: Any, settled: Any, outage: Exception
    ) -> Any:
        """Re-queued too often: the evaluation counts as it ended, the outage named."""
        note = f"met an outage {self.run.config.limits.max_requeues + 1} times: {outage}"
        if isinstance(settled, Evaluation):
            return replace(settled, error=f"{settled.error}; {note}" if settled.error else note)
        task = getattr(job, "task", None)
        return Evaluation(node_id=int(action.node), task_id=action.task,
                          benchmark=getattr(task, "benchmark", "") or "", resolved=False,
                          error=note[:1000], job_id=job_id,
                          log_dir=self.run.relative(Path(job.log_dir)))  # fmt: skip

    def _settle(self, job: Any, result: Any, error: BaseException | None) -> Any:
        """The recordable result, or the exception that makes it a crash."""
        try:
            self.factory.release(job)
            if error is not None:
                return error
            return self.factory.settle(job, result)
        except Exception as exc:
            return exc

    def _start(
        self, job_id: str, kind: str, inputs: dict[str, Any], action: Expand | Evaluate
    ) -> Work | None:
        """The job's row, queued then running; if the store refuses it, the Work that
        reports so (the job does not run: its result could not be recorded either). A
        refusal for a full host disk re-queues the job: the run pauses until there is space."""
        try:
            self.run.queue_job(job_id, kind, inputs)
            self.run.start_job(job_id)
        except Exception as exc:
            refusal = exc  # `exc` is unbound after the except block

            def report(result: Any, error: BaseException | None) -> Outcome:
                full = self.recorder.disk_full_failure(refusal)
                if full is None:
                    return self.recorder.unrecorded(job_id, refusal, "start")
                if self.breakers is not None:
                    self.breakers.failed(full.dependency, full.message)
                if isinstance(action, Evaluate):  # an expansion's id is made afresh
                    self.resume(action, job_id)
                return self.recorder.infrastructure(job_id, full, 0.0)

            return Work(_fail, Unbuildable(describe_error(exc)), report)
        return None

    def _broken(self, job_id: str, exc: Exception) -> Work:
        message = str(exc) if isinstance(exc, DgmError) else f"{type(exc).__name__}: {exc}"
        return Work(_fail, Unbuildable(message), lambda r, e: self.recorder.crash(job_id, e))

    def _ordinal(self, parent: NodeId) -> int:
        """How many expansions of `parent` came before this one (this one is in flight)."""
        assert self.state is not None
        return self.state.expansions_of(parent) - 1

    def _choose_target(self, parent: NodeId, ordinal: int) -> ImprovementTarget:
        config = self.run.config
        if config.expand.harvest:  # tools the parent wrote in tasks it solved come first
            try:
                harvest = harvest_target(self.run, int(parent), self.node_code(parent))
            except Exception as exc:  # no harvest then; the usual target still works
                log.warning("node %s: harvest not considered: %s", parent, exc)
                harvest = None
            if harvest is not None:
                return harvest
        # Keyed as the ids of earlier versions were, so the same run makes the same choices.
        rng = random.Random(f"{config.seed}:expand-{parent}-{ordinal}")
        sees_tests = config.expand.diagnosis_sees_tests
        return choose_target(
            self.run.evaluations(parent),
            self.run.path,
            rng,
            task_statement=self.factory.task_statement,
            hidden_tests=self.factory.hidden_tests if sees_tests else None,
            hidden_sources=self.factory.hidden_sources,  # for redaction
        )

    def _history(self, parent: int, ordinal: int, log_dir: Path) -> Path | None:
        """The parent's structured history in the job's log folder (dgm/loop/history_writer.py);
        the step can go without it, so a failure to write it is only logged."""
        try:
            elapsed = self.elapsed_s() if self.elapsed_s is not None else None
            return write_history(
                self.run, parent, ordinal, log_dir / "history",
                task_statement=self.factory.task_statement,
                hidden_sources=self.factory.hidden_sources,  # for redaction
                budget=budget_left(self.run, elapsed),
            )  # fmt: skip
        except Exception as exc:
            log.warning("expand of node %s: no history written: %s", parent, describe_error(exc))
            return None

    def node_code(self, node: NodeId) -> Path:
        """The node's codebase, checked out once per run into work/nodes/<id>."""
        dest = self.run.path / "work" / "nodes" / str(node)
        with self._checkout_lock:
            if not (dest / ".complete").exists():
                if dest.exists():
                    shutil.rmtree(dest)
                self.run.checkout(node, dest)
                (dest / ".complete").touch()
        return dest
