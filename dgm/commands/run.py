"""`dgm run` and `dgm resume`: the main job, with a live progress display."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any

import typer

from dgm.commands.options import PriceOption, SelfImproveOption
from dgm.config import RunConfig
from dgm.errors import DgmError
from dgm.loop.executors import Completion
from dgm.loop.meta_loop import MetaLoop
from dgm.loop.session import StatusLine, describe, new_run_config, open_session, sweep_orphans
from dgm.loop.stop_rules import remedy
from dgm.paths import seed_agent_dir
from dgm.report.costs import spend_lines
from dgm.store import Run
from dgm.store.run import CONFIG_FILE
from dgm.store.run_lock import LOCK_FILE, RunLock, RunLocked

Executor = Annotated[
    str | None, typer.Option(help="Where jobs run: thread (default), process or ray.")
]
RayAddress = Annotated[
    str | None, typer.Option(help="The Ray cluster to join (default: this machine's).")
]


def register(app: typer.Typer) -> None:
    app.command("run")(run)
    app.command("resume")(resume)


def run(
    run_dir: Annotated[
        Path | None, typer.Argument(help="Where the run lives (default: archive/<name>).")
    ] = None,
    config: Annotated[Path | None, typer.Option(help="A run.toml to start from.")] = None,
    strategy: Annotated[
        str | None, typer.Option(help="hgm | dgm | gea | adaptive | greedy | random")
    ] = None,
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
    max_expansions: Annotated[
        int | None, typer.Option(help="Stop after N expansion attempts (failed ones count).")
    ] = None,
    budget_usd: Annotated[float | None, typer.Option(help="Dollar cap on LLM spend.")] = None,
    max_hours: Annotated[float | None, typer.Option(help="Wall-clock limit.")] = None,
    seed: Annotated[int | None, typer.Option(help="RNG seed.")] = None,
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Offline and free: the built-in scripted model.")
    ] = False,
    dry_run_world: Annotated[
        str | None,
        typer.Option(help="The dry run's scripted world: capability | toolmaker | hyperagent."),
    ] = None,
    harvest: Annotated[
        bool | None,
        typer.Option("--harvest/--no-harvest", help="Keep runtime tools as children (default on)."),
    ] = None,
    executor: Executor = None,
    ray_address: RayAddress = None,
    price: PriceOption = None,
    self_improve: SelfImproveOption = None,
) -> None:
    """Start a self-improvement run."""
    from dgm.loop.preflight import preflight

    _need_ray_if_asked(executor, config)

    base = RunConfig.load(config) if config else RunConfig()
    overrides: dict[str, Any] = {
        "seed": seed,
        "workers": workers,
        "executor.kind": executor,
        "executor.address": ray_address,
        "strategy.name": strategy,
        "benchmark.name": benchmark,
        "benchmark.subset": subset,
        "benchmark.data": data,
        "llm.model": llm,
        # A replay answers every role from the recording, the diagnosis included.
        "llm.diagnose_model": diagnose_llm or (llm if llm and llm.startswith("replay/") else None),
        "limits.max_evals": max_evals,
        "limits.max_nodes": max_nodes,
        "limits.max_expansions": max_expansions,
        "limits.budget_usd": budget_usd,
        "limits.max_hours": max_hours,
        "self_improve.mode": self_improve,
        "expand.harvest": harvest,
    }
    cfg, run_dir = new_run_config(
        base, run_dir, overrides, dry_run=dry_run, dry_run_world=dry_run_world,
        subset_given=subset is not None, config_given=config is not None,
    )  # fmt: skip
    cfg = cfg.with_price(cfg.llm.model, price)  # kept in run.toml for resume
    created = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with _locked(run_dir):  # first: a second `dgm run` on a live run names its holder
            preflight(cfg)
            store = Run.create(run_dir, cfg, seed_agent_dir())
            typer.echo(f"run {run_dir}: strategy {cfg.strategy.name}, model {cfg.llm.model}")
            _drive(store)
    finally:
        if created and [p.name for p in run_dir.iterdir()] == [LOCK_FILE]:
            shutil.rmtree(run_dir)  # nothing was made: leave no empty run directory behind


def resume(
    run_dir: Annotated[Path, typer.Argument(help="The run directory.")],
    workers: Annotated[int | None, typer.Option(help="Jobs run at once.")] = None,
    max_evals: Annotated[int | None, typer.Option(help="Raise the evaluation limit.")] = None,
    max_nodes: Annotated[int | None, typer.Option(help="Raise the node limit.")] = None,
    max_expansions: Annotated[int | None, typer.Option(help="Raise the expansion limit.")] = None,
    budget_usd: Annotated[float | None, typer.Option(help="Raise the dollar cap.")] = None,
    max_hours: Annotated[float | None, typer.Option(help="Raise the time limit.")] = None,
    executor: Executor = None,
    ray_address: RayAddress = None,
    self_improve: SelfImproveOption = None,
) -> None:
    """Continue a stopped or crashed run: finished work is kept, in-flight jobs re-run."""
    from dgm.loop.preflight import preflight

    if not (run_dir / CONFIG_FILE).is_file():
        Run.open(run_dir)  # not a run directory: its one-line error, and no lock file left
    overrides = {
        "workers": workers,
        "executor.kind": executor,
        "executor.address": ray_address,
        "limits.max_evals": max_evals,
        "limits.max_nodes": max_nodes,
        "limits.max_expansions": max_expansions,
        "limits.budget_usd": budget_usd,
        "limits.max_hours": max_hours,
        "self_improve.mode": self_improve,
    }
    with _locked(run_dir):
        store = Run.open(run_dir)
        _need_ray_if_asked(executor or store.config.executor.kind, None)
        if any(v is not None for v in overrides.values()):
            store.update_config(store.config.with_overrides(overrides))
        preflight(store.config)
        typer.echo(f"resuming {run_dir}: {len(store.nodes())} nodes, "
                   f"{len(store.evaluations())} evaluations")  # fmt: skip
        _drive(store)


@contextmanager
def _locked(run_dir: Path) -> Iterator[RunLock]:
    """Hold the run directory's lock; a live holder is a usage error (exit 2) that names it."""
    try:
        lock = RunLock(run_dir).acquire()
    except RunLocked as exc:
        typer.secho(f"error: {exc.message} (fix: {exc.hint})", fg="red", err=True)
        raise typer.Exit(2) from None
    if lock.took_over:
        typer.echo(f"took over the lock of a process that is gone ({lock.took_over.describe()})")
    try:
        yield lock
    finally:
        lock.release()


