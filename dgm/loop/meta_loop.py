"""The meta loop: a long-running, resumable self-improvement run.

    MetaLoop(run, jobs=factory).run()

It rebuilds the search state from the store (resume.py), asks the strategy for actions
through the scheduler, turns each action into a job (job_making/from_actions.py: expand makes a
child, evaluate runs node x task), records every finished job in the store in one
transaction (recording.py), and stops on the strategy's word, a limit (evaluations,
nodes, dollars, hours), or Ctrl-C / SIGTERM (stop_rules.py). Held-out tasks never reach
the search; after it, the confirmation stage evaluates its top candidates on them
(confirmation.py).

Every job is a row before it starts (`queued` -> `running` -> `done`), keyed by a job id
derived from its inputs; on resume, jobs that were in flight run again under the same id,
and the store refuses to record a job twice. Results are recorded in this process before
the scheduler hears of them, so a kill -9 at any moment loses no finished result.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from dgm.executors import Completion, make_executor
from dgm.loop.breakers import Breakers
from dgm.loop.confirmation import confirm, search_plan
from dgm.loop.job_making.factory import JobFactory
from dgm.loop.job_making.from_actions import ActionJobs, eval_job_id, expand_job_id
from dgm.loop.job_order import OrderedExecutor, RecordedOrder
from dgm.loop.recording import Recorder
from dgm.loop.resume import in_flight_actions, rebuild_state
from dgm.loop.scheduler import RunSummary, Scheduler, SearchBudget
from dgm.loop.steering import SteeredStrategy, Steering
from dgm.loop.stop_rules import (
    INTERRUPTED,
    Clock,
    Interrupts,
    StopKind,
    StopReason,
    StopRules,
)
from dgm.store import Run, best_node
from dgm.strategies import Budget, SearchState, Strategy, make_strategy

__all__ = ["JobFactory", "LoopSummary", "MetaLoop", "eval_job_id", "expand_job_id", "rebuild_state"]


@dataclass
class LoopSummary:
    stop_reason: str
    best_node: int | None
    best_passed: int
    best_total: int
    nodes: int
    evaluations: int
    spend_usd: float
    elapsed_s: float
    utilisation: float | None = None
    stop_kind: StopKind = StopKind.STRATEGY
    expansions: int = 0
    """Expansion attempts, earlier sessions and failed ones included."""
    failed_expansions: int = 0
    tampered: dict[int, int] = field(default_factory=dict)
    """Node -> evaluations the judge caught tampering with the test run (never best)."""
    requeued: int = 0
    """Jobs re-queued because they met an outage (all sessions)."""
    paused_s: float = 0.0
    lost_usd: float = 0.0
    """LLM dollars of job attempts that met an outage (in `spend_usd` too)."""

    def outage_lines(self) -> list[str]:
        if not self.requeued and not self.paused_s:
            return []
        return [f"outages: {self.requeued} job(s) re-queued, {self.paused_s / 60:.1f} min "
                f"paused, ${self.lost_usd:.2f} lost to outages"]  # fmt: skip

    @property
    def failed(self) -> bool:
        """The run stopped because jobs kept breaking or could not be recorded, not by a
        rule or a user."""
        return self.stop_kind in (StopKind.CRASHES, StopKind.RECORDING)

    def lines(self) -> list[str]:
        best = (
            f"node {self.best_node}: {self.best_passed}/{self.best_total}"
            if self.best_node is not None
            else "none yet"
        )
        return [
            f"stopped: {self.stop_reason}",
            f"best:    {best}",
            f"nodes:   {self.nodes}   evaluations: {self.evaluations}   "
            f"expansions: {self.expansions} ({self.failed_expansions} failed)",
            f"spend:   ${self.spend_usd:.2f}   time: {self.elapsed_s / 60:.1f} min",
        ] + self.tamper_lines()

    def tamper_lines(self) -> list[str]:
        if not self.tampered:
            return []
        nodes = ", ".join(f"{n} ({k}x)" for n, k in sorted(self.tampered.items()))
        count = sum(self.tampered.values())
        return [
            f"TAMPERED: {count} evaluation(s), node(s) {nodes}: the judge caught the patch "
            "interfering with the test run; failures, never best or exported"
        ]


def outage_probes(run: Run, jobs: JobFactory) -> dict[str, Callable[[], str | None]]:
    """How each dependency's breaker asks whether it is back: the job factory's (the LLM
    providers), Docker (a fresh client's ping), the host's disk under the run and its
    available memory (after an OOM kill from outside a sandbox)."""
    from dgm.loop.failures import disk_full, docker_down, memory_low

    return {"docker": docker_down, "disk": lambda: disk_full(run.path), "memory": memory_low,
            **jobs.probes()}  # fmt: skip


class MetaLoop:
    """Drives one run until it stops; `run()` may be called again after a resume."""

    def __init__(
        self,
        run: Run,
        *,
        jobs: JobFactory,
        on_progress: Callable[[MetaLoop, Completion | None], None] | None = None,
        executor: str | None = None,
    ) -> None:
        self.run_store = run
        self.config = run.config
        self.jobs = jobs
        self.on_progress = on_progress
        self.executor_kind = executor or run.config.executor.kind
        self.state: SearchState | None = None
        self.scheduler: Scheduler | None = None
        self.strategy: Strategy | None = None
        stops = run.events(limit=None, kinds=["run_stopped"])
        self.clock = Clock(sum(e.get("elapsed_s", 0.0) for e in stops))
        self.paused_before_s = sum(e.get("paused_s", 0.0) for e in stops)
        self._cancelled = threading.Event()
        self.containers_removed = 0
        self.breakers = Breakers(outage_probes(run, jobs), on_event=self._event)
        self.rules = StopRules(
            run.config.limits, run.spend_usd, jobs.run_budget_exhausted, self.limit_s
        )
        self.recorder = Recorder(run, self.rules, self._cancelled)
        self.steering = Steering(run, self.rules, jobs)
        self.action_jobs = ActionJobs(run, jobs, self.recorder)
        self.action_jobs.elapsed_s = self.limit_s
        self.action_jobs.breakers = self.breakers

    def run(self) -> LoopSummary:
        run, config = self.run_store, self.config
        plan = search_plan(run, self.jobs.task_plan())  # held-out tasks never reach it
        self.state = rebuild_state(run, plan, config.strategy.barren_after)
        self.action_jobs.state = self.state
        done_jobs = len(run.jobs(["done", "failed"]))
        # Seeded by the config's seed and the history, so a resumed run does not replay
        # the random choices it already made.
        seed = np.random.SeedSequence([config.seed, done_jobs])
        # A fresh replay follows the recorded order of job starts and finishes.
        recorded = RecordedOrder.of_model(config.llm.model) if not done_jobs else None
        slots = recorded.workers if recorded and recorded.workers else config.workers
        limits = config.limits
        strategy = self.strategy = make_strategy(  # plans with the recorded run's workers
            config.strategy, seed, slots, Budget(limits.max_evals)
        )
        budget = SearchBudget(
            max_evals=limits.max_evals,
            max_nodes=limits.max_nodes,
            max_expansions=limits.max_expansions,
        )
        run.event("run_started", strategy=config.strategy.name, resumed=done_jobs > 0,
                  workers=slots)  # fmt: skip
        with make_executor(self.executor_kind, config.workers, run, self.jobs) as pool:
            executor = OrderedExecutor(pool, run, lambda: self.action_jobs.last_job_id,
                                       recorded, self.jobs.replay_miss)  # fmt: skip

            def should_stop() -> StopReason | None:
                self.steering.apply_pending()  # a person's requests first (dgm serve, steer)
                return executor.check() or self.rules.check()

            self.scheduler = Scheduler(
                SteeredStrategy(strategy, self.steering),  # type: ignore[arg-type]
                self.state,
                executor,
                slots,
                limits=budget,
                make_job=self.action_jobs.make,
                on_complete=self._on_complete,
                should_stop=should_stop,
                expansions_before=run.expansion_attempts(),
                code_of=self.recorder.codes.get,
                breakers=self.breakers,
            )
            self.steering.attach(self.scheduler, self.state)
            for action, job_id in in_flight_actions(run, self.state):
                self.action_jobs.resume(action, job_id)
                self.scheduler.submit(action)
            self.steering.watch()
            with Interrupts(lambda: self.request_stop(), self._cancel_now):
                try:
                    summary = self.scheduler.run()
                finally:
                    self.steering.close()
                # After the search: its top candidates on the held-out tasks; the verdict
                # is recorded in the store, where `best_node` reads it.
                confirm(
                    run,
                    strategy,
                    self.state,
                    executor,
                    make_job=self.action_jobs.make,
                    on_complete=self._on_complete,
                    should_stop=should_stop,
                    workers=slots,
                )
        return self._summary(summary)

    def best(self) -> str:
        """The best node by the store's one rule, with its score, for progress displays."""
        best = best_node(self.run_store)
        if best is None:
            return "-"
        score = self.run_store.score(best)
        return f"node {best} {score.passed}/{score.total}"

    def request_stop(self, reason: str | None = None) -> None:

        self.rules.request(
            INTERRUPTED if reason is None else StopReason(StopKind.INTERRUPTED, reason)
        )

    def elapsed_s(self) -> float:
        """Wall-clock time of this run across all its sessions."""
        return self.clock.total_s()

    def paused_s(self) -> float:
        """Time the run stood paused for outages, across all its sessions."""
        return self.paused_before_s + self.breakers.paused_now_s()

    def limit_s(self) -> float:
        """The time `--max-hours` counts: pauses left out unless `[limits] count_pauses`."""
        if self.config.limits.count_pauses:
            return self.clock.total_s()
        return self.clock.total_s() - self.paused_s()

    def _event(self, kind: str, **data: object) -> None:
        """A breaker opened, probed or closed: in the store, and on the progress line."""
        try:
            self.run_store.event(kind, **data)
        except Exception:  # the store refuses writes: the log line said it already
            pass
        if kind == "resumed" and data.get("dependency") == "docker":
            # Nothing is in flight while the run waits: any container of this process is
            # one a cut connection left behind (created, its job never told).
            try:
                removed = self.jobs.cancel()
                if removed:
                    self.run_store.event("orphans_removed", containers=removed)
            except Exception:  # the next `dgm run`/`resume` sweeps them
                pass
        if self.on_progress is not None and self.state is not None:
            self.on_progress(self, None)

    def _cancel_now(self) -> None:
        """The second Ctrl-C: remove the containers now, before the executor waits for
        its threads (which end as their containers go)."""
        self._cancelled.set()
        try:
            self.containers_removed += self.jobs.cancel()
        except Exception:  # no engine: `cancel_running` tries again and says so
            pass

    def cancel_running(self) -> int:
        """Remove this process's containers; their jobs stay `running` and re-run on resume.
        How many were removed, those of the second Ctrl-C included."""
        self._cancelled.set()
        self.containers_removed += self.jobs.cancel()
        return self.containers_removed

    def _on_complete(self, completion: Completion, state: SearchState) -> None:
        if self.on_progress is not None:
            self.on_progress(self, completion)

    def _summary(self, summary: RunSummary) -> LoopSummary:
        run = self.run_store
        final = best_node(run)
        score = run.score(final) if final is not None else None
        reason = summary.stop_reason
        kind = getattr(reason, "kind", StopKind.STRATEGY)
        try:
            run.event(
                "run_stopped",
                reason=str(reason),
                best=final,
                elapsed_s=self.clock.session_s(),
                paused_s=round(self.breakers.paused_now_s(), 3),
            )
        except Exception:  # the store refuses writes (the likely reason to stop): say so anyway
            pass
        return LoopSummary(
            stop_reason=str(reason),
            best_node=final,
            best_passed=score.passed if score else 0,
            best_total=score.total if score else 0,
            nodes=len(run.nodes()),
            evaluations=len(run.evaluations()),
            spend_usd=run.spend_usd(),
            elapsed_s=self.clock.total_s(),
            utilisation=summary.utilisation,
            stop_kind=kind,
            expansions=run.expansion_attempts(),
            failed_expansions=self.state.total_failed_expansions if self.state else 0,
            tampered={n: s.tampered for n, s in run.scores().items() if s.tampered},
            requeued=len(run.events(limit=None, kinds=["job_infra"])),
            paused_s=self.paused_s(),
            lost_usd=run.lost_to_outages_usd(),
        )
