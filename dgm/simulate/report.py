"""Output of `dgm simulate`: the summary table, the per-seed CSV, the plot."""

from __future__ import annotations

import csv
import math
from pathlib import Path

from rich.console import Console
from rich.table import Table

from dgm.simulate.experiment import SeedResult, StrategySummary

CSV_FIELDS = [
    "strategy",
    "seed",
    "shipped",
    "shipped_true_rate",
    "best_true_rate",
    "reached_target",
    "evals_to_target",
    "evals_to_make",
    "evals_used",
    "nodes",
    "sim_hours",
    "utilisation",
    "stop_reason",
]


def _fmt(value: float | None, digits: int = 0) -> str:
    return "-" if value is None or math.isnan(value) else f"{value:.{digits}f}"


def summary_table(summaries: list[StrategySummary], title: str, target: float) -> Table:
    table = Table(title=title)
    table.add_column("strategy")
    table.add_column("shipped true rate\nmean ± 95% CI", justify="right")
    table.add_column(f"reached {target:.2f}", justify="right")
    table.add_column("evals to make / ship\nmedians (ship mean)", justify="right")
    table.add_column("sim hours", justify="right")
    for s in summaries:
        table.add_row(
            s.strategy,
            f"{s.shipped_mean:.3f} ± {_fmt(s.shipped_ci, 3)}",
            f"{s.reached_fraction:.0%}",
            f"{_fmt(s.evals_to_make_median)} / {_fmt(s.evals_to_target_median)} "
            f"({_fmt(s.evals_to_target_mean)})",
            f"{s.sim_hours_mean:.1f}",
        )
    return table


def print_summary(summaries: list[StrategySummary], title: str, target: float) -> None:
    Console().print(summary_table(summaries, title, target))


def write_csv(results: list[SeedResult], path: Path) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="") as f:
        writer = csv.writer(f)
        writer.writerow(CSV_FIELDS)
        for r in results:
            writer.writerow(
                [
                    r.strategy,
                    r.seed,
                    r.shipped,
                    f"{r.shipped_true_rate:.4f}",
                    f"{r.best_true_rate:.4f}",
                    int(r.reached),
                    "" if r.evals_to_target is None else f"{r.evals_to_target:g}",
                    "" if r.evals_to_make is None else f"{r.evals_to_make:g}",
                    f"{r.evals_used:g}",
                    r.nodes,
                    f"{r.sim_hours:.2f}",
                    f"{r.utilisation:.3f}",
                    r.stop_reason,
                ]
            )


def curve_on_grid(result: SeedResult, grid: list[float]) -> tuple[list[float], list[float]]:
    """The run's (shipped, best) true rates as step functions sampled on `grid`."""
    shipped, best = [], []
    i, current = 0, (result.curve[0][1], result.curve[0][2]) if result.curve else (0.0, 0.0)
    for x in grid:
        while i < len(result.curve) and result.curve[i][0] <= x:
            current = (result.curve[i][1], result.curve[i][2])
            i += 1
        shipped.append(current[0])
        best.append(current[1])
    return shipped, best


def write_plot(
    results: list[SeedResult], strategies: list[str], budget: float, target: float, path: Path
) -> None:
    """Mean true rate (over seeds) against evaluation-equivalents spent, per strategy:
    solid, the agent it would ship; dashed, the best agent it has made."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    grid = [budget * k / 200 for k in range(201)]
    fig, ax = plt.subplots(figsize=(8, 5))
    for name in strategies:
        runs = [curve_on_grid(r, grid) for r in results if r.strategy == name]
        shipped = [sum(run[0][k] for run in runs) / len(runs) for k in range(len(grid))]
        best = [sum(run[1][k] for run in runs) / len(runs) for k in range(len(grid))]
        (line,) = ax.plot(grid, shipped, label=f"{name} (shipped)")
        ax.plot(grid, best, linestyle="--", color=line.get_color(), alpha=0.6)
    ax.axhline(target, color="grey", linewidth=0.8, linestyle=":")
    ax.set_xlabel("evaluation-equivalents spent")
    ax.set_ylabel("true solve rate (mean over seeds)")
    ax.set_title("shipped agent (solid) and best agent made (dashed)")
    ax.legend()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=120, bbox_inches="tight")
    plt.close(fig)
