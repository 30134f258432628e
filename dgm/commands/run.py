"""`dgm run` and `dgm resume`: the main job, with a live progress display."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated, Any

import typer

from dgm.config import RunConfig
from dgm.errors import DgmError
from dgm.loop.executors import Completion, Evaluated, Expanded, ExpansionFailed, JobCrashed
from dgm.loop.meta_loop import MetaLoop
from dgm.paths import default_run_dir, seed_agent_dir
from dgm.store import Run

DRY_RUN_MAX_EVALS = 16


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("resume")(resume)


def run(
    run_dir: Annotated[
        Path | None, typer.Argument(help="Where the run lives (default: archive/<name>).")
    ] = None,
    config: Annotated[Path | None, typer.Option(help="A run.toml to start from.")] = None,
    strategy: Annotated[str | None, typer.Option(help="dgm | hgm | greedy | random")] = None,
    benchmark: Annotated[str | None, typer.Option(help="polyglot | swebench")] = None,
    subset: Annotated[
        str | None, typer.Option(help="small | medium | full | LANG | @ids.txt")
    ] = None,
    data: Annotated[str | None, typer.Option(help="Benchmark data path.")] = None,
    llm: Annotated[str | None, typer.Option(help="The agents' model string.")] = None,
    diagnose_llm: Annotated[str | None, typer.Option(help="The diagnosis model.")] = None,
    workers: Annotated[int | None, typer.Option(help="Jobs run at once.")] = None,
    max_evals: Annotated[int | None, typer.Option(help="Stop after N task evaluations.")] = None,
    max_nodes: Annotated[int | None, typer.Option(help="Stop at N nodes.")] = None,
    budget_usd: Annotated[float | None, typer.Option(help="Dollar cap on LLM spend.")] = None,
    max_hours: Annotated[float | None, typer.Option(help="Wall-clock limit.")] = None,
    seed: Annotated[int | None, typer.Option(help="RNG seed.")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Offline and free: the built-in scripted model.")
    ] = False,
) -> None:
    """Start a self-improvement run."""
    from dgm.loop.adapters import preflight

    base = RunConfig.load(config) if config else RunConfig()
    name = run_dir.name if run_dir else base.name
    if run_dir is None:
        name = f"{base.name}-{time.strftime('%Y%m%d-%H%M%S')}"
        run_dir = default_run_dir(name)
    overrides: dict[str, Any] = {
        "name": name,
        "seed": seed,
        "workers": workers,
        "strategy.name": strategy,
        "benchmark.name": benchmark,
        "benchmark.subset": subset,
        "benchmark.data": data,
        "llm.model": llm,
        "llm.diagnose_model": diagnose_llm,
        "limits.max_evals": max_evals,
        "limits.max_nodes": max_nodes,
        "limits.budget_usd": budget_usd,
        "limits.max_hours": max_hours,
    }
    if dry_run:
        from dgm.scripted.dry_run import DRY_RUN_SUBSETS, SCRIPT_NAME

        overrides["llm.model"] = f"scripted/{SCRIPT_NAME}"
        overrides["llm.diagnose_model"] = f"scripted/{SCRIPT_NAME}"
        if subset is None and config is None:
            overrides["benchmark.subset"] = DRY_RUN_SUBSETS.get(benchmark or "polyglot")
        if not any((max_evals, max_nodes, budget_usd, max_hours, base.limits.max_evals)):
            overrides["limits.max_evals"] = DRY_RUN_MAX_EVALS
    cfg = base.with_overrides(overrides)
    preflight(cfg)
    store = Run.create(run_dir, cfg, seed_agent_dir())
    typer.echo(f"run {run_dir}: strategy {cfg.strategy.name}, model {cfg.llm.model}")
    _drive(store)


def resume(
    run_dir: Annotated[Path, typer.Argument(help="The run directory.")],
    workers: Annotated[int | None, typer.Option(help="Jobs run at once.")] = None,
    max_evals: Annotated[int | None, typer.Option(help="Raise the evaluation limit.")] = None,
    max_nodes: Annotated[int | None, typer.Option(help="Raise the node limit.")] = None,
    budget_usd: Annotated[float | None, typer.Option(help="Raise the dollar cap.")] = None,
    max_hours: Annotated[float | None, typer.Option(help="Raise the time limit.")] = None,
) -> None:
    """Continue a stopped or crashed run: finished work is kept, in-flight jobs re-run."""
    from dgm.loop.adapters import preflight

    store = Run.open(run_dir)
    overrides = {
        "workers": workers,
        "limits.max_evals": max_evals,
        "limits.max_nodes": max_nodes,
        "limits.budget_usd": budget_usd,
        "limits.max_hours": max_hours,
    }
    if any(v is not None for v in overrides.values()):
        store.update_config(store.config.with_overrides(overrides))
    preflight(store.config)
    typer.echo(f"resuming {run_dir}: {len(store.nodes())} nodes, "
               f"{len(store.evaluations())} evaluations")  # fmt: skip
    _drive(store)


def _drive(store: Run) -> None:
    """Start the gateway and the loop, show progress, print the summary."""
    from dgm.gateway import Gateway
    from dgm.loop.adapters import RunJobs

    config = store.config
    if config.sandbox.backend != "local":
        _sweep_orphans()
    gateway = Gateway.from_config(
        config,
        run=config.name,
        log_dir=store.path / "logs",
        on_usage=store.record_usage,
        spent_usd=store.spend_usd(),
    )
    jobs = RunJobs(store, gateway)
    progress = Progress(store, sys.stdout.isatty())
    loop = MetaLoop(store, jobs=jobs, on_progress=progress.update)
    gateway.start()
    try:
        summary = loop.run()
    except KeyboardInterrupt:
        removed = loop.cancel_running()
        typer.echo(f"\ncancelled: removed {removed} container(s); running jobs will re-run "
                   f"on `dgm resume {store.path}`", err=True)  # fmt: skip
        gateway.stop()
        raise typer.Exit(130) from None
    finally:
        progress.close()
    gateway.stop()
    for line in summary.lines():
        typer.echo(line)
    if summary.stop_reason.startswith(tuple("0123456789")):  # jobs kept crashing
        raise DgmError(f"the run stopped because {summary.stop_reason}",
                       f"fix the cause, then `dgm resume {store.path}`")  # fmt: skip


def _sweep_orphans() -> None:
    try:
        from dgm.sandbox.orphans import sweep

        removed = sweep().removed
    except Exception:  # no engine: preflight says so with a fix
        return
    if removed:
        typer.echo(f"removed {len(removed)} orphan container(s) of a crashed process")


class Progress:
    """A live status line on a terminal; one plain log line per finished job otherwise."""

    def __init__(self, store: Run, live: bool) -> None:
        self.store = store
        self.live = None
        self.started = time.monotonic()
        self.done = 0
        if live:
            from rich.live import Live

            self.live = Live("", refresh_per_second=2, transient=False)
            self.live.start()

    def update(self, loop: MetaLoop, completion: Completion | None) -> None:
        self.done += 1
        line = self._status(loop)
        if self.live is not None:
            self.live.update(line)
        elif completion is not None:
            typer.echo(f"{time.strftime('%H:%M:%S')} {_describe(completion)} | {line}")

    def _status(self, loop: MetaLoop) -> str:
        state, config = loop.state, loop.config
        assert state is not None
        evals, limits = state.total_evals, config.limits
        best = loop.best()
        spend = self.store.spend_usd()
        parts = [
            f"nodes {state.size}",
            f"evals {evals}" + (f"/{limits.max_evals}" if limits.max_evals else ""),
            f"best {best}",
            f"${spend:.2f}" + (f"/${limits.budget_usd:.2f}" if limits.budget_usd else ""),
            f"running {state.in_flight}",
        ]
        minutes = (time.monotonic() - self.started) / 60
        if minutes > 0 and evals:
            rate = self.done / minutes
            parts.append(f"{rate:.1f} jobs/min")
            if limits.max_evals:
                parts.append(f"ETA {(limits.max_evals - evals) / max(rate, 1e-9):.0f} min")
        return "  ".join(parts)

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()


def _describe(completion: Completion) -> str:
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
    return str(outcome)
