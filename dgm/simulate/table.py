"""The strategy table and the ablation, as markdown: what README.md shows.

    python -m dgm.simulate.table --seeds 30 --processes 2 > /tmp/table.md

Every strategy on every preset landscape, then the ablation variants of hgm; seed s is
the same world for every row, so the paired difference to hgm (same seeds) is shown
with its 95% CI. Deterministic per seed; about 3 minutes on 2 cores with the defaults.
"""

from __future__ import annotations

import time
from typing import Annotated

import typer

from dgm.simulate.experiment import SeedResult, mean_ci, run_experiment, summarise
from dgm.simulate.presets import PRESETS
from dgm.simulate.variants import ABLATION

STRATEGIES = ["adaptive", "hgm", "dgm", "gea", "greedy", "random"]


def _fmt_evals(value: float | None) -> str:
    return "-" if value is None else f"{value:.0f}"


def _paired(rows: list[SeedResult], base: list[SeedResult]) -> str:
    diffs = [a.shipped_true_rate - b.shipped_true_rate for a, b in zip(rows, base, strict=True)]
    mean, ci = mean_ci(diffs)
    return f"{mean:+.3f} ± {ci:.3f}"


def strategy_table(results: dict[str, dict[str, list[SeedResult]]], names: list[str]) -> str:
    lines = [
        "| landscape | strategy | shipped rate | vs hgm (paired) | reached | "
        "evals to target | dgm / this |",
        "| --- | --- | --- | --- | --- | --- | --- |",
    ]
    for land, by_name in results.items():
        dgm_median = summarise(by_name["dgm"]).evals_to_target_median if "dgm" in by_name else None
        for name in names:
            s = summarise(by_name[name])
            ratio = (
                f"{dgm_median / s.evals_to_target_median:.2f}x"
                if dgm_median and s.evals_to_target_median
                else "-"
            )
            lines.append(
                f"| {land} | {name} | {s.shipped_mean:.3f} ± {s.shipped_ci:.3f} | "
                f"{_paired(by_name[name], by_name['hgm']) if name != 'hgm' else ''} | "
                f"{s.reached_fraction:.0%} | {_fmt_evals(s.evals_to_target_median)} "
                f"({_fmt_evals(s.evals_to_target_mean)}) | {ratio} |"
            )
    return "\n".join(lines)


def main(
    seeds: Annotated[int, typer.Option(help="Seeds per (strategy, landscape).")] = 30,
    budget: Annotated[float, typer.Option(help="Evaluation-equivalents per run.")] = 800,
    workers: Annotated[int, typer.Option(help="Virtual workers.")] = 8,
    processes: Annotated[int, typer.Option(help="Parallel processes (same results).")] = 2,
    ablation: Annotated[bool, typer.Option(help="Also the hgm ablation.")] = True,
) -> None:
    t0 = time.perf_counter()
    variants = [v for v in ABLATION if v != "hgm"] if ablation else []
    names = STRATEGIES + variants
    results: dict[str, dict[str, list[SeedResult]]] = {}
    for land, params in PRESETS.items():
        runs = run_experiment(
            names, params, seeds, budget, workers, params.target, processes=processes
        )
        results[land] = {n: [r for r in runs if r.strategy == n] for n in names}
    typer.echo(
        f"Budget {budget:g} evaluation-equivalents, {workers} workers, seeds 0-{seeds - 1}, "
        "target 0.5. Shipped true rate: mean ± 95% CI; vs hgm: mean paired difference "
        "(same seeds, same worlds) ± 95% CI; reached: seeds whose shipped agent reached the "
        "target; evals to target: median over all seeds ('-' when half never did), mean "
        "over those that did; dgm / this: ratio of medians.\n"
    )
    typer.echo(strategy_table(results, STRATEGIES))
    if variants:
        typer.echo("\nAblation of hgm (meaning of each variant in dgm/simulate/variants.py):\n")
        typer.echo(strategy_table(results, ["hgm", *variants]))
    typer.echo(f"\n{seeds * len(names) * len(PRESETS)} runs in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    typer.run(main)