def _need_ray_if_asked(executor: str | None, config: Path | None) -> None:
    """`--executor ray` (or `[executor] kind = "ray"`) without Ray: one line, exit 2."""
    kind = executor or (RunConfig.load(config).executor.kind if config else None)
    from dgm.distributed.cluster import INSTALL, ray_installed

    if kind == "ray" and not ray_installed():
        typer.echo(f"error: the ray executor needs Ray: {INSTALL}", err=True)
        raise typer.Exit(2)


def _drive(store: Run) -> None:
    """Start the gateway and the loop, show progress, print the summary."""
    if store.config.sandbox.backend != "local":
        removed = sweep_orphans()
        if removed:
            typer.echo(f"removed {removed} orphan container(s) of a crashed process")
    progress = Progress(store, sys.stdout.isatty())
    session = open_session(store, on_progress=progress.update)
    try:
        summary = session.loop.run()
    except KeyboardInterrupt:
        removed = session.loop.cancel_running()
        typer.echo(f"\ncancelled: removed {removed} container(s); running jobs will re-run "
                   f"on `dgm resume {store.path}`", err=True)  # fmt: skip
        session.gateway.stop()
        raise typer.Exit(130) from None
    finally:
        progress.close()
    session.gateway.stop()
    for line in summary.lines():
        typer.echo(line)
    for label, text in spend_lines(store, summary.best_node):
        typer.echo(f"{label + ':':<9}{text}")
    for line in summary.outage_lines():
        typer.echo(line)
    if summary.failed:  # jobs kept crashing, or their results could not be recorded
        raise DgmError(f"the run stopped because {summary.stop_reason}",
                       remedy(summary.stop_reason, store.path))  # fmt: skip


class Progress:
    """A live status line on a terminal; one plain log line per finished job otherwise."""

    def __init__(self, store: Run, live: bool) -> None:
        self.status = StatusLine(store)
        self.live = None
        if live:
            from rich.live import Live

            self.live = Live("", refresh_per_second=2, transient=False)
            self.live.start()

    def update(self, loop: MetaLoop, completion: Completion | None) -> None:
        line = self.status.update(loop, finished=completion is not None)
        if self.live is not None:
            self.live.update(line)
        elif completion is not None:
            typer.echo(f"{time.strftime('%H:%M:%S')} {describe(completion)} | {line}")
        else:  # a breaker opened, probed or closed
            typer.echo(f"{time.strftime('%H:%M:%S')} {line}")

    def close(self) -> None:
        if self.live is not None:
            self.live.stop()
