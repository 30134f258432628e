"""`dgm simulate`: compare strategies on a synthetic landscape in seconds."""

from __future__ import annotations

import time
from pathlib import Path
from typing import Annotated

import typer
from pydantic import ValidationError

from dgm.config import StrategyConfig, describe_validation_error
from dgm.errors import ConfigError
from dgm.simulate.experiment import run_experiment, summarise
from dgm.simulate.presets import LANDSCAPES, load_config_file, preset
from dgm.simulate.recorded import load_recorded
from dgm.simulate.report import print_summary, write_csv, write_plot
from dgm.simulate.variants import ABLATION, STRATEGIES

DEFAULT_BUDGET = 800.0
KNOWN = list(STRATEGIES) + [n for n in ABLATION if n not in STRATEGIES]


def parse_strategies(text: str) -> list[str]:
    names = [part.strip() for part in text.split(",") if part.strip()]
    unknown = [n for n in names if n not in KNOWN]
    if not names or unknown:
        raise ConfigError(
            f"unknown strategy {', '.join(unknown)!s}" if unknown else "no strategy given",
            f"--strategies takes a comma-separated list of {', '.join(KNOWN)}",
        )
    if len(set(names)) != len(names):
        raise ConfigError("a strategy is listed twice in --strategies", "list each once")
    return names


def strategy_settings(table: dict, source: str) -> StrategyConfig:
    if "name" in table:
        raise ConfigError(f"{source} [strategy]: `name` is not allowed here", "use --strategies")
    try:
        return StrategyConfig.model_validate(table)
    except ValidationError as exc:
        raise ConfigError(describe_validation_error(exc, StrategyConfig, source)) from None


def simulate(
    strategies: Annotated[
        str, typer.Option(help="Comma-separated strategies to compare.")
    ] = "hgm,dgm,adaptive,gea,greedy,random",
    landscape: Annotated[
        str, typer.Option(help=f"Landscape: {', '.join(LANDSCAPES)}.")
    ] = "mismatch",
    budget: Annotated[
        float | None,
        typer.Option(
            help="Evaluation-equivalents per run (an expansion counts too); default: the "
            "landscape's own budget, else 800."
        ),
    ] = None,
    workers: Annotated[int, typer.Option(help="Virtual workers.")] = 8,
    seeds: Annotated[int, typer.Option(help="Runs per strategy (seeds 0..N-1).")] = 30,
    target: Annotated[
        float | None, typer.Option(help="True solve rate to reach (default: the landscape's).")
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(help="TOML: a landscape table (base = a preset), strategy settings."),
    ] = None,
    from_run: Annotated[
        Path | None,
        typer.Option("--from-run", help="A recorded run's tree and results as the landscape."),
    ] = None,
    processes: Annotated[int, typer.Option(help="Parallel processes (same results).")] = 1,
    csv: Annotated[Path | None, typer.Option(help="Write one row per (strategy, seed).")] = None,
    plot: Annotated[Path | None, typer.Option(help="Plot true rate against evaluations.")] = None,
) -> None:
    """Compare selection strategies on a synthetic self-improvement landscape."""
    names = parse_strategies(strategies)
    params, strategy_table = preset(landscape), {}
    source = landscape
    if config is not None:
        custom, strategy_table = load_config_file(config)
        if custom is not None:
            params, source = custom, str(config)
    landscape_or_run = params
    if from_run is not None:
        landscape_or_run = load_recorded(from_run, params)
        params, source = landscape_or_run.params, landscape_or_run.description
    budget = budget if budget is not None else params.budget or DEFAULT_BUDGET
    if budget <= 0 or workers < 1 or seeds < 1 or processes < 1:
        raise ConfigError(
            "--budget, --workers, --seeds and --processes must be positive "
            f"(got {budget}, {workers}, {seeds}, {processes})"
        )
    goal = params.target if target is None else target
    if not 0 < goal < 1:
        raise ConfigError(f"--target must be between 0 and 1 (got {goal})")
    settings = strategy_settings(strategy_table, str(config))

    t0 = time.perf_counter()
    results = run_experiment(
        names, landscape_or_run, seeds, budget, workers, goal, settings, processes
    )
    elapsed = time.perf_counter() - t0
    summaries = [summarise([r for r in results if r.strategy == n]) for n in names]
    title = f"{source}: budget {budget:g}, {workers} workers, {seeds} seeds, target {goal:.2f}"
    print_summary(summaries, title, goal)
    typer.echo(f"{len(results)} runs in {elapsed:.1f} s")
    if csv is not None:
        write_csv(results, csv)
        typer.echo(f"wrote {csv}")
    if plot is not None:
        write_plot(results, names, budget, goal, plot)
        typer.echo(f"wrote {plot}")


def register(app: typer.Typer) -> None:
    app.command("simulate")(simulate)
