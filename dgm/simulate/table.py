"""The strategy tables README.md shows, as markdown: one command, deterministic per seed.

    python -m dgm.simulate.table > /tmp/table.md

- Main table: every landscape (the six presets, then DEV, then HELD_OUT; presets.py),
  `adaptive`, hgm and dgm on `--seeds` seeds (100: the headline claims), gea, greedy and
  random on `--other-seeds`. Per strategy: the shipped agent's true rate (mean ± 95% CI),
  the paired difference to hgm (same seeds, same worlds; 95% CI), evaluations to *make* a
  target agent and to *ship* one (medians over all seeds, a seed that never did counting
  as infinite), the median lag between the two, and dgm's median evaluations to ship over
  this strategy's, with a bootstrap 95% CI (seeds resampled in pairs).
- hgm's deviations from the reference, each alone, and adaptive's ablation, on `mismatch`
  with `--ablation-seeds` seeds, paired against hgm and adaptive.
- `--headline race-closest,adaptive,hgm,dgm` (any strategies or variants; hgm and dgm
  are required, the baselines) measures a variant against them the same way.
Evaluation-equivalents: an expansion counts `expansion_cost` (1) too.
"""

from __future__ import annotations

import math
import time
from typing import Annotated

import typer

from dgm.simulate.experiment import SeedResult, run_experiment
from dgm.simulate.landscape import LandscapeParams
from dgm.simulate.presets import DEV, LANDSCAPES, PRESETS
from dgm.simulate.stats import lag, median, paired, ratio_of_medians
from dgm.simulate.variants import ABLATION

HEADLINE = ["adaptive", "hgm", "dgm"]
OTHERS = ["gea", "greedy", "random"]
DEVIATIONS = [v for v in ABLATION if v.startswith("hgm-")]
POLICY_ABLATION = [v for v in ABLATION if v.startswith("adaptive-")]


def _evals(value: float) -> str:
    return "never" if math.isinf(value) else "-" if math.isnan(value) else f"{value:.0f}"


def _ci(mean: float, low: float, high: float, digits: int = 3) -> str:
    return f"{mean:+.{digits}f} [{low:+.{digits}f}, {high:+.{digits}f}]"


def rows(land: str, by_name: dict[str, list[SeedResult]], base: str) -> list[str]:
    out = []
    dgm_ship = [r.evals_to_target for r in by_name["dgm"]] if "dgm" in by_name else None
    for name, results in by_name.items():
        n = len(results)
        rates = [r.shipped_true_rate for r in results]
        mean, low, high = paired(rates, [0.0] * n)
        reference = by_name[base][:n]
        versus = (
            "" if name == base else _ci(*paired(rates, [r.shipped_true_rate for r in reference]))
        )
        make = [r.evals_to_make for r in results]
        ship = [r.evals_to_target for r in results]
        ratio = "-"
        if dgm_ship is not None and name != "dgm":
            point, lo, hi = ratio_of_medians(dgm_ship[:n], ship)
            ratio = (
                "-" if math.isnan(point) or point == 0
                else "dgm never" if math.isinf(point)
                else f"{point:.2f}x [{lo:.2f}, {hi:.2f}]"
            )  # fmt: skip
        out.append(
            f"| {land} | {name} | {n} | {mean:.3f} ± {(high - low) / 2:.3f} | {versus} | "
            f"{_evals(median(make))} | {_evals(median(ship))} | {_evals(lag(make, ship))} | "
            f"{ratio} |"
        )
    return out


HEADER = (
    "| landscape | strategy | seeds | shipped rate | vs {base} (paired, 95% CI) | "
    "evals to make | evals to ship | lag | dgm / this (95% CI) |\n"
    "| --- | --- | --- | --- | --- | --- | --- | --- | --- |"
)


def run_landscape(
    names: list[str], params: LandscapeParams, seeds: int, workers: int, processes: int
) -> dict[str, list[SeedResult]]:
    budget = params.budget or 800
    runs = run_experiment(names, params, seeds, budget, workers, params.target, processes=processes)
    return {n: [r for r in runs if r.strategy == n] for n in names}


def main(
    seeds: Annotated[int, typer.Option(help="Seeds for adaptive, hgm and dgm.")] = 100,
    other_seeds: Annotated[int, typer.Option(help="Seeds for gea, greedy, random.")] = 30,
    ablation_seeds: Annotated[int, typer.Option(help="Seeds per ablation variant.")] = 100,
    workers: Annotated[int, typer.Option(help="Virtual workers.")] = 8,
    processes: Annotated[int, typer.Option(help="Parallel processes (same results).")] = 1,
    landscapes: Annotated[str, typer.Option(help="Comma-separated; default: all.")] = "",
    headline: Annotated[
        str,
        typer.Option(help="Comma-separated strategies or variants on --seeds; must hold hgm, dgm."),
    ] = ",".join(HEADLINE),
) -> None:
    t0 = time.perf_counter()
    chosen = landscapes.split(",") if landscapes else list(LANDSCAPES)
    names = headline.split(",")
    if "hgm" not in names or "dgm" not in names:
        raise typer.BadParameter("--headline must include hgm and dgm (the two baselines)")
    typer.echo(
        f"{workers} workers; budget 800 evaluation-equivalents unless the landscape sets "
        "its own; target 0.5. Shipped rate: true rate of the agent shipped at the end, "
        "mean ± 95% CI. Paired: mean difference over the same seeds [95% CI]. Evals to "
        "make / ship: median over all seeds of the evaluation-equivalents spent when an "
        "agent reaching the target was first made / first shipped ('never': half or "
        "more never did); lag: median ship - make over seeds that did both; dgm / this: "
        "ratio of the medians to ship, bootstrap 95% CI.\n"
    )
    typer.echo(HEADER.format(base="hgm"))
    total = 0
    for land in chosen:
        params = LANDSCAPES[land]
        split = "preset" if land in PRESETS else "dev" if land in DEV else "held out"
        by_name = run_landscape(names, params, seeds, workers, processes)
        if other_seeds:
            by_name |= run_landscape(OTHERS, params, other_seeds, workers, processes)
        total += seeds * len(names) + other_seeds * len(OTHERS)
        typer.echo("\n".join(rows(f"{land} ({split})", by_name, "hgm")))
    if ablation_seeds:
        params = PRESETS["mismatch"]
        typer.echo("\nhgm's deviations from the reference, each alone, on mismatch:\n")
        base = run_landscape(
            ["hgm", "dgm", *DEVIATIONS], params, ablation_seeds, workers, processes
        )
        typer.echo(HEADER.format(base="hgm"))
        typer.echo("\n".join(rows("mismatch", base, "hgm")))
        typer.echo("\nadaptive with one of its changes undone, on mismatch:\n")
        policy = run_landscape(["adaptive", "dgm", *POLICY_ABLATION], params, ablation_seeds,
                               workers, processes)  # fmt: skip
        typer.echo(HEADER.format(base="adaptive"))
        typer.echo("\n".join(rows("mismatch", policy, "adaptive")))
        total += ablation_seeds * (4 + len(DEVIATIONS) + len(POLICY_ABLATION))
    typer.echo(f"\n{total} runs in {time.perf_counter() - t0:.0f} s")


if __name__ == "__main__":
    typer.run(main)
