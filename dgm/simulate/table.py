"""The strategy table and the ablation, as markdown: what README.md shows.

    python -m dgm.simulate.table > /tmp/table.md

Every strategy on every preset landscape (30 seeds), then the ablation variants (20
seeds, compared with the first 20 seeds of hgm); seed s is the same world for every row,
so the paired difference to hgm is shown with its 95% CI. Deterministic per seed; 3-6
minutes on 2 cores with the defaults.
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
    ablation_seeds: Annotated[int, typer.Option(help="Seeds per ablation variant.")] = 20,
    budget: Annotated[float, typer.Option(help="Evaluation-equivalents per run.")] = 800,
    workers: Annotated[int, typer.Option(help="Virtual workers.")] = 8,
    processes: Annotated[int, typer.Option(help="Parallel processes (same results).")] = 2,
) -> None:
    t0 = time.perf_counter()
    variants = [v for v in ABLATION if v != "hgm"]
    main_runs: dict[str, dict[str, list[SeedResult]]] = {}
    ablation: dict[str, dict[str, list[SeedResult]]] = {}
    for land, params in PRESETS.items():
        runs = run_experiment(STRATEGIES, params, seeds, budget, workers, params.target,
                              processes=processes)  # fmt: skip
        main_runs[land] = {n: [r for r in runs if r.strategy == n] for n in STRATEGIES}
        if ablation_seeds:
            runs = run_experiment(variants, params, ablation_seeds, budget, workers,
                                  params.target, processes=processes)  # fmt: skip
            ablation[land] = {
                "dgm": main_runs[land]["dgm"][:ablation_seeds],  # for the ratio column
                "hgm": main_runs[land]["hgm"][:ablation_seeds],
                "adaptive": main_runs[land]["adaptive"][:ablation_seeds],
                **{n: [r for r in runs if r.strategy == n] for n in variants},
            }
    typer.echo(
        f"Budget {budget:g} evaluation-equivalents, {workers} workers, seeds 0-{seeds - 1}, "
        "target 0.5. Shipped true rate: mean ± 95% CI; vs hgm: mean paired difference "
        "(same seeds, same worlds) ± 95% CI; reached: seeds whose shipped agent reached the "
        "target; evals to target: median over all seeds ('-' when half never did), mean "
        "over those that did; dgm / this: ratio of medians.\n"
    )
    typer.echo(strategy_table(main_runs, STRATEGIES))
    if ablation:
        typer.echo(f"\nAblation, seeds 0-{ablation_seeds - 1} (variants: "
                   "dgm/simulate/variants.py):\n")  # fmt: skip
        order = ["hgm", *[v for v in variants if v.startswith("hgm")], "adaptive",
                 *[v for v in variants if v.startswith("adaptive")]]  # fmt: skip
        typer.echo(strategy_table(ablation, order))
    total = seeds * len(STRATEGIES) + ablation_seeds * len(variants)
    typer.echo(f"\n{total * len(PRESETS)} runs in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    typer.run(main)
