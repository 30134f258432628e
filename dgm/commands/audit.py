"""`dgm audit-judge`: run the project's hostile agents against a benchmark's judge."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from dgm.errors import DgmError, NotFoundError

# a table as wide as it needs in a log or CI (rich falls back to 80 columns off a terminal)
console = Console(width=None if sys.stdout.isatty() else 140)


def register(app: typer.Typer) -> None:
    short = "Attack the judge with the hostile agents; exit 1 if anything fooled it."
    app.command("audit-judge", short_help=short)(audit_judge)


def audit_judge(
    benchmark: Annotated[
        str, typer.Option("--benchmark", "-b", help="polyglot or swebench")
    ] = "polyglot",
    data: Annotated[str | None, typer.Option(help="Benchmark checkout or data folder.")] = None,
    subset: Annotated[
        str, typer.Option(help="small, medium, full, a language, or @ids.txt")
    ] = "small",
    attack: Annotated[
        list[str] | None, typer.Option(help="Only these attack classes (repeatable).")
    ] = None,
    workers: Annotated[int, typer.Option(min=1, help="Tasks judged at once.")] = 1,
    out: Annotated[Path | None, typer.Option(help="Results folder (logs per attack).")] = None,
    test_timeout: Annotated[int, typer.Option(min=1, help="Judge seconds per task.")] = 300,
    memory: Annotated[str, typer.Option(help="Memory per container.")] = "4g",
) -> None:
    """Attack the judge with every hostile agent class on a subset; prints a table class x
    language (tampered / not resolved / FOOLED) and exits 1 if anything fooled it."""
    from dgm.benchmarks import load_benchmark
    from dgm.benchmarks.task_images import missing_images, pin_images
    from dgm.evaluation.audit_judge import CLASSES, FOOLED, audit, target_of, verdict_of

    unknown = sorted(set(attack or []) - set(CLASSES))
    if unknown:
        raise DgmError(f"unknown attack class(es): {', '.join(unknown)}",
                       f"use some of: {', '.join(CLASSES)}")  # fmt: skip
    tasks = load_benchmark(benchmark, data, test_timeout).tasks(subset)
    if not tasks:
        raise DgmError(f"subset {subset!r} of {benchmark} holds no tasks", "choose another")
    missing = missing_images(tasks)
    if missing:
        raise NotFoundError("images missing: " + "; ".join(missing), "build them, retry")
    tasks = pin_images(tasks)
    out = out or Path("audit-results") / time.strftime("%Y%m%d-%H%M%S")
    out.mkdir(parents=True, exist_ok=True)

    def done(name: str, outcome) -> None:  # noqa: ANN001
        console.print(f"  {name:<24} {outcome.task_id:<40} {verdict_of(outcome)}")

    report = audit(tasks, out, classes=attack or None, workers=workers,
                   limits={"memory": memory}, on_done=done)  # fmt: skip
    targets = [t for t in dict.fromkeys(target_of(t) for t in tasks)]
    table = Table(title=f"dgm audit-judge: {benchmark} {subset} ({len(tasks)} tasks)")
    table.add_column("attack class")
    for target in targets:
        table.add_column(target)
    for name in attack or list(CLASSES):
        cells = [report.cell(name, t) for t in targets]
        styled = [f"[bold red]{c}[/bold red]" if c.startswith(FOOLED) else c for c in cells]
        table.add_row(name, *styled)
    console.print(table)
    console.print(f"{sum(len(r) for r in report.cells.values())} attacks in "
                  f"{report.seconds:.0f} s; logs: {out}")  # fmt: skip
    if report.fooled:
        shown = ", ".join(f"{c} on {task}" for c, _, task in report.fooled[:10])
        console.print(f"[bold red]the judge was FOOLED {len(report.fooled)} time(s): {shown}")
        raise typer.Exit(1)
    console.print("[bold green]0 fooled[/bold green]")
