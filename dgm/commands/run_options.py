"""`dgm run`'s and `dgm resume`'s options, one settings object each (built by typer from
the command line; see `options_command`), and the run.toml overrides they ask for."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from dgm.commands.options import PriceOption, SelfImproveOption

Executor = Annotated[
    str | None, typer.Option(help="Where jobs run: thread (default), process or ray.")
]
RayAddress = Annotated[
    str | None, typer.Option(help="The Ray cluster to join (default: this machine's).")
]


@dataclass(frozen=True)
class RunOptions:
    run_dir: Annotated[
        Path | None, typer.Argument(help="Where the run lives (default: archive/<name>).")
    ] = None
    config: Annotated[Path | None, typer.Option(help="A run.toml to start from.")] = None
    strategy: Annotated[
        str | None, typer.Option(help="hgm | dgm | gea | adaptive | greedy | random")
    ] = None
    benchmark: Annotated[str | None, typer.Option(help="polyglot | swebench")] = None
    subset: Annotated[str | None, typer.Option(help="small | medium | full | LANG | @ids.txt")] = (
        None
    )
    data: Annotated[str | None, typer.Option(help="Benchmark data path.")] = None
    llm: Annotated[str | None, typer.Option(help="The agents' model string.")] = None
    diagnose_llm: Annotated[str | None, typer.Option(help="The diagnosis model.")] = None
    workers: Annotated[int | None, typer.Option(help="Jobs run at once.")] = None
    max_evals: Annotated[int | None, typer.Option(help="Stop after N task evaluations.")] = None
    max_nodes: Annotated[int | None, typer.Option(help="Stop at N nodes.")] = None
    max_expansions: Annotated[
        int | None, typer.Option(help="Stop after N expansion attempts (failed ones count).")
    ] = None
    budget_usd: Annotated[float | None, typer.Option(help="Dollar cap on LLM spend.")] = None
    max_hours: Annotated[float | None, typer.Option(help="Wall-clock limit.")] = None
    seed: Annotated[int | None, typer.Option(help="RNG seed.")] = None
    agent: Annotated[
        Path | None,
        typer.Option(
            help="Agent codebase to evolve (a folder with agent.toml; default: dgm's "
            "seed). With --dry-run, an agent not ours gets the `shell` world."
        ),
    ] = None
    dry_run: Annotated[
        bool, typer.Option("--dry-run", help="Offline and free: the built-in scripted model.")
    ] = False
    dry_run_world: Annotated[
        str | None,
        typer.Option(help="The dry run's scripted world: capability | toolmaker | hyperagent."),
    ] = None
    harvest: Annotated[
        bool | None,
        typer.Option("--harvest/--no-harvest", help="Keep runtime tools as children (default on)."),
    ] = None
    executor: Executor = None
    ray_address: RayAddress = None
    price: PriceOption = None
    self_improve: SelfImproveOption = None

    def overrides(self) -> dict[str, Any]:
        """What the options change in the run's config (None: left as it is)."""
        llm = self.llm
        return {
            "seed": self.seed,
            "workers": self.workers,
            "executor.kind": self.executor,
            "executor.address": self.ray_address,
            "strategy.name": self.strategy,
            "benchmark.name": self.benchmark,
            "benchmark.subset": self.subset,
            "benchmark.data": self.data,
            "llm.model": llm,
            # A replay answers every role from the recording, the diagnosis included.
            "llm.diagnose_model": self.diagnose_llm
            or (llm if llm and llm.startswith("replay/") else None),
            "limits.max_evals": self.max_evals,
            "limits.max_nodes": self.max_nodes,
            "limits.max_expansions": self.max_expansions,
            "limits.budget_usd": self.budget_usd,
            "limits.max_hours": self.max_hours,
            "self_improve.mode": self.self_improve,
            "expand.harvest": self.harvest,
        }


@dataclass(frozen=True)
class ResumeOptions:
    run_dir: Annotated[Path, typer.Argument(help="The run directory.")]
    workers: Annotated[int | None, typer.Option(help="Jobs run at once.")] = None
    max_evals: Annotated[int | None, typer.Option(help="Raise the evaluation limit.")] = None
    max_nodes: Annotated[int | None, typer.Option(help="Raise the node limit.")] = None
    max_expansions: Annotated[int | None, typer.Option(help="Raise the expansion limit.")] = None
    budget_usd: Annotated[float | None, typer.Option(help="Raise the dollar cap.")] = None
    max_hours: Annotated[float | None, typer.Option(help="Raise the time limit.")] = None
    executor: Executor = None
    ray_address: RayAddress = None
    self_improve: SelfImproveOption = None

    def overrides(self) -> dict[str, Any]:
        return {
            "workers": self.workers,
            "executor.kind": self.executor,
            "executor.address": self.ray_address,
            "limits.max_evals": self.max_evals,
            "limits.max_nodes": self.max_nodes,
            "limits.max_expansions": self.max_expansions,
            "limits.budget_usd": self.budget_usd,
            "limits.max_hours": self.max_hours,
            "self_improve.mode": self.self_improve,
        }
