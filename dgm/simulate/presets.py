"""Named landscapes, and loading a custom one from a TOML file.

The presets share every parameter but two: how much metaproductivity varies between
lineages (`metaprod_sd`) and how a child's change in score is coupled to its change in
metaproductivity (`coupling`). They were fixed from that design, before any strategy was
run on them, and have not been changed to favour one (see README.md).

Shared values, and why: 10 stage-1 and 40 stage-2 tasks with a 0.4 threshold (DGM's
small and medium subsets and its threshold); a seed that solves 30% (DGM's and HGM's seed
agents start in the 20-40% range); 15% of expansions yield no valid child; an expansion
costs one evaluation-equivalent; an expansion takes about an hour and an evaluation a
quarter of an hour.
"""

from __future__ import annotations

from pathlib import Path

from pydantic import ValidationError

from dgm.config import describe_validation_error, read_toml
from dgm.errors import ConfigError
from dgm.simulate.landscape import LandscapeParams

PRESETS: dict[str, LandscapeParams] = {
    "aligned": LandscapeParams(
        description="score gains also make better parents: a node's score is a fair guide",
        metaprod_sd=0.3,
        coupling=1.0,
    ),
    "mismatch": LandscapeParams(
        description="metaproductivity varies by lineage, independent of score",
        metaprod_sd=0.6,
        coupling=0.0,
    ),
    "deceptive": LandscapeParams(
        description="score gains cost metaproductivity: high scorers make poor parents",
        metaprod_sd=0.6,
        coupling=-1.0,
    ),
    "flat": LandscapeParams(
        description="every node has the same metaproductivity: only scores matter",
        metaprod_sd=0.0,
        coupling=0.0,
    ),
    # Added with issue 17, from the same shared values plus one mechanism each.
    "transfer": LandscapeParams(
        description="improvements are 8 skills that a group's members can pass on",
        metaprod_sd=0.6,
        coupling=0.0,
        traits=8,
        trait_gain=0.4,
        p_transfer=0.5,
    ),
    "flaky": LandscapeParams(
        description="mismatch, with a judge whose result is a coin flip 30% of the time",
        metaprod_sd=0.6,
        coupling=0.0,
        flaky_rate=0.3,
    ),
}


# Issue 27: landscapes that differ from the presets in structure, not only in parameters,
# split BEFORE any policy was tuned (fixed in commit "simulate: held-out landscapes"):
# `DEV` may be looked at while tuning a policy; `HELD_OUT` is only ever reported (the
# table prints it last), never tuned on. Both start from mismatch's shared values.
_MISMATCH = {"metaprod_sd": 0.6, "coupling": 0.0}
DEV: dict[str, LandscapeParams] = {
    "heavy-tail": LandscapeParams(
        description="rare gains (p 0.08) with Lomax(2.5) jumps: mostly tiny, rarely huge",
        p_improve=0.08,
        improve_scale=0.75,
        improve_tail=2.5,
        **_MISMATCH,
    ),
    "lean-budget": LandscapeParams(
        description="mismatch with a 150-evaluation budget", budget=150, **_MISMATCH
    ),
}
HELD_OUT: dict[str, LandscapeParams] = {
    "trap-clade": LandscapeParams(
        description="30% of the seed's children found a clade that gains 3x as often "
        "but never passes 0.45",
        trap_share=0.3,
        trap_boost=3.0,
        trap_ceiling=0.45,
        **_MISMATCH,
    ),
    "tiny-judge": LandscapeParams(
        description="10 tasks in all, a quarter of the results a coin flip",
        stage1_tasks=10,
        stage2_tasks=0,
        flaky_rate=0.25,
        **_MISMATCH,
    ),
    "specialists": LandscapeParams(
        description="5 task groups; a gain lifts one group only (twice the jump)",
        task_groups=5,
        **_MISMATCH,
    ),
    # Round four (issue 27): added and declared held out before any policy ran on them.
    "idiosyncratic": LandscapeParams(
        description="agent-by-task effects (sd 1.0, 30% redrawn per child): agents "
        "disagree on which tasks are hard",
        interaction_sd=1.0,
        interaction_redraw=0.3,
        **_MISMATCH,
    ),
    "costly-children": LandscapeParams(
        description="half the expansions fail, and one costs 3 evaluations and 3 hours",
        failure_rate=0.5,
        expansion_cost=3.0,
        expand_hours=3.0,
        **_MISMATCH,
    ),
}
LANDSCAPES: dict[str, LandscapeParams] = {**PRESETS, **DEV, **HELD_OUT}


def preset(name: str) -> LandscapeParams:
    try:
        return LANDSCAPES[name]
    except KeyError:
        raise ConfigError(
            f"unknown landscape {name!r}",
            f"use one of {', '.join(LANDSCAPES)}, or --config FILE for a custom one",
        ) from None


def load_config_file(path: str | Path) -> tuple[LandscapeParams | None, dict]:
    """Read a simulation config: an optional [landscape] table (with `base = "<preset>"`
    to start from a preset) and an optional [strategy] table shaped like run.toml's.
    Returns (landscape or None, strategy table)."""
    path = Path(path)
    data = read_toml(path)
    unknown = set(data) - {"landscape", "strategy"}
    if unknown:
        raise ConfigError(
            f"{path}: unknown table(s) {', '.join(sorted(unknown))}",
            "a simulation config has only [landscape] and [strategy]",
        )
    landscape = None
    if "landscape" in data:
        table = dict(data["landscape"])
        base = table.pop("base", None)
        start = preset(base).model_dump() if base else {}
        try:
            landscape = LandscapeParams.model_validate({**start, **table})
        except ValidationError as exc:
            message = describe_validation_error(exc, LandscapeParams, f"{path} [landscape]")
            raise ConfigError(message) from None
    return landscape, data.get("strategy", {})
