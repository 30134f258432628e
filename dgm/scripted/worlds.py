"""The dry run's worlds: each a scripted model (`scripted/<name>`) with a story to show.

    capability   dgm's built-in procedure grows a `search_files` tool (dry_run.py)
    hyperagent   the agent's own improve procedure improves itself first (hyperagent.py)

`dgm run --dry-run --dry-run-world NAME`; the default is `hyperagent` with
`--self-improve agent`, else `capability`. A world is a factory of a stateless script,
given the benchmark's task lookup.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dgm.scripted import dry_run, hyperagent

WORLDS: dict[str, Callable[[Any], Any]] = {
    dry_run.SCRIPT_NAME: dry_run.DryRunScript,
    hyperagent.SCRIPT_NAME: hyperagent.world,
}
DEFAULT_WORLD = dry_run.SCRIPT_NAME


def default_world(self_improve_mode: str) -> str:
    return hyperagent.SCRIPT_NAME if self_improve_mode == "agent" else DEFAULT_WORLD


def world_of(model: str | None) -> str | None:
    """The world a model string names (`scripted/<world>`), or None."""
    name = (model or "").removeprefix("scripted/")
    return name if model and model.startswith("scripted/") and name in WORLDS else None


def register_world(name: str, task_lookup: Any) -> None:
    """Make `scripted/<name>` answer in this process."""
    from dgm.gateway import register_script

    register_script(name, WORLDS[name](task_lookup))
