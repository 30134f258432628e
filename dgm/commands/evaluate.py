"""`dgm eval` (evaluate any agent codebase) and `dgm bench` (benchmark data and images)."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from dgm.commands.options import PriceOption
from dgm.errors import DgmError, NotFoundError

console = Console()
bench_app = typer.Typer(help="Benchmark data and images: fetch, list, build-suite.")


def register(app: typer.Typer) -> None:
    app.command("eval")(eval_command)
    app.add_typer(bench_app, name="bench")


def eval_command(
    agent: Annotated[str, typer.Argument(help="Agent folder, RUN_DIR:NODE, oracle or null.")],
    benchmark: Annotated[
        str,
        typer.Option(
            "--benchmark",
            "-b",
            help="polyglot, swebench, swebench:FILE, or several: polyglot,swebench",
        ),
    ] = "polyglot",
    data: Annotated[str | None, typer.Option(help="Benchmark checkout or data file.")] = None,
    subset: Annotated[
        str | None,
        typer.Option(
            help="small, medium, full, a language, or @ids.txt (default: small; "
            "with --data, every instance the data holds)"
        ),
    ] = None,
    llm: Annotated[str | None, typer.Option("--llm", help="Model for the agent.")] = None,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run",
            help="Offline and free: a scripted model plays the LLM "
            "(scripted/capability for dgm's seed, scripted/shell for any other agent).",
        ),
    ] = False,
    workers: Annotated[int, typer.Option(min=1, help="Tasks evaluated at once.")] = 1,
    out: Annotated[Path | None, typer.Option(help="Results folder.")] = None,
    agent_timeout: Annotated[int, typer.Option(min=1, help="Agent seconds per task.")] = 600,
    test_timeout: Annotated[int, typer.Option(min=1, help="Judge seconds per task.")] = 300,
    max_steps: Annotated[int, typer.Option(min=1, help="Agent step limit per task.")] = 50,
    memory: Annotated[str, typer.Option(help="Memory per container.")] = "4g",
    executor: Annotated[
        str, typer.Option(help="Where jobs run: thread or process (worker processes).")
    ] = "thread",
    price: PriceOption = None,
    llm_retries: Annotated[
        int, typer.Option(min=0, help="Retries of a failed provider call before it fails.")
    ] = 6,
) -> None:
    """Evaluate an agent on benchmark tasks; prints passed/total per language."""
    from dgm.benchmarks import load_benchmark
    from dgm.benchmarks.task_images import missing_images, pin_images
    from dgm.dependencies import require
    from dgm.evaluation.evaluate_agent import Summary, write_results
    from dgm.evaluation.prepare import resolve_agent, start_gateway
    from dgm.executors import EXECUTORS

    if executor not in EXECUTORS:
        raise DgmError(f"unknown executor {executor!r}", f"use one of: {', '.join(EXECUTORS)}")
    require([benchmark], None, [llm or ""])  # before any image is looked at or job starts
    if subset is None:
        subset = "full" if data else "small"
        if data:
            console.print(f"--data without --subset: every instance {data} holds")
    tasks = load_benchmark(benchmark, data, test_timeout).tasks(subset)
    if not tasks:
        raise DgmError(f"subset {subset!r} of {benchmark} holds no tasks", "choose another")
    with tempfile.TemporaryDirectory(prefix="dgm-eval-agent-") as tmp:
        ref, run_model = resolve_agent(agent, Path(tmp))
        if not ref.builtin:
            from dgm.loop.agent_env_prep import prepare_agent_env

            prepare_agent_env(Path(ref.path), console.print)
        missing = missing_images(tasks)  # before any agent runs or any LLM call is paid
        if missing:
            raise NotFoundError("images missing: " + "; ".join(missing), "build them, retry")
        tasks = pin_images(tasks)
        out = out or Path("eval-results") / time.strftime("%Y%m%d-%H%M%S")
        out.mkdir(parents=True, exist_ok=True)
        if dry_run and llm is None and not ref.builtin:
            from dgm.paths import seed_agent_dir

            ours = Path(ref.path).resolve() == seed_agent_dir().resolve()
            llm = "scripted/capability" if ours else "scripted/shell"
            console.print(f"dry run: {llm} plays the model")
        model = None if ref.builtin else (llm or run_model)
        if model is None and not ref.builtin:
            raise DgmError(
                "no model given for the agent",
                "pass --llm MODEL, e.g. anthropic/claude-sonnet-4-5 (or scripted/capability)",
            )
        lookup = {t.id: t for t in tasks}.get
        gateway = start_gateway(model, out, lookup, price, llm_retries) if model else None
        header = {
            "agent": agent, "benchmark": benchmark, "subset": subset, "model": model,
            "started": time.strftime("%Y-%m-%dT%H:%M:%S"), "tasks": len(tasks),
        }  # fmt: skip
        try:
            outcomes = _run_with_progress(
                ref, tasks, out, workers, model, memory, agent_timeout, max_steps,
                gateway, executor,
            )  # fmt: skip
        finally:
            if gateway is not None:
                gateway.stop()
    path = write_results(out, header, outcomes)
    summary = Summary.of(outcomes)
    for language, score in summary.by_language.items():
        console.print(f"{language:<12} {score.passed}/{score.total}")
    if len(summary.by_benchmark) > 1:
        for name, score in summary.by_benchmark.items():
            console.print(f"{name:<12} {score.passed}/{score.total}")
    console.print(f"[bold]{'total':<12} {summary.total.passed}/{summary.total.total}[/bold]")
    if summary.not_scored:
        console.print(f"[bold yellow]{'not scored':<12} {summary.not_scored}[/bold yellow]")
    unscored = [o for o in outcomes if o.details.get("not_scored")]
    errors = [o for o in outcomes if o.error and not o.details.get("not_scored")]
    for o in unscored:
        console.print(f"[bold yellow]{o.task_id}: {o.error}[/bold yellow]", soft_wrap=True)
    if errors:
        console.print(f"{len(errors)} task(s) recorded an error; see their result.json")
    tampered = [o.task_id for o in outcomes if o.tampered]
    if tampered:
        console.print(
            f"[bold red]{len(tampered)} task(s) TAMPERED with the test run (the judge's "
            f"canaries caught it; counted as failures): {', '.join(tampered[:20])}[/bold red]"
        )
    console.print(f"results: {path}")
    if unscored:
        raise DgmError(
            f"{len(unscored)} of {len(outcomes)} task(s) not scored: they met an outage "
            f"(first: {unscored[0].details['not_scored'][:200]})",
            "the score above counts only the tasks scored; run `dgm eval` again once the "
            "provider, Docker or the disk is back",
        )


def _run_with_progress(ref, tasks, out, workers, model, memory, timeout, steps, gateway, executor):  # noqa: ANN001, ANN202
    from dgm.evaluation.evaluate_agent import evaluate_agent

    passed = 0
    columns = (
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
    )
    with Progress(*columns, console=console) as progress:
        bar = progress.add_task("evaluating", total=len(tasks))

        def done(outcome) -> None:  # noqa: ANN001
            nonlocal passed
            passed += outcome.resolved
            progress.update(bar, advance=1, description=f"resolved {passed}")

        return evaluate_agent(
            ref, tasks, out, workers=workers, model=model, limits={"memory": memory},
            agent_timeout_s=timeout, max_steps=steps, gateway=gateway, on_done=done,
            executor=executor,
        )  # fmt: skip


@bench_app.command("fetch")
def fetch(
    name: Annotated[str, typer.Argument(help="polyglot")],
    data: Annotated[
        Path | None, typer.Option(help="A checkout already here: check it, fetch nothing.")
    ] = None,
    dest: Annotated[Path | None, typer.Option(help="Where to clone it (default: cache).")] = None,
) -> None:
    """Make the benchmark available: the checkout already there (--data, DGM_POLYGLOT_DIR,
    the cache), else a clone at its pinned commit (needs network). Says where it is."""
    from dgm.benchmarks.polyglot import fetch as polyglot_fetch

    if name != "polyglot":
        raise DgmError(f"nothing to fetch for {name!r}", "only `polyglot` is fetched")
    checkout = polyglot_fetch.fetch(data, dest)
    console.print(checkout.describe(), highlight=False, soft_wrap=True)
    hint = checkout.usage_hint()
    if hint:
        console.print(hint, highlight=False, soft_wrap=True)


@bench_app.command("list")
def list_tasks(
    benchmark: Annotated[
        str, typer.Argument(help="polyglot, swebench[:FILE], or several: polyglot,swebench")
    ],
    subset: Annotated[str, typer.Option(help="small, medium, full, a language, @file")] = "full",
    data: Annotated[str | None, typer.Option(help="Benchmark checkout or data file.")] = None,
) -> None:
    """Print the task ids of a subset."""
    from dgm.benchmarks import load_benchmark

    for task in load_benchmark(benchmark, data).tasks(subset):
        console.print(task.id, highlight=False)


@bench_app.command("build-suite")
def build_suite(force: Annotated[bool, typer.Option(help="Rebuild.")] = False) -> None:
    """Build the image of dgm's own SWE-format suite (offline, FROM the runtime image)."""
    from dgm.benchmarks.swebench import suite_image

    suite_image.build(log=console.print, force=force)
