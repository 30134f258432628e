"""`dgm run` and `dgm resume`: the main job, with a live progress display."""

from __future__ import annotations

import shutil
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from dgm.commands.options import options_command
from dgm.commands.run_options import ResumeOptions, RunOptions
from dgm.config import RunConfig
from dgm.errors import DgmError
from dgm.executors import Completion
from dgm.loop.meta_loop import MetaLoop
from dgm.loop.session import StatusLine, describe, new_run_config, open_session, sweep_orphans
from dgm.loop.stop_rules import remedy
from dgm.paths import seed_agent_dir
from dgm.report.costs import spend_lines
from dgm.store import Run
from dgm.store.run import CONFIG_FILE
from dgm.store.run_lock import LOCK_FILE, RunLock, RunLocked


def register(app: typer.Typer) -> None:
    app.command("run")(options_command(RunOptions, run))
    app.command("resume")(options_command(ResumeOptions, resume))


def run(options: RunOptions) -> None:
    """Start a self-improvement run."""
    from dgm.loop.preflight import preflight

    _need_ray_if_asked(options.executor, options.config)

    base = RunConfig.load(options.config) if options.config else RunConfig()
    cfg, run_dir = new_run_config(
        base, options.run_dir, options.overrides(), dry_run=options.dry_run,
        dry_run_world=options.dry_run_world, subset_given=options.subset is not None,
        config_given=options.config is not None, third_party_agent=options.agent is not None,
    )  # fmt: skip
    cfg = cfg.with_price(cfg.llm.model, options.price)  # kept in run.toml for resume
    created = not run_dir.exists()
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        with _locked(run_dir):  # first: a second `dgm run` on a live run names its holder
            preflight(cfg)
            from dgm.loop.agent_env_prep import prepare_agent_env

            prepare_agent_env(options.agent or seed_agent_dir(), typer.echo)
            store = Run.create(run_dir, cfg, options.agent or seed_agent_dir())
            typer.echo(f"run {run_dir}: strategy {cfg.strategy.name}, model {cfg.llm.model}")
            if options.data and options.subset is None and options.config is None:
                typer.echo(f"--data without --subset: {cfg.benchmark.subset} of {options.data}")
            _drive(store)
    finally:
        if created and [p.name for p in run_dir.iterdir()] == [LOCK_FILE]:
            shutil.rmtree(run_dir)  # nothing was made: leave no empty run directory behind


def resume(options: ResumeOptions) -> None:
    """Continue a stopped or crashed run: finished work is kept, in-flight jobs re-run."""
    from dgm.loop.preflight import preflight

    run_dir = options.run_dir
    if not (run_dir / CONFIG_FILE).is_file():
        Run.open(run_dir)  # not a run directory: its one-line error, and no lock file left
    overrides = options.overrides()
    with _locked(run_dir):
        store = Run.open(run_dir)
        _need_ray_if_asked(options.executor or store.config.executor.kind, None)
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
    from dgm.executors.distributed.cluster import INSTALL, ray_installed

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
