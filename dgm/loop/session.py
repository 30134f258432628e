"""One session of a run, as `dgm run` and `dgm resume` start it: the run's config from
the command line (run-dir naming, dry-run defaults), preflight, the orphan sweep, the
gateway wired to the store, the loop, and a one-line status for progress displays."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from dgm.config import RunConfig
from dgm.errors import DgmError
from dgm.executors import (
    Completion,
    Evaluated,
    Expanded,
    ExpansionFailed,
    InfraFailed,
    JobCrashed,
)
from dgm.loop.meta_loop import MetaLoop
from dgm.paths import default_run_dir
from dgm.store import Run

DRY_RUN_MAX_EVALS = 16


def new_run_config(
    base: RunConfig,
    run_dir: Path | None,
    overrides: dict[str, Any],
    *,
    dry_run: bool = False,
    dry_run_world: str | None = None,
    subset_given: bool = False,
    config_given: bool = False,
    third_party_agent: bool = False,
) -> tuple[RunConfig, Path]:
    """The config of a new run and its directory (default: archive/<name>-<timestamp>).
    The dry run plays every model with the built-in scripted model (`dry_run_world`,
    default capability, or hyperagent with `--self-improve agent`: dgm/scripted/worlds.py),
    on the dry-run tasks, within 16 evaluations unless a limit is given, hgm skipping barren
    parents unless a config is given. An agent dgm did
    not write (`third_party_agent`) gets the `shell` world unless another is named."""
    if run_dir is None:
        name = f"{base.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        run_dir = default_run_dir(name)
    else:
        name = run_dir.name
    overrides = {"name": name, **overrides}
    if dry_run_world is not None and not dry_run:
        raise DgmError("--dry-run-world needs --dry-run", "add --dry-run")
    if dry_run:
        from dgm.benchmarks.registry import benchmark_named
        from dgm.scripted.worlds import world_model

        mode = overrides.get("self_improve.mode") or base.self_improve.mode
        model = world_model(dry_run_world or ("shell" if third_party_agent else None), mode)
        overrides["llm.model"] = model
        overrides["llm.diagnose_model"] = model
        if not subset_given and not config_given:
            bench = str(overrides.get("benchmark.name") or base.benchmark.name)
            overrides["benchmark.subset"] = benchmark_named(bench).dry_run_subset
        limits = ("limits.max_evals", "limits.max_nodes", "limits.max_expansions",
                  "limits.budget_usd", "limits.max_hours")  # fmt: skip
        if not any(overrides.get(k) for k in limits) and not base.limits.max_evals:
            overrides["limits.max_evals"] = DRY_RUN_MAX_EVALS
        if not config_given:
            # A scripted world answers a parent the same way every time, so a parent that
            # made nothing stays barren; the reference hgm would re-expand it for ever
            # (its failed expansions count nowhere) and never reach its evaluation limit.
            overrides.setdefault("strategy.hgm.skip_barren", True)
    data = overrides.get("benchmark.data")
    if data and not subset_given and not config_given:
        # The default subsets name the shipped data's instances: own data means its own
        # (a dry run keeps its tasks where the data holds them all).
        bench = str(overrides.get("benchmark.name") or base.benchmark.name)
        overrides["benchmark.subset"] = _subset_for_data(bench, str(data), overrides.get(
            "benchmark.subset") if dry_run else None)  # fmt: skip
    return base.with_overrides(overrides), run_dir


def _subset_for_data(benchmark: str, data: str, wanted: str | None) -> str:
    """`wanted` if the data holds all its tasks, else `full` (every instance it holds)."""
    if wanted is None:
        return "full"
    from dgm.benchmarks import load_benchmark

    try:
        load_benchmark(benchmark, data, 300).tasks(wanted)
    except DgmError:
        return "full"
    return wanted


def sweep_orphans() -> int:
    """Remove containers a crashed dgm process left behind; how many."""
    try:
        from dgm.sandbox.orphans import sweep

        return len(sweep().removed)
    except Exception:  # no engine: preflight says so with a fix
        return 0


@dataclass
class Session:
    store: Run
    gateway: Any
    loop: MetaLoop


def open_session(
    store: Run,
    on_progress: Callable[[MetaLoop, Completion | None], None] | None = None,
    executor: str | None = None,
) -> Session:
    """The gateway (accounting to the store) and the loop with the real jobs; the gateway
    is started, so the caller must `close_session`."""
    from dgm.gateway import Gateway
    from dgm.gateway.settings import LOCALHOST
    from dgm.loop.job_making.sandbox_jobs import SandboxJobs

    config = store.config
    ray = (executor or config.executor.kind) == "ray"  # the workers' relays call in over TCP
    gateway = Gateway.from_config(
        config,
        run=config.name,
        log_dir=store.path / "logs",
        on_usage=store.record_usage,
        spent_usd=store.spend_usd(),
        host=config.executor.gateway_host if ray else LOCALHOST,
    )
    jobs = SandboxJobs(store, gateway)
    loop = MetaLoop(store, jobs=jobs, on_progress=on_progress, executor=executor)
    gateway.start().watch_outages()
    return Session(store, gateway, loop)


class StatusLine:
    """Nodes, evaluations, best, spend, running jobs, jobs per minute and the ETA."""

    def __init__(self, store: Run) -> None:
        self.store = store
        self.started = time.monotonic()
        self.done = 0

    def update(self, loop: MetaLoop, finished: bool = True) -> str:
        self.done += finished
        state, limits = loop.state, loop.config.limits
        assert state is not None
        evals = state.total_evals
        spend = self.store.spend_usd()
        parts = [
            f"nodes {state.size}",
            f"evals {evals}" + (f"/{limits.max_evals}" if limits.max_evals else ""),
            f"best {loop.best()}",
            f"${spend:.2f}" + (f"/${limits.budget_usd:.2f}" if limits.budget_usd else ""),
            f"running {state.in_flight}",
        ]
        paused = loop.breakers.describe()
        if paused:  # what is down, since when, the next probe: the run waits for it
            parts.insert(0, "; ".join(paused))
        minutes = (time.monotonic() - self.started) / 60
        if minutes > 0 and evals:
            rate = self.done / minutes
            parts.append(f"{rate:.1f} jobs/min")
            if limits.max_evals:
                parts.append(f"ETA {(limits.max_evals - evals) / max(rate, 1e-9):.0f} min")
        return "  ".join(parts)


def describe(completion: Completion) -> str:
    """One finished job in words, for a log line."""
    action, outcome = completion.ticket.action, completion.outcome
    if isinstance(outcome, Evaluated):
        verdict = "PASS" if outcome.solved else "fail"
        return f"eval node {action.node} {action.task}: {verdict}"  # type: ignore[union-attr]
    if isinstance(outcome, Expanded):
        return f"expand node {action.parent} -> node {outcome.child}"  # type: ignore[union-attr]
    if isinstance(outcome, ExpansionFailed):
        return f"expand node {action.parent}: no child ({outcome.reason[:80]})"  # type: ignore[union-attr]
    if isinstance(outcome, JobCrashed):
        return f"job crashed: {outcome.error[:120]}"
    if isinstance(outcome, InfraFailed):
        return f"outage, job re-queued: {outcome.reason[:160]}"
    return str(outcome)
